/**
 * The ingest service: turns batches of observations into appended domain events.
 *
 * Per batch: route each observation to its stream, load each stream's state once (from an LRU
 * of folded states, else by reading and folding the stream), decide the stream's observations
 * in order while folding the new events in, then append every stream of the batch in ONE
 * `appendMany` call, always with the expected revision. A stream that another process appended
 * to meanwhile fails with `wrong_expected_revision`: its cache entry is dropped and its
 * observations are re-read and re-decided, a bounded number of times.
 *
 * No observation takes the batch down with it: one dated too far ahead, one whose decide
 * throws, one whose stream cannot be read or written (a key the engine refuses, an event it
 * cannot store) goes to the dead letters with its reason and the others go on. Only an outage
 * of the store (unavailable, closed) fails the batch, so the bus redelivers it once the store is
 * back; a redelivered observation id is a no-op. Dead letters are written once the batch's
 * events are durable, so a failed batch does not dead-letter twice.
 *
 * Observations arrive validated: the bus that decoded them checked their schema and the domain
 * rules (contracts/observationRules.ts) once; ingest does not check them again.
 */
import { AppError, isAppError } from '../../contracts/errors.ts';
import type { DomainEvent } from '../../contracts/events.ts';
import {
  systemClock,
  type AppendRequest,
  type AppendResult,
  type Clock,
  type ConsumeOptions,
  type Consumer,
  type EventStore,
  type ObservationBus,
  type ObservationRecord,
} from '../../contracts/ports.ts';
import { fold, routeObservation, type AnyDecider, type Route } from './deciders.ts';
import type { Decision } from './decision.ts';
import { Lru } from './lru.ts';

/** The subset of a pino logger the ingest uses. */
export interface IngestLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

const silentLogger: IngestLogger = { debug() {}, info() {}, warn() {}, error() {} };

/** Default of `maxFutureSkewMs`: one day. */
export const DEFAULT_MAX_FUTURE_SKEW_MS = 24 * 3600_000;

export interface IngestOptions {
  eventStore: EventStore;
  bus: ObservationBus;
  /** Where batch summaries, conflicts and dead letters are logged. Default: silent. */
  logger?: IngestLogger;
  /** Times batches, and is "now" for `maxFutureSkewMs`. Default: the system clock. */
  clock?: Clock;
  /**
   * How many folded stream states are kept in memory, least recently used evicted. Default
   * 100,000: a daily crawl of the sample touches about 60,000 streams (a title's offers in each
   * country are a stream of their own), and a state not cached is read back and folded from the
   * store on the next crawl: 1.7 s of CPU per later sample day with 10,000, 0.5 s with all of
   * them cached, for about 65 MB of heap.
   */
  cacheSize?: number;
  /**
   * How many times, within one batch, a stream whose append conflicted is re-read and
   * re-decided before the batch fails (and the bus redelivers it). Default 5.
   */
  maxConflictRetries?: number;
  /**
   * How far past the clock an `observedAt` may lie, in ms; later ones are dead-lettered. A
   * stream remembers the newest observedAt it folded and skips anything older as stale, so
   * one observation dated next year would freeze its stream until then. Default one day
   * (crawler clocks a little fast, time zones written wrongly).
   */
  maxFutureSkewMs?: number;
}

export interface IngestStats {
  /** Records in the batch. */
  observations: number;
  /** Domain events appended. */
  appended: number;
  /** Observations that changed nothing: unchanged, redelivered or stale. */
  skipped: number;
  /** Observations sent to the dead letters. */
  rejected: number;
  /** Streams that had to be re-read because another writer moved them (append conflicts, stale cache). */
  conflicts: number;
  /**
   * Appends another ingest process fenced by taking the Kafka event log over (each committed
   * nothing and was decided again): a count that keeps growing means two ingest processes keep
   * taking the log from each other.
   */
  takeovers: number;
}

export interface Ingest {
  /** Decides and appends one batch; resolves once its events are durable and rejects dead-lettered. */
  handleBatch(records: ObservationRecord[]): Promise<IngestStats>;
  /** Consumes the bus, handling each batch before the bus commits it. */
  run(options?: ConsumeOptions): Consumer;
  /** Sums of the stats of every batch handled so far. */
  totals(): IngestStats;
}

