/**
 * `npm run bench -- kafka [--titles N] [--batch-size N] [--skip-inbox] [--event-log lmdb|kafka] [--consume-concurrency N] [--rounds N]`
 *
 * Crawl ingestion through Kafka, for the observations of the sample crawl (or a synthetic one of
 * N titles), generated once before any timing. These runs on the same broker, in this order:
 *
 * - raw_kafkajs: the reference, on kafkajs as published (in a process of its own, where none
 *   of Marquee's kafkajs modules is put in place, with Node's heap settings rather than ours:
 *   _kafkaRawStock.ts, OUR_HEAP_FLAGS). The same message bytes, keys and topics through bare
 *   kafkajs:
 *   producer.sendBatch in chunks of the same size with the same idempotent producer settings,
 *   then a consumer whose eachBatch only counts. Its messages are grouped by topic over the
 *   whole crawl first, so a request mostly holds one topic (4 partitions);
 * - raw_kafkajs_as_published: the same loop sending the very requests the bus sends for the
 *   crawler's calls of CHUNK_MESSAGES observations (a call's messages grouped by topic within
 *   it, so a request holds every type's topic: up to 20 partitions, each a smaller batch). The
 *   broker takes longer for those; this tells that cost from the cost of our code;
 * - raw_kafkajs_ours, raw_kafkajs_ours_as_published: both loops again in this process, where
 *   kafkajs carries Marquee's faster modules (checksum, record encoder, produce payload,
 *   grouping, framing, record decoder, partitioner: infra/kafka/kafkajsModules.ts): what the
 *   client can do here, so the `_ours` ratios tell our code's share alone;
 * - adapter_transport: the Kafka observation bus publishing (encoding) and consuming (decoding,
 *   validating, committing by hand) with a handler that only counts;
 * - adapter_with_ingest: the same with ingest appending to an LMDB event store, until idle, or
 *   with `--event-log kafka` to the Kafka event log (EVENT_STORE=kafka: one transaction per
 *   ingest batch, on a log topic of the run's own);
 * - inbox_with_ingest: the same ingest through the embedded inbox, to tell the cost of Kafka
 *   from the cost of ingest itself.
 *
 * With `--rounds N` (default 1), the stock reference and adapter_with_ingest run N times,
 * alternated, each round on topics of its own: on a shared machine whose speed moves by a third
 * within minutes, one pair of runs half a minute apart says little. The line's fields are the
 * first round's, as with one round; `rounds` lists every round's ratios and
 * `median_ratio_with_ingest_to_raw` (and the others) their medians.
 *
 * Rates are observations/s from the first publish to the end of consumption (consumer group
 * joins included). Needs a broker (KAFKA_BROKERS, default 127.0.0.1:9092); the run's topics
 * are deleted afterwards. Prints one JSON line.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Observation } from '../contracts/observations.ts';
import { systemClock, type EventStore } from '../contracts/ports.ts';
import { kafkaEventStore, type KafkaEventStore } from '../infra/kafka/eventStore.ts';
import { DEFAULT_CONSUME_CONCURRENCY, kafkaObservationBus, type KafkaObservationBus } from '../infra/kafka/observationBus.ts';
import { kafkajsModules } from '../infra/kafka/kafkajsModules.ts';
import { lmdbEventStore } from '../infra/lmdb/eventStore.ts';
import { lmdbInbox } from '../infra/lmdb/inbox.ts';
import { generateCrawl } from '../services/crawler/catalog.ts';
import { createIngest } from '../services/ingest/ingest.ts';
import { CHUNK_MESSAGES, cpuNow, PARTITIONS, rawLoop, round, seconds, type RawResult } from './_kafkaRaw.ts';
import { median, roundsOption } from './_stats.ts';

const { values } = parseArgs({
  options: {
    titles: { type: 'string' },
    seed: { type: 'string', default: '42' },
    'batch-size': { type: 'string', default: '2000' },
    'skip-inbox': { type: 'boolean', default: false },
    'event-log': { type: 'string', default: 'lmdb' },
    'consume-concurrency': { type: 'string', default: String(DEFAULT_CONSUME_CONCURRENCY) },
    rounds: { type: 'string', default: '1' },
  },
});
const brokers = (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
const seed = Number(values.seed);
const titles = values.titles === undefined ? undefined : Number(values.titles);
const batchSize = Number(values['batch-size']);
const eventLog = values['event-log'];
if (eventLog !== 'lmdb' && eventLog !== 'kafka') throw new Error(`--event-log: lmdb or kafka, not ${eventLog}`);
const rounds = roundsOption(values.rounds);
const crawlOptions = { seed, day: 0, ...(titles === undefined ? {} : { titles }) };
const runId = `${Date.now().toString(36)}${randomUUID().slice(0, 6)}`;
/** The run's id for round `nth` (0: the first, named as a run of one round is): its topics, groups and the stock loops' topics. */
const roundId = (nth: number) => (nth === 0 ? runId : `${runId}-r${nth}`);

