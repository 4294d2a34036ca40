/**
 * `npm run bench -- ingest [--titles N] [--skip-sample] [--kafka-titles N] [--skip-kafka] [--rounds N]`
 *
 * Observations/s and events/s from publish to projected read models (crawl -> inbox -> ingest ->
 * LMDB event store -> every projection), for the sample catalog and a synthetic catalog
 * (default 250,000 titles), beside the raw LMDB batched-append rate of the same event values in
 * the same run (one transaction per 1,000 events, the bare engine with no decide, no index, no
 * projection; on a fresh thread, bench/_ingestRaw.ts), and the peak RSS. A second reference
 * adds to that time the same bare appends of every read-model document the run wrote: what the
 * engine takes to write what we write. With KAFKA_BROKERS, also observations/s through Kafka into the
 * Kafka event log with one and two ingest processes beside a raw kafkajs loop, and the projector
 * failover time (bench/_ingestKafka.ts). With `--rounds N` (default 1) the sample and the
 * synthetic catalog each run N times, each run beside its own references: their fields are the
 * first run's, `rounds` lists every run's ratios and `median_ratio_to_raw` (and the others)
 * their medians, steadier on a shared machine than one run. Prints one JSON line.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import { systemClock } from '../contracts/ports.ts';
import { publishWhileIngesting, startCrawlThread } from '../services/cli/crawlThread.ts';
import { createPipeline } from '../services/cli/pipeline.ts';
import { startProjectionThread } from '../services/cli/projectionThread.ts';
import { kafkaIngestBench } from './_ingestKafka.ts';
import type { RawResult } from './_ingestRaw.ts';
import { median, roundsOption } from './_stats.ts';
import { crawl } from '../services/crawler/crawl.ts';
import { openAdapters } from '../services/shared/adapters.ts';
import { loadConfig } from '../services/shared/config.ts';
import { silentLogger } from '../services/shared/logger.ts';

const { values } = parseArgs({
  options: {
    titles: { type: 'string', default: '250000' },
    // 250,000 titles in all 50 countries are ~3 million availability observations; a few
    // countries keep the synthetic run to minutes while still 250,000 media streams deep.
    countries: { type: 'string', default: 'US,GB,DE,FR,JP' },
    'skip-sample': { type: 'boolean', default: false },
    'skip-synthetic': { type: 'boolean', default: false },
    // The Kafka part runs separate processes on a loaded broker: a smaller catalog keeps it short.
    'kafka-titles': { type: 'string', default: '2000' },
    'skip-kafka': { type: 'boolean', default: false },
    rounds: { type: 'string', default: '1' },
  },
});
const rounds = roundsOption(values.rounds);

interface RunResult {
  observations: number;
  events: number;
  seconds: number;
  observations_per_s: number;
  events_per_s: number;
  /** 0 on the local inbox, where the crawl is appended while ingest runs (`ingest_s` covers both). */
  publish_s: number;
  ingest_s: number;
  project_tail_s: number;
  raw_lmdb_append_events_per_s: number;
  ratio_to_raw: number;
  /** Documents in the read models at the end (every collection). */
  read_model_documents: number;
  /** Seconds of the bare appends of the events plus every read-model document (the second reference). */
  raw_lmdb_append_events_and_documents_s: number;
  /** That time over ours: the ratio against a bare engine writing what we write. */
  ratio_to_raw_with_documents: number;
  /** CPU seconds of the whole process (every thread) from publish to projected read models. */
  cpu_s: number;
  /** CPU seconds of the raw appends (the process does nothing else meanwhile). */
  raw_cpu_s: number;
  /**
   * raw_cpu_s / cpu_s: CPU per event of the raw loop over ours. Less sensitive to other jobs on
   * the machine than the wall-clock ratio (the raw loop, on one thread, slows more under load
   * than our three); on two free cores the wall-clock ratio can reach up to twice this.
   */
  cpu_ratio_to_raw: number;
}

