/**
 * Hostile requests against the kept answers and their hot path (services/api/hotPath.ts,
 * responseCache.ts): one answer asked for by URLs spelled hundreds of ways, and a flood of
 * lookups with keys that are not cached, 3 at a time. Each case checks the answers and that a
 * concurrent `/healthz` keeps answering within 100 ms while it runs.
 */
import assert from 'node:assert/strict';
import type { Clock } from '../../contracts/ports.ts';
import { inProcessSearchIndex } from '../../infra/search/inProcessSearch.ts';
import { createApp, type ApiApp } from '../../services/api/app.ts';
import { createApiKey } from '../../services/api/keys.ts';
import type { ResponseCache } from '../../services/api/responseCache.ts';
import { IDS, listenLocally, openFixtureStores, seedCatalog, type FixtureStores } from './api.fixture.ts';
import { testLinkTokens } from './api.linkTokens.ts';
import { assertResponsive, probeHealthzDuring } from './hostile.support.ts';

const clock: Clock = { now: () => new Date('2026-11-21T08:00:00Z') };
const MAX_ENTRIES = 200;

describe('hostile requests to the kept answers', function () {
  this.timeout(120_000);
  let stores: FixtureStores;
  let app: ApiApp;
  let server: { url: string; close(): Promise<void> };
  let key: string;

  before(async () => {
    stores = openFixtureStores('marquee-hostile-hot-', clock);
    const search = inProcessSearchIndex();
    await seedCatalog(stores.eventStore, stores.readStore, search);
    key = (await createApiKey(stores.apiKeys, 'hostile', clock)).key;
    app = createApp({
      readStore: stores.readStore, apiKeys: stores.apiKeys, search, linkTokens: await testLinkTokens(), clock,
      rateLimit: { perMinute: 1_000_000 }, responseCache: { maxEntries: MAX_ENTRIES },
    });
    server = await listenLocally(app);
  });

  after(async () => {
    await server?.close();
    await stores?.close();
  });

  /** Sends `paths` `concurrency` at a time; returns each answer's status and body. */
  async function flood(paths: string[], headers: (i: number) => Record<string, string>, concurrency = 3): Promise<Array<{ status: number; text: string }>> {
    const out: Array<{ status: number; text: string }> = new Array(paths.length);
    let next = 0;
    await Promise.all(Array.from({ length: concurrency }, async () => {
      while (next < paths.length) {
        const i = next++;
        const res = await fetch(`${server.url}${paths[i]}`, { headers: headers(i) });
        out[i] = { status: res.status, text: await res.text() };
      }
    }));
    return out;
  }

  it('keeps one answer for a URL spelled 500 ways (ignored parameters, order), aliases bounded', async () => {
    const cache = app.responseCache as ResponseCache;
    const base = `/v1/media/${IDS.landGirls}`;
    const paths = Array.from({ length: 500 }, (_, i) => (i % 2 === 0 ? `${base}?country=US&junk=${i}` : `${base}?junk=${i}&country=US`));
    const result = await probeHealthzDuring(server.url, flood(paths, () => ({ authorization: `Bearer ${key}` })));
    assertResponsive(result);
    const answers = result.outcome;
    assert.ok(answers.every((a) => a.status === 200), 'every spelling answers 200');
    assert.equal(new Set(answers.map((a) => a.text)).size, 1, 'every spelling gets the same bytes');
    // One rendered answer for all of them (kept by parsed parameters), and no more aliases than answers may be kept.
    assert.ok(cache.size <= 2, `answers kept: ${cache.size}`);
    assert.ok(cache.aliases <= MAX_ENTRIES, `aliases: ${cache.aliases}`);
    assert.ok(cache.hits >= paths.length - 50, `hits: ${cache.hits}`);
  });

  it('refuses a flood of well-formed keys that are not cached, on a kept URL, without the hot path', async () => {
    const path = `/v1/media/${IDS.landGirls}?country=US`;
    const served = app.hotPath?.served ?? 0;
    const fakes = Array.from({ length: 300 }, (_, i) => `mk_live_${i.toString(16).padStart(32, '0')}`);
    const result = await probeHealthzDuring(server.url, flood(fakes.map(() => path), (i) => ({ authorization: `Bearer ${fakes[i]}` })));
    assertResponsive(result);
    assert.ok(result.outcome.every((a) => a.status === 401 && JSON.parse(a.text).code === 'unauthorized'));
    assert.equal(app.hotPath?.served, served, 'no refused key took the hot path');
  });
});
