/**
 * `npm run bench -- api [--duration 10] [--connections 50] [--days 2] [--seed 42] [--data-dir DIR] [--profile DIR]`
 *
 * Throughput and latency of the /v1 API on the full sample catalog, beside a bare `node:http`
 * server answering the very same bytes (body and content type captured from the API first),
 * both measured with the same autocannon settings. The difference is the cost of the API:
 * Koa, auth, rate limit, ETag, parameter parsing, read-model lookups and JSON.
 *
 * Servers run in child processes (this file again, with `--role api|bare`) so autocannon's
 * own CPU use does not land in the measured process. Endpoints: media detail, links,
 * rankings and trending (a first page and one from the middle) and search (rotating real titles
 * with a typo). Search is also measured with one connection, where latency is service time
 * rather than queueing behind 49 other clients, and with two mixes of the queries users type
 * (searchMix): a Zipf-distributed one with a long tail of queries asked once, and one where
 * every query is new (all cache misses). Each figure comes with the CPU time the server
 * spent per request (from /proc, server and workers), and `cpu_ratio_to_bare` compares those:
 * on a machine shared with other work it is steadier than the ratio of requests per second.
 *
 * Options (defaults): --duration seconds per measured run (10); --connections (50);
 * --days sample days to crawl (2); --seed (42); --data-dir a catalog to build into or reuse
 * (a temp dir, removed afterwards); --profile write a .cpuprofile of the API child there (off);
 * --only comma-separated endpoints to measure (all); --chart N replaces the US chart with one
 * of N titles (the sample's ranked titles first, then synthetic copies of them with their own
 * media items) and the latest US trending day with a climb for each of them, to show that a
 * rankings or trending page costs the page and not the chart (0: the sample's);
 * --workers N also measures the API served by N processes (node:cluster, as API_WORKERS does)
 * over the same stores (default the number of cores; 1 skips it); --no-cache turns the response
 * cache off, so every request reads and renders (what a page of a long chart costs); --gzip
 * sends `Accept-Encoding: gzip` with every request (the bare server answers the gzipped bytes).
 * Prints one JSON line. Goals: media and links >= 0.5x bare, rankings >= 0.3x (by requests/s
 * and by CPU per request); search p99 < 25 ms.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, get as httpGet } from 'node:http';
import type { AddressInfo } from 'node:net';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { gunzipSync } from 'node:zlib';
import type { Adapters } from '../services/shared/adapters.ts';
import { createRequire } from 'node:module';
import { randomBytes } from 'node:crypto';
import { Rng } from '../services/crawler/prng.ts';

/** The part of autocannon's programmatic API used here (the package ships no types). */
interface AutocannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number };
  errors: number;
  timeouts: number;
  non2xx: number;
}
type Autocannon = (options: {
  url: string;
  connections: number;
  duration: number;
  headers: Record<string, string>;
  /** `setupRequest` is called for every request it sends: a path per request. */
  requests: Array<{ method: string; path?: string; setupRequest?: (req: { path?: string }) => { path?: string } }>;
}) => Promise<AutocannonResult>;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

const here = fileURLToPath(import.meta.url);

const { values: opts } = parseArgs({
  options: {
    role: { type: 'string', default: 'bench' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '50' },
    days: { type: 'string', default: '2' },
    seed: { type: 'string', default: '42' },
    'data-dir': { type: 'string' },
    profile: { type: 'string' },
    only: { type: 'string' },
    responses: { type: 'string' },
    chart: { type: 'string', default: '0' },
    workers: { type: 'string' },
    'no-cache': { type: 'boolean', default: false },
    gzip: { type: 'boolean', default: false },
    'worker-port': { type: 'string' },
  },
  allowPositionals: true,
});

const START_DATE = '2026-11-14';

// ---------------------------------------------------------------------------------------------
// Child: the real API on the sample catalog.

/**
 * Replaces the US chart with one of `titles` rows, stored as the projection lays it out, at a
 * position above any the projection will write in this run. Synthetic titles copy the list
 * items of the real ones (so pages weigh the same) under ids `mv9…`/`tv9…` the sample never uses.
 */
