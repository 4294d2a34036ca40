/**
 * The served OpenAPI document and the API agree: every value a parameter's schema allows is
 * accepted, every value it forbids is refused with the JSON error of docs/api.md (400 for a
 * query parameter, 404 for a path parameter not of its form), and any method other than GET
 * and HEAD on a path the API answers is 405 with `Allow`. The cases are derived from the
 * document itself, so a constraint added to a parameter definition is tested here at once.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FeaturedItemRef } from '../../contracts/domain.ts';
import { MEDIA_ID_PATTERN, streams } from '../../contracts/ids.ts';
import type { Clock, EventStore, ReadStore, SearchIndex } from '../../contracts/ports.ts';
import { lmdbEventStore } from '../../infra/lmdb/eventStore.ts';
import { lmdbApiKeyStore } from '../../infra/lmdb/apiKeyStore.ts';
import { lmdbReadStore } from '../../infra/lmdb/readStore.ts';
import { inProcessSearchIndex } from '../../infra/search/inProcessSearch.ts';
import { defaultCollectionName } from '../../projections/collections.ts';
import { featuredProjection } from '../../projections/featured.ts';
import { catchUp } from '../../projections/runner.ts';
import { FEATURED_MAX, featuredRefs } from '../../services/api/handlers/charts.ts';
import { createApiKey } from '../../services/api/keys.ts';
import { startApi, type RunningApi } from '../../services/api/server.ts';
import type { LinkTokenCodec } from '../../services/api/types.ts';
import { IDS, seedCatalog } from './api.fixture.ts';
import { testLinkTokens } from './api.linkTokens.ts';
import { responseValidator, type ResponseValidator } from './api.openapi.ts';
import { assertResponsive, probeHealthzDuring } from './hostile.support.ts';

const clock: Clock = { now: () => new Date('2026-11-21T08:00:00Z') };
type Json = Record<string, any>;

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
}

/** node:http, not fetch: fetch refuses to send TRACE. */
function raw(base: string, method: string, path: string, headers: Record<string, string> = {}): Promise<Reply> {
  return new Promise((ok, fail) => {
    const req = request(`${base}${path}`, { method, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (text += d));
      res.on('end', () => {
        const json = String(res.headers['content-type'] ?? '').startsWith('application/json') && text !== '';
        ok({ status: res.statusCode ?? 0, headers: res.headers, body: json ? JSON.parse(text) : text });
      });
    });
    req.on('error', fail);
    req.end();
  });
}

/** A valid request of each operation; the cases vary one parameter at a time from it. */
function baseRequests(token: string): Record<string, { path?: Record<string, string>; query?: Record<string, string> }> {
  return {
    search: { query: { q: 'land', country: 'US' } },
    getRankings: { query: { country: 'US' } },
    getTrending: { query: { country: 'US' } },
    getFeatured: { query: { country: 'US' } },
    getMedia: { path: { id: IDS.landGirls } },
    getMediaLinks: { path: { id: IDS.landGirls }, query: { country: 'US' } },
    getChanges: { query: { country: 'US' } },
    getMediaHistory: { path: { id: IDS.landGirls }, query: { country: 'US' } },
    getNew: { query: { country: 'US' } },
    getLeaving: { query: { country: 'US' } },
    getUpcoming: { query: { country: 'US' } },
    getSeasons: { path: { id: IDS.harbor } },
    getEpisodes: { path: { id: IDS.harbor, season: '1' } },
    listCollections: { query: { country: 'US' } },
    getCollection: { path: { slug: 'us-westerns' }, query: { country: 'US' } },
    listProviders: { query: { country: 'US' } },
    listLocales: {},
    getOpenApi: {},
    listSnapshots: {},
    getSnapshotSchemas: {},
    downloadSnapshotFile: { query: { path: 'metadata.tar.gz' } },
    getSnapshotFile: { path: { version: '2026-W47', path: 'metadata.tar.gz' } },
    followLink: { path: { link_token: token } },
    healthz: {},
    readyz: {},
    metrics: {},
  };
}

