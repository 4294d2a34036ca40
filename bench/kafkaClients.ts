/**
 * `npm run bench -- kafkaClients --rdkafka <dir> [--rounds N]`
 *
 * Is another Kafka client worth it? The bare loops of two clients on the same messages (the
 * sample crawl's observations, encoded, keyed and with the headers the bus sends, grouped by
 * topic): kafkajs (Marquee's client; loaded here before Marquee's modules, so its grouping and
 * framing are its own, the other three Marquee's: infra/kafka/kafkajsModules.ts) and librdkafka
 * through `@confluentinc/kafka-javascript`'s own API (produce per message with delivery reports,
 * then a consumer group reading batches), in alternated rounds on fresh topics.
 *
 * librdkafka is not a dependency: its package fetches a prebuilt binary from GitHub, which this
 * project's machines may not reach, and its source build fetches zlib, zstd and OpenSSL unless
 * told to link the system's. `--rdkafka` names a directory where it was built from its npm
 * tarball (docs/performance.md, "Another Kafka client", gives the commands). Without it only
 * kafkajs runs. Needs a broker (KAFKA_BROKERS, default 127.0.0.1:9092); the topics are deleted
 * afterwards. Prints one JSON line.
 */
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Kafka, logLevel, Partitioners, type Message } from 'kafkajs';
import { encodeObservation } from '../contracts/codec.ts';
import { systemClock } from '../contracts/ports.ts';
import { kafkaObservationBus } from '../infra/kafka/observationBus.ts';
import { streamKeyOf, topicNames } from '../infra/kafka/topics.ts';
import { generateCrawl } from '../services/crawler/catalog.ts';
import { roundsOption } from './_stats.ts';

const { values } = parseArgs({ options: { rdkafka: { type: 'string' }, rounds: { type: 'string', default: '2' } } });
const brokers = (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
const rounds = roundsOption(values.rounds);
const PARTITIONS = 4;
const CHUNK_MESSAGES = 1000;
const runId = `${Date.now().toString(36)}${randomUUID().slice(0, 6)}`;
const round2 = (n: number) => Math.round(n * 100) / 100;
const cpuNow = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
};

/** consume_s includes joining the consumer group; first_batch_s is the time until the first batch came. */
type Result = { publish_s: number; consume_s: number; first_batch_s: number; cpu_s: number };
type Outgoing = { topic: string; key: string; value: Buffer; type: string };

const observations = [...generateCrawl({ seed: 42, day: 0 })];
/** Topics made and deleted per round: each client reads only what it wrote. */
async function withTopics(name: string, body: (topics: ReturnType<typeof topicNames>, messages: Outgoing[]) => Promise<Result>): Promise<Result> {
  const prefix = `marquee.bench-clients.${runId}.${name}.`;
  const topics = topicNames(prefix);
  const messages = observations.map((o) => ({ topic: topics.of(o.type), key: streamKeyOf(o), value: encodeObservation(o), type: o.type }));
  // Grouped by topic over the whole crawl, as `kafka`'s raw_kafkajs reference sends them.
  messages.sort((a, b) => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : 0));
  const bus = kafkaObservationBus({ brokers, topicPrefix: prefix, partitions: PARTITIONS });
  await bus.ensureTopics();
  try {
    return await body(topics, messages);
  } finally {
    await bus.deleteTopics().catch(() => {});
    await bus.close();
  }
}
const headersOf = (m: Outgoing) => ({ 'schema-fingerprint': m.value.toString('hex', 2, 10), 'observation-type': m.type });

async function kafkajsLoop(round: number): Promise<Result> {
  return withTopics(`kafkajs${round}`, async (topics, messages) => {
    const kafka = new Kafka({ brokers, clientId: 'bench-clients', logLevel: logLevel.NOTHING });
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, createPartitioner: Partitioners.DefaultPartitioner });
    const consumer = kafka.consumer({ groupId: `bench-clients-${runId}-${round}`, maxWaitTimeInMs: 250 });
    await Promise.all([producer.connect(), consumer.connect()]);
    try {
      const t0 = performance.now();
      const cpu0 = cpuNow();
      for (let i = 0; i < messages.length; ) {
        const topic = (messages[i] as Outgoing).topic;
        const batch: Message[] = [];
        for (; i < messages.length && batch.length < CHUNK_MESSAGES && (messages[i] as Outgoing).topic === topic; i++) {
          const m = messages[i] as Outgoing;
          batch.push({ key: m.key, value: m.value, headers: headersOf(m) });
        }
        await producer.sendBatch({ topicMessages: [{ topic, messages: batch }], acks: -1 });
      }
      const publish = (performance.now() - t0) / 1000;
      const t1 = performance.now();
      let received = 0;
      let done: () => void = () => {};
      const all = new Promise<void>((resolveAll) => (done = resolveAll));
      await consumer.subscribe({ topics: [...topics.observations], fromBeginning: true });
      let first = 0;
      await consumer.run({
        eachBatch: async ({ batch }) => {
          if (received === 0) first = performance.now();
          received += batch.messages.length;
          if (received >= messages.length) done();
        },
      });
      await all;
      return { publish_s: round2(publish), consume_s: round2((performance.now() - t1) / 1000), first_batch_s: round2((first - t1) / 1000), cpu_s: round2(cpuNow() - cpu0) };
    } finally {
      await Promise.all([consumer.disconnect(), producer.disconnect()]);
    }
  });
}