async function writeSyntheticChart(readStore: import('../contracts/ports.ts').ReadStore, titles: number): Promise<number> {
  const { resolveCollection } = await import('../services/shared/readModels.ts');
  const { layoutRanking, mediaItemsProjection, rankingBlockEntries, rankingRowPrefix, rankingsProjection } = await import('../projections/index.ts');
  type RankingEntry = import('../contracts/domain.ts').RankingEntry;
  type MediaItemDoc = import('../contracts/readModels.ts').MediaItemDoc;
  type RankingHeadDoc = import('../contracts/readModels.ts').RankingHeadDoc;
  const rankings = await resolveCollection(readStore, rankingsProjection);
  const items = await resolveCollection(readStore, mediaItemsProjection);
  const head = await readStore.get<RankingHeadDoc>(rankings, 'US');
  if (head === null) throw new Error('the sample has no US chart to extend');
  const served = head.doc.chart;
  if (served === null) throw new Error('the sample has no US chart to extend');
  const real = rankingBlockEntries((await readStore.scan(rankings, { prefix: rankingRowPrefix('US', served.slot, 'all') })).map((r) => r.doc));
  const templates = (await readStore.getMany<MediaItemDoc>(items, real.map((e) => e.mediaId))).map((t) => t?.doc ?? null);
  const position = 2 ** 40;
  const entries: RankingEntry[] = [];
  let batch: Array<{ key: string; doc: MediaItemDoc; position: number }> = [];
  for (let i = 0; i < titles; i += 1) {
    const rank = i + 1;
    const score = 1 - i / titles;
    if (i < real.length) {
      entries.push({ ...(real[i] as RankingEntry), position: rank, score });
      continue;
    }
    const template = templates[i % real.length];
    if (!template) continue;
    const id = `${template.kind === 'movie' ? 'mv' : 'tv'}9${String(i).padStart(7, '0')}`;
    batch.push({ key: id, doc: { ...template, id, slug: `${template.slug}-${i}`, title: `${template.title} ${i}` }, position });
    entries.push({ mediaId: id, kind: template.kind, position: rank, score, points: titles - i });
    if (batch.length >= 10_000) {
      await readStore.writeBatch(items, batch);
      batch = [];
    }
  }
  await readStore.writeBatch(items, batch);
  const laid = layoutRanking({ country: 'US', date: served.date, formulaVersion: served.formulaVersion, entries }, head.doc);
  const writes = [{ key: 'US', doc: laid.document as unknown, position }, ...laid.rows.map((r) => ({ ...r, position }))];
  for (let at = 0; at < writes.length; at += 20_000) await readStore.writeBatch(rankings, writes.slice(at, at + 20_000));
  await writeSyntheticTrending(readStore, entries, position);
  return entries.length;
}

/**
 * Replaces the US trending day with one where every title of the synthetic chart moved (climbs
 * of 1 to 5 places), stored as the projection lays it out, so a trending page is measured
 * against a day as long as the chart.
 */
async function writeSyntheticTrending(
  readStore: import('../contracts/ports.ts').ReadStore, chart: Array<import('../contracts/domain.ts').RankingEntry>, position: number,
): Promise<void> {
  const { resolveCollection } = await import('../services/shared/readModels.ts');
  const { storedWrites } = await import('../contracts/projection.ts');
  const { compareTrending, trendingHeadPrefix, trendingKey, trendingProjection } = await import('../projections/trending.ts');
  type TrendingDoc = import('../contracts/readModels.ts').TrendingDoc;
  type TrendingHeadDoc = import('../contracts/readModels.ts').TrendingHeadDoc;
  const trending = await resolveCollection(readStore, trendingProjection);
  const latest = (await readStore.scan<TrendingHeadDoc>(trending, { prefix: trendingHeadPrefix('US'), reverse: true, limit: 1 }))[0]?.doc;
  if (latest === undefined) throw new Error('the sample has no US trending day to replace');
  const date = latest.date;
  const previous = (await readStore.get<TrendingDoc>(trending, trendingKey('US', date)))?.doc ?? null;
  const entries = chart.map((e, i) => ({ mediaId: e.mediaId, kind: e.kind, position: e.position, previousPosition: e.position + 1 + (i % 5) }));
  const day: TrendingDoc = { country: 'US', date, entries: entries.sort(compareTrending) };
  const writes = storedWrites(trendingProjection, trendingKey('US', date), day, previous, position);
  for (let at = 0; at < writes.length; at += 20_000) await readStore.writeBatch(trending, writes.slice(at, at + 20_000));
}

/**
 * One API worker of `--workers N`: opens the stores the primary built, fills its own search
 * index from the read model (as API_WORKERS workers do) and listens on the shared port.
 */
