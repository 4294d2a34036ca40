import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SwaggerParser from '@apidevtools/swagger-parser';
import { AppError } from '../../contracts/errors.ts';
import type { ApiKeyStore, Clock, EventStore, ReadStore, SearchIndex } from '../../contracts/ports.ts';
import { lmdbEventStore } from '../../infra/lmdb/eventStore.ts';
import { lmdbApiKeyStore } from '../../infra/lmdb/apiKeyStore.ts';
import { lmdbReadStore } from '../../infra/lmdb/readStore.ts';
import { inProcessSearchIndex } from '../../infra/search/inProcessSearch.ts';
import { createApiKey, revokeApiKey } from '../../services/api/keys.ts';
import { startApi, type RunningApi } from '../../services/api/server.ts';
import type { ApiDeps, LinkTokenCodec } from '../../services/api/types.ts';
import { IDS, seedCatalog } from './api.fixture.ts';
import { responseValidator, type ResponseValidator } from './api.openapi.ts';
import { testLinkTokens } from './api.linkTokens.ts';

const clock: Clock = { now: () => new Date('2026-11-21T08:00:00Z') };

interface Reply {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

describe('the /v1 API over HTTP', function () {
  this.timeout(60_000);
  let dir: string;
  let eventStore: EventStore;
  let readStore: ReadStore;
  let apiKeys: ApiKeyStore;
  let search: SearchIndex;
  let linkTokens: LinkTokenCodec;
  let api: RunningApi;
  let key: string;
  let validator: ResponseValidator;
  const extra: RunningApi[] = [];

  function deps(overrides: Partial<ApiDeps> = {}): ApiDeps {
    // The suite makes far more than 60 calls with one key; the limit has its own tests below.
    return { readStore, apiKeys, search, linkTokens, clock, eventStore, rateLimit: { perMinute: 100_000 }, ...overrides };
  }

  async function start(overrides: Partial<ApiDeps> = {}): Promise<RunningApi> {
    const running = await startApi({ port: 0, ...deps(overrides) });
    extra.push(running);
    return running;
  }

  /** GET (or another method) and check the reply against the served OpenAPI document. */
  async function call(
    path: string,
    options: { key?: string | null; headers?: Record<string, string>; method?: string; base?: RunningApi; redirect?: 'manual' | 'follow' } = {},
  ): Promise<Reply> {
    const headers: Record<string, string> = { ...options.headers };
    const k = options.key === undefined ? key : options.key;
    if (k !== null) headers.authorization = `Bearer ${k}`;
    const method = options.method ?? 'GET';
    const res = await fetch(`${(options.base ?? api).url}${path}`, { method, headers, redirect: options.redirect ?? 'manual' });
    const text = await res.text();
    const contentType = res.headers.get('content-type');
    const body = contentType?.startsWith('application/json') && text !== '' ? JSON.parse(text) : undefined;
    if (method === 'GET' && !path.startsWith('/metrics')) validator.check('GET', path, res.status, contentType, body);
    return { status: res.status, headers: res.headers, body, text };
  }

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'marquee-api-e2e-'));
    eventStore = lmdbEventStore({ dataDir: dir, clock });
    readStore = lmdbReadStore({ dataDir: dir });
    apiKeys = lmdbApiKeyStore({ dataDir: dir });
    search = inProcessSearchIndex();
    linkTokens = await testLinkTokens();
    await seedCatalog(eventStore, readStore, search);
    key = (await createApiKey(apiKeys, 'e2e', clock)).key;
    api = await startApi({ port: 0, ...deps() });
    const served = await fetch(`${api.url}/v1/openapi`, { headers: { authorization: `Bearer ${key}` } });
    validator = responseValidator((await served.json()) as Record<string, unknown>);
  });

  after(async () => {
    for (const running of [api, ...extra]) await running?.close();
    await search?.close();
    await readStore?.close();
    await apiKeys?.close();
    await eventStore?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  describe('the OpenAPI document', () => {
    it('is a valid OpenAPI 3.0.3 document describing every endpoint', async () => {
      const { body } = await call('/v1/openapi');
      assert.equal(body.openapi, '3.0.3');
      await SwaggerParser.validate(structuredClone(body));
      for (const path of ['/v1/search', '/v1/rankings', '/v1/trending', '/v1/featured', '/v1/media/{id}', '/v1/media/{id}/links',
        '/v1/media/{id}/seasons', '/v1/media/{id}/seasons/{season}/episodes', '/v1/collections', '/v1/collections/{slug}',
        '/v1/providers', '/v1/locales', '/v1/openapi', '/v1/snapshots', '/v1/schemas', '/v1/snapshots/download', '/go/{link_token}']) {
        assert.ok(body.paths[path]?.get, `${path} is documented`);
      }
      assert.deepEqual(Object.keys(body.components.securitySchemes).sort(), ['apiKeyHeader', 'bearerAuth']);
    });
  });

  describe('authentication', () => {
    it('refuses a request without a key with 401, WWW-Authenticate and a sentence naming the header', async () => {
      const r = await call('/v1/locales', { key: null });
      assert.equal(r.status, 401);
      assert.equal(r.headers.get('www-authenticate'), 'Bearer');
      assert.equal(r.body.code, 'unauthorized');
      assert.match(r.body.error, /Authorization: Bearer <key>/);
    });

    it('refuses an unknown and a malformed key with 401', async () => {
      assert.equal((await call('/v1/locales', { key: `mk_live_${'0'.repeat(32)}` })).status, 401);
      const malformed = await call('/v1/locales', { key: 'not-a-key' });
      assert.equal(malformed.status, 401);
      assert.equal(malformed.body.code, 'unauthorized');
    });

    it('accepts the key in X-API-Key', async () => {
      const r = await call('/v1/locales', { key: null, headers: { 'x-api-key': key } });
      assert.equal(r.status, 200);
    });

    it('records when a key was last used, in the key store', async () => {
      const { key: fresh, doc } = await createApiKey(apiKeys, 'fresh', clock);
      assert.equal((await apiKeys.findByHash(doc.hash))?.lastUsedAt, null);
      assert.equal((await call('/v1/locales', { key: fresh })).status, 200);
      const expected = clock.now().toISOString().replace(/\.\d{3}Z$/, 'Z');
      const deadline = Date.now() + 2000;
      while ((await apiKeys.findByHash(doc.hash))?.lastUsedAt !== expected && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      assert.equal((await apiKeys.findByHash(doc.hash))?.lastUsedAt, expected);
    });

    it('refuses a revoked key within a second of its revocation', async () => {
      const { key: doomed } = await createApiKey(apiKeys, 'doomed', clock);
      assert.equal((await call('/v1/locales', { key: doomed })).status, 200);
      await revokeApiKey(apiKeys, doomed, clock);
      const deadline = Date.now() + 1500;
      let status = 200;
      while (status === 200 && Date.now() < deadline) status = (await call('/v1/locales', { key: doomed })).status;
      assert.equal(status, 401);
    });

    it('lets GET /v1/snapshots answer without a key, and nothing else under /v1', async () => {
      const listing = await call('/v1/snapshots', { key: null });
      assert.equal(listing.status, 503);
      assert.deepEqual(listing.body, { error: 'The service is temporarily unavailable; try again shortly.', code: 'unavailable' });
      assert.equal((await call('/v1/schemas', { key: null })).status, 401);
      assert.equal((await call('/v1/snapshots/download?path=metadata.tar.gz', { key: null })).status, 401);
    });
  });

  describe('snapshot placeholders', () => {
    it('answers 503 for the listing, the schemas and a download until releases exist', async () => {
      assert.equal((await call('/v1/snapshots')).status, 503);
      assert.equal((await call('/v1/schemas')).status, 503);
      const download = await call('/v1/snapshots/download?path=metadata.tar.gz');
      assert.equal(download.status, 503);
      assert.equal(download.body.code, 'unavailable');
    });

    it('answers 503 for a release file with a key, and 401 without', async () => {
      const path = '/v1/snapshots/file/2026-W47/country=US/links.parquet';
      assert.equal((await call(path)).status, 503);
      assert.equal((await call(path, { key: null })).status, 401);
    });

    it('answers 400 for a download without path', async () => {
      const r = await call('/v1/snapshots/download');
      assert.equal(r.status, 400);
      assert.deepEqual(r.body, { error: "Parameter 'path' is required.", code: 'missing_parameter', details: { parameter: 'path' } });
    });
  });

  describe('GET /v1/search', () => {
    it('finds a title with a typo and answers the envelope with query and processing time', async () => {
      const r = await call('/v1/search?q=land%20grils&country=us');
      assert.equal(r.status, 200);
      assert.equal(r.body.query, 'land grils');
      assert.equal(r.body.country, 'US');
      assert.equal(r.body.lang, 'en');
      assert.equal(r.body.limit, 20);
      assert.equal(r.body.offset, 0);
      assert.equal(typeof r.body.processing_time_ms, 'number');
      assert.equal(r.body.results[0].id, IDS.landGirls);
      assert.deepEqual(r.body.results[0].genres, ['drama']);
      assert.equal(r.body.results[0].kind, 'movie');
    });

    it("defaults lang to the country's primary language", async () => {
      const r = await call('/v1/search?q=landmadchen&country=DE');
      assert.equal(r.body.lang, 'de');
      assert.equal(r.body.results[0]?.id, IDS.landGirls);
    });

    it('filters by provider short id, kind and genre', async () => {
      const hulu = await call('/v1/search?q=harbor%20land%20rapid&country=US&provider=hlu');
      assert.deepEqual(hulu.body.results.map((m: { id: string }) => m.id), [IDS.landGirls]);
      const netflix = await call('/v1/search?q=harbor%20land%20rapid&country=US&provider=nfx');
      assert.deepEqual(netflix.body.results.map((m: { id: string }) => m.id), [IDS.harbor]);
      const unknown = await call('/v1/search?q=harbor&country=US&provider=zzz');
      assert.equal(unknown.body.total, 0);
      const tv = await call('/v1/search?q=harbor%20land%20rapid&country=US&kind=tv_show');
      assert.deepEqual(tv.body.results.map((m: { id: string }) => m.id), [IDS.harbor]);
      const action = await call('/v1/search?q=harbor%20land%20rapid&country=US&genre=action');
      assert.deepEqual(action.body.results.map((m: { id: string }) => m.id), [IDS.rapidFire]);
    });

    it('clamps limit to 100, and answers only total for limit=0', async () => {
      assert.equal((await call('/v1/search?q=land&country=US&limit=1000')).body.limit, 100);
      const zero = await call('/v1/search?q=land&country=US&limit=0');
      assert.equal(zero.status, 200);
      assert.deepEqual(zero.body.results, []);
      assert.equal(zero.body.limit, 0);
      assert.ok(zero.body.total >= 1);
    });

    it('refuses a missing q, a bad lang and a bad kind with 400', async () => {
      const missing = await call('/v1/search?country=US');
      assert.deepEqual(missing.body, { error: "Parameter 'q' is required.", code: 'missing_parameter', details: { parameter: 'q' } });
      assert.equal((await call('/v1/search?q=x')).body.details.parameter, 'country');
      const lang = await call('/v1/search?q=x&country=US&lang=xx');
      assert.equal(lang.status, 400);
      assert.equal(lang.body.code, 'invalid_parameter');
      assert.equal(lang.body.details.parameter, 'lang');
      assert.equal((await call('/v1/search?q=x&country=US&kind=film')).body.details.parameter, 'kind');
    });
  });

  describe('GET /v1/rankings', () => {
    it('answers the latest ranking of a country with position, score and points', async () => {
      const r = await call('/v1/rankings?country=us');
      assert.equal(r.status, 200);
      assert.equal(r.body.country, 'US');
      assert.equal(r.body.total, 3);
      assert.equal(r.body.limit, 50);
      assert.deepEqual(r.body.results.map((m: any) => [m.id, m.position, m.score, m.points]), [
        [IDS.landGirls, 1, 0.95, 950], [IDS.harbor, 2, 0.7, 700], [IDS.rapidFire, 3, 0.6, 600],
      ]);
      // Rapid Fire has no popularity figure: the list item still carries a number.
      assert.equal(r.body.results[2].popularity, 0);
    });

    it('filters by kind and pages with limit and offset', async () => {
      const movies = await call('/v1/rankings?country=US&kind=movie');
      assert.deepEqual(movies.body.results.map((m: any) => m.id), [IDS.landGirls, IDS.rapidFire]);
      assert.equal(movies.body.total, 2);
      const page = await call('/v1/rankings?country=US&limit=1&offset=1');
      assert.deepEqual(page.body.results.map((m: any) => m.id), [IDS.harbor]);
      assert.equal((await call('/v1/rankings?country=US&limit=1000')).body.limit, 200);
    });

    it('answers 200 and nothing for a well-formed country it does not cover', async () => {
      const r = await call('/v1/rankings?country=FR');
      assert.equal(r.status, 200);
      assert.equal(r.body.total, 0);
      assert.deepEqual(r.body.results, []);
    });

    it('refuses a malformed country, limit or offset with 400 naming the parameter', async () => {
      for (const [query, parameter, code] of [
        ['', 'country', 'missing_parameter'], ['country=USA', 'country', 'invalid_parameter'], ['country=U1', 'country', 'invalid_parameter'],
        ['country=US&limit=-1', 'limit', 'invalid_parameter'], ['country=US&limit=2.5', 'limit', 'invalid_parameter'],
        ['country=US&offset=abc', 'offset', 'invalid_parameter'],
      ] as const) {
        const r = await call(`/v1/rankings?${query}`);
        assert.equal(r.status, 400, query);
        assert.equal(r.body.code, code, query);
        assert.equal(r.body.details.parameter, parameter, query);
      }
    });
  });

  describe('GET /v1/trending', () => {
    it('answers the latest day: climbers first, then new entries, then fallers', async () => {
      const r = await call('/v1/trending?country=US');
      assert.equal(r.status, 200);
      assert.equal(r.body.date, '2026-11-20');
      assert.equal(r.body.country, 'US');
      assert.deepEqual(r.body.results.map((m: any) => [m.id, m.position, m.previous_position, m.change, m.date]), [
        [IDS.landGirls, 1, 3, 2, '2026-11-20'],
        [IDS.harbor, 2, null, null, '2026-11-20'],
        [IDS.rapidFire, 3, 1, -2, '2026-11-20'],
      ]);
    });

    it('answers a given day and filters by kind', async () => {
      const day = await call('/v1/trending?country=US&date=2026-11-19');
      assert.deepEqual(day.body.results.map((m: any) => m.id), [IDS.rapidFire]);
      const tv = await call('/v1/trending?country=US&kind=tv_show');
      assert.deepEqual(tv.body.results.map((m: any) => m.id), [IDS.harbor]);
      const empty = await call('/v1/trending?country=US&date=2020-01-01');
      assert.equal(empty.body.total, 0);
      assert.equal(empty.body.date, '2020-01-01');
    });

    it('refuses a malformed date with 400', async () => {
      const r = await call('/v1/trending?country=US&date=2026-13-01');
      assert.equal(r.status, 400);
      assert.equal(r.body.details.parameter, 'date');
    });
  });

  describe('GET /v1/featured', () => {
    it('answers the daily then the weekly selection with position and period', async () => {
      const r = await call('/v1/featured?country=US');
      assert.equal(r.body.country, 'US');
      assert.equal(r.body.updated_at, '2026-11-20T07:00:00Z');
      assert.deepEqual(r.body.results.map((m: any) => [m.id, m.position, m.period]), [
        [IDS.landGirls, 1, 'daily'], [IDS.harbor, 2, 'daily'], [IDS.rapidFire, 1, 'weekly'],
      ]);
      const weekly = await call('/v1/featured?country=US&period=weekly');
      assert.deepEqual(weekly.body.results.map((m: any) => m.id), [IDS.rapidFire]);
      const none = await call('/v1/featured?country=FR');
      assert.deepEqual(none.body, { country: 'FR', updated_at: null, results: [] });
    });
  });

  describe('GET /v1/media/{id}', () => {
    it('answers the media detail with genres, content rating for US and the image base', async () => {
      const r = await call(`/v1/media/${IDS.landGirls}`);
      assert.equal(r.status, 200);
      assert.equal(r.body.id, IDS.landGirls);
      assert.equal(r.body.content_type, 'movie');
      assert.equal(r.body.slug, 'the-land-girls');
      assert.deepEqual(r.body.genres, [{ id: 18, slug: 'drama', name: 'Drama' }]);
      assert.equal(r.body.content_rating, 'PG-13');
      assert.equal(r.body.image_base, 'https://images.marquee.example');
      assert.equal(r.body.vote_count, 120);
      assert.deepEqual(r.body.external_ids, [{ source: 'imdb', id: 'tt0119494' }]);
      assert.equal('translation' in r.body, false);
    });

    it('looks the content rating up for the country and adds the translation overlay for lang', async () => {
      const r = await call(`/v1/media/${IDS.landGirls}?country=de&lang=de`);
      assert.equal(r.body.content_rating, '12');
      assert.deepEqual(r.body.translation, { title: 'Die Landmädchen', overview: 'Ein Kriegsdrama.', tagline: null, poster: null, backdrop: null });
      const noOverlay = await call(`/v1/media/${IDS.landGirls}?lang=fr`);
      assert.equal('translation' in noOverlay.body, false);
      assert.equal((await call(`/v1/media/${IDS.rapidFire}`)).body.content_rating, null);
    });

    it('answers 404 for an unknown media id', async () => {
      const r = await call('/v1/media/mv99999999');
      assert.equal(r.status, 404);
      assert.equal(r.body.code, 'not_found');
      assert.equal((await call('/v1/media/nonsense/links?country=US')).status, 404);
    });
  });

  describe('GET /v1/media/{id}/links', () => {
    it('orders links by provider weight and hides raw URLs behind link tokens', async () => {
      const r = await call(`/v1/media/${IDS.landGirls}/links?country=US`);
      assert.equal(r.status, 200);
      assert.deepEqual(r.body.map((l: any) => l.provider_id), ['amazon', 'hulu']);
      assert.deepEqual(r.body[0].price_types, ['rent', 'buy']);
      assert.equal(r.text.includes('https://'), false);
      assert.equal('season_number' in r.body[0], false);
      assert.equal(linkTokens.decode(r.body[1].link_token), 'https://www.hulu.com/movie/land-girls');
    });

    it('answers the links of a past day from the event history', async () => {
      const early = await call(`/v1/media/${IDS.landGirls}/links?country=US&at=2026-11-05`);
      assert.deepEqual(early.body.map((l: any) => l.provider_id), ['netflix']);
      const middle = await call(`/v1/media/${IDS.landGirls}/links?country=US&at=2026-11-12`);
      assert.deepEqual(middle.body.map((l: any) => l.provider_id), ['netflix', 'amazon', 'hulu']);
      assert.deepEqual((await call(`/v1/media/${IDS.landGirls}/links?country=US&at=2026-10-01`)).body, []);
      // A day to come: the links as they stand now (docs/api.md).
      const now = await call(`/v1/media/${IDS.landGirls}/links?country=US`);
      assert.deepEqual((await call(`/v1/media/${IDS.landGirls}/links?country=US&at=2999-12-31`)).body, now.body);
    });

    it('carries season and episode numbers on TV links', async () => {
      const r = await call(`/v1/media/${IDS.harbor}/links?country=US`);
      assert.deepEqual(r.body.map((l: any) => [l.season_number, l.episode_number]), [[null, null], [1, 1]]);
    });

    it('answers [] in a country without offers and 400 without country', async () => {
      assert.deepEqual((await call(`/v1/media/${IDS.landGirls}/links?country=DE`)).body, []);
      const r = await call(`/v1/media/${IDS.landGirls}/links`);
      assert.equal(r.status, 400);
      assert.equal(r.body.code, 'missing_parameter');
    });
  });

  describe('seasons and episodes', () => {
    it('answers the seasons of a show in order, with episode counts', async () => {
      const r = await call(`/v1/media/${IDS.harbor}/seasons`);
      assert.equal(r.body.media_id, IDS.harbor);
      assert.deepEqual(r.body.seasons.map((s: any) => [s.season_number, s.episode_count, s.air_date]), [[1, 3, '2024-01-01'], [2, 2, '2024-02-01']]);
    });

    it('answers the episodes of a season', async () => {
      const r = await call(`/v1/media/${IDS.harbor}/seasons/2/episodes`);
      assert.equal(r.body.season_number, 2);
      assert.deepEqual(r.body.episodes.map((e: any) => e.episode_number), [1, 2]);
    });

    it('answers 404 for a movie, an unknown season and an unknown show', async () => {
      assert.equal((await call(`/v1/media/${IDS.landGirls}/seasons`)).status, 404);
      assert.equal((await call(`/v1/media/${IDS.landGirls}/seasons/1/episodes`)).status, 404);
      assert.equal((await call(`/v1/media/${IDS.harbor}/seasons/9/episodes`)).status, 404);
      assert.equal((await call(`/v1/media/${IDS.harbor}/seasons/one/episodes`)).status, 404);
      assert.equal((await call('/v1/media/tv99999999/seasons')).status, 404);
    });
  });

  describe('collections', () => {
    it('lists the collections of a country and those shown everywhere', async () => {
      const us = await call('/v1/collections?country=us');
      assert.equal(us.body.country, 'US');
      assert.deepEqual(us.body.collections.map((c: any) => c.slug).sort(), ['best-of-2026', 'us-westerns']);
      const de = await call('/v1/collections?country=DE');
      assert.deepEqual(de.body.collections.map((c: any) => c.slug).sort(), ['best-of-2026', 'german-picks']);
      assert.equal((await call('/v1/collections')).status, 400);
    });

    it('answers a collection with its fields and paged items with nullable positions', async () => {
      const r = await call('/v1/collections/best-of-2026?country=US&limit=1000');
      assert.equal(r.body.slug, 'best-of-2026');
      assert.equal(r.body.name, 'Best of 2026');
      assert.equal(r.body.country, null);
      assert.equal(r.body.id, 'col_best-of-2026');
      assert.equal(r.body.limit, 200);
      assert.equal(r.body.total, 3);
      assert.deepEqual(r.body.results.map((m: any) => [m.id, m.position]), [[IDS.harbor, 1], [IDS.landGirls, 2], [IDS.rapidFire, null]]);
      const page = await call('/v1/collections/best-of-2026?country=US&limit=1&offset=2');
      assert.deepEqual(page.body.results.map((m: any) => m.id), [IDS.rapidFire]);
    });

    it('answers 404 for an unknown slug and for a collection of another country', async () => {
      assert.equal((await call('/v1/collections/nope?country=US')).status, 404);
      assert.equal((await call('/v1/collections/us-westerns?country=DE')).status, 404);
      assert.equal((await call('/v1/collections/us-westerns')).status, 400);
    });
  });

  describe('GET /v1/providers and /v1/locales', () => {
    it('lists providers by weight, filtered by q, hide_children and parent', async () => {
      const all = await call('/v1/providers?country=US');
      assert.deepEqual(all.body.providers.map((p: any) => p.id), ['netflix', 'amazon', 'hulu', 'hbo-amazon']);
      assert.deepEqual(all.body.providers[0], { id: 'netflix', parent_id: null, name: 'Netflix', logo: '/logos/netflix.png', short_id: 'nfx', weight: 100 });
      const parents = await call('/v1/providers?country=US&hide_children=true');
      assert.deepEqual(parents.body.providers.map((p: any) => p.id), ['netflix', 'amazon', 'hulu']);
      const children = await call('/v1/providers?country=US&parent=amazon');
      assert.deepEqual(children.body.providers.map((p: any) => p.id), ['hbo-amazon']);
      const q = await call('/v1/providers?country=US&q=NET');
      assert.deepEqual(q.body.providers.map((p: any) => p.id), ['netflix']);
      const bad = await call('/v1/providers?country=US&hide_children=yes');
      assert.equal(bad.status, 400);
      assert.equal(bad.body.details.parameter, 'hide_children');
      assert.deepEqual((await call('/v1/providers?country=FR')).body, { country: 'FR', providers: [] });
    });

    it('lists the locales', async () => {
      const r = await call('/v1/locales');
      assert.equal(r.body.locales.length, 51);
      assert.ok(r.body.locales.includes('en'));
    });
  });

  describe('HTTP behaviour', () => {
    it('answers 304 when If-None-Match carries the ETag of the body', async () => {
      const first = await call('/v1/rankings?country=US');
      const etag = first.headers.get('etag');
      assert.ok(etag);
      const again = await call('/v1/rankings?country=US', { headers: { 'if-none-match': etag } });
      assert.equal(again.status, 304);
      assert.equal(again.text, '');
      const other = await call('/v1/rankings?country=US&limit=1', { headers: { 'if-none-match': etag } });
      assert.equal(other.status, 200);
    });

    it('answers 405 with Allow for methods other than GET and HEAD under /v1', async () => {
      const r = await call('/v1/search?q=x&country=US', { method: 'POST' });
      assert.equal(r.status, 405);
      assert.equal(r.headers.get('allow'), 'GET, HEAD');
      assert.equal(r.body.code, 'method_not_allowed');
      const head = await call('/v1/locales', { method: 'HEAD' });
      assert.equal(head.status, 200);
    });

    it('answers unknown paths with 404 JSON', async () => {
      for (const path of ['/v1/nope', '/nope']) {
        const res = await fetch(`${api.url}${path}`, { headers: { authorization: `Bearer ${key}` } });
        assert.equal(res.status, 404);
        assert.equal(((await res.json()) as { code: string }).code, 'not_found');
      }
    });

    it('puts RateLimit headers on every /v1 response, errors included', async () => {
      const base = await start({ rateLimit: { perMinute: 60 } });
      const a = await call('/v1/locales', { base });
      const b = await call('/v1/locales', { base });
      assert.equal(a.headers.get('ratelimit-limit'), '60');
      assert.equal(Number(b.headers.get('ratelimit-remaining')), Number(a.headers.get('ratelimit-remaining')) - 1);
      const reset = Number(a.headers.get('ratelimit-reset'));
      assert.ok(Number.isInteger(reset) && reset >= 0 && reset <= 60, `reset ${reset}`);
      const refused = await call('/v1/locales', { key: null, base });
      assert.equal(refused.status, 401);
      assert.equal(refused.headers.get('ratelimit-limit'), '60');
    });

    it('answers 429 rate_limited with Retry-After past the limit, counted per key', async () => {
      const limited = await start({ rateLimit: { perMinute: 3 } });
      const statuses = [];
      for (let i = 0; i < 4; i += 1) statuses.push((await call('/v1/locales', { base: limited })).status);
      assert.deepEqual(statuses, [200, 200, 200, 429]);
      const r = await call('/v1/locales', { base: limited });
      assert.equal(r.status, 429);
      assert.equal(r.body.code, 'rate_limited');
      assert.equal(r.headers.get('ratelimit-remaining'), '0');
      const retry = Number(r.headers.get('retry-after'));
      assert.ok(retry >= 1 && retry <= 60, `retry-after ${retry}`);
      const { key: other } = await createApiKey(apiKeys, 'other', clock);
      assert.equal((await call('/v1/locales', { base: limited, key: other })).status, 200);
    });

    it('answers 503 unavailable, never 500, when the read store fails', async () => {
      const failing = new Proxy(readStore, {
        get(target, prop, receiver) {
          const value = Reflect.get(target, prop, receiver);
          if (typeof value !== 'function') return value;
          return (...args: unknown[]) => {
            if (prop === 'getAlias') throw new Error('connection refused');
            return Promise.reject(new AppError('unavailable', 'mongo is down'));
          };
        },
      });
      const broken = await start({ readStore: failing });
      for (const path of ['/v1/rankings?country=US', `/v1/media/${IDS.landGirls}`, '/v1/providers?country=US']) {
        const r = await call(path, { base: broken });
        assert.equal(r.status, 503, path);
        assert.deepEqual(r.body, { error: 'The service is temporarily unavailable; try again shortly.', code: 'unavailable' });
      }
      const keyStoreDown = await start({ apiKeys: new Proxy(apiKeys, { get: () => () => Promise.reject(new Error('down')) }) });
      assert.equal((await call('/v1/locales', { base: keyStoreDown })).status, 503);
    });

    it('answers /readyz 503 until ready, and /v1 data endpoints 503 meanwhile', async () => {
      let ready = false;
      const booting = await start({ ready: () => ready });
      assert.equal((await call('/healthz', { base: booting, key: null })).status, 200);
      assert.equal((await call('/readyz', { base: booting, key: null })).status, 503);
      assert.equal((await call('/v1/rankings?country=US', { base: booting })).status, 503);
      ready = true;
      assert.deepEqual((await call('/readyz', { base: booting, key: null })).body, { status: 'ready', components: [] });
      assert.equal((await call('/v1/rankings?country=US', { base: booting })).status, 200);
    });

    it('exposes request metrics by route template and status', async () => {
      await call(`/v1/media/${IDS.landGirls}`);
      const r = await call('/metrics', { key: null });
      assert.equal(r.status, 200);
      assert.match(r.text, /marquee_http_requests_total\{route="\/v1\/media\/:id",method="GET",status="200"\} \d+/);
      assert.match(r.text, /process_cpu_user_seconds_total/);
    });
  });

  describe('GET /go/{link_token}', () => {
    it('redirects to the deep link of the platform', async () => {
      const links = await call(`/v1/media/${IDS.landGirls}/links?country=US`);
      const token = links.body[1].link_token as string;
      const web = await call(`/go/${token}`, { key: null });
      assert.equal(web.status, 302);
      assert.equal(web.headers.get('location'), linkTokens.deepLink('https://www.hulu.com/movie/land-girls', 'web'));
      const ios = await call(`/go/${token}?platform=ios`, { key: null });
      assert.equal(ios.headers.get('location'), linkTokens.deepLink('https://www.hulu.com/movie/land-girls', 'ios'));
    });

    it('answers 404 for a token that does not decode and 400 for an unknown platform', async () => {
      const bad = await call('/go/3mJr7AoUXx2Wqd', { key: null });
      assert.equal(bad.status, 404);
      assert.equal(bad.body.code, 'not_found');
      const links = await call(`/v1/media/${IDS.landGirls}/links?country=US`);
      const platform = await call(`/go/${links.body[0].link_token}?platform=gameboy`, { key: null });
      assert.equal(platform.status, 400);
      assert.equal(platform.body.details.parameter, 'platform');
    });
  });
});
