/**
 * The event store on EventStoreDB (23.10, gRPC, @eventstore/db-client 6.x).
 *
 * - Events are JSON events (`jsonEvent`): the domain event's type, data and metadata as they are.
 * - Expected revisions map one to one: a number is the stream's last revision (a BigInt for the
 *   client), `'no_stream'` is NO_STREAM, `'any'` is ANY; the server's WrongExpectedVersion is
 *   `wrong_expected_revision`.
 * - Global positions are `$all` commit positions plus one: increasing, not gapless (see
 *   positions.ts for why that is enough for the runner).
 * - `$all` holds the server's own events too (`$`-prefixed types and streams: metadata, stats,
 *   projections, links). They are never Marquee's, so readAll, headPosition and subscribeAll
 *   leave them out, as they leave out non-JSON events another writer may have stored.
 * - appendMany runs one append per request: EventStoreDB appends atomically to one stream only.
 *   Requests for different streams run concurrently, those for the same stream in order (a later
 *   one is checked against the events of an earlier one), each slot holding its own outcome. So
 *   the requests of one call are not one durable write, and the global order of requests for
 *   different streams is the order the server committed them in, not the order of the call.
 */
import {
  ANY,
  BACKWARDS,
  END,
  EventStoreDBClient,
  excludeSystemEvents,
  FORWARDS,
  jsonEvent,
  NO_STREAM,
  type AllStreamResolvedEvent,
  type AllStreamSubscription,
  type AppendExpectedRevision,
  type JSONType,
  type ReadPosition,
  type RecordedEvent as EsdbRecordedEvent,
} from '@eventstore/db-client';
import { AppError } from '../../contracts/errors.ts';
import type { DomainEvent, RecordedEvent } from '../../contracts/events.ts';
import type {
  AppendRequest,
  AppendResult,
  EventStore,
  ExpectedRevision,
  ReadAllOptions,
  SubscribeOptions,
  Subscription,
} from '../../contracts/ports.ts';
import { eventStoreDbError, isStreamNotFound } from './errors.ts';
import { positionOf, readPositionAfter } from './positions.ts';
import { subscribeAllEvents } from './subscription.ts';

export interface EventStoreDbEventStoreOptions {
  /** Connection string, e.g. `esdb://127.0.0.1:2113?tls=false` for an insecure single node. */
  connectionString: string;
  /** Appends to different streams in flight at once in appendMany. Default 32. */
  appendConcurrency?: number;
  /** Events read from `$all` per request when looking back for the head position. Default 64. */
  headPageSize?: number;
}