async function serveApiWorker(dataDir: string, port: number, linkKeyHex: string): Promise<void> {
  const { systemClock } = await import('../contracts/ports.ts');
  const { lmdbEventStore } = await import('../infra/lmdb/eventStore.ts');
  const { lmdbInbox } = await import('../infra/lmdb/inbox.ts');
  const { lmdbReadStore } = await import('../infra/lmdb/readStore.ts');
  const { inProcessSearchIndex } = await import('../infra/search/inProcessSearch.ts');
  const { refillSearch } = await import('../services/cli/pipeline.ts');
  const { startApi } = await import('../services/api/server.ts');
  const { createLinkTokens } = await import('../services/links/linkTokens.ts');
  const eventStore = lmdbEventStore({ dataDir });
  const readStore = lmdbReadStore({ dataDir });
  const search = inProcessSearchIndex();
  await refillSearch({
    eventStore, bus: lmdbInbox({ dataDir }), readStore, search, searchInProcess: true, searchFeedCheckpoint: null,
    engines: { events: 'LMDB', observations: 'LMDB inbox', readModels: 'LMDB', search: 'in-process' },
    close: async () => {},
  });
  const { lmdbApiKeyStore } = await import('../infra/lmdb/apiKeyStore.ts');
  const apiKeys = lmdbApiKeyStore({ dataDir });
  const api = await startApi({
    port, readStore, apiKeys, search, eventStore, clock: systemClock,
    linkTokens: createLinkTokens({ keys: [{ version: 1, key: new Uint8Array(Buffer.from(linkKeyHex, 'hex')) }] }),
    rateLimit: { perMinute: 10_000_000 },
  });
  process.once('SIGTERM', () => void api.close().finally(() => process.exit(0)));
  process.send?.('listening');
}

async function serveApi(dataDir: string, days: number, seed: number, chart: number, workers: number): Promise<void> {
  const { systemClock } = await import('../contracts/ports.ts');
  const { lmdbEventStore } = await import('../infra/lmdb/eventStore.ts');
  const { lmdbInbox } = await import('../infra/lmdb/inbox.ts');
  const { lmdbReadStore } = await import('../infra/lmdb/readStore.ts');
  const { lmdbApiKeyStore } = await import('../infra/lmdb/apiKeyStore.ts');
  const { inProcessSearchIndex } = await import('../infra/search/inProcessSearch.ts');
  const { createPipeline, refillSearch } = await import('../services/cli/pipeline.ts');
  const { crawlDate } = await import('../services/crawler/catalog.ts');
  const { crawl } = await import('../services/crawler/crawl.ts');
  const { rankDay } = await import('../services/ranking/job.ts');
  const { silentLogger } = await import('../services/shared/logger.ts');
  const { createApiKey } = await import('../services/api/keys.ts');
  const { startApi } = await import('../services/api/server.ts');
  const { createLinkTokens } = await import('../services/links/linkTokens.ts');

  const eventStore = lmdbEventStore({ dataDir });
  const bus = lmdbInbox({ dataDir });
  const readStore = lmdbReadStore({ dataDir });
  const search = inProcessSearchIndex();
  const adapters: Adapters = {
    eventStore, bus, readStore, search, searchInProcess: true, searchFeedCheckpoint: null,
    engines: { events: 'LMDB', observations: 'LMDB inbox', readModels: 'LMDB', search: 'in-process' },
    close: async () => {},
  };
  const started = Date.now();
  const pipeline = createPipeline(adapters, silentLogger);
  pipeline.deferSearch(true);
  if ((await eventStore.headPosition()) === 0) {
    for (let day = 0; day < days; day += 1) {
      await crawl({ bus, seed, day, startDate: START_DATE });
      await pipeline.drain();
      await rankDay({ date: crawlDate(day, START_DATE), readStore, eventStore, clock: systemClock });
      await pipeline.projections.catchUp();
    }
  } else {
    // A reused catalog: projections whose version changed since it was built are rebuilt.
    await pipeline.drain();
  }
  const indexed = await refillSearch(adapters);
  const chartTitles = chart > 0 ? await writeSyntheticChart(readStore, chart) : null;
  const buildMs = Date.now() - started;
  // The build's garbage collected now (the child runs with --expose-gc), not by V8's concurrent
  // marking during the first case measured.
  (globalThis as { gc?: () => void }).gc?.();
  const apiKeys = lmdbApiKeyStore({ dataDir });
  const { key } = await createApiKey(apiKeys, 'bench', systemClock);
  if (workers > 1) {
    const cluster = (await import('node:cluster')).default;
    const probe = createServer();
    const port = await new Promise<number>((resolve) => probe.listen(0, '127.0.0.1', () => resolve((probe.address() as AddressInfo).port)));
    await new Promise((resolve) => probe.close(resolve));
    const linkKey = randomBytes(32).toString('hex');
    const forked = Array.from({ length: workers }, () => cluster.fork({ BENCH_API_WORKER: '1', BENCH_PORT: String(port), BENCH_LINK_KEY: linkKey }));
    await Promise.all(forked.map((w) => new Promise<void>((resolve) => w.once('message', () => resolve()))));
    process.once('SIGTERM', () => {
      for (const w of forked) w.process.kill('SIGTERM');
      process.exit(0);
    });
    process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}`, key, indexed, buildMs, chartTitles, workers, head: await eventStore.headPosition() })}\n`);
    return;
  }
  const api = await startApi({
    port: 0,
    readStore, apiKeys, search, eventStore, clock: systemClock,
    linkTokens: createLinkTokens({ keys: [{ version: 1, key: new Uint8Array(randomBytes(32)) }] }),
    rateLimit: { perMinute: 10_000_000 },
    ...(process.env.BENCH_NO_CACHE === '1' ? { responseCache: false as const } : {}),
  });
  process.once('SIGTERM', () => {
    // A normal exit, so --cpu-prof writes its profile.
    void api.close().finally(() => process.exit(0));
  });
  process.stdout.write(`${JSON.stringify({ url: api.url, key, indexed, buildMs, chartTitles, head: await eventStore.headPosition() })}\n`);
}