interface CachedStream {
  state: unknown;
  /** Last revision of the stream, -1 when it does not exist. */
  revision: number;
}

interface Item {
  /** Position in the batch, so dead letters are written in batch order. */
  index: number;
  record: ObservationRecord;
}

interface Rejected extends Item {
  reason: string;
}

interface StreamWork {
  stream: string;
  decider: AnyDecider;
  /** The stream's records in batch order. */
  records: Item[];
}

interface StreamOutcome {
  work: StreamWork;
  state: unknown;
  revision: number;
  fromCache: boolean;
  events: DomainEvent[];
  /** The records whose decision appended `events`: what a failed append dead-letters. */
  appending: Item[];
  skipped: number;
  rejects: Rejected[];
}

type Loaded = CachedStream & { fromCache: boolean };
type Appended = AppendResult | { error: unknown };

export function emptyStats(): IngestStats {
  return { observations: 0, appended: 0, skipped: 0, rejected: 0, conflicts: 0, takeovers: 0 };
}

function addStats(total: IngestStats, s: IngestStats): void {
  total.observations += s.observations;
  total.appended += s.appended;
  total.skipped += s.skipped;
  total.rejected += s.rejected;
  total.conflicts += s.conflicts;
  total.takeovers += s.takeovers;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message || err.name : String(err);
}

/**
 * Whether a store error says the store itself is out (unreachable, closed, full): the batch
 * then fails and is redelivered once it is back. Any other error concerns the one stream (a
 * key the engine refuses, an event it cannot store), and would fail the same way every time.
 */
export function isStoreOutage(err: unknown): boolean {
  if (!isAppError(err) || err.code === 'wrong_expected_revision') return false;
  return err.code === 'unavailable' || err.code === 'closed' || err.retriable;
}

/**
 * Whether an append failed only because another process took the event log over (the Kafka
 * event log's fenced writer, docs/kafka-event-log.md): it committed nothing, so deciding the
 * streams again against what the other process wrote and appending again is safe.
 */
export function isFencedAppend(err: unknown): boolean {
  return isAppError(err) && err.details?.fenced === true;
}

