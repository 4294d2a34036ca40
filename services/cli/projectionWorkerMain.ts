/**
 * The projection worker: every read-model projection, run live in a thread of its own, so that
 * while the main thread ingests, the read models are folded on the other core (used by the
 * first start's sample load). It opens its own stores from the configuration and stops when
 * told to, after the batch in flight.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { EventStore, ReadStore } from '../../contracts/ports.ts';
import type { Projection } from '../../contracts/projection.ts';
import { ALL_PROJECTIONS } from '../../projections/index.ts';
import { openEventStore, openReadStore, projectionBatchSize, projectionParallelism } from '../shared/adapters.ts';
import type { Config } from '../shared/config.ts';
import { createLogger } from '../shared/logger.ts';
import { ProjectionGroup } from '../../projections/group.ts';

const { config, ahead = [], aheadFirst = false } = workerData as { config: Config; ahead?: string[]; aheadFirst?: boolean };
const logger = createLogger({ level: config.logLevel, json: config.logJson, name: 'marquee-projections' });
const { eventStore } = await openEventStore(config);
const { readStore: store } = await openReadStore(config);
/** Tells the main thread a checkpoint it may be waiting for, once committed. */
const told = (name: string, position: number): void => parentPort?.postMessage({ type: 'checkpoint', name, position });
// Every committed checkpoint is told to the main thread (projectionThread.ts), so that a wait
// for the read models ends with the batch that completes it rather than at a later poll.
const readStore: ReadStore = {
  ...store,
  async writeBatch(collection, writes, checkpoint) {
    const result = await store.writeBatch(collection, writes, checkpoint);
    if (checkpoint) told(checkpoint.name, checkpoint.position);
    return result;
  },
  async setCheckpoint(name, position) {
    await store.setCheckpoint(name, position);
    told(name, position);
  },
};
// No search sink here: the search index lives in the main thread, which refills it from the
// `search` read model once the load is done.
const batchSize = projectionBatchSize(config);
const groupOf = (projections: ReadonlyArray<Projection<unknown>>, log: EventStore, store: ReadStore = readStore): ProjectionGroup =>
  new ProjectionGroup({
    eventStore: log,
    readStore: store,
    projections,
    logger,
    batchSize,
    parallel: projectionParallelism(config),
    // The pause of a catch-up that made no progress (every due projection waiting out a retry)
    // and of the live loop: on MongoDB each look costs round trips per read model.
    idleMs: config.mongodbUrl ? 1000 : 10,
  });

/**
 * On MongoDB the worker gathers: it folds only full batches while the log grows, and the rest
 * up to the position the main thread waits for (`upTo`, told by projectionThread.ts), so a day
 * of the sample's churn (about 12,000 events) is one batch, not one per second of its ingest.
 * Each batch costs round trips per read model whatever its size (a checkpoint write, a parked
 * lookup), and a document changed in several batches (a title's `search` document, a block of
 * 25 titles in `ranking_inputs`) is read and replaced in each. Day 1 still folds full batches
 * while it is ingested. On LMDB a batch costs little: the worker follows the log live, unless
 * told to put the `ahead` read models first (below).
 *
 * The projections named `ahead` (what the daily ranking reads) are a lane of their own, with
 * their own horizon: a wait that names only them moves only that lane, so the other read models
 * fold days 2-7 of the sample in a few full batches and at the end, a document changed on
 * several days written once per batch instead of once per day (on FerretDB each replace costs
 * about 5 ms of the server's CPU whatever its size). The two lanes fold at once, each its own
 * group over the same log; their checkpoints are per read model, so either may run ahead.
 *
 * On LMDB (`aheadFirst`, the sample load) the lanes gather too, and share this thread's CPU: the
 * other lane lets the ranking's lane go first (`yieldTo`). Followed live by one group, the
 * ranking's two read models were as far behind as the other fourteen: once the first day's
 * crawl was ingested, its ranking waited 5 s for every read model's backlog with the main thread
 * idle, and each later day waited for the last one's ranking events to be folded into the
 * rankings and trending. Side by side without yielding, the ranking's lane still moved only a
 * batch for each batch of the other lane, whose folds run back to back as one task. Each lane
 * reads the log for itself (1.6 s of CPU more over a sample load: holding the batches for the
 * other lane would take ~170 MB per 100,000 events it lags behind).
 */
