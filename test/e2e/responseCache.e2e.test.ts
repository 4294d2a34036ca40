/**
 * The response cache (services/api/responseCache.ts): a repeated lookup is served from the
 * rendered answer, byte for byte and with the same ETag, and a document the projection runner
 * writes is served fresh on the very next request.
 */
import assert from 'node:assert/strict';
import type { Clock, SearchIndex } from '../../contracts/ports.ts';
import { inProcessSearchIndex } from '../../infra/search/inProcessSearch.ts';
import { ALL_PROJECTIONS, defaultCollectionName } from '../../projections/index.ts';
import { catchUp } from '../../projections/runner.ts';
import { streams } from '../../contracts/ids.ts';
import { createApp, type ApiApp } from '../../services/api/app.ts';
import { createApiKey } from '../../services/api/keys.ts';
import { completeTimed, renderJson, renderTimed, ResponseCache } from '../../services/api/responseCache.ts';
import { silentLogger } from '../../services/shared/logger.ts';
import { SearchFeed } from '../../services/shared/searchFeed.ts';
import { details, IDS, openFixtureStores, seedCatalog, listenLocally, type FixtureStores } from './api.fixture.ts';
import { testLinkTokens } from './api.linkTokens.ts';

const clock: Clock = { now: () => new Date('2026-11-21T08:00:00Z') };