// ---------------------------------------------------------------------------------------------
// Child: a bare node:http server answering captured bytes by request path.

interface Captured {
  path: string;
  status: number;
  contentType: string;
  /** `gzip` when captured with --gzip (and the API gzipped it). */
  contentEncoding?: string;
  body: string; // base64
}

function serveBare(file: string): void {
  const captured = JSON.parse(readFileSync(file, 'utf8')) as Captured[];
  const byPath = new Map(captured.map((c) => [c.path, { ...c, bytes: Buffer.from(c.body, 'base64') }]));
  const server = createServer((req, res) => {
    const hit = byPath.get(req.url ?? '');
    if (!hit) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(hit.status, {
      'content-type': hit.contentType,
      'content-length': hit.bytes.length,
      ...(hit.contentEncoding === undefined ? {} : { 'content-encoding': hit.contentEncoding, vary: 'Accept-Encoding' }),
    });
    res.end(hit.bytes);
  });
  server.listen(0, '127.0.0.1', () => {
    const { port } = server.address() as AddressInfo;
    process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}` })}\n`);
  });
  process.once('SIGTERM', () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
}

// ---------------------------------------------------------------------------------------------
// Parent: build, capture, measure.

interface Child {
  proc: ChildProcess;
  info: Record<string, unknown>;
  stop(): Promise<void>;
}

/** Spawns this file with `args`; resolves with the first JSON line it prints on stdout. */
function spawnChild(args: string[], nodeFlags: string[] = []): Promise<Child> {
  // stdin stays open as a lifeline: the child exits when it closes (see exitWithParent).
  // The young generation `marquee` runs with (bin/marquee.js), and without allocation-site
  // pretenuring as it runs: the API measured is the one users run.
  const proc = spawn(process.execPath, ['--max-semi-space-size=64', '--no-allocation-site-pretenuring', ...nodeFlags, '--import', 'tsx', here, ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: proc.stdout! });
    lines.once('line', (line) => {
      resolve({
        proc,
        info: JSON.parse(line) as Record<string, unknown>,
        stop: async () => {
          if (proc.exitCode === null) proc.kill('SIGTERM');
          await exited;
        },
      });
    });
    proc.once('exit', (code) => reject(new Error(`child ${args.join(' ')} exited with ${code} before it was ready`)));
  });
}

interface Measured {
  rps: number;
  p50_ms: number;
  p99_ms: number;
  errors: number;
  non2xx: number;
  /** CPU time the server process (and its workers) spent per request, µs; null off Linux. */
  cpu_us_per_req: number | null;
}

/**
 * CPU time (user + system, ms) of a process and its descendants (cluster workers), from
 * /proc: null where there is none. On a machine shared with other work throughput depends on
 * what else runs; the CPU a request costs the server does much less.
 */
function cpuMsOf(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    // utime and stime are fields 14 and 15 of stat, 12 and 13 after the command name.
    // Clock ticks of USER_HZ, 100 per second on Linux.
    let ms = (Number(fields[11]) + Number(fields[12])) * 10;
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
    for (const child of children === '' ? [] : children.split(' ')) ms += cpuMsOf(Number(child)) ?? 0;
    return ms;
  } catch {
    return null;
  }
}

/** `paths` in turn, or a path per request drawn from a function (the search mixes). */
async function measure(url: string, paths: string[] | (() => string), connections: number, seconds: number, headers: Record<string, string>, pid?: number): Promise<Measured> {
  const cpuBefore = cpuMsOf(pid);
  const result = await autocannon({
    url,
    connections,
    duration: seconds,
    headers,
    requests: typeof paths === 'function'
      ? [{ method: 'GET', setupRequest: (req) => ({ ...req, path: paths() }) }]
      : paths.map((path) => ({ method: 'GET', path })),
  });
  const cpuAfter = cpuMsOf(pid);
  return {
    rps: Math.round(result.requests.average),
    p50_ms: result.latency.p50,
    p99_ms: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    cpu_us_per_req: cpuBefore === null || cpuAfter === null || result.requests.total === 0 ? null : Math.round(((cpuAfter - cpuBefore) * 1000) / result.requests.total),
  };
}

