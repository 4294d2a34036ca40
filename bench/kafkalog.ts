/**
 * `npm run bench -- kafkalog [--events N] [--streams N] [--batch N] [--concurrency N]`
 *
 * Append throughput of the Kafka event log (infra/kafka/eventStore.ts) beside bare kafkajs on
 * the same broker, in one run, with the same record bytes, keys and headers (each event's
 * record as the store writes it, infra/kafka/eventRecords.ts: OfferAdded events, so the
 * contract's Avro with the revision and time as headers):
 *
 * - raw_kafkajs: an idempotent producer, `send` of `batch` records at a time, acks from all
 *   replicas: the ceiling of one partition written by one client;
 * - raw_kafkajs_transactional: the same, one transaction per `batch` (the cost of commits alone);
 * - eventlog_append_many: `appendMany` of `batch` single-event requests, each at its stream's
 *   expected revision (the ingest hot path), one call after the other;
 * - eventlog_concurrent_append: `concurrency` single-event `append` calls kept in flight (the
 *   store batches what is queued into one transaction);
 * - eventlog_rebuild: a new store reading the whole log into its index (what a process does at
 *   start), in events/s.
 *
 * Needs a broker (KAFKA_BROKERS, default 127.0.0.1:9092); the run's topics are deleted
 * afterwards. Prints one JSON line.
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { Kafka, logLevel, type Message } from 'kafkajs';
import type { DomainEvent } from '../contracts/events.ts';
import type { AppendRequest } from '../contracts/ports.ts';
import { kafkaEventStore, TRANSACTION_RETRY } from '../infra/kafka/eventStore.ts';
import { logEncoder } from '../infra/kafka/eventRecords.ts';

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '20000' },
    streams: { type: 'string', default: '1000' },
    batch: { type: 'string', default: '500' },
    concurrency: { type: 'string', default: '64' },
  },
});
const brokers = (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
const total = Number(values.events);
const streamCount = Number(values.streams);
const batch = Number(values.batch);
const concurrency = Number(values.concurrency);
const runId = `${Date.now().toString(36)}${randomUUID().slice(0, 6)}`;
const round = (n: number) => Math.round(n);

/** An OfferAdded as ingest decides it (138 bytes of Avro and two headers; 561 bytes as JSON), different for every n. */
function event(n: number): { stream: string; event: DomainEvent } {
  const mediaId = `mv${String(n % streamCount).padStart(8, '0')}`;
  return {
    stream: `availability-${mediaId}-US`,
    event: {
      type: 'OfferAdded',
      data: {
        mediaId,
        country: 'US',
        offer: {
          providerId: `p${n % 7}`, addonProviderId: null, seasonNumber: null, episodeNumber: null, webUrl: `https://example.com/watch/${n}`,
          priceTypes: ['flatrate'], formats: ['hd'], audioLanguages: ['en'], subtitleLanguages: ['en', 'es'], availableFrom: null, availableTo: null, platforms: ['web', 'ios'],
        },
      },
      metadata: { observationId: `obs-${n}`, observedAt: '2024-01-01T00:00:00.000Z', producer: 'bench' },
    } as DomainEvent,
  };
}

const kafka = new Kafka({ clientId: 'marquee-bench', brokers, logLevel: logLevel.NOTHING });
const admin = kafka.admin();
await admin.connect();

/** The records the store would write for these events (fresh values: the encoder's slabs are reused from call to call). */
function messages(from: number, count: number): Message[] {
  const encoder = logEncoder();
  const recordedAt = new Date().toISOString();
  return Array.from({ length: count }, (_, i) => {
    const { stream, event: e } = event(from + i);
    return encoder.message(stream, e, 0, recordedAt);
  });
}

async function raw(transactional: boolean): Promise<number> {
  const topic = `marquee.bench.${runId}.raw${transactional ? 'tx' : ''}`;
  await admin.createTopics({ topics: [{ topic, numPartitions: 1 }] });
  const producer = kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    // The log's writer settings (its short backoff after a commit), for a like-for-like reference.
    ...(transactional ? { transactionalId: `${topic}-writer`, retry: TRANSACTION_RETRY } : {}),
  });
  await producer.connect();
  try {
    const t0 = performance.now();
    for (let i = 0; i < total; i += batch) {
      const chunk = messages(i, Math.min(batch, total - i));
      if (transactional) {
        const tx = await producer.transaction();
        await tx.send({ topic, acks: -1, messages: chunk });
        await tx.commit();
      } else {
        await producer.send({ topic, acks: -1, messages: chunk });
      }
    }
    return total / ((performance.now() - t0) / 1000);
  } finally {
    await producer.disconnect();
  }
}

const topicPrefix = `marquee.bench.${runId}.log.`;

async function appendManyRate(): Promise<number> {
  const store = kafkaEventStore({ brokers, topicPrefix });
  const revisions = new Map<string, number>();
  try {
    await store.headPosition();
    const t0 = performance.now();
    for (let i = 0; i < total; i += batch) {
      const requests: AppendRequest[] = [];
      for (let n = i; n < Math.min(i + batch, total); n += 1) {
        const { stream, event: e } = event(n);
        const current = revisions.get(stream) ?? -1;
        requests.push({ stream, events: [e], expectedRevision: current === -1 ? 'no_stream' : current });
        revisions.set(stream, current + 1);
      }
      const results = await store.appendMany(requests);
      const failed = results.find((r) => r instanceof Error);
      if (failed) throw failed;
    }
    return total / ((performance.now() - t0) / 1000);
  } finally {
    await store.close();
  }
}

async function concurrentRate(): Promise<number> {
  const store = kafkaEventStore({ brokers, topicPrefix });
  try {
    await store.headPosition();
    let next = 0;
    const t0 = performance.now();
    await Promise.all(Array.from({ length: concurrency }, async () => {
      while (next < total) {
        const { stream, event: e } = event(next);
        next += 1;
        await store.append(`c-${stream}`, [e], 'any');
      }
    }));
    return total / ((performance.now() - t0) / 1000);
  } finally {
    await store.close();
  }
}

async function rebuildRate(): Promise<{ rate: number; events: number }> {
  const store = kafkaEventStore({ brokers, topicPrefix });
  try {
    const t0 = performance.now();
    const head = await store.headPosition();
    const elapsed = (performance.now() - t0) / 1000;
    const events = (await store.readAll({ limit: 10 * total })).length;
    if (head === 0) throw new Error('the log is empty');
    return { rate: events / elapsed, events };
  } finally {
    await store.close();
  }
}

try {
  const rawRate = await raw(false);
  const rawTxRate = await raw(true);
  const appendMany = await appendManyRate();
  const concurrent = await concurrentRate();
  const rebuild = await rebuildRate();
  console.log(JSON.stringify({
    bench: 'kafkalog',
    events: total,
    streams: streamCount,
    batch,
    concurrency,
    events_per_s: {
      raw_kafkajs: round(rawRate),
      raw_kafkajs_transactional: round(rawTxRate),
      eventlog_append_many: round(appendMany),
      eventlog_concurrent_append: round(concurrent),
      eventlog_rebuild: round(rebuild.rate),
    },
    eventlog_vs_raw: Math.round((appendMany / rawRate) * 100) / 100,
    eventlog_vs_raw_transactional: Math.round((appendMany / rawTxRate) * 100) / 100,
    rebuilt_events: rebuild.events,
  }));
} finally {
  const mine = (await admin.listTopics()).filter((t) => t.startsWith(`marquee.bench.${runId}.`));
  if (mine.length > 0) await admin.deleteTopics({ topics: mine });
  await admin.disconnect();
}