export function eventStoreDbEventStore(options: EventStoreDbEventStoreOptions): EventStore {
  const client = EventStoreDBClient.connectionString(options.connectionString);
  const appendConcurrency = options.appendConcurrency ?? 32;
  const headPageSize = options.headPageSize ?? 64;
  const subscriptions = new Set<Subscription>();
  let closed = false;

  function open(): void {
    if (closed) throw new AppError('closed', 'the EventStoreDB event store is closed');
  }

  async function append(stream: string, events: DomainEvent[], expectedRevision: ExpectedRevision): Promise<AppendResult> {
    open();
    if (events.length === 0) {
      throw new AppError('internal', `an append to ${stream} must hold at least one event`, { retriable: false });
    }
    try {
      const result = await client.appendToStream(
        stream,
        events.map((event) => jsonEvent({ type: event.type, data: event.data as JSONType, metadata: event.metadata })),
        { expectedRevision: esdbExpectedRevision(expectedRevision) },
      );
      if (result.position === undefined) {
        throw new AppError('internal', `EventStoreDB did not report the position of the append to ${stream}`, { retriable: false });
      }
      // The reported position is the last event's: the port's `position`.
      return { nextExpectedRevision: Number(result.nextExpectedRevision), position: positionOf(result.position) };
    } catch (err) {
      throw eventStoreDbError(err, `EventStoreDB append to ${stream}`);
    }
  }

  async function readAllPage(from: ReadPosition, count: number, direction: typeof FORWARDS | typeof BACKWARDS): Promise<AllStreamResolvedEvent[]> {
    const page: AllStreamResolvedEvent[] = [];
    for await (const resolved of client.readAll({ fromPosition: from, maxCount: count, direction })) page.push(resolved);
    return page;
  }

  const store: EventStore = {
    append,

    async appendMany(requests: AppendRequest[]) {
      open();
      const results: Array<AppendResult | AppError> = new Array(requests.length);
      const byStream = new Map<string, number[]>();
      requests.forEach((request, index) => {
        const indexes = byStream.get(request.stream) ?? [];
        indexes.push(index);
        byStream.set(request.stream, indexes);
      });
      await forEachLimited([...byStream.values()], appendConcurrency, async (indexes) => {
        for (const index of indexes) {
          const request = requests[index] as AppendRequest;
          try {
            results[index] = await append(request.stream, request.events, request.expectedRevision);
          } catch (err) {
            results[index] = eventStoreDbError(err, `EventStoreDB append to ${request.stream}`);
          }
        }
      });
      return results;
    },

    async readStream(stream, readOptions = {}) {
      open();
      const out: RecordedEvent[] = [];
      try {
        const read = client.readStream(stream, { fromRevision: BigInt(readOptions.fromRevision ?? 0), direction: FORWARDS });
        for await (const resolved of read) {
          if (resolved.event) out.push(recordedEvent(resolved.event, streamReadPosition(resolved.event)));
        }
      } catch (err) {
        if (isStreamNotFound(err)) return [];
        throw eventStoreDbError(err, `EventStoreDB read of ${stream}`);
      }
      return out;
    },

    async readStreamBackwards(stream, readOptions = {}) {
      open();
      const limit = readOptions.limit ?? 100;
      const from = readOptions.fromRevision;
      if ((from !== undefined && from < 0) || limit <= 0) return [];
      const read = async (fromRevision: bigint | typeof END): Promise<RecordedEvent[]> => {
        const out: RecordedEvent[] = [];
        try {
          // The server reads a stream backwards natively, from its end or from a revision.
          for await (const resolved of client.readStream(stream, { fromRevision, direction: BACKWARDS, maxCount: limit })) {
            if (resolved.event) out.push(recordedEvent(resolved.event, streamReadPosition(resolved.event)));
          }
        } catch (err) {
          if (isStreamNotFound(err)) return [];
          throw eventStoreDbError(err, `EventStoreDB backwards read of ${stream}`);
        }
        return out;
      };
      if (from === undefined) return read(END);
      const out = await read(BigInt(from));
      // A revision past the stream's end may count the missing revisions against maxCount (a
      // short or empty page that did not reach revision 0): then the page is the end's.
      const clipped = out.length < limit && (out.length === 0 || ((out[0] as RecordedEvent).revision < from && (out.at(-1) as RecordedEvent).revision > 0));
      return clipped ? read(END) : out;
    },

    async streamRevision(stream) {
      open();
      try {
        for await (const resolved of client.readStream(stream, { fromRevision: END, direction: BACKWARDS, maxCount: 1 })) {
          if (resolved.event) return Number(resolved.event.revision);
        }
        return -1;
      } catch (err) {
        if (isStreamNotFound(err)) return -1;
        throw eventStoreDbError(err, `EventStoreDB revision of ${stream}`);
      }
    },

    async readAll(readOptions: ReadAllOptions = {}) {
      open();
      const after = readOptions.after ?? 0;
      const limit = readOptions.limit ?? 1000;
      const out: RecordedEvent[] = [];
      let from = readPositionAfter(after);
      let last = after;
      try {
        while (out.length < limit) {
          // One more than needed: a read from a position includes the event at it.
          const want = limit - out.length + 1;
          const page = await readAllPage(from, want, FORWARDS);
          for (const resolved of page) {
            const event = resolved.event;
            if (event === undefined) continue;
            const position = positionOf(event.position);
            if (position <= last) continue;
            last = position;
            from = event.position;
            if (isMarqueeEvent(event) && out.length < limit) out.push(recordedEvent(event, position));
          }
          if (page.length < want) break;
        }
      } catch (err) {
        throw eventStoreDbError(err, 'EventStoreDB read of $all');
      }
      return out;
    },

    async headPosition() {
      open();
      let from: ReadPosition = END;
      try {
        for (;;) {
          const page = await readAllPage(from, headPageSize, BACKWARDS);
          for (const resolved of page) {
            if (resolved.event && isMarqueeEvent(resolved.event)) return positionOf(resolved.event.position);
          }
          const oldest = page[page.length - 1]?.event;
          if (page.length < headPageSize || oldest === undefined) return 0;
          from = oldest.position;
        }
      } catch (err) {
        throw eventStoreDbError(err, 'EventStoreDB read of $all');
      }
    },

    subscribeAll(handler, subscribeOptions: SubscribeOptions = {}) {
      open();
      const after = subscribeOptions.after ?? 0;
      const batchSize = subscribeOptions.batchSize ?? 1000;
      const source: AllStreamSubscription = client.subscribeToAll(
        { fromPosition: readPositionAfter(after), filter: excludeSystemEvents() },
        // The client buffers at most about a batch ahead of the handler: backpressure reaches
        // the server instead of memory filling up during a long catch-up.
        { highWaterMark: batchSize },
      );
      const subscription = subscribeAllEvents<AllStreamResolvedEvent>(source, handler, {
        after,
        batchSize,
        convert: (resolved) => {
          const event = resolved.event;
          if (event === undefined || !isMarqueeEvent(event)) return null;
          return recordedEvent(event, positionOf(event.position));
        },
        onError: (err) => eventStoreDbError(err, 'EventStoreDB subscription to $all'),
      });
      subscriptions.add(subscription);
      subscription.done.then(
        () => subscriptions.delete(subscription),
        () => subscriptions.delete(subscription),
      );
      return subscription;
    },

    async close() {
      if (closed) return;
      closed = true;
      await Promise.all([...subscriptions].map((s) => s.stop()));
      await client.dispose();
    },
  };
  return store;
}

