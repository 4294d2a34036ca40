/**
 * The embedded event store: LMDB named databases inside the shared environment.
 *
 * - `es:events`  global position (ordered-binary number) -> `{ type, data, metadata, streamId, revision, recordedAt }`
 * - `es:streams` `[streamId, revision]` -> global position (the per-stream index): one entry per
 *   run of events a single append wrote, keyed by the run's first revision. The events of one
 *   append have consecutive positions, so the run's revision `r` is at `position + (r - first)`,
 *   and the run ends where the stream's next entry starts (its last one at the stream's head).
 *   An index written with one entry per event (before runs) reads the same way: runs of one.
 * - `es:heads`   streamId -> last revision (so a revision check is one lookup, never a stream read)
 * - `es:meta`    `head` -> newest global position
 *
 * Every append runs inside an LMDB write transaction, whose lock is shared by every process on
 * the environment: the revision check, the head read and the writes are atomic across processes,
 * and positions stay gapless. lmdb-js batches the transactions queued in one event turn into one
 * commit, so concurrent appends share one fsync; a commit resolves only once it is synced.
 */
import { asBinary, type Database, type RootDatabase } from 'lmdb';
import { AppError } from '../../contracts/errors.ts';
import type { DomainEvent, RecordedEvent } from '../../contracts/events.ts';
import {
  systemClock,
  type AppendRequest,
  type AppendResult,
  type Clock,
  type EventStore,
  type ExpectedRevision,
  type ReadAllOptions,
  type SubscribeOptions,
  type Subscription,
} from '../../contracts/ports.ts';
import { closeLmdb, openLmdb } from './env.ts';
import { lmdbError } from './errors.ts';
import { eventEncoder, type SharedStructures } from './eventEncoder.ts';
import { pollingSubscription } from './pollingSubscription.ts';
import { stillShared, structuresOf } from './recordWriter.ts';

export interface LmdbEventStoreOptions {
  /** Data directory shared with the other embedded adapters (`<dataDir>/lmdb`). */
  dataDir: string;
  /** Stamps `recordedAt`. Default: the system clock. */
  clock?: Clock;
}

/** What is stored per event; the position is the key. */
interface StoredEvent {
  type: string;
  data: unknown;
  metadata: unknown;
  streamId: string;
  revision: number;
  recordedAt: string;
}

const MAX_KEY = Number.MAX_SAFE_INTEGER;
const HEAD_KEY = 'head';

