/**
 * The Kafka part of `npm run bench -- ingest` (with KAFKA_BROKERS): observations through Kafka
 * into the Kafka event log (EVENT_STORE=kafka), in the same run:
 *
 * - raw_kafkajs_loop: a bare kafkajs consume-produce loop over the same observation topics (one
 *   consumer, an idempotent producer re-sending each record's bytes to one topic, offsets
 *   committed per batch): what the client and broker move with no decoding, deciding or log;
 * - ingest_1_process / ingest_2_processes: `ingest` in one and in two processes of one consumer
 *   group (bench/_ingestKafkaWorker.ts), each set up first (adapters open, log read), then timed
 *   from `go` until the group has committed every observation. Two processes share the
 *   observation partitions but not the event log: its one partition takes one writer at a time,
 *   so they take it over from each other (docs/kafka-event-log.md, "Sizing and limits");
 * - projector_failover_ms: two `marquee start --roles projector` processes on the log; the active
 *   one is killed with SIGKILL and the time until the standby logs that it is active is measured
 *   (the lease is 10 s: this is lease expiry plus the standby's poll).
 *
 * Each part has its own topic prefix (observations and log), deleted afterwards.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { crawl } from '../services/crawler/crawl.ts';
import { kafkaObservationBus } from '../infra/kafka/observationBus.ts';
import { topicNames } from '../infra/kafka/topics.ts';
import { silentLogger } from '../services/shared/logger.ts';

export interface KafkaIngestOptions {
  brokers: string[];
  titles: number;
  countries: string[];
  /** The environment the ingest and projector processes inherit. */
  env: NodeJS.ProcessEnv;
}

const root = resolve(import.meta.dirname, '..');
const seconds = (ms: number) => Math.round(ms / 10) / 100;

/** Publishes day 0 of the synthetic catalog to the observation topics of `prefix`; the number of observations. */
async function publish(brokers: string[], prefix: string, titles: number, countries: string[]): Promise<number> {
  const bus = kafkaObservationBus({ brokers, topicPrefix: prefix, logger: silentLogger });
  try {
    const counts = await crawl({ bus, seed: 42, day: 0, startDate: '2026-11-14', titles, countries });
    return Object.values(counts as Record<string, number>).reduce((a, b) => a + b, 0);
  } finally {
    await bus.close();
  }
}

/** The bare loop: consume every observation of `prefix` and produce its bytes again; observations/s. */
async function rawLoop(kafka: Kafka, prefix: string, expected: number): Promise<number> {
  const out = `${prefix}raw-out`;
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: out, numPartitions: 1 }] });
  await admin.disconnect();
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  const consumer = kafka.consumer({ groupId: `${prefix}raw`, maxWaitTimeInMs: 100 });
  await producer.connect();
  await consumer.connect();
  await consumer.subscribe({ topics: [...topicNames(prefix).observations], fromBeginning: true });
  let seen = 0;
  let finish!: () => void;
  const finished = new Promise<void>((r) => (finish = r));
  const t0 = performance.now();
  await consumer.run({
    autoCommit: false,
    eachBatch: async ({ batch, resolveOffset, commitOffsetsIfNecessary }) => {
      if (batch.messages.length === 0) return;
      await producer.send({ topic: out, acks: -1, messages: batch.messages.map((m) => ({ key: m.key, value: m.value })) });
      const last = batch.messages[batch.messages.length - 1]!.offset;
      resolveOffset(last);
      await commitOffsetsIfNecessary({ topics: [{ topic: batch.topic, partitions: [{ partition: batch.partition, offset: String(Number(last) + 1) }] }] });
      seen += batch.messages.length;
      if (seen >= expected) finish();
    },
  });
  await finished;
  const elapsed = performance.now() - t0;
  await consumer.disconnect();
  await producer.disconnect();
  return Math.round(expected / (elapsed / 1000));
}

/**
 * The environment of a bench process: the event log and observations on Kafka under `prefix`,
 * every other server unset (a process must not touch a shared index or database of the user's).
 */
function kafkaOnly(options: KafkaIngestOptions, prefix: string): NodeJS.ProcessEnv {
  return {
    ...options.env,
    EVENT_STORE: 'kafka',
    KAFKA_BROKERS: options.brokers.join(','),
    KAFKA_TOPIC_PREFIX: prefix,
    EVENTSTORE_URL: '',
    MONGODB_URL: '',
    OPENSEARCH_URL: '',
    REDIS_URL: '',
    RELEASES_S3_URL: '',
  };
}

interface Worker {
  child: ChildProcess;
  out: string;
}

function startWorker(env: NodeJS.ProcessEnv): Worker {
  const child = spawn(process.execPath, [...process.execArgv, join(root, 'bench/_ingestKafkaWorker.ts')], { env, cwd: root, stdio: ['pipe', 'pipe', 'inherit'] });
  const worker: Worker = { child, out: '' };
  child.stdout!.on('data', (d) => (worker.out += d));
  return worker;
}

