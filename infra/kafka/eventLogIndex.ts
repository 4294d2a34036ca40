/**
 * The local view of the Kafka event log that every Kafka event store process keeps: the events
 * in log order, each stream's events by revision, and how far into the partition it has read.
 * It is rebuilt from the partition at start (the log is the only truth), fed by the process's
 * read_committed tail consumer and, for the writer, by its own committed transactions.
 *
 * Applying is idempotent by offset: the writer applies its records when its commit returns and
 * the tail consumer meets the same records later, or the other way round; whichever comes
 * second is skipped, so both feeds can run without coordination.
 */
import type { RecordedEvent } from '../../contracts/events.ts';

/** What one event record of the log holds (eventRecords.ts reads it from either kind of value); the position is offset + 1. */
export type LoggedEvent = Omit<RecordedEvent, 'position'>;

export interface EventLogIndex {
  /** The next offset not yet reflected: data records and transaction markers both count. */
  readonly nextOffset: number;
  /** Position of the newest event, 0 when empty. */
  readonly head: number;
  /** Applies one committed record at `offset` (skipped if already applied); the index keeps `event` itself. */
  apply(offset: number, event: LoggedEvent): void;
  /** Moves `nextOffset` past `offset` (a batch read up to a marker, or aborted records). */
  advance(offsetReached: number): void;
  /** Last revision of a stream, -1 when missing. */
  revision(stream: string): number;
  readStream(stream: string, fromRevision: number): RecordedEvent[];
  /** Events of a stream at or below `fromRevision`, newest first, at most `limit`. */
  readStreamBackwards(stream: string, fromRevision: number, limit: number): RecordedEvent[];
  readAll(after: number, limit: number): RecordedEvent[];
  /** Resolves once `nextOffset >= offset`; rejects on `timeoutMs` or `fail`. */
  reached(offset: number, timeoutMs: number): Promise<void>;
  /** Rejects every wait, now and later: the tail consumer is gone. */
  fail(error: Error): void;
}

export function eventLogIndex(): EventLogIndex {
  const log: RecordedEvent[] = [];
  const streams = new Map<string, RecordedEvent[]>();
  let nextOffset = 0;
  let failure: Error | null = null;
  const waiters = new Set<{ offset: number; resolve: () => void; reject: (err: Error) => void }>();

  function wake(): void {
    for (const w of waiters) {
      if (nextOffset >= w.offset) {
        waiters.delete(w);
        w.resolve();
      }
    }
  }

  return {
    get nextOffset() {
      return nextOffset;
    },
    get head() {
      return log[log.length - 1]?.position ?? 0;
    },

    apply(offset, event) {
      if (offset < nextOffset) return;
      // The record itself, its position added: both callers hand over a record of their own
      // (the writer's, made for its transaction; the tail consumer's, just parsed), and a copy
      // of every event the log holds was only garbage.
      const recorded = event as RecordedEvent;
      recorded.position = offset + 1;
      log.push(recorded);
      let events = streams.get(event.streamId);
      if (events === undefined) streams.set(event.streamId, (events = []));
      // Kept as recorded, not renumbered: a duplicate or missing revision in the log must show.
      events.push(recorded);
      nextOffset = offset + 1;
      wake();
    },

    advance(offsetReached) {
      if (offsetReached + 1 <= nextOffset) return;
      nextOffset = offsetReached + 1;
      wake();
    },

    revision(stream) {
      const events = streams.get(stream);
      return events?.[events.length - 1]?.revision ?? -1;
    },

    readStream(stream, fromRevision) {
      const events = streams.get(stream) ?? [];
      const start = events.findIndex((e) => e.revision >= fromRevision);
      return start === -1 ? [] : events.slice(start);
    },

    readStreamBackwards(stream, fromRevision, limit) {
      const events = streams.get(stream) ?? [];
      // Revisions grow in log order, as positions do along the log.
      const end = countAtOrBelow(events, (e) => e.revision, fromRevision);
      const out: RecordedEvent[] = [];
      for (let i = end - 1; i >= 0 && out.length < limit; i -= 1) out.push(events[i] as RecordedEvent);
      return out;
    },

    readAll(after, limit) {
      // Positions increase along the log.
      const start = countAtOrBelow(log, (e) => e.position, after);
      return log.slice(start, start + limit);
    },

    reached(offset, timeoutMs) {
      if (failure) return Promise.reject(failure);
      if (nextOffset >= offset) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const waiter = {
          offset,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
          reject: (err: Error) => {
            clearTimeout(timer);
            reject(err);
          },
        };
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(new Error(`the event log was read up to offset ${nextOffset}, not ${offset}, within ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.add(waiter);
      });
    },

    fail(error) {
      failure = error;
      for (const w of waiters) w.reject(error);
      waiters.clear();
    },
  };
}

/** How many events of an array ordered by `key` have a key <= `value` (a binary search). */
function countAtOrBelow(events: readonly RecordedEvent[], key: (e: RecordedEvent) => number, value: number): number {
  let lo = 0;
  let hi = events.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (key(events[mid] as RecordedEvent) <= value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
