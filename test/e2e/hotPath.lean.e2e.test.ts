/**
 * The lean path of search (hotPath.ts, Endpoint.lean): a search without a kept answer, answered
 * without Koa, gives what Koa gives for the same request — status, headers (but for the date,
 * the time-dependent rate-limit reset and the ETag, which hashes the processing time) and body
 * (but for `processing_time_ms`) — for new answers, answers kept under other parameters, an
 * engine outage (503) and an invalid parameter (left to Koa). Two apps over the same catalog,
 * each with its own counters: one answers through Koa (a conditional request that matches
 * nothing is always Koa's, and answers 200), the other through the lean path.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import type { Clock, SearchIndex } from '../../contracts/ports.ts';
import { inProcessSearchIndex } from '../../infra/search/inProcessSearch.ts';
import { createApp, type ApiApp } from '../../services/api/app.ts';
import { createApiKey } from '../../services/api/keys.ts';
import { openFixtureStores, seedCatalog, listenLocally, type FixtureStores } from './api.fixture.ts';
import { testLinkTokens } from './api.linkTokens.ts';

const clock: Clock = { now: () => new Date('2026-11-21T08:00:00Z') };
const VARYING = new Set(['date', 'ratelimit-reset', 'etag']);

interface Answer {
  status: number;
  text: string;
  headers: Record<string, string>;
}

describe('the lean path of search answers as Koa does', function () {
  this.timeout(60_000);
  let stores: FixtureStores;
  let key: string;
  let failing = false;
  const apps: Array<{ app: ApiApp; server: { url: string; close(): Promise<void> } }> = [];
  const logged: Array<{ level: string; message: string }> = [];

  before(async () => {
    stores = openFixtureStores('marquee-hot-lean-', clock);
    const index = inProcessSearchIndex();
    await seedCatalog(stores.eventStore, stores.readStore, index);
    // The engine, failing on demand: an outage after the request was counted.
    const search = new Proxy(index, {
      get(target, name) {
        if (name === 'search') return (q: Parameters<SearchIndex['search']>[0]) => (failing ? Promise.reject(new Error('engine down')) : target.search(q));
        const value = Reflect.get(target, name) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    key = (await createApiKey(stores.apiKeys, 'lean', clock)).key;
    const logger = {
      info: () => {},
      warn: (_: unknown, message: string) => logged.push({ level: 'warn', message }),
      error: (_: unknown, message: string) => logged.push({ level: 'error', message }),
    };
    for (let i = 0; i < 2; i++) {
      const app = createApp({
        readStore: stores.readStore, apiKeys: stores.apiKeys, search, linkTokens: await testLinkTokens(), clock,
        rateLimit: { perMinute: 50 }, keyCacheMs: 60_000, logger,
      });
      apps.push({ app, server: await listenLocally(app) });
    }
  });

  after(async () => {
    for (const { server } of apps) await server.close();
    await stores?.close();
  });

  const koa = () => apps[0]!;
  const lean = () => apps[1]!;
  const get = async (which: (typeof apps)[number], path: string, headers: Record<string, string> = {}): Promise<Answer> => {
    const res = await fetch(`${which.server.url}${path}`, { headers: { authorization: `Bearer ${key}`, ...headers } });
    return { status: res.status, text: await res.text(), headers: Object.fromEntries(res.headers) };
  };
  /** The same request to both apps: through Koa on the first, the lean path on the second. */
  const both = async (path: string): Promise<[Answer, Answer]> => {
    const viaKoa = await get(koa(), path, { 'if-none-match': '"matches-nothing"' });
    const viaLean = await get(lean(), path);
    assert.equal(koa().app.hotPath?.lean, 0, 'the first app answers through Koa only');
    return [viaKoa, viaLean];
  };
  const stable = (headers: Record<string, string>) => Object.fromEntries(Object.entries(headers).filter(([k]) => !VARYING.has(k)));
  const withoutTime = (text: string) => {
    const { processing_time_ms: time, ...rest } = JSON.parse(text) as Record<string, unknown>;
    return { rest, time };
  };
  /** The strong ETag of a body, as renderJson makes it. */
  const tagOf = (text: string) => `"${createHash('sha256').update(text, 'utf8').digest('base64url').slice(0, 32)}"`;
  const assertSame = (viaKoa: Answer, viaLean: Answer) => {
    assert.equal(viaLean.status, viaKoa.status);
    // A 200's length moves with the digits of its processing time: each must be its body's.
    const timed = viaKoa.status === 200 ? (h: Record<string, string>) => ({ ...stable(h), 'content-length': undefined }) : stable;
    assert.deepEqual(timed(viaLean.headers), timed(viaKoa.headers));
    for (const r of [viaKoa, viaLean]) assert.equal(r.headers['content-length'], String(Buffer.byteLength(r.text)));
    assert.equal(viaLean.headers['ratelimit-reset'] !== undefined, viaKoa.headers['ratelimit-reset'] !== undefined);
    if (viaKoa.status === 200) {
      assert.deepEqual(withoutTime(viaLean.text).rest, withoutTime(viaKoa.text).rest);
      assert.equal(typeof withoutTime(viaLean.text).time, 'number');
      assert.equal(viaLean.headers.etag, tagOf(viaLean.text));
      assert.equal(viaKoa.headers.etag, tagOf(viaKoa.text));
    } else {
      assert.equal(viaLean.text, viaKoa.text);
    }
  };

  it('warms the key cache of both apps (a first key is looked up by Koa)', async () => {
    for (const which of apps) assert.equal((await get(which, '/v1/locales')).status, 200);
  });

  it('answers new searches with the same status, headers and body', async () => {
    const paths = [
      '/v1/search?q=land%20girls&country=US',
      '/v1/search?q=Land+Girls&country=us&limit=500', // the same words, another case, a limit clamped
      '/v1/search?country=GB&q=harbor&lang=EN&kind=tv_show',
      '/v1/search?q=rapid&country=US&offset=1&limit=1',
      '/v1/search?q=fire&country=US&genre=drama&extra=ignored',
      '/v1/search?q=land&country=US&provider=nfx',
      '/v1/search?q=land&country=US&provider=no-such-provider',
      '/v1/search?q=zzzz-nothing&country=DE',
      '/v1/search?q=rapid&q=fire&country=US', // a repeated parameter, as Koa's parser gives it
      '/v1/search?q=%C3%A9t%C3%A9&country=FR',
    ];
    for (const path of paths) {
      const leanBefore = lean().app.hotPath?.lean ?? 0;
      const [viaKoa, viaLean] = await both(path);
      assertSame(viaKoa, viaLean);
      assert.ok(viaKoa.status === 200 || viaKoa.status === 400, `${path}: ${viaKoa.status} ${viaKoa.text}`);
      if (viaKoa.status === 200) assert.equal(lean().app.hotPath?.lean, leanBefore + 1, `${path} took the lean path`);
    }
    // Counted alike: both apps have answered the same number of requests with this key.
    const [viaKoa, viaLean] = await both('/v1/search?q=girls&country=US');
    assert.equal(viaLean.headers['ratelimit-remaining'], viaKoa.headers['ratelimit-remaining']);
    assert.ok(Number(viaLean.headers['ratelimit-remaining']) < 50 - paths.length);
  });

  it('keeps what it renders: the same search again is a hit of the hot path', async () => {
    const path = '/v1/search?q=harbor&country=US';
    const first = await get(lean(), path);
    const leanAfterFirst = lean().app.hotPath?.lean;
    const servedAfterFirst = lean().app.hotPath?.served ?? 0;
    const again = await get(lean(), path);
    assert.equal(lean().app.hotPath?.lean, leanAfterFirst, 'no new lean answer');
    assert.equal(lean().app.hotPath?.served, servedAfterFirst + 1, 'a hit of a kept answer');
    assert.deepEqual(withoutTime(again.text).rest, withoutTime(first.text).rest);
    // Another spelling of the same parameters: the answer kept by the lean path, found by its key.
    const spelled = await get(lean(), '/v1/search?country=us&q=harbor&limit=20');
    assert.deepEqual(withoutTime(spelled.text).rest, withoutTime(first.text).rest);
    // As many requests to the other app, so both keep counting alike.
    for (let i = 0; i < 3; i++) assert.equal((await get(koa(), path, { 'if-none-match': '"matches-nothing"' })).status, 200);
  });

  it('answers an invalid parameter through Koa, 400 as before', async () => {
    for (const path of ['/v1/search?country=US', '/v1/search?q=x&country=USA', '/v1/search?q=x&country=US&limit=-1', '/v1/search?q=x&country=US&kind=film']) {
      const leanBefore = lean().app.hotPath?.lean ?? 0;
      const [viaKoa, viaLean] = await both(path);
      assert.equal(viaKoa.status, 400, path);
      assertSame(viaKoa, viaLean);
      assert.equal(lean().app.hotPath?.lean, leanBefore, `${path} left to Koa`);
    }
  });

  it('answers an engine outage 503 with Retry-After and the RateLimit headers, logged once per request', async () => {
    failing = true;
    try {
      const warned = logged.filter((l) => l.level === 'warn').length;
      const [viaKoa, viaLean] = await both('/v1/search?q=outage&country=US');
      assert.equal(viaKoa.status, 503);
      assertSame(viaKoa, viaLean);
      assert.equal(viaLean.headers['retry-after'], '5');
      assert.equal(JSON.parse(viaLean.text).code, 'unavailable');
      assert.equal(logged.filter((l) => l.level === 'warn').length, warned + 2);
    } finally {
      failing = false;
    }
    // Metrics count it by the route template on both paths.
    for (const which of apps) {
      const metrics = await (await fetch(`${which.server.url}/metrics`)).text();
      assert.match(metrics, /marquee_http_requests_total\{route="\/v1\/search",method="GET",status="503"\} 1\b/);
      assert.match(metrics, /marquee_http_requests_total\{route="\/v1\/search",method="GET",status="200"\} \d+/);
    }
  });
});