/** A plausible typo: two neighbouring letters swapped in the longest word, else one dropped. */
function misspell(title: string, n: number): string {
  const words = title.split(' ');
  let longest = 0;
  words.forEach((w, i) => {
    if (w.length > (words[longest]?.length ?? 0)) longest = i;
  });
  const w = words[longest] ?? '';
  if (w.length < 5) return title;
  const at = 1 + (n % (w.length - 3));
  words[longest] = n % 2 === 0 ? w.slice(0, at) + w[at + 1] + w[at] + w.slice(at + 2) : w.slice(0, at) + w.slice(at + 1);
  return words.join(' ');
}

/**
 * What people type looking for a title, most likely first: the title, a prefix typed on the way
 * (half of it, then its first word and a couple of letters), the title with a typo, in lower
 * case without its article, and the other prefixes from 3 characters.
 */
function queriesFor(title: string, n: number): string[] {
  const out = [title, title.slice(0, Math.max(2, Math.ceil(title.length / 2))), misspell(title, n)];
  const firstWord = title.indexOf(' ');
  if (firstWord > 0) out.push(title.slice(0, firstWord + 3));
  out.push(title.toLowerCase().replace(/^(the|a|an) /, ''));
  for (let cut = 3; cut < title.length; cut += 1) out.push(title.slice(0, cut));
  return [...new Set(out.map((q) => q.trim()).filter((q) => q.length >= 2))];
}

/** Countries a search mix asks in (each also a language: GB/US English, DE German, FR French...). */
const MIX_COUNTRIES = ['US', 'GB', 'CA', 'DE', 'FR', 'ES', 'IT', 'BR'];

interface SearchMix {
  next(): string;
  /** Requests drawn so far and how many of them asked something asked before (the best a cache can do). */
  drawn: number;
  repeats: number;
}

/**
 * Search paths for the mixes. `zipf`: a realistic mix, queries of every chart title (popular
 * titles first) in every country of MIX_COUNTRIES, drawn with a Zipf law of exponent 1 over
 * their rank, as query logs are: a few queries asked often, a long tail asked once (which the
 * cache cannot help). `misses`: the same queries, shuffled, each asked once, never again: what
 * a request costs when no cache has its answer.
 */
function searchMix(titles: readonly string[], mode: 'zipf' | 'misses', seed: number): SearchMix {
  // A set: titles share prefixes ("The Ma"), each distinct query is kept once, at its likeliest place.
  const distinct = new Set<string>();
  const perTitle = titles.map((t, i) => queriesFor(t, i));
  // Round-robin over titles, so a title's first (likeliest) queries come before its tail.
  for (let depth = 0, added = true; added; depth += 1) {
    added = false;
    for (const country of MIX_COUNTRIES) {
      for (const queries of perTitle) {
        const q = queries[depth];
        if (q === undefined) continue;
        distinct.add(`/v1/search?q=${encodeURIComponent(q)}&country=${country}`);
        added = true;
      }
    }
  }
  const pool = [...distinct];
  const rng = new Rng(seed);
  const seen = new Set<string>();
  const mix: SearchMix = { drawn: 0, repeats: 0, next: () => '' };
  const count = (path: string): string => {
    mix.drawn += 1;
    if (seen.has(path)) mix.repeats += 1;
    else seen.add(path);
    return path;
  };
  if (mode === 'misses') {
    const order = rng.sample(pool, pool.length);
    let at = 0;
    mix.next = () => {
      if (at >= order.length) throw new Error(`the misses mix ran out of its ${order.length} distinct queries`);
      return count(order[at++] as string);
    };
    return mix;
  }
  // Cumulative Zipf weights, then a binary search per draw.
  const cumulative = new Float64Array(pool.length);
  let total = 0;
  for (let i = 0; i < pool.length; i += 1) cumulative[i] = total += 1 / (i + 1);
  mix.next = () => {
    const r = rng.next() * total;
    let lo = 0;
    let hi = pool.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((cumulative[mid] as number) <= r) lo = mid + 1;
      else hi = mid;
    }
    return count(pool[lo] as string);
  };
  return mix;
}

/** Every title of the US chart, most popular first, read through the API. */
async function chartTitles(fetchJson: (path: string) => Promise<unknown>, total: number): Promise<string[]> {
  const titles: string[] = [];
  for (let offset = 0; offset < total; offset += 200) {
    const page = (await fetchJson(`/v1/rankings?country=US&limit=200&offset=${offset}`)) as { results: Array<{ title?: string; media?: { title: string } }> };
    for (const r of page.results) {
      const title = r.media?.title ?? r.title;
      if (title) titles.push(title);
    }
  }
  return titles;
}

