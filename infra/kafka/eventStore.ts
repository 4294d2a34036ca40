/**
 * The event store on Kafka: the event log is one topic, `<prefix>events`, with ONE partition,
 * written by one fenced transactional writer at a time. docs/kafka-event-log.md gives the
 * design and its guarantees; in short:
 *
 * - Record: key = the stream (the entity read models follow), value = the event in the
 *   contract's Avro (its revision and time recorded as headers) or as JSON with its stream and
 *   revision (eventRecords.ts says which events are which; readers take both). Retention is
 *   unlimited (`retention.ms=-1`, `retention.bytes=-1`): the topic is the system of record,
 *   not a buffer.
 * - Position = offset + 1: one partition is one total order that every reader computes the same
 *   way. Increasing, not gapless: each transaction's commit marker takes an offset too.
 * - Kafka has no per-stream revision check, so the writer keeps every stream's revision in a
 *   local index (eventLogIndex.ts) rebuilt from the partition, checks expected revisions against
 *   it, and writes the accepted events in one transaction. Its transactional.id is stable
 *   (`<prefix>events-writer-0`), so a process that starts writing bumps the producer epoch: the
 *   coordinator aborts the older writer's open transaction and refuses its later writes. The new
 *   writer then reads the partition to its end before checking anything, so a revision it checks
 *   against is never stale while it holds the epoch; once it loses it, nothing it sends commits.
 * - Reads wait until the process's read_committed tail consumer has reached the partition's end
 *   as of the call (read-your-writes, across processes too), then answer from the local index.
 * - Concurrent appends of one process share one transaction (one commit, like LMDB's batched
 *   commit), checked in call order.
 */
import { randomUUID } from 'node:crypto';
import type { ConfigResourceTypes, Consumer, Kafka, Producer } from 'kafkajs';
import { AppError, isAppError } from '../../contracts/errors.ts';
import type { DomainEvent, RecordedEvent } from '../../contracts/events.ts';
import {
  systemClock,
  type AppendRequest,
  type AppendResult,
  type Clock,
  type EventStore,
  type ExpectedRevision,
  type SubscribeOptions,
  type Subscription,
} from '../../contracts/ports.ts';
import { appendOne, conflict, matches } from '../lmdb/eventStore.ts';
import { pollingSubscription } from '../lmdb/pollingSubscription.ts';
import { connectedOnUse, createKafka, kafkaError, latestOffsetReader, type KafkaClientOptions } from './client.ts';
import { eventLogIndex, type LoggedEvent } from './eventLogIndex.ts';
import { decodeLogRecord, logEncoder, loggedEvent, messageBytes, type LogMessage } from './eventRecords.ts';
import { waitUntilServed } from './observationBus.ts';

export interface KafkaEventStoreOptions extends KafkaClientOptions {
  /** Prepended to the topic and transactional id; tests use a unique one. Default `marquee.`. */
  topicPrefix?: string;
  /** Replication factor of the created topic; -1 takes the broker's default. Default -1. */
  replicationFactor?: number;
  /**
   * How long the coordinator lets a transaction stay open before aborting it, in ms: bounds how
   * long a writer paused mid-transaction holds back every reader. Default 10000.
   */
  transactionTimeoutMs?: number;
  /** How long a read waits for the tail consumer to reach the end of the log, in ms. Default 30000. */
  syncTimeoutMs?: number;
  /** Most value bytes per produce request inside one transaction (under message.max.bytes). Default 900,000. */
  maxBatchBytes?: number;
  /** Stamps `recordedAt`. Default: the system clock. */
  clock?: Clock;
  /**
   * Called after a transaction's records are sent and before it commits. For tests that pause
   * a writer mid-transaction (a zombie); never set in production.
   */
  beforeCommit?: () => Promise<void>;
}

export interface KafkaEventStore extends EventStore {
  /** The event log topic. */
  readonly topic: string;
  /** Deletes the event log topic (tests with a unique prefix clean up with it). */
  deleteTopic(): Promise<void>;
}

interface Job {
  requests: AppendRequest[];
  resolve(results: Array<AppendResult | AppError>): void;
  reject(err: unknown): void;
}

