/**
 * The ObservationBus on Kafka (kafkajs). Crawlers publish the same Avro single-object records
 * the local inbox stores (contracts/codec.ts); ingest processes consume them in a consumer
 * group, sharing the partitions.
 *
 * - Topics: `<prefix>observations.<kind>` per stream kind (topics.ts says why not per type),
 *   created on demand with `partitions` partitions; dead letters go to
 *   `<prefix>observations.dead-letter` (one partition).
 * - Message: key = the stream the observation targets, so a stream's observations stay in
 *   order in one partition; value = the Avro bytes; headers `schema-fingerprint` (16 hex, as
 *   in the record header) and `observation-type`, for tools that do not decode Avro.
 * - Publishing: kafkajs does no batching of its own, so `publish` groups the records per topic
 *   and sends them with `sendBatch` in chunks, acks from all in-sync replicas, through an
 *   idempotent producer with one request in flight (a retried chunk is neither duplicated
 *   nor reordered).
 * - Consuming: see consumer.ts.
 *
 * Other producers must partition by the same murmur2 hash of the key as kafkajs and the Java
 * client, or a stream's records would be split over two partitions and lose their order:
 * librdkafka tools need `-X partitioner=murmur2_random` (kcat's default is CRC32).
 */
import type { Admin, Kafka, Message } from 'kafkajs';
import { encodeObservation } from '../../contracts/codec.ts';
import { AppError } from '../../contracts/errors.ts';
import type { Observation } from '../../contracts/observations.ts';
import { systemClock, type Clock, type Consumer, type ObservationBus } from '../../contracts/ports.ts';
import { connectedOnUse, createKafka, kafkaError, Partitioners, type KafkaClientOptions } from './client.ts';
import { CONSUMER_RETRY, startConsumer } from './consumer.ts';
import { countDeadLetters, deadLetterMessage, payloadBytes, readDeadLetters } from './deadLetters.ts';
import { streamKeyOf, topicNames, type TopicNames } from './topics.ts';

export interface KafkaObservationBusOptions extends KafkaClientOptions {
  /** Prepended to every topic name; tests use a unique one. Default `marquee.`. */
  topicPrefix?: string;
  /**
   * Partitions of each observation topic created by this bus: the most ingest consumers of one
   * group that can share the work. Default 4. Topics that exist are left as they are.
   */
  partitions?: number;
  /** Replication factor of created topics; -1 takes the broker's default. Default -1. */
  replicationFactor?: number;
  /** The message key of an observation. Default: the stream it targets (`streamKeyOf`). */
  keyOf?: (observation: Observation) => string;
  /** Most messages per produce request. Default 1000. */
  maxBatchMessages?: number;
  /**
   * Most value bytes per produce request, kept under the broker's message.max.bytes (1 MiB),
   * which bounds each partition's record batch. Default 900,000.
   */
  maxBatchBytes?: number;
  /** How long a consumer's fetch waits for new records, in ms; bounds how fast stop() is. Default 250. */
  maxWaitMs?: number;
  /** How often an untilIdle consumer asks for its group's committed offsets, in ms. Default 250. */
  idleCheckMs?: number;
  /** Consumer group session timeout, in ms. Default 30000 (kafkajs' default). */
  sessionTimeoutMs?: number;
  /**
   * How many partitions' batches one consumer hands to its handler at once (kafkajs'
   * partitionsConsumedConcurrently). Default `DEFAULT_CONSUME_CONCURRENCY`: while one batch
   * waits for its events to be durable and its offsets committed, the next is decoded and
   * decided; partitions hold different streams (records are keyed by stream), so order within
   * a stream is kept.
   */
  consumeConcurrency?: number;
  /** How long to wait for a created topic to be served before giving up, in ms. Default 30000. */
  topicReadyMs?: number;
  /** Gives up listing dead letters after this long, in ms. Default 30000. */
  listTimeoutMs?: number;
  /** Stamps dead letters. Default the system clock. */
  clock?: Clock;
}

export interface RawRecord {
  value: Uint8Array | null;
  /** Default: no key (the partitioner spreads such records). */
  key?: string | null;
  headers?: Record<string, string>;
}

export interface KafkaObservationBus extends ObservationBus {
  readonly topics: TopicNames;
  /** Creates the observation and dead-letter topics that are missing. */
  ensureTopics(): Promise<void>;
  /**
   * Produces records exactly as given (a bridge from another transport, or a test injecting
   * poison). Default topic: the availability topic.
   */
  publishRaw(records: readonly RawRecord[], options?: { topic?: string }): Promise<void>;
  /** Deletes every topic of this bus's prefix (tests with a unique prefix clean up with it). */
  deleteTopics(): Promise<void>;
  /** One metadata round trip to the cluster: the dependency check of the process (rejects with `unavailable`). */
  ping(): Promise<void>;
}

