/**
 * Runs several projections off ONE read of the event log. Each projection keeps its own
 * checkpoint (so a rebuilt one can lag and catch up), but a batch is read and decoded once for
 * all of them: with ten read models that is ten times fewer reads than a runner each.
 * The per-projection fold and write is the runner's `applyBatch` (projections/runner.ts), which
 * parks a document whose write keeps failing (projections/parking.ts) and moves on; what this
 * group holds back with its backoff is therefore only an outage of a store or a projection that
 * throws (a bug), never one bad document.
 */
import { isAppError } from '../../contracts/errors.ts';
import type { RecordedEvent } from '../../contracts/events.ts';
import type { EventStore, ReadStore } from '../../contracts/ports.ts';
import type { Projection } from '../../contracts/projection.ts';
import { countParked } from '../../projections/parking.ts';
import { applyBatch } from '../../projections/runner.ts';
import type { Health } from './health.ts';
import type { Logger } from './logger.ts';
import { resolveCollection } from './readModels.ts';

export interface ProjectionTarget {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- documents differ per projection
  projection: Projection<any>;
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
  /**
   * Where the group shows itself: a non-critical loop component (`running` while live,
   * `backing_off` with the error while a projection's batch fails, `stopped`) whose detail holds
   * the parked events per projection. Non-critical: lagging read models still answer, so they
   * never make `/readyz` refuse traffic. Default: nowhere.
   */
  health?: Health;
  /** The Health component whose detail holds the parked counts. Default `projections`. */
  healthComponent?: string;
}

interface TargetState {
  target: ProjectionTarget;
  collection: string;
  checkpoint: number;
  /** Consecutive failures, for backoff; a failing projection holds only its own checkpoint. */
  failures: number;
  retryAt: number;
  /** Parked events of this projection's checkpoint. */
  parked: number;
}


export class ProjectionGroup {
  private readonly options: Required<Omit<ProjectionGroupOptions, 'logger' | 'health'>> & Pick<ProjectionGroupOptions, 'logger' | 'health'>;
  private states: TargetState[] = [];
  private stopped = false;
  /** Whether start() was called: only the live loop reports a state to Health. */
  private live = false;
  private loop: Promise<void> | null = null;
  private lastAliasRefresh = 0;

  constructor(options: ProjectionGroupOptions) {
    this.options = { batchSize: 2000, idleMs: 50, aliasRefreshMs: 2000, healthComponent: 'projections', ...options };
    this.options.health?.register(this.options.healthComponent, 'loop', { critical: false });
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
        const [checkpoint, parked] = await Promise.all([readStore.getCheckpoint(collection), countParked(readStore, collection)]);
        return { target, collection, checkpoint, failures: 0, retryAt: 0, parked };
      }),
    );
    this.lastAliasRefresh = Date.now();
    this.showParked();
  }

  /** Parked events per projection (only those with any). */
  get parked(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const s of this.states) if (s.parked > 0) out[s.target.projection.name] = s.parked;
    return out;
  }

  /** `running` once the live loop runs and no projection is backing off. */
  private showState(): void {
    if (this.live && this.states.every((s) => s.failures === 0)) this.options.health?.set(this.options.healthComponent, 'running');
  }

  private showParked(): void {
    this.options.health?.detail(this.options.healthComponent, { parked: this.parked });
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
    this.live = true;
    this.loop = (async () => {
      if (this.states.length === 0) await this.init();
      this.showState();
      while (!this.stopped) {
        try {
          if (Date.now() - this.lastAliasRefresh > this.options.aliasRefreshMs) await this.refreshAliases();
          const head = await this.options.eventStore.headPosition();
          const progressed = this.position < head ? await this.step(head) : false;
          if (!progressed) await sleep(this.options.idleMs);
        } catch (err) {
          // An outage of a store: say so and try again, never crash the process.
          this.options.logger.warn({ err }, 'projection loop failed; retrying in 1 s');
          this.options.health?.set(this.options.healthComponent, 'backing_off', err);
          await sleep(1000);
        }
      }
    })();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
    if (this.live) this.options.health?.set(this.options.healthComponent, 'stopped');
  }

  private async refreshAliases(): Promise<void> {
    this.lastAliasRefresh = Date.now();
    for (const state of this.states) {
      const collection = await resolveCollection(this.options.readStore, state.target.projection);
      if (collection !== state.collection) {
        this.options.logger.info({ from: state.collection, to: collection }, `read model ${state.target.projection.name} switched`);
        state.collection = collection;
        state.checkpoint = await this.options.readStore.getCheckpoint(collection);
        state.parked = await countParked(this.options.readStore, collection);
        this.showParked();
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
      const info = await applyBatch({ projection: state.target.projection, eventStore, readStore, collection: state.collection }, events);
      state.checkpoint = info.position;
      state.failures = 0;
      this.showState();
      if (info.parked.length > 0) {
        for (const doc of info.parked) {
          const newest = doc.events[doc.events.length - 1];
          logger.error(
            { projection: doc.projection, documentId: doc.documentId.slice(0, 200), position: newest?.position, reason: newest?.reason },
            'projection write parked; retry with `marquee parked retry` once fixed',
          );
        }
        state.parked = await countParked(readStore, state.collection);
        this.showParked();
      }
    } catch (err) {
      // Stop outcome: this projection holds its checkpoint and is retried with backoff; the
      // others go on. A retriable error (outage) is expected to heal; anything else is a bug
      // in the projection, logged loudly.
      state.failures += 1;
      state.retryAt = Date.now() + Math.min(30_000, 200 * 2 ** state.failures);
      if (this.live) this.options.health?.set(this.options.healthComponent, 'backing_off', err);
      const level = isAppError(err) && err.retriable ? 'warn' : 'error';
      logger[level]({ err, projection: state.target.projection.name, position: events[0]?.position }, 'projection batch failed; holding its checkpoint');
    }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
