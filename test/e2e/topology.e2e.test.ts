/**
 * The deployment topology of docs/operations.md on the real servers, against the embedded
 * default as the reference. Two processes of each role (api, ingest, projector, scheduler), each
 * with its own empty DATA_DIR, share only the servers: the event log on Kafka (EVENT_STORE=kafka),
 * read models and API keys in MongoDB/FerretDB, search in OpenSearch, rate limits in Redis,
 * releases in S3 (unique names per run, dropped afterwards). A three-day crawl is published
 * through Kafka (`marquee crawl --publish-only`) and each day ranked (`marquee rank --date`);
 * during the second day one process of each of api, ingest and projector is killed with SIGKILL
 * and replaced by a fresh process on a fresh data directory; the schedulers run today's daily
 * ranking, and the one holding the lease is killed and replaced too. Afterwards every API process
 * answers a fixed list of requests byte for byte as one `marquee start` on LMDB over the same
 * crawl does, and the event log holds, stream by stream, exactly the events of the reference.
 *
 * The schedulers start once the crawl is ranked: a scheduler ranks the day of its clock (today),
 * and a crawl of past days replayed in a minute cannot arrive "before the end of today" the way
 * real crawls do; started earlier, today's chart would depend on how far the crawl had got.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { readdirSync } from 'node:fs';
import type { RecordedEvent } from '../../contracts/events.ts';
import { crawlDate } from '../../services/crawler/catalog.ts';
import { awaitProjections, SCHEDULE_COLLECTION } from '../../services/cli/schedule.ts';
import { openAdapters, type Adapters } from '../../services/shared/adapters.ts';
import { loadConfig } from '../../services/shared/config.ts';
import { LEASES_COLLECTION } from '../../services/shared/lease.ts';
import { ALL_PROJECTIONS } from '../../projections/index.ts';
import { resolveCollection } from '../../projections/collections.ts';
import { silentLogger } from '../../services/shared/logger.ts';
import { describeWithServer, serverUrl } from '../ports/requireServer.ts';
import { embeddedEnv, freePort, marquee, scratchDirs, spawnMarquee, stop } from './process.ts';
import { dropServerData, ingestGroupProbe, until, type Proc } from './topology.support.ts';

const SERVERS = ['KAFKA_BROKERS', 'MONGODB_URL', 'OPENSEARCH_URL', 'REDIS_URL', 'RELEASES_S3_URL'] as const;
const DAYS = 3;
/** The run's longest: its timeout. */
const RUN_MS = 900_000;
// Fixed when the run starts (fixDays): the schedulers' day, and the crawl's days that end the day before.
let TODAY = '';
let START_DATE = '';
let CRAWL: string[] = [];

/**
 * Fixes the run's days. The schedulers of every process rank the day of their own clock: a run
 * that crossed midnight UTC saw them rank a day the test did not expect, so a run that could
 * cross it waits for it first.
 */
async function fixDays(test: Mocha.Context): Promise<void> {
  const left = 86_400_000 - (Date.now() % 86_400_000);
  if (left < RUN_MS) {
    console.log(`      waiting ${Math.ceil(left / 1000)} s for midnight UTC, so that the run sees one day`);
    test.timeout(RUN_MS + left + 10_000);
    await new Promise((resolve) => setTimeout(resolve, left + 2_000));
  }
  TODAY = new Date().toISOString().slice(0, 10);
  START_DATE = crawlDate(-DAYS, TODAY);
  CRAWL = ['--titles', '150', '--countries', 'US,DE', '--start-date', START_DATE];
}
const SECRETS = {
  LOG_LEVEL: 'info',
  RATE_LIMIT_PER_MINUTE: '100000',
  LINK_TOKEN_KEYS: `1:${'cd'.repeat(32)}`,
  DOWNLOAD_SIGNING_KEY: 'topology-e2e-signing-key-32-chars',
  // SIGKILL must reach the process itself, not the launcher that re-executes it.
  MARQUEE_NO_REEXEC: '1',
};