function esdbExpectedRevision(expected: ExpectedRevision): AppendExpectedRevision {
  if (expected === 'any') return ANY;
  if (expected === 'no_stream') return NO_STREAM;
  return BigInt(expected);
}

/** Marquee's events: JSON, with a type and a stream that are not the server's own (`$...`). */
function isMarqueeEvent(event: EsdbRecordedEvent): boolean {
  return event.isJson && !event.type.startsWith('$') && !event.streamId.startsWith('$');
}

/**
 * The `$all` position of an event read from its stream. Servers since 22.6 report it; older
 * ones do not (or answer 2^64-1), and then the event gets 0: stream reads serve aggregates,
 * which fold by revision and never look at positions.
 */
function streamReadPosition(event: EsdbRecordedEvent): number {
  if (event.position === undefined || event.position.commit >= BigInt(Number.MAX_SAFE_INTEGER)) return 0;
  return positionOf(event.position);
}

/**
 * The stored JSON is taken as the domain event it was appended as: only Marquee writes events of
 * these types, and its deciders are what produced them.
 */
function recordedEvent(event: EsdbRecordedEvent, position: number): RecordedEvent {
  const recorded = {
    type: event.type,
    data: event.data,
    metadata: event.metadata,
    streamId: event.streamId,
    revision: Number(event.revision),
    position,
    recordedAt: event.created.toISOString(),
  };
  return recorded as unknown as RecordedEvent;
}

/** Runs `action` on every item with at most `limit` in flight; rejects with the first failure. */
async function forEachLimited<T>(items: T[], limit: number, action: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const item = items[next] as T;
      next += 1;
      await action(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
