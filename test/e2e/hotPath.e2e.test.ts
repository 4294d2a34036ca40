/**
 * The hot path (services/api/hotPath.ts): a kept answer is served before Koa with the same bytes
 * and headers Koa gives it, counted by the same rate limit and metrics; whatever it does not
 * take (no key, a revoked key, a conditional request, the limit reached) Koa answers as before.
 */
import assert from 'node:assert/strict';
import type { Clock } from '../../contracts/ports.ts';
import { inProcessSearchIndex } from '../../infra/search/inProcessSearch.ts';
import { createApp, type ApiApp } from '../../services/api/app.ts';
import { createApiKey, revokeApiKey } from '../../services/api/keys.ts';
import { IDS, openFixtureStores, seedCatalog, listenLocally, type FixtureStores } from './api.fixture.ts';
import { testLinkTokens } from './api.linkTokens.ts';

const clock: Clock = { now: () => new Date('2026-11-21T08:00:00Z') };
/** Headers that differ between any two responses, whoever answers. */
const VARYING = new Set(['date', 'ratelimit-remaining', 'ratelimit-reset']);

describe('the hot path of kept answers', function () {
  this.timeout(60_000);
  let stores: FixtureStores;
  let app: ApiApp;
  let server: { url: string; close(): Promise<void> };
  let url: string;
  let key: string;
  const limit = 12;

  const get = async (path: string, headers: Record<string, string> = {}) => {
    const res = await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${key}`, ...headers } });
    return { status: res.status, text: await res.text(), headers: Object.fromEntries(res.headers) };
  };
  const stable = (headers: Record<string, string>) => Object.fromEntries(Object.entries(headers).filter(([k]) => !VARYING.has(k)));
  const served = () => app.hotPath?.served ?? -1;

  before(async () => {
    stores = openFixtureStores('marquee-hot-path-', clock);
    const search = inProcessSearchIndex();
    await seedCatalog(stores.eventStore, stores.readStore, search);
    key = (await createApiKey(stores.apiKeys, 'hot', clock)).key;
    app = createApp({
      readStore: stores.readStore, apiKeys: stores.apiKeys, search, linkTokens: await testLinkTokens(), clock,
      rateLimit: { perMinute: limit }, keyCacheMs: 1000,
    });
    server = await listenLocally(app);
    url = server.url;
  });

  after(async () => {
    await server?.close();
    await stores?.close();
  });

  it('answers a kept lookup with the bytes and headers Koa gave it, counted by the same limit and metrics', async () => {
    const path = `/v1/media/${IDS.landGirls}?country=US`;
    // Koa: the first answer learns the endpoint's read models, the second is kept.
    const koa = [await get(path), await get(path)];
    assert.equal(served(), 0);
    const hot = [await get(path), await get(path)];
    assert.equal(served(), 2, 'the third and fourth requests took the hot path');
    for (const r of [...koa, ...hot]) assert.equal(r.status, 200);
    assert.equal(hot[0]?.text, koa[1]?.text);
    assert.deepEqual(stable(hot[0]?.headers ?? {}), stable(koa[1]?.headers ?? {}));
    assert.equal(hot[0]?.headers['content-type'], 'application/json; charset=utf-8');
    // One window of one key: the remaining count goes down across both paths.
    assert.deepEqual([...koa, ...hot].map((r) => r.headers['ratelimit-remaining']), ['11', '10', '9', '8']);
    assert.equal(hot[1]?.headers['ratelimit-limit'], String(limit));
    assert.ok(Number(hot[1]?.headers['ratelimit-reset']) > 0 && Number(hot[1]?.headers['ratelimit-reset']) <= 60);
    const metrics = await (await fetch(`${url}/metrics`)).text();
    assert.match(metrics, /marquee_http_requests_total\{route="\/v1\/media\/:id",method="GET",status="200"\} 4\b/);
  });

  it('leaves to Koa a conditional request, a request without a key and a revoked key', async () => {
    const path = `/v1/media/${IDS.landGirls}?country=US`;
    const before = served();
    const { headers } = await get(path);
    assert.equal(served(), before + 1);
    const conditional = await get(path, { 'if-none-match': headers.etag ?? '' });
    assert.equal(conditional.status, 304);
    const keyless = await fetch(`${url}${path}`);
    assert.equal(keyless.status, 401);
    assert.equal(served(), before + 1, 'neither took the hot path');
    const other = (await createApiKey(stores.apiKeys, 'revoked', clock)).key;
    assert.equal((await get(path, { authorization: `Bearer ${other}` })).status, 200);
    await revokeApiKey(stores.apiKeys, other, clock);
    // The key cache keeps an answer for at most a second.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const revoked = await get(path, { authorization: `Bearer ${other}` });
    assert.equal(revoked.status, 401);
  });

  it('leaves the refusal to Koa once the limit is reached', async () => {
    const path = `/v1/media/${IDS.landGirls}?country=US`;
    let last = await get(path);
    while (last.status === 200) last = await get(path);
    assert.equal(last.status, 429);
    assert.equal(JSON.parse(last.text).code, 'rate_limited');
    assert.equal(last.headers['ratelimit-remaining'], '0');
    assert.ok(Number(last.headers['retry-after']) >= 1);
  });
});
