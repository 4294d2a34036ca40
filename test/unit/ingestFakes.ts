/**
 * In-memory stand-ins for the EventStore and ObservationBus ports, just enough for the ingest
 * service's unit tests (the real adapters are exercised in test/int/ingest.int.test.ts).
 */
import { validateObservation } from '../../contracts/codec.ts';
import { AppError } from '../../contracts/errors.ts';
import type { DomainEvent, RecordedEvent } from '../../contracts/events.ts';
import type { Observation } from '../../contracts/observations.ts';
import type {
  AppendRequest,
  AppendResult,
  ConsumeOptions,
  Consumer,
  DeadLetter,
  EventStore,
  ExpectedRevision,
  ObservationBus,
  ObservationRecord,
  Subscription,
} from '../../contracts/ports.ts';

export interface MemoryEventStore extends EventStore {
  readonly all: RecordedEvent[];
  readonly calls: { readStream: number; appendMany: number; streamRevision: number };
}

export function memoryEventStore(): MemoryEventStore {
  const all: RecordedEvent[] = [];
  const byStream = new Map<string, RecordedEvent[]>();
  const calls = { readStream: 0, appendMany: 0, streamRevision: 0 };

  const revisionOf = (stream: string) => (byStream.get(stream)?.length ?? 0) - 1;

  function appendOne(stream: string, events: DomainEvent[], expected: ExpectedRevision): AppendResult | AppError {
    const current = revisionOf(stream);
    const ok = expected === 'any' || (expected === 'no_stream' ? current === -1 : expected === current);
    if (!ok) return new AppError('wrong_expected_revision', `${stream} is at ${current}, expected ${expected}`);
    const list = byStream.get(stream) ?? [];
    for (const e of events) {
      const recorded = { ...e, streamId: stream, revision: list.length, position: all.length + 1, recordedAt: '2025-01-01T00:00:00Z' } as RecordedEvent;
      list.push(recorded);
      all.push(recorded);
    }
    byStream.set(stream, list);
    return { nextExpectedRevision: list.length - 1, position: all.length };
  }

  return {
    all,
    calls,
    async append(stream, events, expected) {
      const r = appendOne(stream, events, expected);
      if (r instanceof AppError) throw r;
      return r;
    },
    async appendMany(requests: AppendRequest[]) {
      calls.appendMany += 1;
      return requests.map((r) => appendOne(r.stream, r.events, r.expectedRevision));
    },
    async readStream(stream, options = {}) {
      calls.readStream += 1;
      return (byStream.get(stream) ?? []).slice(options.fromRevision ?? 0);
    },
    async readStreamBackwards(stream, options = {}) {
      const list = byStream.get(stream) ?? [];
      const from = Math.min(options.fromRevision ?? list.length - 1, list.length - 1);
      return from < 0 ? [] : list.slice(Math.max(0, from + 1 - (options.limit ?? 100)), from + 1).reverse();
    },
    async streamRevision(stream) {
      calls.streamRevision += 1;
      return revisionOf(stream);
    },
    async readAll(options = {}) {
      const after = options.after ?? 0;
      return all.slice(after, after + (options.limit ?? 1000));
    },
    async headPosition() {
      return all.length;
    },
    subscribeAll(): Subscription {
      throw new Error('not needed by the ingest');
    },
    async close() {},
  };
}

export interface MemoryBus extends ObservationBus {
  readonly deadLetters: DeadLetter[];
}

export function memoryBus(): MemoryBus {
  const queue: ObservationRecord[] = [];
  const deadLetters: DeadLetter[] = [];
  let next = 0;
  const deadLetter: ObservationBus['deadLetter'] = async (record, reason) => {
    const payload = 'observation' in record ? record.observation : record.payload;
    deadLetters.push({ id: String(deadLetters.length + 1), reason, payload, source: record.source, at: '2025-01-01T00:00:00Z' });
  };
  return {
    deadLetters,
    async publish(observations: Observation[]) {
      for (const observation of observations) queue.push({ source: `memory:${queue.length}`, observation });
    },
    consume(handler, options: ConsumeOptions = {}): Consumer {
      let stopped = false;
      const done = (async () => {
        while (!stopped && next < queue.length) {
          const slice = queue.slice(next, next + (options.batchSize ?? 500));
          // As the real buses do: what does not validate goes to the dead letters, never to the handler.
          const batch: ObservationRecord[] = [];
          for (const record of slice) {
            const reason = validateObservation(record.observation);
            if (reason === null) batch.push(record);
            else await deadLetter(record, reason);
          }
          if (batch.length > 0) await handler(batch);
          next += slice.length;
        }
      })();
      return {
        async stop() {
          stopped = true;
          await done;
        },
        done,
      };
    },
    deadLetter,
    async listDeadLetters() {
      return [...deadLetters];
    },
    async countDeadLetters() {
      return deadLetters.length;
    },
    async close() {},
  };
}

export function records(observations: Observation[]): ObservationRecord[] {
  return observations.map((observation, i) => ({ source: `test:${i}`, observation }));
}