/** The bare appends of the run in `dataDir`, measured on a fresh thread. */
function references(dataDir: string): Promise<RawResult> {
  const worker = new Worker(new URL('./_ingestRawWorker.mjs', import.meta.url), { workerData: { dataDir } });
  return new Promise<RawResult>((resolve, reject) => {
    worker.once('message', (result: RawResult) => {
      resolve(result);
      void worker.terminate();
    });
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the reference thread exited with code ${code}`)));
  });
}

/** CPU seconds this process has used so far, all threads. */
function cpuSeconds(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
}

async function runOnce(label: string, titles: number | undefined, countries: string[] | undefined): Promise<RunResult> {
  const dataDir = mkdtempSync(join(tmpdir(), `marquee-bench-${label}-`));
  const config = loadConfig({ DATA_DIR: dataDir });
  const adapters = await openAdapters(config, silentLogger);
  const { eventStore, bus, readStore } = adapters;
  const pipeline = createPipeline(adapters, silentLogger);
  // As `start` loads a catalog: projections fold in their worker thread while this one ingests.
  const projecting = await startProjectionThread(config, readStore);
  // As `start` loads the sample: the crawl generated and encoded on its own thread, appended as
  // it comes while ingest consumes it. The thread is started, as the projections' is, before
  // the clock: `start` boots both at once, and a crawler is a publisher already running when it
  // publishes; the crawl itself, generation and encoding included, is timed.
  const crawling = adapters.localInbox ? startCrawlThread({ seed: 42, startDate: '2026-11-14', ...(titles === undefined ? {} : { titles }), ...(countries === undefined ? {} : { countries }) }) : null;
  await crawling?.ready;
  const t0 = performance.now();
  const cpu0 = cpuSeconds();
  let observations: number;
  let t1: number;
  if (adapters.localInbox && crawling) {
    observations = await publishWhileIngesting(adapters.localInbox, crawling.take(0), () => pipeline.ingestUntilIdle((n) => progressLine(label, 'ingested', n)));
    await crawling.stop();
    t1 = t0;
  } else {
    const counts = await crawl({
      bus,
      seed: 42,
      day: 0,
      startDate: '2026-11-14',
      ...(titles === undefined ? {} : { titles }),
      ...(countries === undefined ? {} : { countries }),
      onProgress: (n: number) => progressLine(label, 'published', n),
    });
    observations = Object.values(counts as Record<string, number>).reduce((a, b) => a + b, 0);
    t1 = performance.now();
    await pipeline.ingestUntilIdle((n) => progressLine(label, 'ingested', n));
  }
  const t2 = performance.now();
  await projecting.waitFor(await eventStore.headPosition());
  await projecting.stop();
  const t3 = performance.now();
  const cpu = cpuSeconds() - cpu0;
  const events = await eventStore.headPosition();
  const seconds = (t3 - t0) / 1000;

  // The references, on a thread of their own (see bench/_ingestRaw.ts): the run's events
  // appended to a bare LMDB database, then every read-model document too.
  const { rawSeconds, rawCpu, fullSeconds, documents } = await references(dataDir);
  await adapters.close();
  rmSync(dataDir, { recursive: true, force: true });
  const rawRate = events / rawSeconds;
  const eventsPerS = events / seconds;
  return {
    observations,
    events,
    seconds: round(seconds),
    observations_per_s: Math.round(observations / seconds),
    events_per_s: Math.round(eventsPerS),
    publish_s: round((t1 - t0) / 1000),
    ingest_s: round((t2 - t1) / 1000),
    // Projections run alongside ingest; this is only the wait after ingest finished.
    project_tail_s: round((t3 - t2) / 1000),
    raw_lmdb_append_events_per_s: Math.round(rawRate),
    ratio_to_raw: round(eventsPerS / rawRate, 3),
    read_model_documents: documents,
    raw_lmdb_append_events_and_documents_s: round(fullSeconds),
    ratio_to_raw_with_documents: round(fullSeconds / seconds, 3),
    cpu_s: round(cpu),
    raw_cpu_s: round(rawCpu),
    cpu_ratio_to_raw: round(rawCpu / cpu, 3),
  };
}

// Peak RSS split into the process's own memory and LMDB's memory-mapped file pages (which
// the kernel can drop at will): sampled, since the kernel keeps only the total's peak.
const peak = { anonMb: 0, fileMb: 0 };
const sampler = setInterval(() => {
  const status = readFileSync('/proc/self/status', 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  peak.anonMb = Math.max(peak.anonMb, Math.round(kb('RssAnon') / 1024));
  peak.fileMb = Math.max(peak.fileMb, Math.round(kb('RssFile') / 1024));
}, 250);
sampler.unref();

let lastLine = 0;
function progressLine(label: string, what: string, n: number): void {
  if (Date.now() - lastLine < 5000) return;
  lastLine = Date.now();
  process.stderr.write(`${label}: ${n} observations ${what}\n`);
}

function round(n: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

/** The first run's result; with more rounds, every run's ratios and their medians too. */
async function runRounds(label: string, titles: number | undefined, countries: string[] | undefined): Promise<Record<string, unknown>> {
  const runs: RunResult[] = [];
  for (let r = 0; r < rounds; r++) {
    if (rounds > 1) process.stderr.write(`${label}: round ${r + 1} of ${rounds}\n`);
    runs.push(await runOnce(label, titles, countries));
  }
  const first = runs[0] as RunResult;
  if (rounds === 1) return { ...first };
  return {
    ...first,
    rounds: runs.map((r) => ({ seconds: r.seconds, raw_lmdb_append_events_per_s: r.raw_lmdb_append_events_per_s, ratio_to_raw: r.ratio_to_raw, ratio_to_raw_with_documents: r.ratio_to_raw_with_documents, cpu_ratio_to_raw: r.cpu_ratio_to_raw })),
    median_ratio_to_raw: median(runs.map((r) => r.ratio_to_raw)),
    median_ratio_to_raw_with_documents: median(runs.map((r) => r.ratio_to_raw_with_documents)),
    median_cpu_ratio_to_raw: median(runs.map((r) => r.cpu_ratio_to_raw)),
  };
}

const result: Record<string, unknown> = { bench: 'ingest', node: process.version, at: systemClock.now().toISOString() };
if (!values['skip-sample']) result.sample = await runRounds('sample', undefined, undefined);
if (!values['skip-synthetic']) {
  const countries = values.countries.split(',').map((c) => c.trim().toUpperCase());
  result.synthetic = { titles: Number(values.titles), countries, ...(await runRounds('synthetic', Number(values.titles), countries)) };
}
const brokers = loadConfig().kafkaBrokers;
if (brokers && !values['skip-kafka']) {
  const countries = values.countries.split(',').map((c) => c.trim().toUpperCase());
  result.kafka_event_log = await kafkaIngestBench({ brokers, titles: Number(values['kafka-titles']), countries, env: process.env });
}
result.peak_rss_mb = Math.round(process.resourceUsage().maxRSS / 1024);
result.peak_rss_anon_mb = peak.anonMb;
result.peak_rss_file_mb = peak.fileMb;
console.log(JSON.stringify(result));