/** Publishes `observations` through the bus in crawler-sized calls. */
async function publishAll(bus: KafkaObservationBus, observations: Observation[]): Promise<void> {
  for (let i = 0; i < observations.length; i += CHUNK_MESSAGES) await bus.publish(observations.slice(i, i + CHUNK_MESSAGES));
}

/**
 * Ours, through the bus: publish, then consume until the group is idle, either handing each
 * batch to ingest (LMDB event store) or, for the transport alone, only counting it.
 */
async function viaAdapter(observations: Observation[], withIngest: boolean, nth = 0): Promise<{ events: number; publish_s: number; consume_s: number; cpu_s: number }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'marquee-bench-kafka-'));
  const prefix = `marquee.bench.${roundId(nth)}.${withIngest ? 'ingest' : 'transport'}.`;
  const eventStore: EventStore = withIngest && eventLog === 'kafka' ? kafkaEventStore({ brokers, topicPrefix: prefix }) : lmdbEventStore({ dataDir });
  const bus = kafkaObservationBus({ brokers, topicPrefix: prefix, partitions: PARTITIONS, consumeConcurrency: Number(values['consume-concurrency']) });
  try {
    await bus.ensureTopics();
    // The log read to its end and its writer in place before the timing, as a process has them once started.
    if (withIngest && eventLog === 'kafka') await eventStore.streamRevision('bench-warm-up');
    const t0 = performance.now();
    const cpu0 = cpuNow();
    await publishAll(bus, observations);
    const publish = seconds(t0);
    const t1 = performance.now();
    let received = 0;
    const ingest = createIngest({ eventStore, bus });
    const consumer = withIngest
      ? ingest.run({ group: `bench-${roundId(nth)}`, batchSize, untilIdle: true })
      : bus.consume(async (batch) => {
        received += batch.length;
      }, { group: `bench-${roundId(nth)}`, batchSize, untilIdle: true });
    await consumer.done;
    const consume = seconds(t1);
    if (!withIngest && received !== observations.length) throw new Error(`received ${received} of ${observations.length}`);
    // Kafka positions are offsets (transaction markers take some): count what ingest appended.
    return { events: withIngest ? ingest.totals().appended : 0, publish_s: round(publish), consume_s: round(consume), cpu_s: round(cpuNow() - cpu0) };
  } finally {
    await bus.deleteTopics().catch(() => {});
    await bus.close();
    if ('deleteTopic' in eventStore) await (eventStore as KafkaEventStore).deleteTopic().catch(() => {});
    await eventStore.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The same ingest through the embedded inbox: how much of the time is ingest itself. */
async function viaInbox(observations: Observation[]): Promise<{ publish_s: number; consume_s: number; cpu_s: number }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'marquee-bench-inbox-'));
  const eventStore = lmdbEventStore({ dataDir });
  const bus = lmdbInbox({ dataDir });
  try {
    const t0 = performance.now();
    const cpu0 = cpuNow();
    for (let i = 0; i < observations.length; i += CHUNK_MESSAGES) await bus.publish(observations.slice(i, i + CHUNK_MESSAGES));
    const publish = seconds(t0);
    const t1 = performance.now();
    await createIngest({ eventStore, bus }).run({ batchSize, untilIdle: true }).done;
    return { publish_s: round(publish), consume_s: round(seconds(t1)), cpu_s: round(cpuNow() - cpu0) };
  } finally {
    await bus.close();
    await eventStore.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * V8's heap settings of this process (the young generation `marquee` runs with, no pretenuring),
 * which the stock loops do not take: they run as anyone's kafkajs loop runs, with Node's own.
 * kafkajs as published allocates a buffer or more per field it encodes, and with a young
 * generation of 128 MB its publishing took twice as long (4.5-5.2 s and 8.4-9.3 s of CPU for
 * the sample's first day, against 1.9-2.5 s and 2.4-3.3 s with Node's defaults or 64 MB,
 * alternated, 2026-12-07): a reference slowed by our settings would flatter the ratio.
 */
const OUR_HEAP_FLAGS = /^--(max-semi-space-size|no-allocation-site-pretenuring)\b/;

/** The reference loops on kafkajs as published, in a process of their own (_kafkaRawStock.ts), with Node's heap settings. */
function stockLoops(nth = 0): { kafkajs_modules: unknown; byTopic: RawResult; asPublished: RawResult } {
  const child = fileURLToPath(new URL('./_kafkaRawStock.ts', import.meta.url));
  const flags = process.execArgv.filter((flag) => !OUR_HEAP_FLAGS.test(flag));
  const out = execFileSync(process.execPath, [...flags, child, JSON.stringify({ brokers, runId: roundId(nth), crawl: crawlOptions })], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  return JSON.parse(out.trim().split('\n').at(-1) as string);
}

const stock = stockLoops();
const raw = stock.byTopic;
const rawSame = stock.asPublished;
const observations = [...generateCrawl(crawlOptions)];
// The same loops here, where kafkajs carries our modules: what the client itself could do.
const rawOurs = await rawLoop(observations, 'by-topic', brokers, runId);
const rawOursSame = await rawLoop(observations, 'as-published', brokers, runId);
const transport = await viaAdapter(observations, false);
const ingested = await viaAdapter(observations, true);
const n = observations.length;
const rate = (r: { publish_s: number; consume_s: number }) => n / (r.publish_s + r.consume_s);
/** One round's reference and ours with ingest, side by side: what `rounds` lists. */
const roundRatios = (s: typeof stock, ours: typeof ingested) => ({
  raw_s: round(s.byTopic.publish_s + s.byTopic.consume_s),
  with_ingest_s: round(ours.publish_s + ours.consume_s),
  ratio_with_ingest_to_raw: round(rate(ours) / rate(s.byTopic), 3),
  ratio_with_ingest_to_raw_as_published: round(rate(ours) / rate(s.asPublished), 3),
  cpu_ratio_with_ingest_to_raw: round(s.byTopic.cpu_s / ours.cpu_s, 3),
});
const perRound = [roundRatios(stock, ingested)];
for (let r = 1; r < rounds; r++) {
  process.stderr.write(`kafka bench: round ${r + 1} of ${rounds}\n`);
  const s = stockLoops(r);
  perRound.push(roundRatios(s, await viaAdapter(observations, true, r)));
}
const inbox = values['skip-inbox'] ? null : await viaInbox(observations);

const side = (r: { publish_s: number; consume_s: number; cpu_s: number }) => ({
  publish_s: r.publish_s,
  consume_s: r.consume_s,
  cpu_s: r.cpu_s,
  publish_obs_per_s: Math.round(n / r.publish_s),
  consume_obs_per_s: Math.round(n / r.consume_s),
  obs_per_s: Math.round(rate(r)),
});
console.log(JSON.stringify({
  bench: 'kafka',
  node: process.version,
  at: systemClock.now().toISOString(),
  brokers,
  catalog: titles === undefined ? 'sample' : `synthetic ${titles} titles`,
  partitions: PARTITIONS,
  consume_batch: batchSize,
  event_log: eventLog,
  consume_concurrency: Number(values['consume-concurrency']),
  observations: n,
  events: ingested.events,
  // kafkajs as published (the reference) and with Marquee's modules in place.
  kafkajs_modules: { raw_kafkajs: stock.kafkajs_modules, ours: kafkajsModules() },
  raw_kafkajs: side(raw),
  raw_kafkajs_as_published: side(rawSame),
  raw_kafkajs_ours: side(rawOurs),
  raw_kafkajs_ours_as_published: side(rawOursSame),
  adapter_transport: side(transport),
  adapter_with_ingest: { ...side(ingested), events_per_s: Math.round(ingested.events / (ingested.publish_s + ingested.consume_s)) },
  inbox_with_ingest: inbox === null ? null : side(inbox),
  ratio_transport_to_raw: round(rate(transport) / rate(raw), 3),
  ratio_with_ingest_to_raw: round(rate(ingested) / rate(raw), 3),
  // Against the same loop sending the very requests the bus sends (below).
  ratio_transport_to_raw_as_published: round(rate(transport) / rate(rawSame), 3),
  ratio_with_ingest_to_raw_as_published: round(rate(ingested) / rate(rawSame), 3),
  // Against the loop with Marquee's modules in kafkajs: our code's share alone.
  ratio_transport_to_raw_ours: round(rate(transport) / rate(rawOurs), 3),
  ratio_with_ingest_to_raw_ours: round(rate(ingested) / rate(rawOurs), 3),
  ratio_with_ingest_to_raw_ours_as_published: round(rate(ingested) / rate(rawOursSame), 3),
  // CPU of the raw loop over ours: steadier than the wall-clock ratios on a shared machine.
  cpu_ratio_transport_to_raw: round(raw.cpu_s / transport.cpu_s, 3),
  cpu_ratio_with_ingest_to_raw: round(raw.cpu_s / ingested.cpu_s, 3),
  ratio_with_ingest_to_inbox: inbox === null ? null : round(rate(ingested) / rate(inbox), 3),
  rounds: perRound,
  median_ratio_with_ingest_to_raw: median(perRound.map((r) => r.ratio_with_ingest_to_raw)),
  median_ratio_with_ingest_to_raw_as_published: median(perRound.map((r) => r.ratio_with_ingest_to_raw_as_published)),
  median_cpu_ratio_with_ingest_to_raw: median(perRound.map((r) => r.cpu_ratio_with_ingest_to_raw)),
}));
