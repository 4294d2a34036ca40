/**
 * The projection runner of a process: several projections driven by ONE subscription to the
 * event log (`EventStore.subscribeAll`, whichever adapter), so a batch is read and decoded once
 * for all of them. Each projection keeps its own checkpoint (a rebuilt one lags and catches up);
 * the per-projection fold and write is `applyBatch` (runner.ts), which parks a document whose
 * write keeps failing (parking.ts) and moves on. What the group holds back with its backoff is
 * therefore only an outage of a store, or a projection that throws (a bug), never one document.
 *
 * Live, a projection whose batch fails is set aside with a growing pause while the others go
 * on; when its pause is over (or every `aliasRefreshMs`, to follow a rebuild switched by
 * `marquee replay`) the subscription is restarted from the lowest checkpoint of the projections
 * due, so the one that lagged is fed again. Events a projection already holds are skipped.
 *
 * Depends on ports only: health and logs go through the callbacks the composition root hands in.
 */
import { isAppError } from '../contracts/errors.ts';
import type { RecordedEvent } from '../contracts/events.ts';
import type { EventStore, ReadStore, Subscription } from '../contracts/ports.ts';
import type { Projection } from '../contracts/projection.ts';
import { resolveCollection } from './collections.ts';
import { countParked } from './parking.ts';
import { applyBatch, eventsAfter } from './runner.ts';

/** What the runner logs: a pino logger fits. */
export interface RunnerLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** Where the live runner shows itself (a Health component in the composition root). */
export interface RunnerReport {
  /** `running` while live with no projection backing off; `backing_off` with the error; `stopped`. */
  state(state: 'running' | 'backing_off' | 'stopped', error?: unknown): void;
  /** Parked events per projection (only those with any). */
  parked(parked: Record<string, number>): void;
}

export interface ProjectionGroupOptions {
  eventStore: EventStore;
  readStore: ReadStore;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- documents differ per projection
  projections: ReadonlyArray<Projection<any>>;
  logger: RunnerLog;
  /** Events read per batch. Default 2000. */
  batchSize?: number;
  /**
   * Projections folded at once per batch. Default 1. More overlaps their round trips on a read
   * store behind a network (MongoDB, FerretDB); an embedded store gains nothing from it.
   */
  parallel?: number;
  /** Poll interval of the subscription once caught up, in ms. Default 50. */
  idleMs?: number;
  /** How often the live runner re-reads aliases, to follow a rebuild switched by `marquee replay`. Default 2000 ms. */
  aliasRefreshMs?: number;
  report?: RunnerReport;
  /**
   * Called before each batch is written; throwing stops the write (the projection holds its
   * checkpoint). The projector role fences here: a process whose lease ran out writes nothing.
   */
  guard?(): void;
}

interface TargetState {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- documents differ per projection
  projection: Projection<any>;
  collection: string;
  checkpoint: number;
  /** Consecutive failures, for backoff; a failing projection holds only its own checkpoint. */
  failures: number;
  retryAt: number;
  parked: number;
}

export class ProjectionGroup {
  private readonly options: ProjectionGroupOptions & Required<Pick<ProjectionGroupOptions, 'batchSize' | 'idleMs' | 'aliasRefreshMs' | 'parallel'>>;
  private states: TargetState[] = [];
  private stopped = false;
  /** Whether start() was called: only the live runner reports a state. */
  private live = false;
  private loop: Promise<void> | null = null;
  private subscription: Subscription | null = null;
  private wake: (() => void) | null = null;

  constructor(options: ProjectionGroupOptions) {
    this.options = { batchSize: 2000, idleMs: 50, aliasRefreshMs: 2000, parallel: 1, ...options };
  }

  /** Lowest checkpoint of all projections: how far every read model has caught up. */
  get position(): number {
    return this.states.length === 0 ? 0 : Math.min(...this.states.map((s) => s.checkpoint));
  }

