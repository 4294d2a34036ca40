/**
 * Hostile requests to the API (issue 9, "bounded work per request"): oversized and malformed
 * queries, ids, slugs, season numbers and link tokens, and a flood of /go redirects. Each case
 * checks the answer (400 or 404 JSON, never 500), that it comes quickly, and that a concurrent
 * `/healthz` keeps answering within 100 ms while it runs. The search index holds a catalog of
 * the sample's size (the 4,001 titles of test/unit/searchQualityCatalog.ts), so the 50 ms
 * bound on one search is measured where it matters.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { MAX_WEB_URL_BYTES } from '../../contracts/domain.ts';
import { SEARCH_QUERY_MAX_CHARS, SEARCH_QUERY_MAX_WORDS, type Clock, type SearchIndex, type SearchQuery } from '../../contracts/ports.ts';
import { inProcessSearchIndex } from '../../infra/search/inProcessSearch.ts';
import { tokenize } from '../../infra/search/normalize.ts';
import { createApiKey } from '../../services/api/keys.ts';
import { REQUEST_TIMEOUT_MS, startApi, type RunningApi } from '../../services/api/server.ts';
import type { ApiDeps, LinkTokenCodec } from '../../services/api/types.ts';
import { MAX_LINK_TOKEN_CHARS } from '../../services/links/linkTokens.ts';
import { movieDocuments, showDocuments } from '../unit/searchQualityCatalog.ts';
import { IDS, openFixtureStores, seedCatalog, type FixtureStores } from './api.fixture.ts';
import { testLinkTokens } from './api.linkTokens.ts';
import { assertResponsive, probeHealthzDuring } from './hostile.support.ts';

const clock: Clock = { now: () => new Date('2026-11-21T08:00:00Z') };

/** The bound: no single search may hold the event loop longer. */
const SEARCH_BOUND_MS = 50;

interface Reply {
  status: number;
  headers: Headers;
  body: any;
  ms: number;
}

/** One search as the engine ran it: the in-process index answers synchronously, so this is the time it held the loop. */
interface SearchTiming {
  q: string;
  query: SearchQuery;
  wallMs: number;
  cpuMs: number;
}

/** The wall time of `index.search(query)`: the in-process index does its work before it returns. */
function timeSearch(index: SearchIndex, query: SearchQuery): number {
  const started = performance.now();
  void index.search(query);
  return performance.now() - started;
}

/** `index` with every search timed: wall time, and this process's CPU time for the log. */
function timedIndex(index: SearchIndex, timings: SearchTiming[]): SearchIndex {
  return {
    upsert: (docs) => index.upsert(docs),
    remove: (ids) => index.remove(ids),
    write: (writes) => index.write(writes),
    count: () => index.count(),
    close: () => index.close(),
    search(query) {
      const cpu = process.cpuUsage();
      const started = performance.now();
      const result = index.search(query);
      const used = process.cpuUsage(cpu);
      timings.push({ q: query.q, query, wallMs: performance.now() - started, cpuMs: (used.user + used.system) / 1000 });
      return result;
    },
  };
}