async function main(): Promise<void> {
  const loadAtStart = Math.round((loadavg()[0] ?? 0) * 100) / 100;
  const seconds = Number(opts.duration);
  const connections = Number(opts.connections);
  const warmupSeconds = Math.min(2, Math.max(1, Math.round(seconds / 5)));
  const ownDir = opts['data-dir'] === undefined;
  const dataDir = opts['data-dir'] ?? mkdtempSync(join(tmpdir(), 'marquee-bench-api-'));
  // Read by the API children (they inherit the environment).
  if (opts['no-cache']) process.env.BENCH_NO_CACHE = '1';
  const capturedDir = mkdtempSync(join(tmpdir(), 'marquee-bench-api-bare-'));
  const capturedFile = join(capturedDir, 'responses.json');
  const children: Child[] = [];
  try {
    const api = await spawnChild(
      ['--role', 'api', '--data-dir', dataDir, '--days', String(opts.days), '--seed', String(opts.seed), '--chart', String(opts.chart)],
      ['--expose-gc', ...(opts.profile ? ['--cpu-prof', '--cpu-prof-dir', opts.profile] : [])],
    );
    children.push(api);
    const { url, key } = api.info as { url: string; key: string };
    // A catalog just built leaves hundreds of MB of dirty pages for the kernel to write back and
    // old garbage for V8 to collect, which took CPU from the first cases measured (media at 0.34x
    // bare right after a build, 0.63x on the same catalog reused): settled before measuring.
    if (Number((api.info as { buildMs?: number }).buildMs ?? 0) > 5000) {
      execFileSync('sync');
      await new Promise((resolve) => setTimeout(resolve, 3000));
    }
    const auth = { authorization: `Bearer ${key}` };
    // --gzip: every measured request takes gzip, and the bare server answers the gzipped bytes
    // the API sent (captured as they were on the wire), so the ratio is the API's cost with it.
    const asked: Record<string, string> = opts.gzip ? { ...auth, 'accept-encoding': 'gzip' } : auth;
    /** The API's answer as on the wire with `asked` (fetch would inflate it). */
    const wire = (path: string): Promise<{ status: number; contentType: string; contentEncoding?: string; bytes: Buffer }> =>
      new Promise((resolve, reject) => {
        httpGet(`${url}${path}`, { headers: asked }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const encoding = res.headers['content-encoding'];
            resolve({ status: res.statusCode ?? 0, contentType: res.headers['content-type'] ?? 'application/json', ...(encoding === undefined ? {} : { contentEncoding: encoding }), bytes: Buffer.concat(chunks) });
          });
          res.on('error', reject);
        }).on('error', reject);
      });

    const fetchOk = async (path: string): Promise<{ res: Response; bytes: Buffer }> => {
      const res = await fetch(`${url}${path}`, { headers: auth });
      const bytes = Buffer.from(await res.arrayBuffer());
      if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${bytes.toString('utf8').slice(0, 300)}`);
      return { res, bytes };
    };
    const rankings = JSON.parse((await fetchOk('/v1/rankings?country=US&limit=50')).bytes.toString('utf8')) as {
      total: number;
      results: Array<{ id?: string; mediaId?: string; media?: { id: string; title: string }; title?: string }>;
    };
    const trendingTotal = (JSON.parse((await fetchOk('/v1/trending?country=US&limit=1')).bytes.toString('utf8')) as { total: number }).total;
    const ranked = rankings.results.map((r) => ({ id: r.media?.id ?? r.id ?? r.mediaId ?? '', title: r.media?.title ?? r.title ?? '' }));
    if (ranked.length < 8 || ranked.some((r) => !r.id || !r.title)) throw new Error(`unexpected rankings body: ${JSON.stringify(rankings).slice(0, 300)}`);
    const ids = ranked.slice(0, 8).map((r) => r.id);
    const queries = ranked
      .map((r, i) => misspell(r.title, i))
      .filter((q, i) => q !== ranked[i]?.title)
      .slice(0, 16);

    const endpoints: Record<string, string[]> = {
      media: ids.map((id) => `/v1/media/${id}?country=US`),
      links: ids.map((id) => `/v1/media/${id}/links?country=US`),
      rankings: ['/v1/rankings?country=US&limit=50'],
      // A page from the middle of the chart: what a page costs where the chart is long.
      rankings_deep: [`/v1/rankings?country=US&limit=50&offset=${Math.floor(rankings.total / 2)}`],
      trending: ['/v1/trending?country=US&limit=50'],
      trending_deep: [`/v1/trending?country=US&limit=50&offset=${Math.floor(trendingTotal / 2)}`],
      search: queries.map((q) => `/v1/search?q=${encodeURIComponent(q)}&country=US`),
    };

    // The bare server answers exactly what the API answered. A typo the index does not forgive
    // (e.g. in a short word) finds nothing: such queries leave the rotation, which must keep 4.
    const captured: Captured[] = [];
    for (const [name, paths] of Object.entries(endpoints)) {
      const kept: string[] = [];
      for (const path of paths) {
        const answer = await wire(path);
        if (answer.status !== 200) throw new Error(`GET ${path}: ${answer.status}`);
        const text = (answer.contentEncoding === 'gzip' ? gunzipSync(answer.bytes) : answer.bytes).toString('utf8');
        if (name === 'search' && (JSON.parse(text) as { results: unknown[] }).results.length === 0) continue;
        kept.push(path);
        const { bytes, ...rest } = answer;
        captured.push({ path, ...rest, body: bytes.toString('base64') });
      }
      if (kept.length < Math.min(4, paths.length)) throw new Error(`${name}: only ${kept.length} of ${paths.length} requests found something; is the index filled?`);
      endpoints[name] = kept;
    }
    writeFileSync(capturedFile, JSON.stringify(captured));
    const bare = await spawnChild(['--role', 'bare', '--responses', capturedFile]);
    children.push(bare);
    const bareUrl = bare.info.url as string;

    const results: Record<string, unknown> = {};
    const problems: string[] = [];
    const check = (what: string, m: Measured) => {
      if (m.errors > 0 || m.non2xx > 0) problems.push(`${what}: ${m.errors} errors, ${m.non2xx} non-2xx`);
    };
    const only = opts.only?.split(',');
    for (const [name, paths] of Object.entries(endpoints)) {
      if (only && !only.includes(name)) continue;
      // Warm both (JIT, caches), then measure, API first.
      await measure(url, paths, connections, warmupSeconds, asked);
      await measure(bareUrl, paths, connections, warmupSeconds, asked);
      const real = await measure(url, paths, connections, seconds, asked, api.proc.pid);
      const ref = await measure(bareUrl, paths, connections, seconds, asked, bare.proc.pid);
      check(name, real);
      check(`${name} (bare)`, ref);
      results[name] = {
        rps: real.rps, p50_ms: real.p50_ms, p99_ms: real.p99_ms,
        bare_rps: ref.rps, bare_p50_ms: ref.p50_ms, bare_p99_ms: ref.p99_ms,
        ratio_to_bare: Math.round((real.rps / ref.rps) * 100) / 100,
        cpu_us_per_req: real.cpu_us_per_req, bare_cpu_us_per_req: ref.cpu_us_per_req,
        // Bare's CPU per request over ours: the ratio to bare of a machine with nothing else to do.
        cpu_ratio_to_bare: real.cpu_us_per_req && ref.cpu_us_per_req ? Math.round((ref.cpu_us_per_req / real.cpu_us_per_req) * 100) / 100 : null,
        bytes: Math.round(captured.filter((c) => paths.includes(c.path)).reduce((s, c) => s + Buffer.from(c.body, 'base64').length, 0) / paths.length),
      };
    }
    let unloaded: Measured | undefined;
    if (!only || only.includes('search')) {
      unloaded = await measure(url, endpoints.search as string[], 1, seconds, asked);
      check('search (1 connection)', unloaded);
      results.search_1_connection = { rps: unloaded.rps, p50_ms: unloaded.p50_ms, p99_ms: unloaded.p99_ms };
    }
    // The rotation above repeats 16 queries, which every cache answers after the first round:
    // the mixes say what search costs with the queries users type (no bare server: it would
    // need every answer captured first).
    if (!only || only.includes('search') || only.includes('search_mix')) {
      const titles = await chartTitles(async (path) => JSON.parse((await fetchOk(path)).bytes.toString('utf8')) as unknown, rankings.total);
      const mixes: Array<[string, 'zipf' | 'misses', number]> = [['search_mix', 'zipf', connections], ['search_misses', 'misses', connections], ['search_misses_1_connection', 'misses', 1]];
      for (const [name, mode, conns] of mixes) {
        const mix = searchMix(titles, mode, Number(opts.seed));
        // The warm-up draws from the same mix: a zipf run starts with the cache a steady stream leaves.
        await measure(url, mix.next, conns, warmupSeconds, asked);
        const before = { drawn: mix.drawn, repeats: mix.repeats };
        const m = await measure(url, mix.next, conns, seconds, asked, api.proc.pid);
        check(name, m);
        const drawn = mix.drawn - before.drawn;
        results[name] = {
          rps: m.rps, p50_ms: m.p50_ms, p99_ms: m.p99_ms, cpu_us_per_req: m.cpu_us_per_req,
          // Requests whose query had been asked before in this run (warm-up included): the hits a cache can give.
          repeated_share: drawn === 0 ? 0 : Math.round(((mix.repeats - before.repeats) / drawn) * 1000) / 1000,
        };
      }
    }

    const workerCount = Number(opts.workers ?? availableParallelism());
    if (workerCount > 1) {
      // The same catalog served by N processes, against the same bare server.
      await api.stop();
      children.splice(children.indexOf(api), 1);
      const many = await spawnChild(['--role', 'api', '--data-dir', dataDir, '--days', String(opts.days), '--seed', String(opts.seed), '--workers', String(workerCount)]);
      children.push(many);
      const manyUrl = many.info.url as string;
      const manyAuth: Record<string, string> = { ...asked, authorization: `Bearer ${many.info.key as string}` };
      const perWorkers: Record<string, unknown> = {};
      for (const [name, paths] of Object.entries(endpoints)) {
        if ((only && !only.includes(name)) || name.endsWith('_deep')) continue;
        await measure(manyUrl, paths, connections, warmupSeconds, manyAuth);
        const m = await measure(manyUrl, paths, connections, seconds, manyAuth, many.proc.pid);
        check(`${name} (${workerCount} workers)`, m);
        const single = results[name] as { rps: number; bare_rps: number };
        perWorkers[name] = {
          rps: m.rps, p50_ms: m.p50_ms, p99_ms: m.p99_ms, cpu_us_per_req: m.cpu_us_per_req,
          ratio_to_bare: Math.round((m.rps / single.bare_rps) * 100) / 100,
          ratio_to_1_worker: Math.round((m.rps / single.rps) * 100) / 100,
        };
      }
      results[`workers_${workerCount}`] = perWorkers;
    }

    type Ratios = { ratio_to_bare: number; cpu_ratio_to_bare: number | null } | undefined;
    const atLeast = (n: string, goal: number) => ({
      rps: ((results[n] as Ratios)?.ratio_to_bare ?? 0) >= goal,
      cpu: ((results[n] as Ratios)?.cpu_ratio_to_bare ?? 0) >= goal,
    });
    console.log(JSON.stringify({
      bench: 'api',
      node: process.version,
      connections,
      duration_s: seconds,
      response_cache: !opts['no-cache'],
      gzip: opts.gzip,
      // Shared machines make every figure noisy: the load before the run says how noisy.
      machine: { cpus: cpus().length, loadavg_1m_at_start: loadAtStart },
      catalog: { seed: Number(opts.seed), days: Number(opts.days), titles_indexed: api.info.indexed, us_chart_titles: api.info.chartTitles ?? rankings.total, events: api.info.head, build_ms: api.info.buildMs },
      ...results,
      goals: {
        ratio_to_bare: { media_0_5: atLeast('media', 0.5), links_0_5: atLeast('links', 0.5), rankings_0_3: atLeast('rankings', 0.3) },
        search_p99_under_25ms_at_50_connections: ((results.search as { p99_ms: number } | undefined)?.p99_ms ?? Infinity) < 25,
        search_p99_under_25ms_at_1_connection: (unloaded?.p99_ms ?? Infinity) < 25,
        search_mix_p99_under_25ms_at_50_connections: ((results.search_mix as { p99_ms: number } | undefined)?.p99_ms ?? Infinity) < 25,
      },
      ...(problems.length > 0 ? { problems } : {}),
      search_queries: endpoints.search?.map((p) => new URL(p, url).searchParams.get('q')),
    }));
  } finally {
    for (const child of children.reverse()) await child.stop();
    rmSync(capturedDir, { recursive: true, force: true });
    if (ownDir) rmSync(dataDir, { recursive: true, force: true });
  }
}

/** A server child exits when the parent's end of its stdin closes, even if the parent was killed. */
function exitWithParent(): void {
  process.stdin.resume();
  process.stdin.once('end', () => process.exit(0));
}

if (opts.role === 'api' && process.env.BENCH_API_WORKER === '1') {
  await serveApiWorker(opts['data-dir'] as string, Number(process.env.BENCH_PORT), process.env.BENCH_LINK_KEY ?? '');
} else if (opts.role === 'api') {
  exitWithParent();
  await serveApi(opts['data-dir'] as string, Number(opts.days), Number(opts.seed), Number(opts.chart), Number(opts.workers ?? 1));
} else if (opts.role === 'bare') {
  exitWithParent();
  serveBare(opts.responses as string);
} else {
  await main();
}
