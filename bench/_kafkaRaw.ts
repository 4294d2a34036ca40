/**
 * The reference loop of `npm run bench -- kafka`: the crawl's messages through bare kafkajs
 * (sendBatch, then a consumer whose eachBatch only counts). bench/kafka.ts runs it twice: in a
 * process of its own where kafkajs is as published (_kafkaRawStock.ts), and in its own process,
 * where kafkajs carries Marquee's faster modules (infra/kafka/kafkajsModules.ts).
 */
import { Kafka, logLevel, Partitioners, type Message } from 'kafkajs';
import { encodeObservation } from '../contracts/codec.ts';
import type { Observation } from '../contracts/observations.ts';
import { kafkaObservationBus } from '../infra/kafka/observationBus.ts';
import { streamKeyOf, topicNames } from '../infra/kafka/topics.ts';

export const PARTITIONS = 4;
export const CHUNK_MESSAGES = 1000;
const CHUNK_BYTES = 900_000;
export type RawResult = { publish_s: number; consume_s: number; cpu_s: number };
export const seconds = (from: number) => (performance.now() - from) / 1000;
/** CPU seconds of this process so far (every thread): the broker's share is alike on both sides. */
export const cpuNow = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
};
export const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;

/** The reference: the same messages through bare kafkajs, counted and dropped. */
export async function rawLoop(observations: Observation[], requests: 'by-topic' | 'as-published', brokers: string[], runId: string): Promise<RawResult> {
  const topics = topicNames(`marquee.bench-raw.${runId}.${requests}.`);
  /** The messages of each call, by topic: one call of every observation, or the bus's calls of CHUNK_MESSAGES. */
  const calls: Array<Map<string, Message[]>> = [];
  for (const [i, o] of observations.entries()) {
    if (calls.length === 0 || (requests === 'as-published' && i % CHUNK_MESSAGES === 0)) calls.push(new Map());
    const byTopic = calls[calls.length - 1] as Map<string, Message[]>;
    const value = encodeObservation(o);
    const topic = topics.of(o.type);
    let list = byTopic.get(topic);
    if (list === undefined) byTopic.set(topic, (list = []));
    list.push({ key: streamKeyOf(o), value, headers: { 'schema-fingerprint': value.toString('hex', 2, 10), 'observation-type': o.type } });
  }
  const kafka = new Kafka({ brokers, clientId: 'bench-raw', logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, createPartitioner: Partitioners.DefaultPartitioner });
  const consumer = kafka.consumer({ groupId: `bench-raw-${runId}-${requests}`, maxWaitTimeInMs: 250 });
  await Promise.all([admin.connect(), producer.connect(), consumer.connect()]);
  try {
    // The same created-and-served topics the bus makes, outside the timing on both sides.
    const scratch = kafkaObservationBus({ brokers, topicPrefix: `marquee.bench-raw.${runId}.${requests}.`, partitions: PARTITIONS });
    await scratch.ensureTopics();
    await scratch.close();

    const t0 = performance.now();
    const cpu0 = cpuNow();
    let chunk: Array<{ topic: string; messages: Message[] }> = [];
    let count = 0;
    let bytes = 0;
    const flush = async () => {
      if (count === 0) return;
      await producer.sendBatch({ topicMessages: chunk, acks: -1 });
      chunk = [];
      count = 0;
      bytes = 0;
    };
    for (const byTopic of calls) {
      for (const [topic, messages] of byTopic) {
        for (const message of messages) {
          const size = (message.value as Buffer).length;
          if (count > 0 && (count >= CHUNK_MESSAGES || bytes + size > CHUNK_BYTES)) await flush();
          const last = chunk.at(-1);
          if (last?.topic === topic) last.messages.push(message);
          else chunk.push({ topic, messages: [message] });
          count += 1;
          bytes += size;
        }
      }
      // A call ends with its last request, as the bus's publish does.
      await flush();
    }
    const publish = seconds(t0);

    const t1 = performance.now();
    let received = 0;
    let done: () => void = () => {};
    const all = new Promise<void>((resolve) => (done = resolve));
    await consumer.subscribe({ topics: [...topics.observations], fromBeginning: true });
    await consumer.run({
      eachBatch: async ({ batch }) => {
        received += batch.messages.length;
        if (received >= observations.length) done();
      },
    });
    await all;
    const consume = seconds(t1);
    const cpu = cpuNow() - cpu0;
    await admin.deleteTopics({ topics: [...topics.observations, topics.deadLetter] }).catch(() => {});
    return { publish_s: round(publish), consume_s: round(consume), cpu_s: round(cpu) };
  } finally {
    await Promise.all([consumer.disconnect(), producer.disconnect()]);
    await admin.disconnect();
  }
}