// The librdkafka binding's own API, untyped here (it is not a dependency).
/* eslint-disable @typescript-eslint/no-explicit-any */
async function rdkafkaLoop(rd: any, round: number): Promise<Result> {
  return withTopics(`rdkafka${round}`, async (topics, messages) => {
    const servers = brokers.join(',');
    // The same guarantees as the kafkajs producer: idempotent, every replica's ack; murmur2 as kafkajs partitions.
    const producer = new rd.Producer({ 'bootstrap.servers': servers, 'enable.idempotence': true, acks: 'all', dr_cb: true, 'linger.ms': 5, partitioner: 'murmur2_random' });
    await new Promise((ok, fail) => producer.connect({}, (err: unknown) => (err ? fail(err) : ok(null))));
    producer.setPollInterval(10);
    const consumer = new rd.KafkaConsumer({ 'bootstrap.servers': servers, 'group.id': `bench-clients-${runId}-rd${round}` }, { 'auto.offset.reset': 'earliest' });
    try {
      const t0 = performance.now();
      const cpu0 = cpuNow();
      let delivered = 0;
      let failed: unknown = null;
      await new Promise<void>((ok, fail) => {
        producer.on('delivery-report', (err: unknown) => {
          if (err) failed ??= err;
          delivered += 1;
          if (delivered < messages.length) return;
          if (failed) fail(failed);
          else ok();
        });
        for (const m of messages) {
          const h = headersOf(m);
          producer.produce(m.topic, null, m.value, m.key, null, null, [{ 'schema-fingerprint': h['schema-fingerprint'] }, { 'observation-type': h['observation-type'] }]);
        }
      });
      const publish = (performance.now() - t0) / 1000;
      const t1 = performance.now();
      await new Promise((ok, fail) => consumer.connect({}, (err: unknown) => (err ? fail(err) : ok(null))));
      consumer.subscribe([...topics.observations]);
      // A call returns what came within 10 ms rather than waiting up to its default second to
      // fill its 1,000 messages: consuming took 1.2-1.9 s so, against 2.4-3.3 s (2026-12-06).
      consumer.setDefaultConsumeTimeout(10);
      let received = 0;
      let first = 0;
      await new Promise<void>((ok, fail) => {
        const next = () =>
          consumer.consume(CHUNK_MESSAGES, (err: unknown, batch: unknown[]) => {
            if (err) return fail(err);
            if (received === 0 && batch.length > 0) first = performance.now();
            received += batch.length;
            if (received >= messages.length) ok();
            else setImmediate(next);
          });
        next();
      });
      return { publish_s: round2(publish), consume_s: round2((performance.now() - t1) / 1000), first_batch_s: round2((first - t1) / 1000), cpu_s: round2(cpuNow() - cpu0) };
    } finally {
      await new Promise((ok) => consumer.disconnect(() => ok(null)));
      await new Promise((ok) => producer.disconnect(() => ok(null)));
    }
  });
}
/* eslint-enable @typescript-eslint/no-explicit-any */

const rd: unknown = values.rdkafka === undefined ? null : createRequire(import.meta.url)(resolve(values.rdkafka));
const kafkajs: Result[] = [];
const rdkafka: Result[] = [];
for (let r = 0; r < rounds; r++) {
  kafkajs.push(await kafkajsLoop(r));
  if (rd !== null) rdkafka.push(await rdkafkaLoop(rd, r));
}
const total = (r: Result) => r.publish_s + r.consume_s;
console.log(JSON.stringify({
  bench: 'kafkaClients',
  node: process.version,
  at: systemClock.now().toISOString(),
  brokers,
  observations: observations.length,
  partitions: PARTITIONS,
  kafkajs,
  rdkafka: rd === null ? null : rdkafka,
  rdkafka_version: rd === null ? null : (rd as { librdkafkaVersion?: string }).librdkafkaVersion ?? null,
  // Per round: librdkafka's time (and CPU) over kafkajs's.
  time_ratio_rdkafka_to_kafkajs: rd === null ? null : rdkafka.map((r, i) => round2(total(r) / total(kafkajs[i] as Result))),
  cpu_ratio_rdkafka_to_kafkajs: rd === null ? null : rdkafka.map((r, i) => round2(r.cpu_s / (kafkajs[i] as Result).cpu_s)),
}));