export function lmdbEventStore(options: LmdbEventStoreOptions): EventStore {
  const clock = options.clock ?? systemClock;
  const root: RootDatabase = openLmdb({ dataDir: options.dataDir });
  // Shared record structures: event field names are stored once, not in every event, which
  // makes the log smaller and its decoding (every projection reads it) several times faster.
  const events: Database<StoredEvent, number> = root.openDB({
    name: 'es:events',
    sharedStructuresKey: Symbol.for('structures'),
    // msgpackr's option, passed through by lmdb (absent from lmdb's types); default 32 is too
    // few for documents with many nested record shapes.
    ...({ maxSharedStructures: 500 } as object),
  });
  // The events ingest appends most (offers, translations, seasons) written as msgpackr would
  // write them, only faster; the structures are the store encoder's own, so the bytes are the same.
  const structuresNow = structuresOf(events);
  const fastEvents = eventEncoder(structuresNow);
  const streams: Database<number, [string, number]> = root.openDB({ name: 'es:streams' });
  const heads: Database<number, string> = root.openDB({ name: 'es:heads' });
  const meta: Database<number, string> = root.openDB({ name: 'es:meta' });
  const subscriptions = new Set<Subscription>();
  let closed = false;

  function open(): void {
    if (closed) throw new AppError('closed', 'the LMDB event store is closed');
  }

  /** Runs a synchronous LMDB read, converting what it throws at the boundary. */
  function reading<T>(read: () => T): T {
    open();
    try {
      return read();
    } catch (err) {
      throw lmdbError(err, 'LMDB event store');
    }
  }

  function toRecorded(position: number, stored: StoredEvent): RecordedEvent {
    return {
      type: stored.type,
      data: stored.data,
      metadata: stored.metadata,
      streamId: stored.streamId,
      revision: stored.revision,
      position,
      recordedAt: stored.recordedAt,
    } as RecordedEvent;
  }

  /** The event at `position`, checked to be `stream`'s `revision` (the index points at it). */
  function eventAt(stream: string, revision: number, position: number): RecordedEvent {
    const stored = events.get(position);
    if (stored === undefined || stored.revision !== revision || stored.streamId !== stream) {
      throw new AppError('internal', `event ${revision} of ${stream} is not at position ${position}`);
    }
    return toRecorded(position, stored);
  }

  /** An event as stored, with its bytes when the event encoder writes it (null: the store's encoder will). */
  interface Prepared {
    stored: StoredEvent;
    bytes: Buffer | null;
  }

  /**
   * The stored form of each event of a request whose revisions are known before the write (an
   * expected revision other than 'any': if the append goes ahead, they follow it), encoded now,
   * outside the transaction: the environment's write lock, which the projections' writes (and
   * every other process) wait for, is then held for the checks and puts alone. Copies, since the
   * encoder reuses its buffer.
   */
  function prepare(request: AppendRequest, recordedAt: string): Prepared[] | null {
    const expected = request.expectedRevision;
    if (expected === 'any') return null;
    const first = expected === 'no_stream' ? 0 : expected + 1;
    return request.events.map((event, i) => {
      const stored = storedEvent(event, request.stream, first + i, recordedAt);
      const bytes = fastEvents.encode(stored);
      return { stored, bytes: bytes === null ? null : Buffer.from(bytes) };
    });
  }

  function storedEvent(event: DomainEvent, streamId: string, revision: number, recordedAt: string): StoredEvent {
    return { type: event.type, data: event.data, metadata: event.metadata, streamId, revision, recordedAt };
  }

  /** Runs inside the write transaction: reads see the writes of earlier requests in it. */
  function writeRequests(requests: AppendRequest[], recordedAt: string, prepared: Array<Prepared[] | null>, structuresBefore: SharedStructures | undefined): Array<AppendResult | AppError> {
    // Bytes encoded before with structures msgpackr has since replaced (reloaded after a failed
    // save) are encoded again here.
    const structuresSame = stillShared(structuresBefore, structuresNow());
    let head = meta.get(HEAD_KEY) ?? 0;
    const results: Array<AppendResult | AppError> = [];
    requests.forEach((request, r) => {
      const current = heads.get(request.stream) ?? -1;
      if (!matches(current, request.expectedRevision)) {
        results.push(conflict(request.stream, request.expectedRevision, current));
        return;
      }
      let revision = current;
      // One index entry for the whole run (see the header): a put per append, not per event.
      if (request.events.length > 0) streams.putSync([request.stream, current + 1], head + 1);
      const ready = prepared[r];
      request.events.forEach((event, i) => {
        head += 1;
        revision += 1;
        // A prepared event has this revision: the check above passed at the revision it expected.
        const made = ready?.[i];
        const stored = made?.stored ?? storedEvent(event, request.stream, revision, recordedAt);
        const bytes = (structuresSame ? made?.bytes : null) ?? fastEvents.encode(stored);
        // lmdb stores an asBinary value's bytes as they are (its types only allow the value type).
        events.putSync(head, bytes === null ? stored : (asBinary(bytes) as unknown as StoredEvent));
      });
      if (revision !== current) heads.putSync(request.stream, revision);
      results.push({ nextExpectedRevision: revision, position: head });
    });
    meta.putSync(HEAD_KEY, head);
    return results;
  }

  async function appendMany(requests: AppendRequest[]): Promise<Array<AppendResult | AppError>> {
    open();
    if (requests.length === 0) return [];
    const recordedAt = clock.now().toISOString();
    try {
      // A child transaction, so a failure half-way (say, a value msgpack cannot encode) rolls
      // back this append alone: the other callbacks lmdb-js batched into the same commit go on,
      // and no event is left written without its index and head.
      const structuresBefore = structuresNow();
      const prepared = requests.map((request) => prepare(request, recordedAt));
      return await root.childTransaction(() => writeRequests(requests, recordedAt, prepared, structuresBefore));
    } catch (err) {
      throw lmdbError(err, 'LMDB event store');
    }
  }

  const store: EventStore = {
    appendMany,

    append: (stream: string, batch: DomainEvent[], expectedRevision: ExpectedRevision) =>
      appendOne(appendMany, { stream, events: batch, expectedRevision }),

    async readStream(stream, readOptions = {}) {
      const from = readOptions.fromRevision ?? 0;
      return reading(() => {
        const out: RecordedEvent[] = [];
        // A stream's head is one lookup; a range read costs an iterator. Ingest reads every
        // stream it has no state of, and on a first crawl that is every stream, none existing.
        const head = heads.get(stream);
        if (head === undefined || head < from) return out;
        // The runs from the one holding `from` (the last starting at or before it) to the head.
        const runs: Array<{ first: number; position: number }> = [];
        const take = ({ key, value }: { key: [string, number]; value: number }) => runs.push({ first: key[1], position: value });
        if (from > 0) for (const entry of streams.getRange({ start: [stream, from], end: [stream], reverse: true, limit: 1 })) take(entry);
        const next = runs.length > 0 ? runs[0]!.first + 1 : 0;
        for (const entry of streams.getRange({ start: [stream, next], end: [stream, MAX_KEY] })) take(entry);
        runs.forEach(({ first, position }, i) => {
          // Bounded by the head read above: a run appended since then is not half read.
          const last = Math.min(i + 1 < runs.length ? runs[i + 1]!.first - 1 : head, head);
          for (let revision = Math.max(first, from); revision <= last; revision += 1) out.push(eventAt(stream, revision, position + revision - first));
        });
        return out;
      });
    },

    async readStreamBackwards(stream, readOptions = {}) {
      const from = readOptions.fromRevision ?? MAX_KEY;
      const limit = readOptions.limit ?? 100;
      return reading(() => {
        const out: RecordedEvent[] = [];
        if (from < 0 || limit <= 0) return out;
        const head = heads.get(stream);
        if (head === undefined) return out;
        // Runs cover revisions 0..head without gaps, so the run starting at or before
        // min(from, head) holds it, and each earlier run ends where the later one starts. A
        // reverse range runs from its start key down to (not including) its end key: [stream]
        // sorts before every [stream, revision].
        let revision = Math.min(from, head);
        for (const { key, value: position } of streams.getRange({ start: [stream, revision], end: [stream], reverse: true })) {
          const first = key[1];
          for (; revision >= first; revision -= 1) {
            out.push(eventAt(stream, revision, position + revision - first));
            if (out.length >= limit) return out;
          }
        }
        return out;
      });
    },

    async streamRevision(stream) {
      return reading(() => heads.get(stream) ?? -1);
    },

    async readAll(readOptions: ReadAllOptions = {}) {
      const after = readOptions.after ?? 0;
      const limit = readOptions.limit ?? 1000;
      return reading(() => {
        const out: RecordedEvent[] = [];
        for (const { key, value } of events.getRange({ start: after + 1, end: MAX_KEY, limit })) {
          out.push(toRecorded(key, value));
        }
        return out;
      });
    },

    async headPosition() {
      return reading(() => meta.get(HEAD_KEY) ?? 0);
    },

    subscribeAll(handler, subscribeOptions: SubscribeOptions = {}) {
      open();
      const subscription = pollingSubscription(store, handler, subscribeOptions);
      subscriptions.add(subscription);
      void subscription.done.finally(() => subscriptions.delete(subscription)).catch(() => undefined);
      return subscription;
    },

    async close() {
      if (closed) return;
      await Promise.all([...subscriptions].map((s) => s.stop()));
      closed = true;
      await closeLmdb(options.dataDir);
    },
  };
  return store;
}

/** `append` as one request of `appendMany`: its result, or its error thrown. */
export async function appendOne(
  appendMany: (requests: AppendRequest[]) => Promise<Array<AppendResult | AppError>>,
  request: AppendRequest,
): Promise<AppendResult> {
  const [result] = await appendMany([request]);
  if (result === undefined) throw new AppError('internal', 'append returned no result');
  if (result instanceof Error) throw result;
  return result;
}

/** Whether a stream at `current` (-1: missing) satisfies an expected revision; shared by the adapters that check revisions themselves. */
export function matches(current: number, expected: ExpectedRevision): boolean {
  if (expected === 'any') return true;
  if (expected === 'no_stream') return current === -1;
  return current === expected;
}

/** The `wrong_expected_revision` error of a refused append. */
export function conflict(stream: string, expected: ExpectedRevision, actual: number): AppError {
  return new AppError(
    'wrong_expected_revision',
    `stream ${stream} is at revision ${actual}, expected ${String(expected)}`,
    { details: { stream, expected, actual } },
  );
}