/** Values worth trying against a pattern; those the pattern rejects must be refused. */
const PATTERN_PROBES = [
  ' ', 'x', 'ZZZ', '0', '-', 'a-', '-a', 'a--b', 'A', 'mv1', 'MV00000001', 'mv000000001', 'tv0000000x', 'xx00000001',
  '2026-W00', '2026-W54', '2026-w47', '26-W47', 'l0O', '../etc', '%00', 'e\u0301', '\u212An', 'x'.repeat(5000),
];

interface Cases {
  accept: string[];
  refuse: string[];
}

/** What the schema of one parameter says must be accepted and refused. */
function casesOf(param: Json): Cases {
  const schema = param.schema as Json;
  const accept: string[] = [];
  const refuse: string[] = [];
  if (param.example !== undefined) accept.push(String(param.example));
  if (schema.type === 'integer') {
    accept.push(String(schema.minimum));
    refuse.push('-1', '1.5', 'ten', '0x10', ' 1');
    if (schema.maximum !== undefined) {
      accept.push(String(schema.maximum));
      refuse.push(String(BigInt(schema.maximum) + 1n));
    } else {
      // No maximum: any larger value is accepted (and clamped, says the description).
      accept.push(`1${'0'.repeat(30)}`);
    }
  }
  if (Array.isArray(schema.enum)) {
    accept.push(...schema.enum);
    refuse.push(`${schema.enum[0]}x`, ` ${schema.enum[0]}`);
  }
  if (typeof schema.pattern === 'string') {
    const re = new RegExp(schema.pattern);
    for (const value of accept) assert.match(value, re, `${param.name}: ${value} does not match its own pattern`);
    refuse.push(...PATTERN_PROBES.filter((v) => !re.test(v)));
  }
  if (schema.format === 'date') {
    accept.push('2024-02-29', '0001-01-01');
    refuse.push('2026-02-29', '2026-13-01', '2026-1-1', '20260101');
  }
  if (schema.maxLength !== undefined && schema.pattern === undefined) {
    accept.push('a'.repeat(schema.maxLength));
    refuse.push('a'.repeat(schema.maxLength + 1));
  }
  if (schema.type === 'string' && schema.enum === undefined && schema.pattern === undefined && schema.maxLength === undefined) {
    accept.push('anything at all', 'ü 日本');
  }
  // An empty value: refused unless the schema allows it (free text, where it counts as absent).
  const allowsEmpty = schema.type === 'string' && !schema.minLength && schema.pattern === undefined && schema.enum === undefined;
  if (param.in === 'query') (allowsEmpty ? accept : refuse).push('');
  return { accept, refuse };
}