  async init(): Promise<void> {
    const { readStore, projections } = this.options;
    this.states = await Promise.all(
      projections.map(async (projection) => {
        const collection = await resolveCollection(readStore, projection);
        const [checkpoint, parked] = await Promise.all([readStore.getCheckpoint(collection), countParked(readStore, collection)]);
        return { projection, collection, checkpoint, failures: 0, retryAt: 0, parked };
      }),
    );
    this.showParked();
  }

  /** Parked events per projection (only those with any). */
  get parked(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const s of this.states) if (s.parked > 0) out[s.projection.name] = s.parked;
    return out;
  }

  private showState(): void {
    if (this.live && this.states.every((s) => s.failures === 0)) this.options.report?.state('running');
  }

  private showParked(): void {
    this.options.report?.parked(this.parked);
  }

  /**
   * Folds everything appended up to now (the head as read at the start), then returns: start-up,
   * `marquee crawl`, the sample load. `onProgress(position, head)` after each batch. A failing
   * projection is retried after its pause until it gets through. With `upTo`, stops there
   * instead of at the head (a caller that wants the log in batches of its choosing).
   *
   * A guard that refuses ends the catch-up with its error, where the live runner only holds
   * back: a catch-up has no one above it to notice a lost lease and stop it, and retrying would
   * spin until the holder it lost to was done. The caller stands by or waits for that holder.
   */
  async catchUp(onProgress?: (position: number, head: number) => void, upTo = Number.POSITIVE_INFINITY): Promise<void> {
    if (this.states.length === 0) await this.init();
    const head = Math.min(upTo, await this.options.eventStore.headPosition());
    onProgress?.(this.position, head);
    while (this.position < head && !this.stopped) {
      const due = this.states.filter((s) => s.checkpoint < head && s.retryAt <= Date.now());
      let progressed = false;
      if (due.length > 0) {
        this.options.guard?.();
        const from = Math.min(...due.map((s) => s.checkpoint));
        const batch = await this.options.eventStore.readAll({ after: from, limit: Math.min(this.options.batchSize, head - from) });
        progressed = batch.length > 0 && (await this.applyToAll(due, batch));
      }
      onProgress?.(this.position, head);
      if (!progressed) await sleep(this.options.idleMs);
    }
  }

  /** Runs live until stop(): new events are projected as they are appended. */
  start(): void {
    if (this.loop) return;
    this.live = true;
    this.loop = (async () => {
      while (!this.stopped) {
        try {
          if (this.states.length === 0) await this.init();
          else await this.refreshAliases();
          this.showState();
          await this.subscribeUntilRefresh();
        } catch (err) {
          // An outage of a store or of the log: say so and try again, never crash the process.
          if (this.stopped) break;
          this.options.logger.warn({ err }, 'projection subscription failed; retrying in 1 s');
          this.options.report?.state('backing_off', err);
          await sleep(1000);
        }
      }
      this.options.report?.state('stopped');
    })();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.subscription?.stop();
    await this.loop;
  }

  /**
   * One subscription from the lowest checkpoint of the projections due, fed to each of them,
   * until the next alias refresh or the end of a projection's pause (then the caller
   * resubscribes, so a projection that lagged is fed from its own checkpoint again).
   */
  private async subscribeUntilRefresh(): Promise<void> {
    const now = Date.now();
    const due = this.states.filter((s) => s.retryAt <= now);
    const pauses = this.states.filter((s) => s.retryAt > now).map((s) => s.retryAt - now);
    const until = Math.min(this.options.aliasRefreshMs, ...pauses);
    if (due.length === 0) {
      await this.sleepUnlessStopped(until);
      return;
    }
    const from = Math.min(...due.map((s) => s.checkpoint));
    const subscription = this.options.eventStore.subscribeAll(
      async (batch) => {
        await this.applyToAll(due, batch);
      },
      { after: from, batchSize: this.options.batchSize, idleMs: this.options.idleMs },
    );
    this.subscription = subscription;
    try {
      await Promise.race([subscription.done, this.sleepUnlessStopped(until)]);
    } finally {
      await subscription.stop();
      this.subscription = null;
    }
    await subscription.done;
  }

  private sleepUnlessStopped(ms: number): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
  }

  private async refreshAliases(): Promise<void> {
    // Read together: the subscription waits for this, and one after another they were 16 round
    // trips every refresh on a read store behind a network.
    const collections = await Promise.all(this.states.map((state) => resolveCollection(this.options.readStore, state.projection)));
    for (const [index, state] of this.states.entries()) {
      const collection = collections[index] as string;
      if (collection === state.collection) continue;
      this.options.logger.info({ from: state.collection, to: collection }, `read model ${state.projection.name} switched`);
      state.collection = collection;
      state.checkpoint = await this.options.readStore.getCheckpoint(collection);
      state.parked = await countParked(this.options.readStore, collection);
      this.showParked();
    }
  }

  /** Applies a batch to each projection not yet past it; true when any moved on. */
  private async applyToAll(targets: TargetState[], batch: RecordedEvent[]): Promise<boolean> {
    let progressed = false;
    const now = Date.now();
    const queue = targets.filter((state) => state.retryAt <= now);
    const handled = handledEventsOf(queue, batch);
    // `apply` never throws (a failure sets the projection aside), so the workers never reject.
    const worker = async () => {
      for (let state = queue.shift(); state !== undefined && !this.stopped; state = queue.shift()) {
        // A projection that lagged is fed again from its own checkpoint.
        const events = eventsAfter(batch, state.checkpoint);
        if (events.length === 0) continue;
        progressed = (await this.apply(state, events, eventsAfter(handled.get(state) ?? [], state.checkpoint))) || progressed;
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, Math.min(this.options.parallel, queue.length)) }, worker));
    return progressed;
  }

  private async apply(state: TargetState, events: RecordedEvent[], handledEvents: readonly RecordedEvent[]): Promise<boolean> {
    const { eventStore, readStore, logger } = this.options;
    try {
      this.options.guard?.();
      const info = await applyBatch({ projection: state.projection, eventStore, readStore, collection: state.collection }, events, handledEvents);
      state.checkpoint = info.position;
      state.failures = 0;
      state.retryAt = 0;
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
      return true;
    } catch (err) {
      // This projection holds its checkpoint and is retried after a pause; the others go on. A
      // retriable error (an outage) is expected to heal; anything else is a bug, logged loudly.
      state.failures += 1;
      state.retryAt = Date.now() + Math.min(30_000, 200 * 2 ** state.failures);
      if (this.live) this.options.report?.state('backing_off', err);
      const level = isAppError(err) && err.retriable ? 'warn' : 'error';
      logger[level]({ err, projection: state.projection.name, position: events[0]?.position }, 'projection batch failed; holding its checkpoint');
      return false;
    }
  }
}

/**
 * Each target's events of the batch, of the types its projection handles, in log order: one
 * pass over the batch for all of them. Each projection picking its own was a pass per
 * projection (17 over every batch of a first start), most of them for a type or two.
 */
function handledEventsOf(targets: readonly TargetState[], batch: readonly RecordedEvent[]): Map<TargetState, RecordedEvent[]> {
  const byType = new Map<string, RecordedEvent[][]>();
  const out = new Map<TargetState, RecordedEvent[]>();
  for (const state of targets) {
    const events: RecordedEvent[] = [];
    out.set(state, events);
    for (const type of new Set(state.projection.canHandle)) {
      const lists = byType.get(type);
      if (lists) lists.push(events);
      else byType.set(type, [events]);
    }
  }
  for (const event of batch) {
    const lists = byType.get(event.type);
    if (lists !== undefined) for (const list of lists) list.push(event);
  }
  return out;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