describe('rendered answers kept per read-model state', function () {
  this.timeout(60_000);
  let stores: FixtureStores;
  let search: SearchIndex;
  let app: ApiApp;
  let server: { url: string; close(): Promise<void> };
  let url: string;
  let key: string;

  const get = async (path: string, headers: Record<string, string> = {}) => {
    const res = await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${key}`, ...headers } });
    return { status: res.status, etag: res.headers.get('etag'), text: await res.text(), headers: res.headers };
  };
  const cache = () => app.responseCache as ResponseCache;
  const project = async () => {
    for (const projection of ALL_PROJECTIONS) {
      await catchUp({ projection, eventStore: stores.eventStore, readStore: stores.readStore, collection: defaultCollectionName(projection) });
    }
  };

  before(async () => {
    stores = openFixtureStores('marquee-response-cache-', clock);
    search = inProcessSearchIndex();
    await seedCatalog(stores.eventStore, stores.readStore, search);
    key = (await createApiKey(stores.apiKeys, 'cache', clock)).key;
    app = createApp({ readStore: stores.readStore, apiKeys: stores.apiKeys, search, linkTokens: await testLinkTokens(), clock, rateLimit: { perMinute: 100_000 } });
    server = await listenLocally(app);
    url = server.url;
  });

  after(async () => {
    await server?.close();
    await stores?.close();
  });

  it('serves a repeated lookup from the cache with the same bytes, ETag and 304', async () => {
    const path = `/v1/media/${IDS.landGirls}?country=US`;
    const first = await get(path);
    const second = await get(path);
    const hitsBefore = cache().hits;
    const third = await get(path);
    assert.equal(first.status, 200);
    assert.equal(third.text, first.text);
    assert.equal(second.etag, first.etag);
    assert.equal(third.etag, first.etag);
    assert.equal(third.headers.get('content-type'), 'application/json; charset=utf-8');
    assert.equal(cache().hits, hitsBefore + 1, 'the third request is a hit');
    const notModified = await get(path, { 'if-none-match': first.etag ?? '' });
    assert.equal(notModified.status, 304);
  });

  it('answers a document the projection writes fresh on the next request', async () => {
    const path = `/v1/media/${IDS.landGirls}?country=US`;
    await get(path);
    const hits = cache().hits;
    const before = await get(path);
    assert.equal(cache().hits, hits + 1, 'served from the cache before the write');
    assert.match(before.text, /Land Girls/);
    await stores.eventStore.append(streams.media(IDS.landGirls), [{
      type: 'MediaDetailsChanged',
      data: { mediaId: IDS.landGirls, details: details({ title: 'Land Girls Renamed' }), changedFields: ['title'] },
      metadata: { producer: 'test' },
    }], 'any');
    await project();
    const after = await get(path);
    assert.match(after.text, /Land Girls Renamed/);
    assert.notEqual(after.etag, before.etag);
  });

  it('answers a new chart fresh, paged from its rows', async () => {
    const path = '/v1/rankings?country=US&limit=2&offset=1';
    await get(path);
    const before = JSON.parse((await get(path)).text) as { total: number; results: Array<{ id: string; position: number }> };
    assert.deepEqual(before.results.map((r) => r.position), [2, 3]);
    await stores.eventStore.append(streams.ranking('US'), [{
      type: 'RankingComputed',
      data: { country: 'US', date: '2026-11-21', formulaVersion: 1, entries: [
        { mediaId: IDS.rapidFire, kind: 'movie', position: 1, score: 0.9, points: 900 },
        { mediaId: IDS.landGirls, kind: 'movie', position: 2, score: 0.8, points: 800 },
      ] },
      metadata: { producer: 'ranking' },
    }], 'any');
    await project();
    const after = JSON.parse((await get(path)).text) as { total: number; date: string; results: Array<{ id: string; position: number }> };
    assert.equal(after.total, 2);
    assert.equal(after.date, '2026-11-21');
    // The third row of the longer chart was deleted with it: the page holds one row, not a stale one.
    assert.deepEqual(after.results.map((r) => [r.id, r.position]), [[IDS.landGirls, 2]]);
    const movies = JSON.parse((await get('/v1/rankings?country=US&kind=movie')).text) as { total: number; results: Array<{ position: number }> };
    assert.equal(movies.total, 2);
    const shows = JSON.parse((await get('/v1/rankings?country=US&kind=tv_show')).text) as { total: number; results: unknown[] };
    assert.deepEqual([shows.total, shows.results.length], [0, 0]);
  });

  it('answers a changed trending day fresh, paged from its rows, and a new day as the latest', async () => {
    type Page = { total: number; date: string; results: Array<{ id: string; position: number; change: number | null }> };
    const page = async (path: string) => JSON.parse((await get(path)).text) as Page;
    const path = '/v1/trending?country=US&limit=1&offset=1';
    // The first answer learns what the endpoint reads, the second is kept, the third a hit.
    await get(path);
    await get(path);
    const hits = cache().hits;
    const before = await page(path);
    assert.equal(cache().hits, hits + 1, 'served from the cache before the write');
    assert.deepEqual([before.total, before.results.map((r) => r.id)], [3, [IDS.harbor]]);
    // The show leaves the chart that day: the rows after it move up a rank, the last is deleted.
    await stores.eventStore.append(streams.ranking('US'), [
      { type: 'PositionChanged', data: { country: 'US', date: '2026-11-20', mediaId: IDS.harbor, kind: 'tv_show', position: null, previousPosition: 2 }, metadata: { producer: 'ranking' } },
    ], 'any');
    await project();
    const after = await page(path);
    assert.deepEqual([after.total, after.date, after.results.map((r) => [r.id, r.position, r.change])], [2, '2026-11-20', [[IDS.rapidFire, 3, -2]]]);
    assert.deepEqual([(await page('/v1/trending?country=US&limit=1&offset=2')).results.length, (await page('/v1/trending?country=US&kind=tv_show')).total], [0, 0]);
    await stores.eventStore.append(streams.ranking('US'), [
      { type: 'PositionChanged', data: { country: 'US', date: '2026-11-21', mediaId: IDS.harbor, kind: 'tv_show', position: 1, previousPosition: null }, metadata: { producer: 'ranking' } },
    ], 'any');
    await project();
    const latest = await page('/v1/trending?country=US');
    assert.deepEqual([latest.total, latest.date, latest.results.map((r) => r.id)], [1, '2026-11-21', [IDS.harbor]]);
    assert.equal((await page('/v1/trending?country=US&date=2026-11-20')).total, 2, 'the older day keeps its rows');
  });

  it('serves a repeated search from the hot path with the same results, each with its own processing time and its ETag', async () => {
    const path = '/v1/search?q=rapid%20fire&country=US';
    // The first answer learns what the endpoint reads, the second is kept.
    await get(path);
    const first = await get(path);
    const hits = cache().hits;
    const served = app.hotPath?.served ?? 0;
    const second = await get(path);
    assert.equal(cache().hits, hits + 1, 'the second search is a hit');
    assert.equal(app.hotPath?.served, served + 1, 'answered before Koa');
    type Found = { total: number; results: Array<{ id: string }>; processing_time_ms: number };
    const [a, b] = [JSON.parse(first.text) as Found, JSON.parse(second.text) as Found];
    assert.deepEqual(b.results.map((r) => r.id), [IDS.rapidFire]);
    assert.deepEqual({ ...b, processing_time_ms: 0 }, { ...a, processing_time_ms: 0 });
    assert.equal(typeof b.processing_time_ms, 'number');
    // The kept text completed with this request's time is what rendering the body gives, tag included.
    assert.equal(second.text, JSON.stringify(b));
    assert.equal(second.etag, renderJson(b).tag);
  });

  it('answers a search fresh after the index is written, even where no read model changed', async () => {
    const feed = new SearchFeed({ eventStore: stores.eventStore, readStore: stores.readStore, search, logger: silentLogger, checkpointName: null });
    await feed.catchUp();
    const path = '/v1/search?q=quiet%20lighthouse&country=US';
    type Found = { total: number; results: Array<{ id: string; title: string }> };
    const found = async () => JSON.parse((await get(path)).text) as Found;
    assert.equal((await found()).total, 0);
    await found();
    const hits = cache().hits;
    assert.equal((await found()).total, 0);
    assert.equal(cache().hits, hits + 1, 'kept before the write');
    await stores.eventStore.append(streams.media(IDS.harbor), [{
      type: 'MediaDetailsChanged',
      data: { mediaId: IDS.harbor, details: details({ title: 'Quiet Lighthouse' }), changedFields: ['title'] },
      metadata: { producer: 'test' },
    }], 'any');
    await project();
    // The read model has the new title; the index has not been written yet.
    assert.equal((await found()).total, 0);
    await found();
    await feed.catchUp();
    const after = await found();
    assert.deepEqual(after.results.map((r) => [r.id, r.title]), [[IDS.harbor, 'Quiet Lighthouse']]);
  });

  it('lists a title the projection renames fresh, where its list item was kept from another answer', async () => {
    // A new API whose search has not read a model yet: its first answer lists only kept items
    // (the chart listed them), and must still be stamped with the models they came from.
    const fresh = createApp({ readStore: stores.readStore, apiKeys: stores.apiKeys, search, linkTokens: await testLinkTokens(), clock, rateLimit: { perMinute: 100_000 } });
    const listening = await listenLocally(fresh);
    try {
      const at = async (path: string) => {
        const res = await fetch(`${listening.url}${path}`, { headers: { authorization: `Bearer ${key}` } });
        assert.equal(res.status, 200, path);
        return (await res.json()) as { results: Array<{ id: string; title: string }> };
      };
      const titleIn = (body: { results: Array<{ id: string; title: string }> }) => body.results.find((r) => r.id === IDS.rapidFire)?.title;
      assert.equal(titleIn(await at('/v1/rankings?country=US')), 'Rapid Fire');
      const path = '/v1/search?q=rapid%20fire&country=US';
      for (let i = 0; i < 3; i++) assert.equal(titleIn(await at(path)), 'Rapid Fire');
      assert.ok((fresh.responseCache as ResponseCache).hits > 0, 'the search answer was kept');
      await stores.eventStore.append(streams.media(IDS.rapidFire), [{
        type: 'MediaDetailsChanged',
        data: { mediaId: IDS.rapidFire, details: details({ title: 'Rapid Fire Returns', year: 1992, genreIds: [28] }), changedFields: ['title'] },
        metadata: { producer: 'test' },
      }], 'any');
      await project();
      // The index still finds it by its old title; the list item comes from the read model.
      assert.equal(titleIn(await at(path)), 'Rapid Fire Returns');
      assert.equal(titleIn(await at('/v1/search?q=rapid%20fire&country=US&limit=5')), 'Rapid Fire Returns');
      assert.equal(titleIn(await at('/v1/rankings?country=US')), 'Rapid Fire Returns');
    } finally {
      await listening.close();
    }
  });

  it('renders a page of frozen (kept) items as JSON.stringify does, and a timed one too', () => {
    const item = (i: number) => Object.freeze({ id: `mv${i}`, title: `Title "${i}" é\u2028`, genres: Object.freeze(['drama']), year: i % 2 ? null : 1999, skipped: undefined });
    const items = [item(1), item(2), item(1)];
    const body = { total: 3, query: 'q', lang: undefined, results: items };
    assert.equal(renderJson(body).bytes.toString('utf8'), JSON.stringify(body));
    assert.equal(renderJson(body).tag, renderJson(JSON.parse(JSON.stringify(body))).tag);
    // Twice: the second time from the kept texts.
    assert.equal(renderJson(body).bytes.toString('utf8'), JSON.stringify(body));
    const timed = completeTimed(renderTimed({ ...body, processing_time_ms: 1 }, 'processing_time_ms'), 1.5);
    assert.equal(timed.bytes.toString('utf8'), JSON.stringify({ ...body, processing_time_ms: 1.5 }));
    // A list that is not all frozen, or not last, is rendered as it is.
    const mixed = { results: [items[0], { id: 'x' }] };
    assert.equal(renderJson(mixed).bytes.toString('utf8'), JSON.stringify(mixed));
    assert.equal(renderJson({ results: items, total: 1 }).bytes.toString('utf8'), JSON.stringify({ results: items, total: 1 }));
    assert.equal(renderJson({ results: [1, 2] }).bytes.toString('utf8'), '{"results":[1,2]}');
  });

  it('stays bounded, dropping the least recently used answer first', () => {
    const small = new ResponseCache({ maxEntries: 2 });
    small.set('a', 's', { bytes: Buffer.from('1'), tag: '"a"' }, { operationId: 'x', route: '/x' });
    small.set('b', 's', { bytes: Buffer.from('2'), tag: '"b"' }, { operationId: 'x', route: '/x' });
    assert.ok(small.get('a', 's'));
    small.set('c', 's', { bytes: Buffer.from('3'), tag: '"c"' }, { operationId: 'x', route: '/x' });
    assert.equal(small.size, 2);
    assert.equal(small.get('b', 's'), undefined);
    assert.ok(small.get('a', 's'));
    assert.equal(small.get('a', 'other stamp'), undefined, 'another read-model state is a miss');
  });
});