describe('hostile requests: the OpenAPI document declares every constraint the API enforces', function () {
  this.timeout(120_000);
  let dir: string;
  let closeKeys: (() => Promise<void>) | undefined;
  let eventStore: EventStore;
  let readStore: ReadStore;
  let search: SearchIndex;
  let linkTokens: LinkTokenCodec;
  let api: RunningApi;
  let key: string;
  let doc: Json;
  let validator: ResponseValidator;

  function url(template: string, path: Record<string, string>, query: Record<string, string>): string {
    const p = template.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(path[name] ?? ''));
    const q = new URLSearchParams(query).toString();
    return q ? `${p}?${q}` : p;
  }

  async function get(target: string): Promise<Reply> {
    const reply = await raw(api.url, 'GET', target, { authorization: `Bearer ${key}` });
    if (!target.startsWith('/metrics')) {
      const contentType = String(reply.headers['content-type'] ?? '') || null;
      validator.check('GET', target, reply.status, contentType, typeof reply.body === 'string' ? undefined : reply.body);
    }
    return reply;
  }

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'marquee-openapi-e2e-'));
    eventStore = lmdbEventStore({ dataDir: dir, clock });
    readStore = lmdbReadStore({ dataDir: dir });
    search = inProcessSearchIndex();
    linkTokens = await testLinkTokens();
    await seedCatalog(eventStore, readStore, search);
    // Featured selections as long as the crawler's (10-20 each): 15 daily and 18 weekly in GB.
    const cycle = [IDS.landGirls, IDS.rapidFire, IDS.harbor];
    const items = (n: number): FeaturedItemRef[] => Array.from({ length: n }, (_, i) => ({ mediaId: cycle[i % 3]!, position: i + 1 }));
    await eventStore.append(streams.featured('GB'), [
      { type: 'FeaturedSelectionChanged', data: { country: 'GB', period: 'daily', items: items(15) }, metadata: { observedAt: '2026-11-20T06:00:00Z', producer: 'test' } },
      { type: 'FeaturedSelectionChanged', data: { country: 'GB', period: 'weekly', items: items(18) }, metadata: { observedAt: '2026-11-20T06:00:00Z', producer: 'test' } },
    ], 'no_stream');
    await catchUp({ projection: featuredProjection, eventStore, readStore, collection: defaultCollectionName(featuredProjection) });
    const apiKeys = lmdbApiKeyStore({ dataDir: dir });
    closeKeys = () => apiKeys.close();
    key = (await createApiKey(apiKeys, 'openapi', clock)).key;
    api = await startApi({ port: 0, readStore, apiKeys, search, linkTokens, clock, eventStore, rateLimit: { perMinute: 1_000_000 } });
    doc = (await (await fetch(`${api.url}/v1/openapi`, { headers: { authorization: `Bearer ${key}` } })).json()) as Json;
    validator = responseValidator(doc);
  });

  after(async () => {
    await api?.close();
    await search?.close();
    await closeKeys?.();
    await readStore?.close();
    await eventStore?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  describe('what the document declares', () => {
    const param = (path: string, name: string): Json =>
      (doc.paths[path].get.parameters as Json[]).find((p) => p.name === name) ?? assert.fail(`${path} has no ${name}`);

    it('declares the form of countries, media ids, slugs, dates and tokens', () => {
      assert.equal(param('/v1/rankings', 'country').schema.pattern, '^[A-Za-z]{2}$');
      assert.equal(param('/v1/media/{id}', 'id').schema.pattern, MEDIA_ID_PATTERN.source);
      assert.equal(param('/v1/collections/{slug}', 'slug').schema.pattern, '^[a-z0-9]+(?:-[a-z0-9]+)*$');
      assert.deepEqual(param('/v1/trending', 'date').schema, { type: 'string', format: 'date', pattern: '^\\d{4}-\\d{2}-\\d{2}$' });
      assert.equal(param('/go/{link_token}', 'link_token').schema.pattern, '^[1-9A-HJ-NP-Za-km-z]+$');
      assert.match('De', new RegExp(param('/v1/search', 'lang').schema.pattern));
    });

    it('declares limit as clamped (a minimum, no maximum) and offset as bounded on both sides', () => {
      const limit = param('/v1/rankings', 'limit');
      assert.deepEqual(limit.schema, { type: 'integer', minimum: 0, default: 50 });
      assert.match(limit.description, /clamped to 200/);
      assert.deepEqual(param('/v1/rankings', 'offset').schema, { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0 });
    });

    it('declares enums, and an empty value only where free text allows it', () => {
      assert.deepEqual(param('/v1/featured', 'period').schema, { type: 'string', enum: ['daily', 'weekly'] });
      assert.deepEqual(param('/v1/search', 'q').schema.minLength, 1);
      assert.equal(param('/v1/search', 'genre').schema.minLength, undefined);
    });

    it('declares 405 with Allow on every path, and Retry-After on 429 and 503', () => {
      for (const [path, item] of Object.entries(doc.paths as Json)) {
        const responses = item.get.responses as Json;
        assert.ok(responses['405']?.headers?.Allow, `${path}: 405 with Allow`);
        if (responses['503']) assert.ok(responses['503'].headers?.['Retry-After'], `${path}: 503 with Retry-After`);
        if (responses['429']) assert.ok(responses['429'].headers?.['Retry-After'], `${path}: 429 with Retry-After`);
        if (item.get.parameters?.some((p: Json) => p.in === 'query')) assert.ok(responses['400'], `${path}: 400`);
        if (item.get.parameters?.some((p: Json) => p.in === 'path')) assert.ok(responses['404'], `${path}: 404`);
      }
    });
  });

  describe('every parameter, at the edges its schema declares', () => {
    it('has a valid base request for every documented operation', () => {
      const bases = baseRequests('x');
      for (const item of Object.values(doc.paths as Json)) assert.ok(bases[item.get.operationId], item.get.operationId);
    });

    it('accepts what each schema allows and refuses what it forbids, with the documented error', async () => {
      const token = linkTokens.encode('https://www.netflix.com/title/1');
      const bases = baseRequests(token);
      const problems: string[] = [];
      let tried = 0;
      const attack = (async () => {
        for (const [template, item] of Object.entries(doc.paths as Json)) {
          const base = bases[item.get.operationId]!;
          for (const param of (item.get.parameters ?? []) as Json[]) {
            const { accept, refuse } = casesOf(param);
            const at = (value: string) => {
              const path = { ...base.path, ...(param.in === 'path' ? { [param.name]: value } : {}) };
              const query = { ...base.query, ...(param.in === 'query' ? { [param.name]: value } : {}) };
              return url(template, path, query);
            };
            for (const value of accept) {
              tried++;
              const r = await get(at(value));
              if (r.status === 500 || r.body?.details?.parameter === param.name || r.status === 400) {
                problems.push(`${at(value).slice(0, 120)} refused: ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
              }
            }
            for (const value of refuse) {
              tried++;
              const r = await get(at(value));
              const expected = param.in === 'path' ? 404 : 400;
              const codes = param.in === 'path' ? ['not_found'] : ['invalid_parameter', 'missing_parameter'];
              if (r.status !== expected || !codes.includes(r.body?.code) || r.body?.details?.parameter !== param.name) {
                problems.push(`${at(value).slice(0, 120)} accepted or misrefused: ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
              }
            }
          }
        }
      })();
      const probe = await probeHealthzDuring(api.url, attack);
      assert.deepEqual(problems, []);
      assert.ok(tried > 300, `only ${tried} cases`);
      assertResponsive(probe);
    });

    it('clamps a limit of any size, pages past the end with the largest offset, refuses the next', async () => {
      const huge = await get(`/v1/rankings?country=US&limit=${'9'.repeat(400)}`);
      assert.equal(huge.status, 200);
      assert.equal(huge.body.limit, 200);
      const last = await get(`/v1/rankings?country=US&offset=${Number.MAX_SAFE_INTEGER}`);
      assert.equal(last.status, 200);
      assert.deepEqual([last.body.offset, last.body.results], [Number.MAX_SAFE_INTEGER, []]);
      const past = await get(`/v1/rankings?country=US&offset=${BigInt(Number.MAX_SAFE_INTEGER) + 1n}`);
      assert.deepEqual([past.status, past.body.details], [400, { parameter: 'offset' }]);
    });

    it('refuses an empty period, limit or kind, and reads empty free text as absent', async () => {
      for (const target of ['/v1/featured?country=US&period=', '/v1/rankings?country=US&limit=', '/v1/search?q=x&country=US&kind=']) {
        const r = await get(target);
        assert.deepEqual([r.status, r.body.code], [400, 'invalid_parameter'], target);
      }
      const r = await get('/v1/search?q=land&country=US&genre=&provider=');
      assert.equal(r.status, 200);
      assert.ok(r.body.results.length > 0);
    });

    it('accepts a lang in any case but not a look-alike that lower-cases to a locale', async () => {
      assert.equal((await get('/v1/search?q=land&country=US&lang=EN')).body.lang, 'en');
      const kelvin = await get('/v1/search?q=land&country=US&lang=%E2%84%AAn');
      assert.deepEqual([kelvin.status, kelvin.body.details], [400, { parameter: 'lang' }]);
    });

    it('answers a malformed media id, slug, season or token with 404 before looking anything up', async () => {
      for (const target of ['/v1/media/mv1', `/v1/media/${'mv'.repeat(3000)}/links?country=US`, '/v1/collections/US%20Westerns?country=US',
        `/v1/media/${IDS.harbor}/seasons/one/episodes`, '/go/0OIl']) {
        const r = await get(target);
        assert.deepEqual([r.status, r.body.code], [404, 'not_found'], target);
      }
    });
  });

  describe('methods other than GET and HEAD', () => {
    it('answers 405 JSON with Allow on the probes, metrics and /go, as under /v1', async () => {
      const attack = (async () => {
        const replies: Array<[string, string, Reply]> = [];
        for (const path of ['/healthz', '/readyz', '/metrics', '/go/abc', '/v1/locales']) {
          for (const method of ['TRACE', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']) replies.push([method, path, await raw(api.url, method, path)]);
        }
        return replies;
      })();
      const probe = await probeHealthzDuring(api.url, attack);
      for (const [method, path, r] of probe.outcome) {
        assert.equal(r.status, 405, `${method} ${path}`);
        assert.equal(r.headers.allow, 'GET, HEAD', `${method} ${path}`);
        assert.equal(r.body.code, 'method_not_allowed', `${method} ${path}`);
      }
      assertResponsive(probe);
    });

    it('still answers HEAD on the probes, and 404 (not 405) on a path nothing answers', async () => {
      assert.equal((await raw(api.url, 'HEAD', '/healthz')).status, 200);
      assert.equal((await raw(api.url, 'HEAD', '/metrics')).status, 200);
      const unknown = await raw(api.url, 'TRACE', '/nothing-here');
      assert.deepEqual([unknown.status, unknown.body.code], [404, 'not_found']);
    });
  });

  describe('GET /v1/featured size (about 10-20 items in one answer)', () => {
    it(`holds at most ${FEATURED_MAX} items: the first half of each selection, daily first`, async () => {
      const both = await get('/v1/featured?country=GB');
      assert.equal(both.body.results.length, 20);
      assert.deepEqual(both.body.results.map((m: any) => `${m.period}:${m.position}`), [
        ...Array.from({ length: 10 }, (_, i) => `daily:${i + 1}`), ...Array.from({ length: 10 }, (_, i) => `weekly:${i + 1}`),
      ]);
      assert.equal((await get('/v1/featured?country=GB&period=daily')).body.results.length, 15);
      assert.equal((await get('/v1/featured?country=GB&period=weekly')).body.results.length, 18);
      assert.equal((await get('/v1/featured?country=US')).body.results.length, 3);
    });

    it('gives the room of a short selection to the other', () => {
      const refs = (n: number) => Array.from({ length: n }, (_, i) => ({ mediaId: `mv${String(i).padStart(8, '0')}`, position: i + 1 }));
      const count = (daily: number, weekly: number, period?: 'daily' | 'weekly') => {
        const picked = featuredRefs({ daily: refs(daily), weekly: refs(weekly) }, period);
        return [picked.filter((p) => p.period === 'daily').length, picked.filter((p) => p.period === 'weekly').length];
      };
      assert.deepEqual(count(20, 20), [10, 10]);
      assert.deepEqual(count(4, 20), [4, 16]);
      assert.deepEqual(count(20, 3), [17, 3]);
      assert.deepEqual(count(30, 30, 'daily'), [20, 0]);
      assert.deepEqual(count(0, 0), [0, 0]);
    });
  });
});
