/**
 * gzip for /v1 answers (services/api/compression.ts), and for /metrics: a client that takes gzip
 * gets the very JSON bytes gzipped, under a tag of their own, from Koa and from the hot path alike; a client that
 * asks for nothing gets them as before; conditional requests match either tag. Read with
 * node:http, which (unlike fetch) shows the bytes on the wire.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { request } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { streams } from '../../contracts/ids.ts';
import type { Clock, SearchDocument } from '../../contracts/ports.ts';
import { inProcessSearchIndex } from '../../infra/search/inProcessSearch.ts';
import { defaultCollectionName } from '../../projections/collections.ts';
import { ALL_PROJECTIONS, searchProjection, toSearchDocument, type SearchProjectionDoc } from '../../projections/index.ts';
import { catchUp } from '../../projections/runner.ts';
import { createApp, type ApiApp } from '../../services/api/app.ts';
import { GZIP_MIN_BYTES } from '../../services/api/compression.ts';
import { createApiKey } from '../../services/api/keys.ts';
import { details, openFixtureStores, seedCatalog, listenLocally, type FixtureStores } from './api.fixture.ts';
import { testLinkTokens } from './api.linkTokens.ts';

const clock: Clock = { now: () => new Date('2026-11-21T08:00:00Z') };
const LONG = 'mv00000100';

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

describe('gzip for /v1 answers', function () {
  this.timeout(60_000);
  let stores: FixtureStores;
  let app: ApiApp;
  let server: { url: string; close(): Promise<void> };
  let key: string;

  const raw = (path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Raw> =>
    new Promise((resolve, reject) => {
      const req = request(`${server.url}${path}`, { method, headers: { authorization: `Bearer ${key}`, ...headers } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end();
    });
  const served = () => app.hotPath?.served ?? -1;

  before(async () => {
    stores = openFixtureStores('marquee-gzip-', clock);
    const search = inProcessSearchIndex();
    await seedCatalog(stores.eventStore, stores.readStore, search);
    // Answers over the threshold (the fixture's are a few hundred bytes): a title told at
    // length, and a dozen titles that one search finds.
    for (let n = 0; n < 12; n++) {
      const mediaId = `mv000001${String(n).padStart(2, '0')}`;
      await stores.eventStore.append(streams.media(mediaId), [{
        type: 'MediaRegistered',
        data: {
          mediaId, kind: 'movie', sourceId: 100 + n, slug: `long-told-${n}`,
          details: details({ title: `Long Told ${n}`, year: 2001, overview: n === 0 ? 'A story told at length. '.repeat(100) : null }),
        },
        metadata: { observedAt: '2026-11-01T08:00:00Z', producer: 'test' },
      }], 'no_stream');
    }
    for (const projection of ALL_PROJECTIONS) {
      await catchUp({ projection, eventStore: stores.eventStore, readStore: stores.readStore, collection: defaultCollectionName(projection) });
    }
    const rows = await stores.readStore.scan<SearchProjectionDoc>(defaultCollectionName(searchProjection));
    await search.upsert(rows.map((r) => toSearchDocument(r.doc, [])).filter((d): d is SearchDocument => d !== null));
    key = (await createApiKey(stores.apiKeys, 'gzip', clock)).key;
    app = createApp({
      readStore: stores.readStore, apiKeys: stores.apiKeys, search, linkTokens: await testLinkTokens(), clock,
      rateLimit: { perMinute: 1000 }, keyCacheMs: 1000,
    });
    server = await listenLocally(app);
  });

  after(async () => {
    await server?.close();
    await stores?.close();
  });

  it('gzips a large answer for a client that takes gzip, under its own tag, and leaves it as is for one that does not', async () => {
    const path = '/v1/openapi';
    const plain = await raw(path);
    assert.equal(plain.status, 200);
    assert.ok(plain.body.length >= GZIP_MIN_BYTES, `the OpenAPI document is ${plain.body.length} bytes`);
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.equal(plain.headers.vary, 'Accept-Encoding');
    assert.equal(plain.headers['content-length'], String(plain.body.length));
    JSON.parse(plain.body.toString('utf8'));

    const zipped = await raw(path, { 'accept-encoding': 'gzip, deflate, br' });
    assert.equal(zipped.status, 200);
    assert.equal(zipped.headers['content-encoding'], 'gzip');
    assert.equal(zipped.headers.vary, 'Accept-Encoding');
    assert.equal(zipped.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(zipped.headers['content-length'], String(zipped.body.length));
    assert.ok(zipped.body.length * 4 < plain.body.length, `gzip made ${plain.body.length} bytes ${zipped.body.length}`);
    assert.deepEqual(gunzipSync(zipped.body), plain.body, 'the same JSON bytes');
    const tag = String(plain.headers.etag);
    assert.equal(zipped.headers.etag, `${tag.slice(0, -1)}-gzip"`);
  });

  it('reads Accept-Encoding as HTTP does: q-values, identity, the wildcard, codings it does not make', async () => {
    const path = '/v1/openapi';
    const encodingFor = async (accept: string) => (await raw(path, { 'accept-encoding': accept })).headers['content-encoding'];
    assert.equal(await encodingFor('GZIP'), 'gzip');
    assert.equal(await encodingFor('*'), 'gzip');
    assert.equal(await encodingFor('x-unknown, gzip;q=0.5'), 'gzip');
    assert.equal(await encodingFor('gzip;q=0'), undefined);
    assert.equal(await encodingFor('*;q=0, identity'), undefined);
    assert.equal(await encodingFor('identity'), undefined);
    assert.equal(await encodingFor('br'), undefined);
    assert.equal(await encodingFor('identity;q=1, gzip;q=0.1'), undefined);
    assert.equal(await encodingFor(''), undefined);
  });

  it('leaves a small answer and an error as they are, with no Vary', async () => {
    const locales = await raw('/v1/locales', { 'accept-encoding': 'gzip' });
    assert.equal(locales.status, 200);
    assert.ok(locales.body.length < GZIP_MIN_BYTES, `locales are ${locales.body.length} bytes`);
    assert.equal(locales.headers['content-encoding'], undefined);
    assert.equal(locales.headers.vary, undefined);
    const missing = await raw('/v1/media/mv99999999?country=US', { 'accept-encoding': 'gzip' });
    assert.equal(missing.status, 404);
    assert.equal(missing.headers['content-encoding'], undefined);
    assert.equal(JSON.parse(missing.body.toString('utf8')).code, 'not_found');
  });

  it('gzips /metrics for a scraper that takes gzip, and only for it', async () => {
    const plain = await raw('/metrics');
    assert.equal(plain.status, 200);
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.equal(plain.headers.vary, 'Accept-Encoding');
    const text = plain.body.toString('utf8');
    assert.match(text, /^# HELP /m);
    assert.ok(plain.body.length >= GZIP_MIN_BYTES, `metrics are ${plain.body.length} bytes`);
    const zipped = await raw('/metrics', { 'accept-encoding': 'gzip' });
    assert.equal(zipped.status, 200);
    assert.equal(zipped.headers['content-encoding'], 'gzip');
    assert.equal(zipped.headers.vary, 'Accept-Encoding');
    assert.equal(Number(zipped.headers['content-length']), zipped.body.length);
    assert.ok(zipped.body.length * 3 < plain.body.length, `${zipped.body.length} gzipped bytes of ${plain.body.length}`);
    // The same metric names (values such as request counts move between the two scrapes).
    const names = (t: string) => t.split('\n').filter((l) => l.startsWith('# HELP ')).join('\n');
    assert.equal(names(gunzipSync(zipped.body).toString('utf8')), names(text));
    assert.equal((await raw('/metrics', { 'accept-encoding': 'gzip;q=0, identity' })).headers['content-encoding'], undefined);
  });

  it('answers a conditional request with either tag by a 304 carrying the tag of what a 200 would send', async () => {
    const path = '/v1/openapi';
    const plain = await raw(path);
    const zipped = await raw(path, { 'accept-encoding': 'gzip' });
    const plainTag = String(plain.headers.etag);
    const gzipTag = String(zipped.headers.etag);
    for (const [accept, sent, expected] of [
      ['gzip', gzipTag, gzipTag],
      ['gzip', plainTag, gzipTag],
      ['identity', gzipTag, plainTag],
      ['identity', `W/${plainTag}`, plainTag],
    ] as const) {
      const answer = await raw(path, { 'accept-encoding': accept, 'if-none-match': sent });
      assert.equal(answer.status, 304, `${accept} with ${sent}`);
      assert.equal(answer.headers.etag, expected);
      assert.equal(answer.body.length, 0);
    }
    const changed = await raw(path, { 'accept-encoding': 'gzip', 'if-none-match': '"something-else-gzip"' });
    assert.equal(changed.status, 200);
  });

  it('answers HEAD with the length of the gzipped body and no body', async () => {
    const zipped = await raw('/v1/openapi', { 'accept-encoding': 'gzip' });
    const head = await raw('/v1/openapi', { 'accept-encoding': 'gzip' }, 'HEAD');
    assert.equal(head.status, 200);
    assert.equal(head.headers['content-encoding'], 'gzip');
    assert.equal(head.headers['content-length'], String(zipped.body.length));
    assert.equal(head.body.length, 0);
  });

  it('gives the same bytes and headers from the hot path as from Koa, kept lookups and searches alike', async () => {
    const stable = (h: Raw['headers']) => Object.fromEntries(Object.entries(h).filter(([k]) => !['date', 'ratelimit-remaining', 'ratelimit-reset', 'content-length'].includes(k)));
    const path = `/v1/media/${LONG}?country=US`;
    const koa = [await raw(path, { 'accept-encoding': 'gzip' }), await raw(path, { 'accept-encoding': 'gzip' })];
    const before = served();
    const hot = await raw(path, { 'accept-encoding': 'gzip' });
    assert.equal(served(), before + 1, 'the third request took the hot path');
    const plain = await raw(path);
    assert.ok(plain.body.length >= GZIP_MIN_BYTES, `the detail is ${plain.body.length} bytes`);
    assert.equal(hot.headers['content-encoding'], 'gzip');
    assert.deepEqual(hot.body, koa[1]?.body);
    assert.deepEqual(stable(hot.headers), stable(koa[1]?.headers ?? {}));
    assert.deepEqual(gunzipSync(hot.body), plain.body);
    assert.equal(plain.headers.vary, 'Accept-Encoding');
    assert.equal(plain.headers['content-encoding'], undefined);

    // Search: a new body each time (its processing time), gzipped on the lean path too.
    const lean = app.hotPath?.lean ?? 0;
    const search = await raw('/v1/search?q=long+told&country=US&limit=50', { 'accept-encoding': 'gzip' });
    assert.equal(search.status, 200);
    assert.equal((app.hotPath?.lean ?? 0), lean + 1, 'answered on the lean path');
    assert.equal(search.headers['content-encoding'], 'gzip');
    assert.equal(search.headers.vary, 'Accept-Encoding');
    assert.equal(search.headers['content-length'], String(search.body.length));
    const page = JSON.parse(gunzipSync(search.body).toString('utf8')) as { results: unknown[]; processing_time_ms: number };
    assert.equal(page.results.length, 12);
    assert.equal(typeof page.processing_time_ms, 'number');
    // Its tag is the gzip tag of the JSON text the client reads.
    assert.equal(search.headers.etag, `"${createHash('sha256').update(gunzipSync(search.body)).digest('base64url').slice(0, 32)}-gzip"`);
    // Asked again: a hit, its head's deflate reused and this request's time appended; gunzip
    // checks the CRC and the length of what it inflates.
    const again = await raw('/v1/search?q=long+told&country=US&limit=50', { 'accept-encoding': 'gzip' });
    const text = gunzipSync(again.body).toString('utf8');
    const repeated = JSON.parse(text) as typeof page;
    assert.deepEqual({ ...repeated, processing_time_ms: 0 }, { ...page, processing_time_ms: 0 });
    assert.equal(again.headers.etag, `"${createHash('sha256').update(text).digest('base64url').slice(0, 32)}-gzip"`);
    const identity = await raw('/v1/search?q=long+told&country=US&limit=50');
    assert.equal(identity.headers['content-encoding'], undefined);
    assert.deepEqual({ ...(JSON.parse(identity.body.toString('utf8')) as typeof page), processing_time_ms: 0 }, { ...page, processing_time_ms: 0 });
  });
});
