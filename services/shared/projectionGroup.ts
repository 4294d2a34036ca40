/**
 * Runs several projections off ONE read of the event log. Each projection keeps its own
 * checkpoint (so a rebuilt one can lag and catch up), but a batch is read and decoded once for
 * all of them: with ten read models that is ten times fewer reads than a runner each.
 * The per-projection fold and write is the runner's `applyBatch` (projections/runner.ts).
 */
import { isAppError } from '../../contracts/errors.ts';
import type { RecordedEvent } from '../../contracts/events.ts';
import type { DocumentWrite, EventStore, ReadStore } from '../../contracts/ports.ts';
import type { Projection } from '../../contracts/projection.ts';
import { applyBatch } from '../../projections/runner.ts';
import type { Logger } from './logger.ts';
import { resolveCollection } from './readModels.ts';

export interface ProjectionTarget {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- documents differ per projection
  projection: Projection<any>;
  /** Fed after each committed write (the search index). */
  afterWrite?(writes: Array<DocumentWrite<unknown>>): Promise<void>;
}

export interface ProjectionGroupOptions {
  eventStore: EventStore;
  readStore: ReadStore;
  targets: ProjectionTarget[];
  logger: Logger;
  /** Events read per batch. Default 2000. */
  batchSize?: number;
  /** Poll interval once caught up, in ms. Default 50. */
  idleMs?: number;
  /** How often the live loop re-reads aliases, to follow a rebuild switched by `marquee replay`. Default 2000 ms. */
  aliasRefreshMs?: number;
}

interface TargetState {
  target: ProjectionTarget;
  collection: string;
  checkpoint: number;
  /** Consecutive failures, for backoff; a failing projection holds only its own checkpoint. */
  failures: number;
  retryAt: number;
}


export class ProjectionGroup {
  private readonly options: Required<Omit<ProjectionGroupOptions, 'logger'>> & { logger: Logger };
  private states: TargetState[] = [];
  private stopped = false;
  private loop: Promise<void> | null = null;
  private lastAliasRefresh = 0;

  constructor(options: ProjectionGroupOptions) {
    this.options = { batchSize: 2000, idleMs: 50, aliasRefreshMs: 2000, ...options };
  }

  /** Lowest checkpoint of all projections: how far every read model has caught up. */
  get position(): number {
    return this.states.length === 0 ? 0 : Math.min(...this.states.map((s) => s.checkpoint));
  }

  async init(): Promise<void> {
    const { readStore, targets } = this.options;
    this.states = await Promise.all(
      targets.map(async (target) => {
        const collection = await resolveCollection(readStore, target.projection);
        return { target, collection, checkpoint: await readStore.getCheckpoint(collection), failures: 0, retryAt: 0 };
      }),
    );
    this.lastAliasRefresh = Date.now();
  }

  /** Folds everything appended up to now, then returns. `onProgress(position, head)` after each batch. */
  async catchUp(onProgress?: (position: number, head: number) => void): Promise<void> {
    if (this.states.length === 0) await this.init();
    const head = await this.options.eventStore.headPosition();
    onProgress?.(this.position, head);
    while (this.position < head && !this.stopped) {
      const progressed = await this.step(head);
      onProgress?.(this.position, head);
      if (!progressed) await sleep(this.options.idleMs);
    }
  }

  /** Runs live until stop(): new events are projected as they are appended. */
  start(): void {
    if (this.loop) return;
    this.loop = (async () => {
      if (this.states.length === 0) await this.init();
      while (!this.stopped) {
        try {
          if (Date.now() - this.lastAliasRefresh > this.options.aliasRefreshMs) await this.refreshAliases();
          const head = await this.options.eventStore.headPosition();
          const progressed = this.position < head ? await this.step(head) : false;
          if (!progressed) await sleep(this.options.idleMs);
        } catch (err) {
          // An outage of a store: say so and try again, never crash the process.
          this.options.logger.warn({ err }, 'projection loop failed; retrying in 1 s');
          await sleep(1000);
        }
      }
    })();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
  }

  private async refreshAliases(): Promise<void> {
    this.lastAliasRefresh = Date.now();
    for (const state of this.states) {
      const collection = await resolveCollection(this.options.readStore, state.target.projection);
      if (collection !== state.collection) {
        this.options.logger.info({ from: state.collection, to: collection }, `read model ${state.target.projection.name} switched`);
        state.collection = collection;
        state.checkpoint = await this.options.readStore.getCheckpoint(collection);
      }
    }
  }

  /** Reads one batch after the lowest checkpoint and applies it to every projection behind it. */
  private async step(head: number): Promise<boolean> {
    const now = Date.now();
    const ready = this.states.filter((s) => s.checkpoint < head && s.retryAt <= now);
    if (ready.length === 0) return false;
    const from = Math.min(...ready.map((s) => s.checkpoint));
    const batch = await this.options.eventStore.readAll({ after: from, limit: this.options.batchSize });
    if (batch.length === 0) return false;
    for (const state of ready) {
      const events = state.checkpoint === from ? batch : batch.filter((e) => e.position > state.checkpoint);
      if (events.length === 0) continue;
      await this.apply(state, events);
    }
    return true;
  }

  private async apply(state: TargetState, events: RecordedEvent[]): Promise<void> {
    const { eventStore, readStore, logger } = this.options;
    try {
      const info = await applyBatch(
        { projection: state.target.projection, eventStore, readStore, collection: state.collection, afterWrite: state.target.afterWrite },
        events,
      );
      state.checkpoint = info.position;
      state.failures = 0;
    } catch (err) {
      // Stop outcome: this projection holds its checkpoint and is retried with backoff; the
      // others go on. A retriable error (outage) is expected to heal; anything else is a bug
      // in the projection, logged loudly.
      state.failures += 1;
      state.retryAt = Date.now() + Math.min(30_000, 200 * 2 ** state.failures);
      const level = isAppError(err) && err.retriable ? 'warn' : 'error';
      logger[level]({ err, projection: state.target.projection.name, position: events[0]?.position }, 'projection batch failed; holding its checkpoint');
    }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