describe('hostile requests to the API', function () {
  this.timeout(120_000);
  let stores: FixtureStores;
  let search: SearchIndex;
  let linkTokens: LinkTokenCodec;
  let api: RunningApi;
  let key: string;
  const timings: SearchTiming[] = [];
  const extra: RunningApi[] = [];

  function deps(overrides: Partial<ApiDeps> = {}): ApiDeps {
    return {
      readStore: stores.readStore, apiKeys: stores.apiKeys, eventStore: stores.eventStore, search: timedIndex(search, timings), linkTokens, clock,
      rateLimit: { perMinute: 100_000, goPerMinute: 100_000 },
      ...overrides,
    };
  }

  async function get(path: string, options: { key?: string | null; headers?: Record<string, string>; base?: RunningApi } = {}): Promise<Reply> {
    const headers: Record<string, string> = { ...options.headers };
    const k = options.key === undefined ? key : options.key;
    if (k !== null) headers.authorization = `Bearer ${k}`;
    const started = performance.now();
    const res = await fetch(`${(options.base ?? api).url}${path}`, { headers, redirect: 'manual' });
    const text = await res.text();
    const ms = performance.now() - started;
    const body = res.headers.get('content-type')?.startsWith('application/json') && text !== '' ? JSON.parse(text) : undefined;
    return { status: res.status, headers: res.headers, body, ms };
  }

  /** Runs `attack` while probing /healthz, asserts the probe stayed under 100 ms, and returns the attack's replies. */
  async function responsive<T>(attack: () => Promise<T>): Promise<T> {
    const probed = await probeHealthzDuring(api.url, attack());
    assertResponsive(probed);
    return probed.outcome;
  }

  before(async () => {
    stores = openFixtureStores('marquee-hostile-api-', clock);
    // No kept answers or word hits: every search, a repeat included, does a cold query's whole
    // work, so the bound below is measured on the worst case and not on a cache.
    search = inProcessSearchIndex({ resultCacheSize: 0, wordHitsKept: 0 });
    // A search index of the sample's size; the fixture's own titles (upserted after) replace the few equal ids.
    await search.upsert([...movieDocuments(), ...showDocuments()]);
    linkTokens = await testLinkTokens();
    await seedCatalog(stores.eventStore, stores.readStore, search);
    key = (await createApiKey(stores.apiKeys, 'hostile', clock)).key;
    api = await startApi({ port: 0, ...deps() });
    // The first requests of a process compile the HTTP and search paths: not what is measured here.
    // A running server has served such requests before; the cold start is reported apart.
    const warmUp = ['/healthz', '/v1/search?country=US&q=lord%20of%20the%20rnigs', '/v1/search?country=US&q=negoitatro%20inceptoin%20tit',
      `/go/${linkTokens.encode('https://a.example/')}`, '/go/3mJr7AoUXx2Wqd'];
    for (let round = 0; round < 3; round++) for (const path of warmUp) await get(path);
  });

  after(async () => {
    for (const running of [api, ...extra]) await running?.close();
    await search?.close();
    await stores?.close();
  });

  describe('oversized search queries', () => {
    const letters = 'qwertyuiopasdfghjklzxcvbnm';
    /** One word of `n` letters that never repeat a letter twice in a row (every swap is a new variant: the worst case before the fix). */
    const word = (n: number, shift = 0): string => Array.from({ length: n }, (_, i) => letters[(i * 7 + shift) % 26]).join('');

    for (const n of [800, 4000]) {
      for (const [shape, q] of [
        ['one word', word(n)],
        ['words', Array.from({ length: n / 10 }, (_, i) => word(9, i)).join(' ')],
      ] as const) {
        it(`refuses a ${n}-character q (${shape}) with 400 invalid_parameter, quickly, /healthz responsive`, async () => {
          const searchesBefore = timings.length;
          const reply = await responsive(() => get(`/v1/search?country=US&q=${encodeURIComponent(q)}`));
          assert.equal(reply.status, 400);
          assert.equal(reply.body.code, 'invalid_parameter');
          assert.deepEqual(reply.body.details, { parameter: 'q' });
          assert.ok(reply.ms < 100, `${reply.ms.toFixed(1)} ms`);
          // Refused before the index is asked.
          assert.equal(timings.length, searchesBefore);
        });
      }
    }

    it(`refuses more than ${SEARCH_QUERY_MAX_WORDS} words even within ${SEARCH_QUERY_MAX_CHARS} characters`, async () => {
      const q = Array.from({ length: SEARCH_QUERY_MAX_WORDS + 1 }, (_, i) => letters[i % 26]).join(' ');
      const reply = await get(`/v1/search?country=US&q=${encodeURIComponent(q)}`);
      assert.equal(reply.status, 400);
      assert.equal(reply.body.code, 'invalid_parameter');
    });

    it(`answers the worst queries within the bounds in under ${SEARCH_BOUND_MS} ms of search on a catalog of the sample's size`, async () => {
      assert.ok((await search.count()) >= 4000);
      // Real title words, most frequent first, with a transposition: many fuzzy neighbours each.
      const frequency = new Map<string, number>();
      for (const doc of [...movieDocuments(), ...showDocuments()]) for (const t of tokenize(doc.title)) frequency.set(t, (frequency.get(t) ?? 0) + 1);
      const common = [...frequency].sort((a, b) => b[1] - a[1]).map(([t]) => t).filter((t) => /^[a-z]+$/.test(t));
      const typo = (w: string): string => `${w.slice(0, 2)}${w[3]}${w[2]}${w.slice(4)}`;
      /** As many words as fit the bounds. */
      const fill = (words: string[]): string => {
        const out: string[] = [];
        for (const w of words) {
          if (out.length === SEARCH_QUERY_MAX_WORDS || [...out, w].join(' ').length > SEARCH_QUERY_MAX_CHARS) break;
          out.push(w);
        }
        return out.join(' ');
      };
      const worst = [
        // Words at the typo cap (24 letters, 2 typos, every swap new): the most typo variants per character.
        fill(Array.from({ length: 9 }, (_, i) => word(24, i))),
        // Words just past the cap: exact and prefix lookups only.
        fill(Array.from({ length: 9 }, (_, i) => word(25, i))),
        fill(common.filter((w) => w.length >= 9).map(typo)),
        fill(common.filter((w) => w.length >= 9)),
        fill(common.filter((w) => w.length >= 5 && w.length < 9).map(typo)),
        // 4-letter words have one typo too, and the most fuzzy neighbours of all.
        fill(common.filter((w) => w.length === 4).map(typo)),
        `${fill(common.filter((w) => w.length >= 5).map(typo).slice(0, SEARCH_QUERY_MAX_WORDS - 1))} th`,
        fill(Array.from({ length: SEARCH_QUERY_MAX_WORDS }, () => 'the')),
        Array.from({ length: 100 }, (_, i) => letters[i % 26]).join('-'),
      ];
      const measured: Array<SearchTiming & { bestMs: number }> = [];
      for (const q of worst) {
        assert.ok(q.length <= SEARCH_QUERY_MAX_CHARS && q.split(' ').length <= SEARCH_QUERY_MAX_WORDS, q);
        const reply = await responsive(() => get(`/v1/search?country=US&limit=100&q=${encodeURIComponent(q)}`));
        assert.equal(reply.status, 200, q);
        const timing = timings.at(-1) as SearchTiming;
        assert.equal(timing.q, q);
        // The best of three runs of the very query the API asked, each a cold one (no cache, see
        // before()): another process taking the core, or a major collection of the whole suite's
        // heap, can land inside any one run and is not this search's work; work over the bound
        // shows in all three. (Process CPU time was tried: it counts every thread of the process,
        // V8's collectors and other suites' workers included, and read 98.8 ms for an 8 ms search
        // in CI; a thread's own CPU time is split by scheduler ticks, too coarse for milliseconds.)
        const bestMs = Math.min(timing.wallMs, timeSearch(search, timing.query), timeSearch(search, timing.query));
        measured.push({ ...timing, bestMs });
      }
      const slowest = measured.reduce((a, b) => (b.bestMs > a.bestMs ? b : a));
      console.log(JSON.stringify({
        hostileSearch: {
          titles: await search.count(),
          maxBestOf3Ms: Number(slowest.bestMs.toFixed(1)),
          maxFirstWallMs: Number(Math.max(...measured.map((m) => m.wallMs)).toFixed(1)),
          maxFirstCpuMs: Number(Math.max(...measured.map((m) => m.cpuMs)).toFixed(1)),
          slowest: slowest.q.slice(0, 40),
        },
      }));
      for (const m of measured) assert.ok(m.bestMs < SEARCH_BOUND_MS, `${m.bestMs.toFixed(1)} ms (best of 3) for "${m.q}"`);
    });
  });

  describe('malformed and oversized path ids', () => {
    const cases: Array<[string, string]> = [];
    const long = (n: number): string => 'x'.repeat(n);
    for (const id of ['mv1', 'xx00000001', 'MV00000001', 'mv000000011', `mv${'0'.repeat(8000)}`, long(8000), '%00', 'mv0000000%2F1', '%F0%9F%98%80']) {
      cases.push([`media id ${id.slice(0, 16)} (${id.length})`, `/v1/media/${id}`]);
      cases.push([`links of ${id.slice(0, 16)}`, `/v1/media/${id}/links?country=US`]);
      cases.push([`seasons of ${id.slice(0, 16)}`, `/v1/media/${id}/seasons`]);
    }
    for (const season of ['-1', '1.5', '1e3', '0x1', '9999999', long(8000), '%20', '١']) {
      cases.push([`season ${season.slice(0, 16)}`, `/v1/media/${IDS.harbor}/seasons/${season}/episodes`]);
    }
    for (const slug of ['Best-Of-2026', 'best--of', '-best', 'best_of', long(81), long(2100), `${'a-'.repeat(4000)}a`, '%2E%2E']) {
      cases.push([`collection slug ${slug.slice(0, 16)} (${slug.length})`, `/v1/collections/${slug}?country=US`]);
    }
    for (const version of ['2026-W54', '2026-W7', 'latest', long(8000), '..']) {
      cases.push([`release label ${version.slice(0, 16)}`, `/v1/snapshots/file/${version}/metadata.tar.gz`]);
    }

    for (const [name, path] of cases) {
      it(`answers 404 JSON for ${name}, quickly, /healthz responsive`, async () => {
        const reply = await responsive(() => get(path));
        assert.equal(reply.status, 404, `${path.slice(0, 80)} -> ${reply.status}`);
        assert.equal(reply.body?.code, 'not_found');
        assert.ok(reply.ms < 100, `${reply.ms.toFixed(1)} ms`);
      });
    }

    it('still answers the well-formed ids (the checks refuse only what cannot exist)', async () => {
      assert.equal((await get(`/v1/media/${IDS.harbor}/seasons/1/episodes`)).status, 200);
      assert.equal((await get(`/v1/media/${IDS.harbor}/seasons/01/episodes`)).status, 200);
      assert.equal((await get('/v1/collections/best-of-2026?country=US')).status, 200);
      assert.equal((await get('/v1/media/mv99999999')).status, 404);
    });
  });

  describe('forged, malformed and oversized link tokens', () => {
    const good = (): string => linkTokens.encode('https://www.netflix.com/title/1');
    const cases: Array<[string, () => string]> = [
      ['not base58 (0, O, I, l)', () => '0OIl0OIl0OIl0OIl0OIl0OIl'],
      ['too short to hold a tag', () => '3mJr7AoUXx2Wqd'],
      ['tampered', () => `${good().slice(0, -1)}${good().endsWith('2') ? '3' : '2'}`],
      ['truncated', () => good().slice(0, -3)],
      ['at the longest length, garbage', () => 'z'.repeat(MAX_LINK_TOKEN_CHARS)],
      ['one character too long', () => 'z'.repeat(MAX_LINK_TOKEN_CHARS + 1)],
      ['8,000 characters', () => 'z'.repeat(8000)],
      ['percent-encoded junk', () => '%00%2F..%2F'],
    ];
    for (const [name, token] of cases) {
      it(`answers 404 JSON for a token ${name}, quickly, /healthz responsive`, async () => {
        const reply = await responsive(() => get(`/go/${token()}`, { key: null }));
        assert.equal(reply.status, 404);
        assert.equal(reply.body?.code, 'not_found');
        assert.ok(reply.ms < 100, `${reply.ms.toFixed(1)} ms`);
      });
    }

    it('still follows a genuine token, the longest one included', async () => {
      assert.equal((await get(`/go/${good()}`, { key: null })).status, 302);
      const url = `https://p.example/${'a'.repeat(MAX_WEB_URL_BYTES - 18)}`;
      const longest = linkTokens.encode(url);
      assert.ok(longest.length <= MAX_LINK_TOKEN_CHARS);
      const reply = await responsive(() => get(`/go/${longest}`, { key: null }));
      assert.equal(reply.status, 302);
      assert.equal(reply.headers.get('location'), url);
    });
  });

  describe('connections that never finish a request (slowloris)', () => {
    it(`closes each with a 408 within a second past ${REQUEST_TIMEOUT_MS / 1000} s, answering others meanwhile, /healthz responsive`, async () => {
      const { port } = new URL(api.url);
      const started = performance.now();
      // Half send nothing, half a request line and a header a byte at a time, as a slowloris does.
      const held = Array.from({ length: 200 }, (_, i) => new Promise<{ ms: number; answer: string }>((resolve, reject) => {
        const socket = connect(Number(port), '127.0.0.1');
        let answer = '';
        let drip: NodeJS.Timeout | undefined;
        socket.setEncoding('latin1');
        socket.on('data', (d: string) => (answer += d));
        socket.on('error', reject);
        socket.on('close', () => {
          clearInterval(drip);
          resolve({ ms: performance.now() - started, answer });
        });
        if (i % 2 === 1) {
          socket.write('GET /v1/locales HTTP/1.1\r\nHost: x\r\nX-Slow: ');
          drip = setInterval(() => socket.writable && socket.write('a'), 500);
        }
      }));
      const closed = await responsive(async () => {
        // Requests on connections of their own are answered while those are held.
        for (let i = 0; i < 5; i++) assert.equal((await get('/v1/locales')).status, 200);
        return Promise.all(held);
      });
      for (const { ms, answer } of closed) {
        assert.match(answer, /^HTTP\/1\.1 408 /);
        assert.ok(ms >= REQUEST_TIMEOUT_MS - 50 && ms < REQUEST_TIMEOUT_MS + 2000, `closed after ${ms.toFixed(0)} ms`);
      }
    });
  });

  describe('/go rate limit per client address', () => {
    let limited: RunningApi;
    const perMinute = 5;

    before(async () => {
      // Behind a proxy the client address comes from X-Forwarded-For: one test process plays several clients.
      limited = await startApi({ port: 0, ...deps({ rateLimit: { perMinute: 100_000, goPerMinute: perMinute }, trustedProxies: 1 }) });
      extra.push(limited);
    });

    const from = (ip: string) => ({ key: null, base: limited, headers: { 'x-forwarded-for': ip } });

    it(`answers 429 rate_limited with Retry-After past ${perMinute} redirects a minute from one address, /healthz responsive`, async () => {
      const token = linkTokens.encode('https://www.netflix.com/title/1');
      const replies = await responsive(async () => {
        const out: Reply[] = [];
        for (let i = 0; i < perMinute + 3; i++) out.push(await get(i % 2 ? `/go/${token}` : '/go/3mJr7AoUXx2Wqd', from('203.0.113.7')));
        return out;
      });
      assert.deepEqual(replies.map((r) => r.status), [404, 302, 404, 302, 404, 429, 429, 429]);
      const refused = replies[perMinute] as Reply;
      assert.equal(refused.body.code, 'rate_limited');
      const retryAfter = Number(refused.headers.get('retry-after'));
      assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${refused.headers.get('retry-after')}`);
    });

    it('counts each address on its own, apart from the /v1 quota', async () => {
      assert.equal((await get('/go/3mJr7AoUXx2Wqd', from('203.0.113.8'))).status, 404);
      assert.equal((await get('/go/3mJr7AoUXx2Wqd', from('203.0.113.7'))).status, 429);
      // The same address with a key still reaches /v1, and an API key does not lift the /go limit.
      assert.equal((await get('/v1/locales', { base: limited, headers: { 'x-forwarded-for': '203.0.113.7' } })).status, 200);
      assert.equal((await get('/go/3mJr7AoUXx2Wqd', { base: limited, headers: { 'x-forwarded-for': '203.0.113.7' } })).status, 429);
    });

    it('counts a client that writes its own X-Forwarded-For under the address the proxy appended', async () => {
      // 203.0.113.7 is limited (above). Its forged entries come first; the proxy appends the real one last.
      for (const forged of ['198.51.100.200', '198.51.100.201, 198.51.100.202', 'unknown']) {
        assert.equal((await get('/go/3mJr7AoUXx2Wqd', from(`${forged}, 203.0.113.7`))).status, 429, forged);
      }
      // And one the proxy saw as 203.0.113.9 is not counted as the limited one it names.
      assert.equal((await get('/go/3mJr7AoUXx2Wqd', from('203.0.113.7, 203.0.113.9'))).status, 404);
    });

    it('ignores X-Forwarded-For without trusted proxies (the default): every client behind one socket address', async () => {
      const direct = await startApi({ port: 0, ...deps({ rateLimit: { perMinute: 100_000, goPerMinute: 2 } }) });
      extra.push(direct);
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) statuses.push((await get('/go/3mJr7AoUXx2Wqd', { key: null, base: direct, headers: { 'x-forwarded-for': `198.51.100.${i}` } })).status);
      assert.deepEqual(statuses, [404, 404, 429]);
    });

    it('keeps /healthz responsive under a flood of 300 longest garbage tokens, 3 at a time, from 50 addresses', async () => {
      const statuses = await responsive(async () => {
        const out: number[] = [];
        for (let batch = 0; batch < 100; batch++) {
          const replies = await Promise.all(Array.from({ length: 3 }, (_, i) => get(`/go/${'z'.repeat(MAX_LINK_TOKEN_CHARS)}`, from(`198.51.100.${(batch * 3 + i) % 50}`))));
          out.push(...replies.map((r) => r.status));
        }
        return out;
      });
      assert.ok(statuses.every((s) => s === 404 || s === 429), [...new Set(statuses)].join(','));
      assert.equal(statuses.filter((s) => s === 404).length, 50 * perMinute);
    });
  });
});