async function waitFor(what: string, probe: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** `processes` ingest processes of one group over the observations of `prefix`; observations/s and events appended. */
async function ingestRun(options: KafkaIngestOptions, prefix: string, processes: number, observations: number) {
  const dirs: string[] = [];
  const workers = Array.from({ length: processes }, () => {
    const dir = mkdtempSync(join(tmpdir(), 'marquee-bench-kafka-'));
    dirs.push(dir);
    return startWorker({ ...kafkaOnly(options, prefix), INGEST_GROUP: `${prefix}ingest`, DATA_DIR: dir });
  });
  try {
    await waitFor('ingest workers ready', () => workers.every((w) => w.out.includes('ready')), 120_000);
    const t0 = performance.now();
    for (const w of workers) w.child.stdin!.write('go\n');
    await Promise.all(workers.map((w) => new Promise((r) => w.child.once('exit', r))));
    const elapsed = performance.now() - t0;
    const totals = workers.map((w) => JSON.parse(w.out.trim().split('\n').at(-1) as string) as { observations: number; appended: number });
    return {
      observations_per_s: Math.round(observations / (elapsed / 1000)),
      seconds: seconds(elapsed),
      events_appended: totals.reduce((a, t) => a + t.appended, 0),
      observations_per_process: totals.map((t) => t.observations),
    };
  } finally {
    for (const w of workers) if (w.child.exitCode === null) w.child.kill('SIGKILL');
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
}

/** Two projector processes on the log of `prefix`; ms from the SIGKILL of the active one to the standby active. */
async function projectorFailover(options: KafkaIngestOptions, prefix: string): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'marquee-bench-failover-'));
  // The lease lives in the read store: one LMDB directory both processes open (LMDB takes
  // several processes on one machine).
  const env = { ...kafkaOnly(options, prefix), DATA_DIR: dir, MARQUEE_NO_REEXEC: '1', LOG_FORMAT: 'json', LINK_TOKEN_KEYS: `1:${'ab'.repeat(32)}`, DOWNLOAD_SIGNING_KEY: 'bench'.repeat(8) };
  const procs = [0, 1].map(() => {
    const child = spawn(process.execPath, [join(root, 'bin/marquee.js'), 'start', '--roles', 'projector'], { env, cwd: root });
    const proc = { child, log: '' };
    child.stdout.on('data', (d) => (proc.log += d));
    child.stderr.on('data', (d) => (proc.log += d));
    return proc;
  });
  try {
    await waitFor('a projector active', () => procs.some((p) => p.log.includes('projector active')), 120_000);
    const active = procs.find((p) => p.log.includes('projector active'))!;
    const standby = procs.find((p) => p !== active)!;
    // Let the standby settle into its polling: it waits out one lease length at start.
    await waitFor('the standby standing by', () => standby.log.includes('stands by'), 60_000);
    const t0 = performance.now();
    active.child.kill('SIGKILL');
    await waitFor('the standby active', () => standby.log.includes('projector active'), 60_000);
    return Math.round(performance.now() - t0);
  } finally {
    for (const p of procs) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGTERM');
    await Promise.all(procs.map((p) => (p.child.exitCode === null && p.child.signalCode === null ? new Promise((r) => p.child.once('exit', r)) : null)));
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function kafkaIngestBench(options: KafkaIngestOptions): Promise<Record<string, unknown>> {
  const runId = `${Date.now().toString(36)}`;
  const kafka = new Kafka({ clientId: 'marquee-bench', brokers: options.brokers, logLevel: logLevel.NOTHING });
  const prefixOf = (part: string) => `marquee.bench.${runId}.${part}.`;
  try {
    const observations = await publish(options.brokers, prefixOf('one'), options.titles, options.countries);
    await publish(options.brokers, prefixOf('two'), options.titles, options.countries);
    const raw = await rawLoop(kafka, prefixOf('one'), observations);
    const one = await ingestRun(options, prefixOf('one'), 1, observations);
    const two = await ingestRun(options, prefixOf('two'), 2, observations);
    const failover = await projectorFailover(options, prefixOf('one'));
    return {
      titles: options.titles,
      countries: options.countries,
      observations,
      raw_kafkajs_loop_observations_per_s: raw,
      ingest_1_process: one,
      ingest_2_processes: two,
      ingest_1_vs_raw: Math.round((one.observations_per_s / raw) * 1000) / 1000,
      ingest_2_vs_1: Math.round((two.observations_per_s / one.observations_per_s) * 100) / 100,
      projector_failover_ms: failover,
    };
  } finally {
    const admin = kafka.admin();
    await admin.connect();
    const mine = (await admin.listTopics()).filter((t) => t.startsWith(`marquee.bench.${runId}.`));
    if (mine.length > 0) await admin.deleteTopics({ topics: mine }).catch(() => undefined);
    await admin.disconnect();
  }
}
