/**
 * `npm run bench -- ingest [--titles N] [--skip-sample]`
 *
 * Observations/s and events/s from publish to projected read models (crawl -> inbox -> ingest ->
 * LMDB event store -> every projection), for the sample catalog and a synthetic catalog
 * (default 250,000 titles), beside the raw LMDB batched-append rate of the same event values in
 * the same run (one transaction per 1,000 events, the bare engine with no decide, no index, no
 * projection), and the peak RSS. Prints one JSON line.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { open } from 'lmdb';
import { systemClock } from '../contracts/ports.ts';
import { closeLmdb } from '../infra/lmdb/env.ts';
import { lmdbEventStore } from '../infra/lmdb/eventStore.ts';
import { lmdbInbox } from '../infra/lmdb/inbox.ts';
import { lmdbReadStore } from '../infra/lmdb/readStore.ts';
import { inProcessSearchIndex } from '../infra/search/inProcessSearch.ts';
import { createPipeline } from '../services/cli/pipeline.ts';
import { crawl } from '../services/crawler/crawl.ts';
import type { Adapters } from '../services/shared/adapters.ts';
import { silentLogger } from '../services/shared/logger.ts';

const { values } = parseArgs({
  options: {
    titles: { type: 'string', default: '250000' },
    'skip-sample': { type: 'boolean', default: false },
    'skip-synthetic': { type: 'boolean', default: false },
  },
});

interface RunResult {
  observations: number;
  events: number;
  seconds: number;
  observations_per_s: number;
  events_per_s: number;
  publish_s: number;
  ingest_s: number;
  project_s: number;
  raw_lmdb_append_events_per_s: number;
  ratio_to_raw: number;
}

async function runOnce(label: string, titles: number | undefined): Promise<RunResult> {
  const dataDir = mkdtempSync(join(tmpdir(), `marquee-bench-${label}-`));
  const eventStore = lmdbEventStore({ dataDir });
  const bus = lmdbInbox({ dataDir });
  const readStore = lmdbReadStore({ dataDir });
  const search = inProcessSearchIndex();
  const adapters: Adapters = {
    eventStore,
    bus,
    readStore,
    search,
    searchInProcess: true,
    ingestGroup: 'ingest',
    engines: { events: 'lmdb', observations: 'inbox', readModels: 'lmdb', search: 'in-process' },
    close: async () => {
      await bus.close();
      await eventStore.close();
      await readStore.close();
    },
  };
  const pipeline = createPipeline(adapters, silentLogger);
  const t0 = performance.now();
  const counts = await crawl({ bus, seed: 42, day: 0, startDate: '2026-11-14', ...(titles === undefined ? {} : { titles }) });
  const t1 = performance.now();
  const consumer = pipeline.ingest.run({ untilIdle: true, batchSize: 2000 });
  await consumer.done;
  const t2 = performance.now();
  await pipeline.projections.catchUp();
  const t3 = performance.now();
  const observations = Object.values(counts as Record<string, number>).reduce((a, b) => a + b, 0);
  const events = await eventStore.headPosition();
  const seconds = (t3 - t0) / 1000;

  // The reference: the same event values appended to a bare LMDB database, 1,000 per
  // transaction, fsync'd like ours: what the engine can do with no decide and no projection.
  const rawDir = mkdtempSync(join(tmpdir(), 'marquee-bench-raw-'));
  const raw = open({ path: rawDir, overlappingSync: false });
  let rawSeconds = 0;
  let after = 0;
  let key = 0;
  for (;;) {
    const batch = await eventStore.readAll({ after, limit: 1000 });
    const last = batch[batch.length - 1];
    if (!last) break;
    after = last.position;
    const values = batch.map((e) => ({ type: e.type, data: e.data, metadata: e.metadata, streamId: e.streamId, revision: e.revision, recordedAt: e.recordedAt }));
    const started = performance.now();
    await raw.transaction(() => {
      for (const v of values) raw.put((key += 1), v);
    });
    rawSeconds += (performance.now() - started) / 1000;
  }
  await raw.close();
  rmSync(rawDir, { recursive: true, force: true });
  await adapters.close();
  await closeLmdb(dataDir);
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
    project_s: round((t3 - t2) / 1000),
    raw_lmdb_append_events_per_s: Math.round(rawRate),
    ratio_to_raw: round(eventsPerS / rawRate, 3),
  };
}

function round(n: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

const result: Record<string, unknown> = { bench: 'ingest', node: process.version, at: systemClock.now().toISOString() };
if (!values['skip-sample']) result.sample = await runOnce('sample', undefined);
if (!values['skip-synthetic']) result.synthetic = { titles: Number(values.titles), ...(await runOnce('synthetic', Number(values.titles))) };
result.peak_rss_mb = Math.round(process.resourceUsage().maxRSS / 1024);
console.log(JSON.stringify(result));