export function createIngest(options: IngestOptions): Ingest {
  const { eventStore, bus } = options;
  const logger = options.logger ?? silentLogger;
  const clock = options.clock ?? systemClock;
  const maxConflictRetries = options.maxConflictRetries ?? 5;
  const maxFutureSkewMs = options.maxFutureSkewMs ?? DEFAULT_MAX_FUTURE_SKEW_MS;
  const cache = new Lru<string, CachedStream>(options.cacheSize ?? 100_000);
  const totals = emptyStats();

  async function load(work: StreamWork): Promise<Loaded | { error: unknown }> {
    const cached = cache.get(work.stream);
    if (cached !== undefined) return { ...cached, fromCache: true };
    try {
      const history = await eventStore.readStream(work.stream);
      const last = history[history.length - 1];
      return { state: fold(work.decider, history), revision: last === undefined ? -1 : last.revision, fromCache: false };
    } catch (err) {
      return { error: err };
    }
  }

  function decideStream(work: StreamWork, loaded: Loaded): StreamOutcome {
    const outcome: StreamOutcome = {
      work, state: loaded.state, revision: loaded.revision, fromCache: loaded.fromCache, events: [], appending: [], skipped: 0, rejects: [],
    };
    for (const item of work.records) {
      let decision: Decision;
      try {
        decision = work.decider.decide(outcome.state, item.record.observation);
        // Fold at once: the next observation of this stream in the batch sees these events.
        if (decision.kind === 'append') outcome.state = fold(work.decider, decision.events, outcome.state);
      } catch (err) {
        // A decider that throws is a bug, but only this observation's: the stream goes on.
        outcome.rejects.push({ ...item, reason: `decide failed: ${messageOf(err)}` });
        continue;
      }
      if (decision.kind === 'append') {
        outcome.events.push(...decision.events);
        outcome.appending.push(item);
      } else if (decision.kind === 'skip') {
        outcome.skipped += 1;
      } else {
        outcome.rejects.push({ ...item, reason: decision.reason });
      }
    }
    return outcome;
  }

  /**
   * Appends every request in one write; if that write fails as a whole for a reason other than
   * an outage, appends each stream on its own to learn which one is at fault. Each request keeps
   * its expected revision, so a stream whose events did land (a store not atomic across streams)
   * conflicts and is re-decided, never appended twice.
   */
  async function appendAll(requests: AppendRequest[]): Promise<Appended[]> {
    const settle = (r: AppendResult | AppError | undefined): Appended =>
      r === undefined ? { error: new AppError('internal', 'appendMany returned no result') } : isAppError(r) ? { error: r } : r;
    if (requests.length === 0) return [];
    try {
      return (await eventStore.appendMany(requests)).map(settle);
    } catch (err) {
      if (isStoreOutage(err)) throw err;
      if (requests.length === 1) return [{ error: err }];
      logger.warn({ err, streams: requests.length }, 'a batch append failed; appending its streams one by one to find the one at fault');
      return Promise.all(requests.map(async (request) => {
        try {
          const [result] = await eventStore.appendMany([request]);
          return settle(result);
        } catch (error) {
          if (isStoreOutage(error)) throw error;
          return { error };
        }
      }));
    }
  }

  /**
   * Decides and appends streams until each is settled: appended, skipped or dead-lettered.
   * `isolated`: each work holds one observation, so a failure is that observation's.
   */
  async function settleStreams(works: StreamWork[], stats: IngestStats, rejects: Rejected[], isolated: boolean): Promise<void> {
    const settled = (o: StreamOutcome): void => {
      stats.appended += o.events.length;
      stats.skipped += o.skipped;
      rejects.push(...o.rejects);
    };
    /** The stream cannot take these observations' events; what the others decided stands. */
    const unwritable = (o: StreamOutcome, reason: string): void => {
      cache.delete(o.work.stream);
      stats.skipped += o.skipped;
      rejects.push(...o.rejects, ...o.appending.map((item) => ({ ...item, reason })));
    };
    const isolate: StreamWork[] = [];
    let pending = works;
    let fenced: unknown = null;
    for (let attempt = 0; pending.length > 0; attempt += 1) {
      if (fenced !== null && attempt > maxConflictRetries) throw fenced;
      if (attempt > maxConflictRetries) {
        throw new AppError(
          'wrong_expected_revision',
          `streams kept moving while ingesting (${pending.length} after ${maxConflictRetries} retries): ${pending.slice(0, 3).map((w) => w.stream).join(', ')}`,
          { retriable: true },
        );
      }
      const loaded = await Promise.all(pending.map(load));
      const outcomes: StreamOutcome[] = [];
      pending.forEach((work, i) => {
        const l = loaded[i] as Loaded | { error: unknown };
        if (!('error' in l)) {
          outcomes.push(decideStream(work, l));
          return;
        }
        if (isStoreOutage(l.error)) throw l.error;
        // A stream no read can reach (a name the engine refuses, a stored event that no longer folds).
        rejects.push(...work.records.map((item) => ({ ...item, reason: `reading stream ${work.stream} failed: ${messageOf(l.error)}` })));
      });
      const retry: StreamWork[] = [];

      // A cached state that decided nothing was never checked against the store by an append:
      // make sure no other writer moved the stream, or "unchanged" may be judged on old state.
      const unchecked = outcomes.filter((o) => o.events.length === 0 && o.fromCache);
      const revisions = await Promise.all(unchecked.map((o) => eventStore.streamRevision(o.work.stream)));
      const moved = new Set<StreamOutcome>();
      unchecked.forEach((o, i) => {
        if (revisions[i] !== o.revision) moved.add(o);
      });

      const appending = outcomes.filter((o) => o.events.length > 0);
      // Another ingest process taking the event log over fails this append whole and commits
      // none of it: the streams are decided again, after a short random pause so that two
      // writers do not keep taking the log from each other. Failing the batch instead restarted
      // the consumer (a group rebalance) with a growing backoff, up to 30 s per takeover.
      const results = await appendAll(appending.map((o) => ({
        stream: o.work.stream,
        events: o.events,
        expectedRevision: o.revision < 0 ? 'no_stream' : o.revision,
      }))).catch((err: unknown): Appended[] => {
        if (!isFencedAppend(err)) throw err;
        fenced = err;
        stats.takeovers += 1;
        logger.warn({ streams: appending.length, attempt }, 'event log taken over by another writer; deciding the streams again');
        return appending.map(() => ({ error: err }));
      });

      for (const o of outcomes) {
        if (o.events.length > 0) continue;
        if (moved.has(o)) {
          stats.conflicts += 1;
          cache.delete(o.work.stream);
          retry.push(o.work);
          continue;
        }
        cache.set(o.work.stream, { state: o.state, revision: o.revision });
        settled(o);
      }
      appending.forEach((o, i) => {
        const result = results[i] as Appended;
        if (!('error' in result)) {
          cache.set(o.work.stream, { state: o.state, revision: result.nextExpectedRevision });
          settled(o);
          return;
        }
        const { error } = result;
        if (isFencedAppend(error)) {
          cache.delete(o.work.stream);
          retry.push(o.work);
          return;
        }
        if (isAppError(error, 'wrong_expected_revision')) {
          stats.conflicts += 1;
          logger.warn({ stream: o.work.stream, expectedRevision: o.revision, attempt }, 'append conflict, re-deciding the stream');
          cache.delete(o.work.stream);
          retry.push(o.work);
          return;
        }
        if (isStoreOutage(error)) throw error;
        // Several observations made these events: append them one at a time to find the one at fault.
        if (!isolated && o.appending.length > 1) isolate.push(o.work);
        else unwritable(o, `append to ${o.work.stream} failed: ${messageOf(error)}`);
      });
      pending = retry;
      if (fenced !== null && retry.length > 0) await new Promise((resolve) => setTimeout(resolve, 20 + Math.random() * 180));
    }
    for (const work of isolate) {
      cache.delete(work.stream);
      for (const item of work.records) await settleStreams([{ ...work, records: [item] }], stats, rejects, true);
    }
  }

  async function handleBatch(records: ObservationRecord[]): Promise<IngestStats> {
    const started = clock.now().getTime();
    const stats = emptyStats();
    stats.observations = records.length;
    const rejects: Rejected[] = [];
    const latest = started + maxFutureSkewMs;

    const byStream = new Map<string, StreamWork>();
    records.forEach((record, index) => {
      const { observedAt } = record.observation;
      if (Date.parse(observedAt) > latest) {
        rejects.push({
          index,
          record,
          reason: `observedAt: ${observedAt} is later than now (${new Date(started).toISOString()}) plus the allowed clock skew of ${maxFutureSkewMs / 3600_000} h`,
        });
        return;
      }
      let route: Route;
      try {
        route = routeObservation(record.observation);
      } catch (err) {
        route = { reject: `routing failed: ${messageOf(err)}` };
      }
      if ('reject' in route) {
        rejects.push({ index, record, reason: route.reject });
        return;
      }
      let work = byStream.get(route.stream);
      if (work === undefined) {
        work = { stream: route.stream, decider: route.decider, records: [] };
        byStream.set(route.stream, work);
      }
      work.records.push({ index, record });
    });

    await settleStreams([...byStream.values()], stats, rejects, false);

    // In batch order, so the dead letters read like the input.
    rejects.sort((a, b) => a.index - b.index);
    for (const { record, reason } of rejects) {
      logger.info({ source: record.source, observationId: record.observation?.observationId, reason }, 'observation dead-lettered');
      await bus.deadLetter(record, reason);
    }
    stats.rejected = rejects.length;
    addStats(totals, stats);
    logger.debug({ ...stats, streams: byStream.size, ms: clock.now().getTime() - started }, 'ingest batch');
    return stats;
  }

  return {
    handleBatch,
    run(consumeOptions: ConsumeOptions = {}): Consumer {
      return bus.consume(async (batch) => {
        await handleBatch(batch);
      }, consumeOptions);
    },
    totals: () => ({ ...totals }),
  };
}