interface Lane {
  names: ReadonlySet<string>;
  group: ProjectionGroup;
  horizon: number;
  wake: (() => void) | null;
}
let stopping = false;
const laned = ahead.length > 0 && (config.mongodbUrl !== null || aheadFirst);
/** The pause of a gathering lane with nothing to fold: on MongoDB each look costs round trips per read model. */
const idlePauseMs = config.mongodbUrl ? 1000 : 20;
const lanes: Lane[] = (
  laned
    ? [ALL_PROJECTIONS.filter((p) => ahead.includes(p.name)), ALL_PROJECTIONS.filter((p) => !ahead.includes(p.name))]
    : [ALL_PROJECTIONS]
).map((projections, i) => ({
  names: new Set(projections.map((p) => p.name)),
  group:
    i > 0 && config.mongodbUrl === null
      ? groupOf(projections, yieldTo(eventStore, () => lanes[0] as Lane), takingTurns(readStore))
      : groupOf(projections, eventStore),
  horizon: 0,
  wake: null,
}));

/** Where a gathering lane folds to now: its full batches, and the rest up to its horizon. */
function target(lane: Lane, head: number): number {
  const from = lane.group.position;
  const full = from + Math.floor((head - from) / batchSize) * batchSize;
  return Math.max(full, Math.min(lane.horizon, head));
}

/** Most a batch of the other lane waits for the ranking's lane (one failing backs off for longer). */
const YIELD_MS = 1000;

/** The log as the other lane reads it: before each batch, waits (up to YIELD_MS) while `first()` has a batch to fold. */
function yieldTo(log: EventStore, first: () => Lane): EventStore {
  return {
    ...log,
    async readAll(options) {
      for (const until = Date.now() + YIELD_MS; Date.now() < until; ) {
        const lane = first();
        if (target(lane, await log.headPosition()) <= lane.group.position) break;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      return log.readAll(options);
    },
  };
}

/**
 * The read store as the other lane's folds use it on LMDB: each read they start before a fold
 * (`getMany` of the batch's documents, `count` of the parked ones) resolves a turn of the event
 * loop after the one before it. A batch's 14 folds then run one per turn instead of back to back
 * in one task, and the ranking's lane, woken by a wait in between, waits for one fold instead of
 * a whole batch (a few tenths of a second at each of the sample's days).
 */
function takingTurns(store: ReadStore): ReadStore {
  let turn: Promise<void> = Promise.resolve();
  // Each link waits for an immediate queued once the one before ran: an immediate queued by an
  // immediate runs at the next turn of the loop, after its timers and I/O.
  const next = (): Promise<void> => (turn = turn.then(() => new Promise<void>((resolve) => setImmediate(resolve))));
  return {
    ...store,
    getMany: (collection, keys) => next().then(() => store.getMany(collection, keys)),
    count: (collection, options) => next().then(() => store.count(collection, options)),
  };
}

async function gather(lane: Lane): Promise<void> {
  const { group } = lane;
  let ready = false;
  while (!stopping) {
    let pause = idlePauseMs;
    try {
      if (!ready) await group.init();
      ready = true;
      const upTo = target(lane, await eventStore.headPosition());
      if (upTo > group.position) {
        // A batch that fails is retried by the group after its pause, until it gets through.
        await group.catchUp(undefined, upTo);
        pause = 0;
      }
    } catch (err) {
      // A read of the log or of the checkpoints failed (an outage): try again, as the live group would.
      logger.warn({ err }, 'projection worker: reading the log or the checkpoints failed; retrying in 1 s');
      pause = 1000;
    }
    if (pause === 0 || stopping) continue;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, pause);
      lane.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    lane.wake = null;
  }
}
const gathering = config.mongodbUrl !== null || laned ? Promise.all(lanes.map(gather)) : null;
if (gathering === null) for (const lane of lanes) lane.group.start();
parentPort?.postMessage({ type: 'started' });
parentPort?.on('message', (message: { type: string; position?: number; projections?: string[] }) => {
  if (message.type === 'upTo' && typeof message.position === 'number') {
    // A wait that names projections moves only the lanes holding one of them.
    const named = message.projections;
    for (const lane of lanes) {
      if (named !== undefined && !named.some((name) => lane.names.has(name))) continue;
      lane.horizon = Math.max(lane.horizon, message.position);
      lane.wake?.();
    }
    return;
  }
  if (message.type !== 'stop') return;
  void (async () => {
    stopping = true;
    for (const lane of lanes) lane.wake?.();
    // Settled, not all: a lane whose stop fails must not leave the stores open and the
    // parent waiting for 'stopped' (nor be an unhandled rejection in this thread).
    await Promise.allSettled(lanes.map((lane) => lane.group.stop()));
    await gathering?.catch(() => undefined);
    await Promise.allSettled([eventStore.close(), readStore.close()]);
    parentPort?.postMessage({ type: 'stopped' });
  })();
});