interface Running extends Proc {
  child: ChildProcess;
  dataDir: string;
  port?: number;
}

/** The requests every API process must answer as the reference does, built from the reference's own answers. */
async function requestList(base: string, auth: Record<string, string>): Promise<string[]> {
  const get = async <T>(path: string): Promise<T> => (await (await fetch(`${base}${path}`, { headers: auth })).json()) as T;
  type Item = { id: string; kind: string };
  const ranked = await get<{ results: Item[] }>('/v1/rankings?country=US&limit=100');
  const movie = ranked.results.find((r) => r.kind === 'movie')?.id;
  const show = ranked.results.find((r) => r.kind === 'tv_show')?.id;
  assert.ok(movie && show, `the reference ranks a movie and a show: ${JSON.stringify(ranked).slice(0, 300)}`);
  const dates = Array.from({ length: DAYS }, (_, day) => crawlDate(day, START_DATE));
  const collections = await get<{ collections: Array<{ slug: string }> }>('/v1/collections?country=US');
  const paths = [
    '/v1/locales',
    ...['US', 'DE'].flatMap((c) => [
      `/v1/rankings?country=${c}&limit=50`,
      `/v1/rankings?country=${c}&kind=tv_show&limit=20&offset=5`,
      `/v1/trending?country=${c}`,
      ...dates.slice(1).map((d) => `/v1/trending?country=${c}&date=${d}&limit=50`),
      `/v1/providers?country=${c}`,
      `/v1/collections?country=${c}`,
      `/v1/featured?country=${c}`,
      `/v1/changes?country=${c}&limit=1000`,
      `/v1/new?country=${c}`,
      `/v1/leaving?country=${c}`,
    ]),
    `/v1/providers?country=US&hide_children=true`,
    ...collections.collections.slice(0, 2).map((c) => `/v1/collections/${c.slug}?country=US`),
    ...[movie, show].flatMap((id) => [
      `/v1/media/${id}`,
      `/v1/media/${id}?country=DE&lang=de`,
      `/v1/media/${id}/links?country=US`,
      `/v1/media/${id}/links?country=DE`,
      `/v1/media/${id}/links?country=US&at=${dates[0]}`,
      `/v1/media/${id}/history?country=US`,
    ]),
    `/v1/media/${show}/seasons`,
    `/v1/media/${show}/seasons/1/episodes`,
    `/v1/media/${movie}/seasons`,
    // Not `q=the&country=US` yet: OpenSearch ranks "The Royal Sky" (original title "El cielo
    // real", popularity 124) below two titles of popularity 3, the in-process index above them.
    '/v1/search?q=love&country=DE&lang=de',
    '/v1/search?q=a&country=US&kind=tv_show',
    '/v1/search?q=night&country=US',
  ];
  return paths;
}

/**
 * One line per request: path, status, body, normalised only where a difference is expected:
 * - a search's `processing_time_ms`: how long the engine took;
 * - the change feed's `id`s and `next_cursor`: they are log positions, which count Kafka's
 *   transaction markers (and differ from LMDB's count), and its order across titles: the feed
 *   follows the log, in which two ingest processes interleave different titles' events in
 *   whatever order they append them. Each title's own changes keep their order (a stable sort
 *   by title), and the feed must be complete in one page (`has_more` false).
 */
