/**
 * The ingest service: turns batches of observations into appended domain events.
 *
 * Per batch: route each observation to its stream (rejecting invalid ones), load each stream's
 * state once (from an LRU of folded states, else by reading and folding the stream), decide the
 * stream's observations in order while folding the new events in, then append every stream of
 * the batch in ONE `appendMany` call, always with the expected revision. A stream that another
 * process appended to meanwhile fails with `wrong_expected_revision`: its cache entry is dropped
 * and its observations are re-read and re-decided, a bounded number of times. Rejected
 * observations go to the dead letters only once the batch's events are durable, so a batch that
 * fails (and is redelivered by the bus) does not dead-letter twice.
 */
import { validateObservation } from '../../contracts/codec.ts';
import { AppError, isAppError } from '../../contracts/errors.ts';
import type { DomainEvent } from '../../contracts/events.ts';
import type { Observation } from '../../contracts/observations.ts';
import {
  systemClock,
  type AppendRequest,
  type Clock,
  type ConsumeOptions,
  type Consumer,
  type EventStore,
  type ObservationBus,
  type ObservationRecord,
} from '../../contracts/ports.ts';
import { fold, routeObservation, type AnyDecider } from './deciders.ts';
import { Lru } from './lru.ts';

/** The subset of a pino logger the ingest uses. */
export interface IngestLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

const silentLogger: IngestLogger = { debug() {}, info() {}, warn() {}, error() {} };

export interface IngestOptions {
  eventStore: EventStore;
  bus: ObservationBus;
  /** Where batch summaries, conflicts and dead letters are logged. Default: silent. */
  logger?: IngestLogger;
  /** Times batches for the logs. Default: the system clock. */
  clock?: Clock;
  /** How many folded stream states are kept in memory, least recently used evicted. Default 10000. */
  cacheSize?: number;
  /**
   * How many times, within one batch, a stream whose append conflicted is re-read and
   * re-decided before the batch fails (and the bus redelivers it). Default 5.
   */
  maxConflictRetries?: number;
  /**
   * A further check run on every observation after the ingest's own field checks, returning why
   * it is invalid or null. Default: the Avro schema check `validateObservation` of
   * contracts/codec.ts, so nothing is appended that the schemas could not carry (extra fields
   * included).
   */
  validate?: (observation: Observation) => string | null;
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

interface StreamWork {
  stream: string;
  decider: AnyDecider;
  /** The stream's records in batch order, with their index in the batch. */
  records: Array<{ index: number; record: ObservationRecord }>;
}

interface StreamOutcome {
  work: StreamWork;
  state: unknown;
  revision: number;
  fromCache: boolean;
  events: DomainEvent[];
  skipped: number;
  rejects: Array<{ index: number; record: ObservationRecord; reason: string }>;
}

export function emptyStats(): IngestStats {
  return { observations: 0, appended: 0, skipped: 0, rejected: 0, conflicts: 0 };
}

function addStats(total: IngestStats, s: IngestStats): void {
  total.observations += s.observations;
  total.appended += s.appended;
  total.skipped += s.skipped;
  total.rejected += s.rejected;
  total.conflicts += s.conflicts;
}

export function createIngest(options: IngestOptions): Ingest {
  const { eventStore, bus } = options;
  const logger = options.logger ?? silentLogger;
  const clock = options.clock ?? systemClock;
  const maxConflictRetries = options.maxConflictRetries ?? 5;
  const cache = new Lru<string, CachedStream>(options.cacheSize ?? 10_000);
  const totals = emptyStats();
  const extraCheck = options.validate ?? validateObservation;
  const validate = (o: Observation): string | null => {
    try {
      return extraCheck(o);
    } catch (err) {
      // A checker that throws on a malformed observation still only refuses that observation.
      return `schema: ${err instanceof Error ? err.message : String(err)}`;
    }
  };

  async function load(work: StreamWork): Promise<CachedStream & { fromCache: boolean }> {
    const cached = cache.get(work.stream);
    if (cached !== undefined) return { ...cached, fromCache: true };
    const history = await eventStore.readStream(work.stream);
    const last = history[history.length - 1];
    return { state: fold(work.decider, history), revision: last === undefined ? -1 : last.revision, fromCache: false };
  }

  function decideStream(work: StreamWork, loaded: CachedStream & { fromCache: boolean }): StreamOutcome {
    const outcome: StreamOutcome = {
      work, state: loaded.state, revision: loaded.revision, fromCache: loaded.fromCache, events: [], skipped: 0, rejects: [],
    };
    for (const { index, record } of work.records) {
      const decision = work.decider.decide(outcome.state, record.observation);
      if (decision.kind === 'append') {
        // Fold at once: the next observation of this stream in the batch sees these events.
        outcome.state = fold(work.decider, decision.events, outcome.state);
        outcome.events.push(...decision.events);
      } else if (decision.kind === 'skip') {
        outcome.skipped += 1;
      } else {
        outcome.rejects.push({ index, record, reason: decision.reason });
      }
    }
    return outcome;
  }

  async function handleBatch(records: ObservationRecord[]): Promise<IngestStats> {
    const started = clock.now().getTime();
    const stats = emptyStats();
    stats.observations = records.length;
    const rejects: Array<{ index: number; record: ObservationRecord; reason: string }> = [];

    const byStream = new Map<string, StreamWork>();
    records.forEach((record, index) => {
      const route = routeObservation(record.observation, validate);
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

    const settle = (o: StreamOutcome): void => {
      stats.appended += o.events.length;
      stats.skipped += o.skipped;
      rejects.push(...o.rejects);
    };

    let pending = [...byStream.values()];
    for (let attempt = 0; pending.length > 0; attempt += 1) {
      if (attempt > maxConflictRetries) {
        throw new AppError(
          'wrong_expected_revision',
          `streams kept moving while ingesting (${pending.length} after ${maxConflictRetries} retries): ${pending.slice(0, 3).map((w) => w.stream).join(', ')}`,
          { retriable: true },
        );
      }
      const loaded = await Promise.all(pending.map(load));
      const outcomes = pending.map((work, i) => decideStream(work, loaded[i] as CachedStream & { fromCache: boolean }));
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
      const requests: AppendRequest[] = appending.map((o) => ({
        stream: o.work.stream,
        events: o.events,
        expectedRevision: o.revision < 0 ? 'no_stream' : o.revision,
      }));
      const results = requests.length > 0 ? await eventStore.appendMany(requests) : [];

      for (const o of outcomes) {
        if (o.events.length > 0) continue;
        if (moved.has(o)) {
          stats.conflicts += 1;
          cache.delete(o.work.stream);
          retry.push(o.work);
          continue;
        }
        cache.set(o.work.stream, { state: o.state, revision: o.revision });
        settle(o);
      }
      appending.forEach((o, i) => {
        const result = results[i];
        if (result === undefined) throw new AppError('internal', `appendMany returned no result for ${o.work.stream}`);
        if (isAppError(result)) {
          if (result.code !== 'wrong_expected_revision') throw result;
          stats.conflicts += 1;
          logger.warn({ stream: o.work.stream, expectedRevision: o.revision, attempt }, 'append conflict, re-deciding the stream');
          cache.delete(o.work.stream);
          retry.push(o.work);
          return;
        }
        cache.set(o.work.stream, { state: o.state, revision: result.nextExpectedRevision });
        settle(o);
      });
      pending = retry;
    }

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