/** Retries of the writer's requests: short first backoff, still about 5 s in all. */
export const TRANSACTION_RETRY = { initialRetryTime: 5, maxRetryTime: 1000, retries: 12 };

/**
 * kafkajs' ConfigResourceTypes.TOPIC. The enum lives in a CommonJS module whose named exports
 * Node's ESM loader cannot all detect, so it is the protocol's number, typed as the enum.
 */
const TOPIC_RESOURCE = 2 as ConfigResourceTypes;

/** Broker answers that mean a newer writer took the partition over (this one is a zombie). */
const FENCED = new Set(['INVALID_PRODUCER_EPOCH', 'PRODUCER_FENCED', 'TRANSACTIONAL_ID_AUTHORIZATION_FAILED']);

function isFenced(err: unknown): boolean {
  for (let e: unknown = err; e; e = (e as { cause?: unknown; originalError?: unknown }).originalError ?? (e as { cause?: unknown }).cause) {
    const type = (e as { type?: unknown }).type;
    if (typeof type === 'string' && FENCED.has(type)) return true;
    if (e instanceof Error && /fenced|producer epoch/i.test(e.message)) return true;
  }
  return false;
}

export function kafkaEventStore(options: KafkaEventStoreOptions): KafkaEventStore {
  const prefix = options.topicPrefix ?? 'marquee.';
  const topic = `${prefix}events`;
  const transactionalId = `${prefix}events-writer-0`;
  const clock = options.clock ?? systemClock;
  const syncTimeoutMs = options.syncTimeoutMs ?? 30_000;
  const maxBatchBytes = options.maxBatchBytes ?? 900_000;
  const kafka: Kafka = createKafka(options);
  const index = eventLogIndex();
  /** The records of the transaction being planned (its Avro values in slabs reused per transaction). */
  const encoder = logEncoder();
  const subscriptions = new Set<Subscription>();
  let closed = false;

  let topicReady: Promise<void> | null = null;
  let tailReady: Promise<Consumer> | null = null;
  /** The tail consumer once running, and the offset it reads from next as far as this process knows. */
  let tailing: Consumer | null = null;
  let tailNext = 0;
  /** This process's writer while it holds the partition; null once it lost it (or never had it). */
  let writer: Promise<Producer> | null = null;
  const queue: Job[] = [];
  let draining = false;
  /** The last committed transaction's jobs, resolved once its markers are written (markerWritten). */
  let settling: Promise<void> = Promise.resolve();

  function ensureOpen(): void {
    if (closed) throw new AppError('closed', 'the Kafka event store is closed');
  }

  const adminClient = connectedOnUse(() => kafka.admin(), 'connecting the admin client');
  const admin = () => adminClient.get();
  /** The log's end in one request (null: this kafkajs has no way to, and the admin's three requests do). */
  const ends = latestOffsetReader(kafka);

  /** Creates the log topic if missing, and refuses one with several partitions (no total order) or a retention limit. */
  function ensureTopic(): Promise<void> {
    if (topicReady === null) {
      topicReady = (async () => {
        const client = await admin();
        try {
          await client.createTopics({
            waitForLeaders: false,
            topics: [{
              topic,
              numPartitions: 1,
              replicationFactor: options.replicationFactor ?? -1,
              configEntries: [
                { name: 'retention.ms', value: '-1' },
                { name: 'retention.bytes', value: '-1' },
                { name: 'cleanup.policy', value: 'delete' },
              ],
            }],
          });
          await waitUntilServed(client, [topic], 30_000);
          const partitions = await client.fetchTopicOffsets(topic);
          if (partitions.length !== 1) {
            throw new AppError('internal', `the event log topic ${topic} has ${partitions.length} partitions; its global order needs exactly one`);
          }
          // A topic made by hand (or by auto-creation) keeps the broker's 7 days by default: the
          // log would silently lose its oldest events, which every replay starts from.
          const described = await client.describeConfigs({
            includeSynonyms: false,
            resources: [{ type: TOPIC_RESOURCE, name: topic, configNames: ['retention.ms', 'retention.bytes', 'cleanup.policy'] }],
          });
          const config = new Map((described.resources[0]?.configEntries ?? []).map((e) => [e.configName, e.configValue]));
          if (config.get('retention.ms') !== '-1' || config.get('retention.bytes') !== '-1' || config.get('cleanup.policy') !== 'delete') {
            throw new AppError('internal', `the event log topic ${topic} must keep every event (retention.ms=-1, retention.bytes=-1, cleanup.policy=delete), has ${JSON.stringify(Object.fromEntries(config))}`);
          }
        } catch (err) {
          throw kafkaError(err, `creating the event log topic ${topic}`);
        }
      })();
      topicReady.catch(() => {
        topicReady = null;
      });
    }
    return topicReady;
  }

  /**
   * Starts the read_committed tail consumer that feeds the index, from the partition's start.
   * kafkajs has no group-less consumer: each store instance reads in its own throwaway group and
   * never commits, since the index is rebuilt from the start in every process anyway.
   */
  function tail(): Promise<Consumer> {
    if (tailReady === null) {
      tailReady = (async () => {
        await ensureTopic();
        const groupId = `${prefix}events-reader-${randomUUID()}`;
        const consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 100, readUncommitted: false, retry: { retries: 5 } });
        consumer.on(consumer.events.CRASH, (e) => {
          if (!e.payload.restart) index.fail(kafkaError(e.payload.error, 'reading the event log'));
        });
        // Batches of only markers or aborted records reach no handler; this event still moves us on.
        consumer.on(consumer.events.END_BATCH_PROCESS, (e) => {
          if (e.payload.topic !== topic) return;
          index.advance(Number(e.payload.lastOffset));
          tailNext = Math.max(tailNext, Number(e.payload.lastOffset) + 1);
        });
        try {
          await consumer.connect();
          await consumer.subscribe({ topic, fromBeginning: true });
          await consumer.run({
            autoCommit: false,
            eachBatch: async ({ batch }) => {
              for (const message of batch.messages) {
                const offset = Number(message.offset);
                // The writer applied its own records when its commit returned: parsing them
                // again here (every event this process appends) would only be skipped by apply.
                if (message.value === null || offset < index.nextOffset) continue;
                let event: LoggedEvent;
                try {
                  event = decodeLogRecord(message as typeof message & { value: Buffer });
                } catch (err) {
                  // No reader can go past a record it cannot read (the events after it would
                  // be folded without it): every read fails with why, at once, instead of
                  // kafkajs fetching the same batch again and again while reads time out.
                  index.fail(err as Error);
                  consumer.pause([{ topic }]);
                  return;
                }
                index.apply(offset, event);
              }
              index.advance(Number(batch.lastOffset()));
            },
          });
        } catch (err) {
          await consumer.disconnect().catch(() => {});
          throw kafkaError(err, 'starting the event log reader');
        }
        tailing = consumer;
        return consumer;
      })();
      tailReady.catch(() => {
        tailReady = null;
      });
    }
    return tailReady;
  }

  /**
   * Moves the tail consumer past what the index holds already: the records this writer applied
   * itself when its commit returned. It fetched and decoded every event the process appends a
   * second time only to skip it (170 MB of records for the sample's first day, each a few
   * objects and buffers for kafkajs to make and the collector to reclaim). Nothing of another
   * writer is skipped: the index holds every record below `nextOffset`, and the consumer goes on
   * from there. A fetch already under way for the partition is dropped by kafkajs on a seek.
   */
  function skipApplied(): void {
    if (tailing === null || index.nextOffset <= tailNext) return;
    tailNext = index.nextOffset;
    tailing.seek({ topic, partition: 0, offset: String(tailNext) });
  }

  /**
   * The partition's end offset, asked once for every caller waiting: a lookup already in flight
   * may have been answered before a caller's own append completed, so a caller joins the next
   * lookup, never the running one. Under many concurrent reads (ingest loading its streams) that
   * is one round trip per round, not one per read.
   */
  let endInFlight: Promise<number> | null = null;
  let endNext: Promise<number> | null = null;

  async function lookUpEnd(): Promise<number> {
    try {
      if (ends !== null) return await ends.latest(topic, 0);
      const [partition] = await (await admin()).fetchTopicOffsets(topic);
      return Number(partition?.high ?? 0);
    } catch (err) {
      throw kafkaError(err, `reading the end of ${topic}`);
    }
  }

  function endOffset(): Promise<number> {
    if (endInFlight === null) {
      endInFlight = lookUpEnd().finally(() => {
        endInFlight = null;
      });
      return endInFlight;
    }
    if (endNext === null) {
      endNext = endInFlight.catch(() => 0).then(() => {
        endNext = null;
        return endOffset();
      });
    }
    return endNext;
  }

  /** Waits until the index holds everything committed to the log before this call. */
  async function sync(): Promise<void> {
    ensureOpen();
    await tail();
    const end = await endOffset();
    try {
      await index.reached(end, syncTimeoutMs);
    } catch (err) {
      // An unreadable record is said as it is (`internal`, not retriable): waiting will not help.
      if (isAppError(err, 'internal')) throw err;
      throw new AppError('unavailable', `Kafka event log: ${(err as Error).message}`, { cause: err, retriable: true });
    }
  }

  /**
   * Waits (up to syncTimeoutMs) until the log's end is past the commit marker at `marker`. The
   * coordinator answers a commit once it has decided it and writes the markers after: until they
   * are written the partition's last stable offset stays before the transaction, so a read in
   * another process, which waits only up to that end, missed an append that had already
   * returned (42 of 200 reads made right after an append, before this wait). One look at the end
   * per transaction, a few more while the markers are on their way. Past the bound the append
   * still succeeds: it is committed, and failing it would have its caller write it again.
   */
  async function markerWritten(marker: number): Promise<void> {
    const until = Date.now() + syncTimeoutMs;
    for (let pause = 1; ; pause = Math.min(pause * 2, 100)) {
      const end = await endOffset().catch(() => -1);
      if (end > marker || Date.now() >= until) return;
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }

  /**
   * Takes the partition over: initialising the transactional id bumps its epoch, which fences
   * every older writer and ends its open transaction (aborted, or its commit completed) before
   * it returns. Only then is the log read to its end, so the index includes all that committed.
   */
  function ownership(): Promise<Producer> {
    if (writer === null) {
      writer = (async () => {
        await ensureTopic();
        const producer = kafka.producer({
          transactionalId,
          idempotent: true,
          maxInFlightRequests: 1,
          allowAutoTopicCreation: false,
          transactionTimeout: options.transactionTimeoutMs ?? 10_000,
          // Right after a commit the coordinator answers the next transaction's first send with
          // CONCURRENT_TRANSACTIONS until its markers are written (a few ms): kafkajs' default
          // first backoff of 300 ms would cap the log at a few transactions a second.
          retry: TRANSACTION_RETRY,
          // The log is one partition. kafkajs's default partitioner filters the partition list
          // into a new array for every record before it looks at the record's partition: 250,000
          // arrays for the sample's first day.
          createPartitioner: () => () => 0,
        });
        try {
          await producer.connect();
          // kafkajs initialises the producer id lazily, at the first transaction: start an
          // empty one (its abort sends nothing) to take the epoch now.
          await (await producer.transaction()).abort();
        } catch (err) {
          await producer.disconnect().catch(() => {});
          throw kafkaError(err, 'taking over the event log partition');
        }
        await sync();
        return producer;
      })();
      writer.catch(() => loseOwnership());
    }
    return writer;
  }

  function loseOwnership(): void {
    const lost = writer;
    writer = null;
    void lost?.then((p) => p.disconnect()).catch(() => {});
  }

  /** Checks the requests against the index (and earlier requests of the same transaction). */
  function plan(requests: AppendRequest[], recordedAt: string) {
    // The last transaction's records are all sent (one transaction at a time): its slabs are free.
    encoder.reset();
    const pending = new Map<string, number>();
    const messages: LogMessage[] = [];
    const logged: LoggedEvent[] = [];
    const slots: Array<{ stream: string; first: number; count: number; revision: number } | AppError> = [];
    for (const request of requests) {
      const current = pending.get(request.stream) ?? index.revision(request.stream);
      if (!matches(current, request.expectedRevision)) {
        slots.push(conflict(request.stream, request.expectedRevision, current));
        continue;
      }
      const first = messages.length;
      let revision = current;
      for (const event of request.events) {
        revision += 1;
        const record = loggedEvent(request.stream, event, revision, recordedAt);
        logged.push(record);
        messages.push(encoder.message(request.stream, event, revision, recordedAt, record));
      }
      pending.set(request.stream, revision);
      slots.push({ stream: request.stream, first, count: request.events.length, revision });
    }
    return { messages, logged, slots };
  }

  /** One transaction for every request queued so far; each job gets its own slots back. */
  async function writeJobs(jobs: Job[]): Promise<void> {
    let producer: Producer;
    try {
      producer = await ownership();
    } catch (err) {
      for (const job of jobs) job.reject(err);
      return;
    }
    const requests = jobs.flatMap((j) => j.requests);
    const { messages, logged, slots } = plan(requests, clock.now().toISOString());
    const offsets: number[] = [];
    if (messages.length > 0) {
      const transaction = await producer.transaction().catch((err: unknown) => err as Error);
      if (transaction instanceof Error) {
        loseOwnership();
        for (const job of jobs) job.reject(writeError(transaction, 'starting a transaction'));
        return;
      }
      try {
        for (const chunk of chunks(messages, maxBatchBytes)) {
          const [meta] = await transaction.send({ topic, acks: -1, messages: chunk });
          const base = Number(meta?.baseOffset);
          if (!Number.isInteger(base)) throw new AppError('internal', 'Kafka returned no offset for an event batch');
          for (let i = 0; i < chunk.length; i += 1) offsets.push(base + i);
        }
        await options.beforeCommit?.();
        await transaction.commit();
      } catch (err) {
        await transaction.abort().catch(() => {});
        // Fenced or not, this writer no longer knows what the log holds: the next append takes
        // the partition again and reads it to its end before it checks anything.
        loseOwnership();
        for (const job of jobs) job.reject(writeError(err, 'committing events'));
        return;
      }
      logged.forEach((event, i) => index.apply(offsets[i] as number, event));
      // The commit marker takes the offset after the records and is no event: the index has
      // read past it. Only this writer could write up to there (a writer that takes over writes
      // beyond), and without this a read after the append waited for the tail consumer to fetch
      // the whole transaction back, which serialised ingest's batches.
      const marker = (offsets[offsets.length - 1] as number) + 1;
      index.advance(marker);
      skipApplied();
      // The jobs resolve once the markers are written, but the next transaction need not wait
      // for that: it begins now (with ingest's two batches in flight, the wait held each
      // batch's transaction behind the other's markers, a few ms each). Resolved in commit order.
      settling = Promise.all([settling, markerWritten(marker)]).then(() => resolveJobs(jobs, slots, offsets));
      return;
    }
    resolveJobs(jobs, slots, offsets);
  }

  /** Each job its own results: a revision and position per request, or its conflict. */
  function resolveJobs(jobs: Job[], slots: ReturnType<typeof plan>['slots'], offsets: number[]): void {
    const results = slots.map((slot) =>
      slot instanceof AppError
        ? slot
        : { nextExpectedRevision: slot.revision, position: (offsets[slot.first + slot.count - 1] ?? Number.NaN) + 1 },
    );
    let at = 0;
    for (const job of jobs) {
      job.resolve(results.slice(at, at + job.requests.length).map((r) =>
        // An empty append changes nothing: it reports the stream where it is, at the head.
        r instanceof AppError || !Number.isNaN(r.position) ? r : { ...r, position: index.head },
      ));
      at += job.requests.length;
    }
  }

  async function drain(): Promise<void> {
    if (draining) return;
    draining = true;
    try {
      while (queue.length > 0) await writeJobs(queue.splice(0, queue.length));
    } finally {
      draining = false;
    }
  }

  function appendMany(requests: AppendRequest[]): Promise<Array<AppendResult | AppError>> {
    try {
      ensureOpen();
    } catch (err) {
      return Promise.reject(err);
    }
    if (requests.length === 0) return Promise.resolve([]);
    return new Promise((resolve, reject) => {
      queue.push({ requests, resolve, reject });
      void drain();
    });
  }

  /** Reads for a subscription: the tail consumer keeps the index moving, no round trip needed. */
  const localSource = {
    readAll: async ({ after = 0, limit = 1000 }: { after?: number; limit?: number }) => index.readAll(after, limit),
    headPosition: async () => index.head,
  };

  const store: KafkaEventStore = {
    topic,
    appendMany,

    append: (stream: string, events: DomainEvent[], expectedRevision: ExpectedRevision) =>
      appendOne(appendMany, { stream, events, expectedRevision }),

    async readStream(stream, readOptions = {}) {
      await sync();
      return index.readStream(stream, readOptions.fromRevision ?? 0);
    },

    async readStreamBackwards(stream, readOptions = {}) {
      await sync();
      return index.readStreamBackwards(stream, readOptions.fromRevision ?? Number.MAX_SAFE_INTEGER, readOptions.limit ?? 100);
    },

    async streamRevision(stream) {
      await sync();
      return index.revision(stream);
    },

    async readAll(readOptions = {}): Promise<RecordedEvent[]> {
      await sync();
      return index.readAll(readOptions.after ?? 0, readOptions.limit ?? 1000);
    },

    async headPosition() {
      await sync();
      return index.head;
    },

    subscribeAll(handler, subscribeOptions: SubscribeOptions = {}) {
      ensureOpen();
      // Reading from the local index means reading what the tail consumer has seen: start it.
      const started = tail();
      const subscription = pollingSubscription(
        {
          readAll: async (o) => {
            await started;
            return localSource.readAll(o);
          },
          headPosition: async () => {
            await started;
            return localSource.headPosition();
          },
        },
        handler,
        subscribeOptions,
      );
      subscriptions.add(subscription);
      void subscription.done.finally(() => subscriptions.delete(subscription)).catch(() => undefined);
      return subscription;
    },

    async deleteTopic() {
      try {
        const client = await admin();
        if ((await client.listTopics()).includes(topic)) await client.deleteTopics({ topics: [topic] });
      } catch (err) {
        throw kafkaError(err, `deleting ${topic}`);
      }
    },

    async close() {
      if (closed) return;
      await Promise.all([...subscriptions].map((s) => s.stop()));
      // Appends already queued finish (or fail) before the clients go.
      while (draining || queue.length > 0) await new Promise((resolve) => setTimeout(resolve, 5));
      await settling;
      closed = true;
      index.fail(new AppError('closed', 'the Kafka event store is closed'));
      const [a, t, w] = [adminClient.take(), tailReady, writer];
      tailReady = null;
      tailing = null;
      writer = null;
      await Promise.all([
        t?.then((c) => c.disconnect()).catch(() => {}),
        w?.then((p) => p.disconnect()).catch(() => {}),
        ends?.disconnect(),
      ]);
      await a?.then((c) => c.disconnect()).catch(() => {});
    },
  };
  return store;
}

/** A failed write as AppError: `unavailable`, retriable, saying whether this writer was fenced. */
function writeError(err: unknown, what: string): AppError {
  const fenced = isFenced(err);
  const message = err instanceof Error ? err.message : String(err);
  return new AppError(
    'unavailable',
    fenced
      ? `Kafka event log: another writer took the partition over; nothing of this append was committed (${message})`
      : `Kafka event log: ${what} failed, outcome unknown until the next writer reads the log: ${message}`,
    { cause: err, retriable: true, details: { fenced } },
  );
}

function* chunks(messages: LogMessage[], maxBytes: number): Generator<LogMessage[]> {
  let chunk: LogMessage[] = [];
  let bytes = 0;
  for (const message of messages) {
    const size = messageBytes(message);
    if (chunk.length > 0 && bytes + size > maxBytes) {
      yield chunk;
      chunk = [];
      bytes = 0;
    }
    chunk.push(message);
    bytes += size;
  }
  if (chunk.length > 0) yield chunk;
}
