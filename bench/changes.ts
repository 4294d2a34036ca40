/**
 * `npm run bench -- changes [--titles N] [--countries US] [--days D]`
 *
 * A client following `GET /v1/changes?since=` (limit 1000, polling every 100 ms once caught up)
 * while daily crawls of a synthetic catalog are published, ingested and projected live (as
 * `start` runs them). Day 0 (the first full crawl) is loaded before the client starts from the
 * end of its feed. Reports the lag of every change the client received: the time from the
 * moment the event store's head first reached its position (sampled every 50 ms) to the moment
 * the client had it, p50/p95/max in seconds; and the catch-up lag: from the end of the crawl's
 * projection to the client holding the last change. Reference in the same run: the time the
 * same crawl took to ingest and project. Default 10,000 titles in US over one more day (the
 * shared CI machine); `--titles 250000` is the catalog of the issue. Prints one JSON line.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { systemClock } from '../contracts/ports.ts';
import { closeLmdb } from '../infra/lmdb/env.ts';
import { createApiKey } from '../services/api/keys.ts';
import { startApi } from '../services/api/server.ts';
import type { ChangeBlockDoc } from '../contracts/changeModels.ts';
import { changesProjection, positionOfChangeKey } from '../projections/changes.ts';
import { resolveCollection } from '../projections/collections.ts';
import { decodeCursor } from '../services/changes/feed.ts';
import { createPipeline } from '../services/cli/pipeline.ts';
import { crawl } from '../services/crawler/crawl.ts';
import { createLinkTokens } from '../services/links/linkTokens.ts';
import { openAdapters, openApiKeyStore } from '../services/shared/adapters.ts';
import { loadConfig } from '../services/shared/config.ts';
import { silentLogger } from '../services/shared/logger.ts';

const { values } = parseArgs({
  options: {
    titles: { type: 'string', default: '10000' },
    countries: { type: 'string', default: 'US' },
    days: { type: 'string', default: '1' },
  },
});
const titles = Number(values.titles);
const countries = values.countries.split(',').map((c) => c.trim().toUpperCase());
const days = Number(values.days);
const country = countries[0] as string;
const startDate = '2026-11-02';

const dataDir = mkdtempSync(join(tmpdir(), 'marquee-bench-changes-'));
const config = loadConfig({ DATA_DIR: dataDir });
const adapters = await openAdapters(config, silentLogger);
const { apiKeys } = await openApiKeyStore(config);
const pipeline = createPipeline(adapters, silentLogger);
// A throw-away key: the bench makes tokens only to render links.
const linkTokens = createLinkTokens({ keys: [{ version: 1, key: new Uint8Array(randomBytes(32)) }] });
const api = await startApi({
  port: 0, readStore: adapters.readStore, apiKeys, search: adapters.search, eventStore: adapters.eventStore, linkTokens,
  clock: systemClock, rateLimit: { perMinute: 100_000_000 },
});
const key = (await createApiKey(apiKeys, 'bench', systemClock)).key;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function page(since: string | null): Promise<{ results: Array<{ id: string }>; next_cursor: string; has_more: boolean }> {
  const res = await fetch(`${api.url}/v1/changes?country=${country}&limit=1000${since === null ? '' : `&since=${since}`}`, { headers: { authorization: `Bearer ${key}` } });
  if (res.status !== 200) throw new Error(`changes answered ${res.status}`);
  return (await res.json()) as never;
}

// A cursor is the event position of the last change examined (services/changes/feed.ts).
const positionOf = (cursor: string): number => positionOfChangeKey(decodeCursor(cursor, country))?.position ?? 0;

try {
  const t0 = performance.now();
  await crawl({ bus: adapters.bus, seed: 42, day: 0, startDate, titles, countries });
  await pipeline.drain();
  const bootstrapS = (performance.now() - t0) / 1000;

  // The client's starting point: the end of the feed after day 0.
  let cursor: string | null = null;
  for (;;) {
    const p = await page(cursor);
    cursor = p.next_cursor;
    if (!p.has_more) break;
  }

  // Live: ingest and projections run as in `start`; the head is sampled to time each position.
  const consumer = pipeline.ingest.run({ untilIdle: false, batchSize: 2000 });
  pipeline.projections.start();
  const headTimes: Array<[number, number]> = [];
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const head = await adapters.eventStore.headPosition();
      if (headTimes.length === 0 || (headTimes[headTimes.length - 1] as [number, number])[0] < head) headTimes.push([head, performance.now()]);
      await sleep(50);
    }
  })();
  const appendedAt = (position: number): number => headTimes.find(([head]) => head >= position)?.[1] ?? performance.now();

  const lags: number[] = [];
  let received = 0;
  let following = true;
  let lastReceivedAt = performance.now();
  const client = (async () => {
    while (following) {
      const p = await page(cursor);
      const now = performance.now();
      for (const change of p.results) lags.push((now - appendedAt(Number(change.id.slice(4)))) / 1000);
      received += p.results.length;
      if (p.results.length > 0) lastReceivedAt = now;
      cursor = p.next_cursor;
      if (!p.has_more) await sleep(100);
    }
  })();

  const t1 = performance.now();
  for (let day = 1; day <= days; day += 1) await crawl({ bus: adapters.bus, seed: 42, day, startDate, titles, countries });
  const publishedS = (performance.now() - t1) / 1000;
  // Done when ingest is idle (the head stops moving) and every projection has folded the head.
  let head = -1;
  for (;;) {
    await sleep(500);
    const now = await adapters.eventStore.headPosition();
    if (now === head && pipeline.projections.position >= head) break;
    head = now;
  }
  const projectedAt = performance.now();
  // The last change of the country the projections wrote: the client has caught up once its cursor is there.
  const changes = await resolveCollection(adapters.readStore, changesProjection);
  const [last] = await adapters.readStore.scan<ChangeBlockDoc>(changes, { prefix: `${country}:`, reverse: true, limit: 1 });
  const lastPosition = last?.doc.changes.at(-1)?.position ?? 0;
  while (positionOf(cursor as string) < lastPosition && performance.now() - projectedAt < 120_000) await sleep(20);
  const caughtUpAt = performance.now();
  following = false;
  sampling = false;
  await Promise.all([client, sampler]);
  await consumer.stop();
  await pipeline.stop();

  lags.sort((a, b) => a - b);
  const q = (p: number) => Number((lags[Math.min(lags.length - 1, Math.floor(p * lags.length))] ?? 0).toFixed(3));
  console.log(JSON.stringify({
    bench: 'changes',
    titles,
    countries,
    days,
    bootstrap_s: Number(bootstrapS.toFixed(1)),
    changes_followed: received,
    crawl_publish_s: Number(publishedS.toFixed(1)),
    // Reference in the same run: publishing, ingesting and projecting the crawl days.
    crawl_to_projected_s: Number(((projectedAt - t1) / 1000).toFixed(1)),
    lag_p50_s: q(0.5),
    lag_p95_s: q(0.95),
    lag_max_s: q(1),
    catch_up_after_projection_s: Number(((caughtUpAt - projectedAt) / 1000).toFixed(3)),
    last_change_after_projection_s: Number(((lastReceivedAt - projectedAt) / 1000).toFixed(3)),
  }));
} finally {
  await api.close();
  await apiKeys.close();
  await adapters.close();
  await closeLmdb(dataDir);
  rmSync(dataDir, { recursive: true, force: true });
}