const DEFAULT_DEAD_LETTER_LIMIT = 100;

/** Partitions' batches one consumer handles at once, unless `consumeConcurrency` says otherwise. */
export const DEFAULT_CONSUME_CONCURRENCY = 2;

/** Errors a just-created topic answers with until its metadata reached every broker. */
const NOT_READY = new Set(['UNKNOWN_TOPIC_OR_PARTITION', 'LEADER_NOT_AVAILABLE', 'NOT_LEADER_FOR_PARTITION', 'NOT_LEADER_OR_FOLLOWER']);

/**
 * Waits until every partition of the topics answers a ListOffsets: a KRaft broker acknowledges
 * CreateTopics before it serves the new partitions (and kafkajs' `waitForLeaders` gives up on
 * UNKNOWN_TOPIC_OR_PARTITION instead of waiting), so the first produce or fetch would fail.
 */
export async function waitUntilServed(admin: Admin, names: readonly string[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (const topic of names) {
    for (;;) {
      try {
        await admin.fetchTopicOffsets(topic);
        break;
      } catch (err) {
        const type = (err as { type?: unknown }).type;
        if (typeof type !== 'string' || !NOT_READY.has(type) || Date.now() > deadline) throw err;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  }
}

export function kafkaObservationBus(options: KafkaObservationBusOptions): KafkaObservationBus {
  const prefix = options.topicPrefix ?? 'marquee.';
  const partitions = options.partitions ?? 4;
  const replicationFactor = options.replicationFactor ?? -1;
  const keyOf = options.keyOf ?? streamKeyOf;
  const maxBatchMessages = options.maxBatchMessages ?? 1000;
  const maxBatchBytes = options.maxBatchBytes ?? 900_000;
  const clock = options.clock ?? systemClock;
  const topicReadyMs = options.topicReadyMs ?? 30_000;
  const topics = topicNames(prefix);
  const kafka: Kafka = createKafka(options);
  // The consumers' own client: they wait out a broker restart (CONSUMER_RETRY), where a
  // publish or a readiness ping should fail fast.
  const consumerKafka: Kafka = createKafka(options, CONSUMER_RETRY);

  let closed = false;
  const created = new Map<string, Promise<void>>();
  const active = new Set<Consumer>();

  function ensureOpen(): void {
    if (closed) throw new AppError('closed', 'the Kafka observation bus is closed');
  }

  const adminClient = connectedOnUse(() => kafka.admin(), 'connecting the admin client');
  const admin = () => adminClient.get();
  const producerClient = connectedOnUse(
    () => kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      allowAutoTopicCreation: false,
      createPartitioner: Partitioners.DefaultPartitioner,
    }),
    'connecting the producer',
  );
  const producer = () => producerClient.get();

  async function ensureTopics(names: readonly string[]): Promise<void> {
    const missing = names.filter((n) => !created.has(n));
    if (missing.length > 0) {
      const creating = (async () => {
        const client = await admin();
        try {
          // Resolves false when they all existed (another bus or process created them).
          await client.createTopics({
            waitForLeaders: false,
            topics: missing.map((topic) => ({
              topic,
              numPartitions: topic === topics.deadLetter ? 1 : partitions,
              replicationFactor,
            })),
          });
          await waitUntilServed(client, missing, topicReadyMs);
        } catch (err) {
          throw kafkaError(err, `creating topics ${missing.join(', ')}`);
        }
      })();
      for (const n of missing) created.set(n, creating);
      creating.catch(() => {
        for (const n of missing) if (created.get(n) === creating) created.delete(n);
      });
    }
    await Promise.all(names.map((n) => created.get(n)));
  }

  /** Sends messages per topic in chunks of at most maxBatchMessages / maxBatchBytes. */
  async function send(byTopic: Map<string, Message[]>): Promise<void> {
    if (byTopic.size === 0) return;
    await ensureTopics([...byTopic.keys()]);
    const client = await producer();
    let chunk = new Map<string, Message[]>();
    let count = 0;
    let bytes = 0;
    const flush = async () => {
      if (count === 0) return;
      const topicMessages = [...chunk].map(([topic, messages]) => ({ topic, messages }));
      chunk = new Map();
      count = 0;
      bytes = 0;
      try {
        await client.sendBatch({ topicMessages, acks: -1 });
      } catch (err) {
        throw kafkaError(err, 'publishing observations');
      }
    };
    for (const [topic, messages] of byTopic) {
      for (const message of messages) {
        const size = (message.value as Buffer | null)?.length ?? 0;
        if (count > 0 && (count >= maxBatchMessages || bytes + size > maxBatchBytes)) await flush();
        let list = chunk.get(topic);
        if (list === undefined) chunk.set(topic, (list = []));
        list.push(message);
        count += 1;
        bytes += size;
      }
    }
    await flush();
  }

  async function produceDeadLetter(message: Message): Promise<void> {
    ensureOpen();
    await send(new Map([[topics.deadLetter, [message]]]));
  }

  return {
    topics,
    ensureTopics: () => ensureTopics([...topics.observations, topics.deadLetter]),

    async publish(observations) {
      ensureOpen();
      // Encode (and so validate) everything first: a bad observation publishes nothing.
      const byTopic = new Map<string, Message[]>();
      for (const o of observations) {
        const value = encodeObservation(o);
        const topic = topics.of(o.type);
        let list = byTopic.get(topic);
        if (list === undefined) byTopic.set(topic, (list = []));
        list.push({
          key: keyOf(o),
          value,
          headers: { 'schema-fingerprint': value.toString('hex', 2, 10), 'observation-type': o.type },
        });
      }
      await send(byTopic);
    },

    async publishRaw(records, rawOptions = {}) {
      ensureOpen();
      const topic = rawOptions.topic ?? topics.of('AvailabilityObserved');
      const messages: Message[] = records.map((r) => ({
        key: r.key ?? null,
        value: r.value === null ? null : Buffer.from(r.value),
        ...(r.headers ? { headers: r.headers } : {}),
      }));
      await send(new Map([[topic, messages]]));
    },

    consume(handler, consumeOptions = {}) {
      ensureOpen();
      const consumer: Consumer = startConsumer(
        {
          kafka: consumerKafka,
          admin,
          topics,
          ensureTopics,
          deadLetterBytes: (source, reason, value) =>
            produceDeadLetter(deadLetterMessage({ source, reason, value, encoding: 'avro', at: clock.now().toISOString() })),
          maxWaitMs: options.maxWaitMs ?? 250,
          idleCheckMs: options.idleCheckMs ?? 250,
          sessionTimeoutMs: options.sessionTimeoutMs ?? 30_000,
          concurrency: options.consumeConcurrency ?? DEFAULT_CONSUME_CONCURRENCY,
        },
        handler,
        consumeOptions,
        () => active.delete(consumer),
      );
      active.add(consumer);
      return consumer;
    },

    async deadLetter(record, reason) {
      const { value, encoding } = payloadBytes(record);
      await produceDeadLetter(deadLetterMessage({ source: record.source, reason, value, encoding, at: clock.now().toISOString() }));
    },

    async listDeadLetters(listOptions = {}) {
      ensureOpen();
      await ensureTopics([topics.deadLetter]);
      return readDeadLetters({
        kafka,
        admin: await admin(),
        topic: topics.deadLetter,
        limit: listOptions.limit ?? DEFAULT_DEAD_LETTER_LIMIT,
        timeoutMs: options.listTimeoutMs ?? 30_000,
      });
    },

    async countDeadLetters() {
      ensureOpen();
      await ensureTopics([topics.deadLetter]);
      return countDeadLetters(await admin(), topics.deadLetter);
    },

    async ping() {
      ensureOpen();
      try {
        await (await admin()).describeCluster();
      } catch (err) {
        throw kafkaError(err, 'asking the cluster for its metadata');
      }
    },

    async deleteTopics() {
      const client = await admin();
      try {
        const existing = new Set(await client.listTopics());
        const mine = [...topics.observations, topics.deadLetter].filter((t) => existing.has(t));
        if (mine.length > 0) await client.deleteTopics({ topics: mine });
      } catch (err) {
        throw kafkaError(err, `deleting the topics of ${prefix}`);
      }
      created.clear();
    },

    async close() {
      if (closed) return;
      await Promise.all([...active].map((c) => c.stop()));
      closed = true;
      const [a, p] = [adminClient.take(), producerClient.take()];
      await Promise.all([
        a?.then((c) => c.disconnect()).catch(() => {}),
        p?.then((c) => c.disconnect()).catch(() => {}),
      ]);
    },
  };
}