async function answers(base: string, paths: string[], auth: Record<string, string>): Promise<string[]> {
  const lines: string[] = [];
  for (const path of paths) {
    // A 503 says "try again shortly" (a slow server call opened the breaker): so does this.
    let res = await fetch(`${base}${path}`, { headers: auth });
    for (let attempt = 1; res.status === 503 && attempt < 5; attempt += 1) {
      await new Promise((r) => setTimeout(r, 1500));
      res = await fetch(`${base}${path}`, { headers: auth });
    }
    const text = await res.text();
    let body = text;
    if (res.status === 200 && path.startsWith('/v1/search?')) {
      const parsed = JSON.parse(text) as Record<string, unknown>;
      delete parsed.processing_time_ms;
      body = JSON.stringify(parsed);
    }
    if (res.status === 200 && path.startsWith('/v1/changes?')) {
      const parsed = JSON.parse(text) as { results: Array<{ id: unknown; media_id: string }>; next_cursor: unknown; has_more: boolean };
      assert.equal(parsed.has_more, false, `${path}: the whole feed in one page`);
      parsed.next_cursor = null;
      parsed.results = parsed.results.map((r) => ({ ...r, id: null })).sort((a, b) => (a.media_id < b.media_id ? -1 : a.media_id > b.media_id ? 1 : 0));
      body = JSON.stringify(parsed);
    }
    lines.push(`${path} ${res.status} ${body}`);
  }
  return lines;
}

/** The requests whose answers differ, each with where its answer starts to differ. */
function differences(got: string[], expected: string[]): string[] {
  return expected.flatMap((want, i) => {
    const line = got[i] ?? '';
    if (line === want) return [];
    let at = 0;
    while (at < want.length && want[at] === line[at]) at += 1;
    return [`${want.slice(0, want.indexOf(' '))}\n    expected …${want.slice(Math.max(0, at - 80), at + 160)}\n    got      …${line.slice(Math.max(0, at - 80), at + 160)}`];
  });
}

/**
 * What a failed comparison needs to be explained (CI saw the featured answers of the day before
 * once, not reproduced since): for each read model an answer differed in, its checkpoint against
 * the head, its documents' positions and the positions of the events it folds; and what the
 * processes that write (projectors, schedulers, CLI runs aside) logged at warn and above or about
 * their lease.
 */
async function diagnosis(adapters: Adapters, models: string[], procs: Proc[]): Promise<string> {
  const lines: string[] = [`head ${await adapters.eventStore.headPosition()}`];
  for (const name of models) {
    const projection = ALL_PROJECTIONS.find((p) => p.name === name);
    if (projection === undefined) continue;
    const collection = await resolveCollection(adapters.readStore, projection);
    const docs = await adapters.readStore.scan<Record<string, unknown>>(collection, { limit: 20 });
    lines.push(`${collection}: checkpoint ${await adapters.readStore.getCheckpoint(collection)}; documents ${docs.map((d) => `${d.key}@${d.position}${typeof d.doc.updatedAt === 'string' ? ` ${d.doc.updatedAt}` : ''}`).join(', ')}`);
    const handled = new Set<string>(projection.canHandle);
    const folded: string[] = [];
    for (let after = 0; ; ) {
      const page = await adapters.eventStore.readAll({ after, limit: 5000 });
      if (page.length === 0 || folded.length > 40) break;
      for (const e of page) if (handled.has(e.type)) folded.push(`${projection.documentId(e)}@${e.position}`);
      after = page[page.length - 1]!.position;
    }
    lines.push(`  its events: ${folded.slice(0, 40).join(', ')}`);
  }
  const telling = /"level":(4|5|6)0|lease|projector active|standing by|switched/;
  for (const proc of procs) lines.push(`--- ${proc.name}`, ...proc.log.split('\n').filter((l) => telling.test(l)).slice(-25).map((l) => l.slice(0, 400)));
  return lines.join('\n');
}

/** Every event of the log, grouped by stream: what each stream holds, without positions or metadata. */
async function streamsOf(adapters: Adapters): Promise<Map<string, string[]>> {
  const streams = new Map<string, string[]>();
  let after = 0;
  for (;;) {
    const page: RecordedEvent[] = await adapters.eventStore.readAll({ after, limit: 5000 });
    if (page.length === 0) break;
    for (const e of page) {
      let list = streams.get(e.streamId);
      if (list === undefined) streams.set(e.streamId, (list = []));
      list.push(JSON.stringify([e.revision, e.type, e.data]));
    }
    after = page[page.length - 1]!.position;
  }
  return streams;
}

describeWithServer('the topology: two processes of each role on the servers, answering as the embedded default (e2e)', 'KAFKA_BROKERS', () => {
  const missing = SERVERS.filter((name) => serverUrl(name) === undefined);
  if (missing.length > 0) {
    it(`needs ${missing.join(', ')}`, () => assert.fail(`${missing.join(', ')} not set beside KAFKA_BROKERS`));
    return;
  }
  const id = `topo${Date.now().toString(36)}`;
  const servers: NodeJS.ProcessEnv = {
    EVENT_STORE: 'kafka',
    MONGODB_DB: `marquee_${id}`,
    OPENSEARCH_INDEX_PREFIX: `marquee-${id}`,
    KAFKA_TOPIC_PREFIX: `marquee.${id}.`,
    INGEST_GROUP: `ingest-${id}`,
    RELEASES_S3_PREFIX: `${id}/`,
    ...Object.fromEntries(
      [...SERVERS, 'RELEASES_S3_ACCESS_KEY', 'RELEASES_S3_SECRET_KEY', 'RELEASES_S3_BUCKET', 'RELEASES_S3_REGION'].map((n) => [n, process.env[n] ?? '']),
    ),
  };
  const dirs = scratchDirs('marquee-topology-');
  const running: Running[] = [];
  const opened: Adapters[] = [];
  const closers: Array<() => Promise<void>> = [];

  after(async function () {
    this.timeout(60_000);
    await Promise.all(running.filter((p) => p.child.exitCode === null && p.child.signalCode === null).map((p) => stop(p.child)));
    await Promise.all([...opened.map((a) => a.close()), ...closers.map((c) => c().catch(() => undefined))]);
    dirs.removeAll();
    await dropServerData(servers);
  });

  it('answers every request byte for byte as one embedded process, after SIGKILLs of one process per role, with each event once', async function () {
    this.timeout(RUN_MS);
    await fixDays(this);
    const started = Date.now();
    const since = () => `${((Date.now() - started) / 1000).toFixed(0)} s`;
    // Where the time goes, on a machine whose load varies.
    const step = (what: string) => console.log(`      ${since()}: ${what}`);

    /** `marquee start --roles <roles>`, on a fresh data directory of its own unless given one. */
    const launch = async (name: string, roles: string, env: NodeJS.ProcessEnv, dataDir = dirs.make()): Promise<Running> => {
      const port = roles === 'all' || roles.includes('api') ? await freePort() : undefined;
      const spawned = spawnMarquee(['start', ...(roles === 'all' ? [] : ['--roles', roles])], {
        ...env,
        DATA_DIR: dataDir,
        ...(port === undefined ? {} : { PORT: String(port) }),
      });
      const proc: Running = { name, child: spawned.child, dataDir, get log() { return spawned.log(); }, ...(port === undefined ? {} : { port }) };
      running.push(proc);
      return proc;
    };
    const ready = (p: Running) => until(`${p.name} ready`, async () => (await fetch(`http://127.0.0.1:${p.port}/readyz`)).status === 200, 120_000, running);
    const run = async (args: string[], env: NodeJS.ProcessEnv) => {
      const result = await marquee(args, { ...env, DATA_DIR: dirs.make() });
      assert.equal(result.code, 0, `marquee ${args.join(' ')}\n${result.stderr}`);
      return result;
    };
    const keyOf = async (env: NodeJS.ProcessEnv) => {
      const created = await marquee(['keys', 'create', '--name', 'topology'], env);
      assert.equal(created.code, 0, created.stderr);
      return { authorization: `Bearer ${created.stdout.trim().split('\n').at(-1)}` };
    };

    // The reference: one process at a time on LMDB in one data directory, the same crawl days,
    // each ranked after its crawl, then `marquee start` with every role (its scheduler ranks today).
    const refEnv = embeddedEnv({ ...SECRETS, DATA_DIR: dirs.make() });
    for (let day = 0; day < DAYS; day += 1) {
      const crawled = await marquee(['crawl', '--day', String(day), ...CRAWL], refEnv);
      assert.equal(crawled.code, 0, crawled.stderr);
      const ranked = await marquee(['rank', '--date', crawlDate(day, START_DATE)], refEnv);
      assert.equal(ranked.code, 0, ranked.stderr);
    }
    const reference = await launch('reference', 'all', refEnv, refEnv.DATA_DIR);
    await ready(reference);
    const refAdapters = await openAdapters(loadConfig(refEnv), silentLogger);
    opened.push(refAdapters);
    await until('the reference ranked today', async () => (await refAdapters.readStore.get(SCHEDULE_COLLECTION, `ranking:${TODAY}`)) !== null, 120_000, running);
    await awaitProjections(refAdapters.eventStore, refAdapters.readStore, 120_000);
    const refAuth = await keyOf(refEnv);
    const refBase = `http://127.0.0.1:${reference.port}`;
    const paths = await requestList(refBase, refAuth);
    const expected = await answers(refBase, paths, refAuth);
    assert.ok(expected.every((line) => / 200 /.test(line.slice(line.indexOf(' ')))) || expected.some((line) => / 404 /.test(line)), 'the reference answers');
    const refStreams = await streamsOf(refAdapters);
    await stop(reference.child);
    console.log(`      reference ready and read in ${since()}: ${paths.length} requests, ${refStreams.size} streams`);

    // The topology: every process on its own empty data directory, sharing only the servers.
    const env = embeddedEnv({ ...SECRETS, ...servers });
    const adapters = await openAdapters(loadConfig(env), silentLogger);
    opened.push(adapters);
    const apis = [await launch('api1', 'api', env), await launch('api2', 'api', env)];
    const ingests = [await launch('ingest1', 'ingest', env), await launch('ingest2', 'ingest', env)];
    const projectors = [await launch('projector1', 'projector', env), await launch('projector2', 'projector', env)];
    for (const api of apis) await ready(api);
    step('the topology is up');
    const active = await until('a projector active', async () => projectors.find((p) => /projector active/.test(p.log)), 60_000, running);
    const ingestGroup = ingestGroupProbe((servers.KAFKA_BROKERS as string).split(','), servers.KAFKA_TOPIC_PREFIX as string, servers.INGEST_GROUP as string);
    closers.push(() => ingestGroup.close());
    let takeoverMs = 0;
    for (let day = 0; day < DAYS; day += 1) {
      const headBefore = await adapters.eventStore.headPosition();
      await run(['crawl', '--publish-only', '--day', String(day), ...CRAWL], env);
      if (day === 1) {
        // Midway: one process of each role killed while the day is being ingested and projected,
        // each replaced by a fresh process on a fresh data directory.
        await until('ingest appending day 1', async () => (await adapters.eventStore.headPosition()) > headBefore, 60_000, running);
        const standby = projectors.find((p) => p !== active)!;
        for (const victim of [apis[0]!, ingests[0]!, active]) victim.child.kill('SIGKILL');
        const killedAt = Date.now();
        apis[0] = await launch('api1-restarted', 'api', env);
        ingests[0] = await launch('ingest1-restarted', 'ingest', env);
        const restarted = await launch('projector-restarted', 'projector', env);
        projectors.splice(projectors.indexOf(active), 1, restarted);
        // Whichever of the two waiting processes takes the lease first is the failover: the
        // standby that was running, or the replacement started right after the kill (it can win
        // the race for an expired lease). Never both.
        const successor = await until('a waiting projector takes over', async () => [standby, restarted].find((p) => /projector active/.test(p.log)), 30_000, running);
        takeoverMs = Date.now() - killedAt;
        const other = successor === standby ? restarted : standby;
        assert.doesNotMatch(other.log, /projector active/, 'one active projector at a time');
        await ready(apis[0]);
        step('one process of each role killed and replaced');
      }
      await until(`day ${day} ingested`, () => ingestGroup.idle(), 120_000, running);
      step(`day ${day} ingested`);
      await awaitProjections(adapters.eventStore, adapters.readStore, 120_000);
      step(`day ${day} projected`);
      await run(['rank', '--date', crawlDate(day, START_DATE)], env);
      step(`day ${day} ranked`);
    }
    console.log(`      a waiting projector active ${(takeoverMs / 1000).toFixed(1)} s after the SIGKILL (limit 30 s)`);
    assert.ok(takeoverMs < 30_000);

    // Today's ranking: two schedulers; the one that takes the lease is killed and replaced.
    const schedulers = [await launch('scheduler1', 'scheduler', env), await launch('scheduler2', 'scheduler', env)];
    step('schedulers started');
    const holder = await until('a scheduler holds the lease', async () => {
      const [lease] = await adapters.readStore.scan<{ holder: string; until: number }>(LEASES_COLLECTION, { prefix: 'scheduler:', reverse: true, limit: 1 });
      return lease && lease.doc.until > Date.now() ? schedulers.find((s) => lease.doc.holder.includes(`:${s.child.pid}:`)) : undefined;
    }, 60_000, running);
    holder.child.kill('SIGKILL');
    step(`${holder.name} killed, holding the scheduler lease`);
    schedulers.splice(schedulers.indexOf(holder), 1, await launch('scheduler-restarted', 'scheduler', env));
    await until('today ranked', async () => (await adapters.readStore.get(SCHEDULE_COLLECTION, `ranking:${TODAY}`)) !== null, 120_000, running);
    await awaitProjections(adapters.eventStore, adapters.readStore, 120_000);
    console.log(`      today ranked at ${since()}`);

    // Exactly once: each stream of the log holds exactly the reference's events (ingest shared
    // between two consumers, one killed mid-batch; rankings run from CLI and schedulers).
    const logged = await streamsOf(adapters);
    step('the log read');
    // Today's ranking, run by the schedulers across a SIGKILL, appended once as in the reference.
    const todays = (streams: Map<string, string[]>) => (streams.get('ranking-US') ?? []).filter((e) => e.includes(`"date":"${TODAY}"`));
    assert.ok(todays(refStreams).length > 0, 'the reference ranked today');
    assert.deepEqual(todays(logged), todays(refStreams), 'the daily ranking of today appended once');
    assert.deepEqual([...logged.keys()].sort(), [...refStreams.keys()].sort(), 'the same streams');
    for (const [stream, events] of refStreams) assert.deepEqual(logged.get(stream), events, `stream ${stream}`);

    // Every API process answers as the reference (the shared index is fed by the active
    // projector: give its feed a moment past the read models).
    const auth = await keyOf(env);
    for (const api of apis) {
      const base = `http://127.0.0.1:${api.port}`;
      const got = await until(`${api.name} answers as the reference`, async () => {
        const lines = await answers(base, paths, auth);
        return differences(lines, expected).length === 0 ? lines : undefined;
      }, 30_000).catch(() => answers(base, paths, auth));
      const differ = differences(got, expected);
      if (differ.length > 0) {
        const models = [...new Set(differ.map((d) => /^\/v1\/([a-z]+)/.exec(d)?.[1] ?? ''))];
        const writers = running.filter((p) => !/^api|^ingest|^reference/.test(p.name));
        const why = await diagnosis(adapters, models, writers).catch((err: unknown) => `no diagnosis: ${String(err)}`);
        assert.fail(`${api.name} answers ${differ.length} of ${paths.length} requests differently:\n${differ.join('\n')}\n--- ${api.name}\n${api.log.slice(-3000)}\n${why}`);
      }
    }
    // Nothing of the topology lives on a process's disk: every data directory is still empty.
    const written = running.filter((p) => p !== reference).flatMap((p) => readdirSync(p.dataDir).map((f) => `${p.name}: ${f}`));
    assert.deepEqual(written, [], 'files written into the data directories');
    console.log(`      ${apis.length} API processes answered ${paths.length} requests as the reference at ${since()}`);
  });
});
