/**
 * Hostile requests to the change feed and the day lists: forged and oversized cursors, lists
 * past their bound, and a filter that matches nothing over a long feed (bounded work per
 * request). Each answers promptly with the documented status while /healthz stays responsive.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChangeDoc } from '../../contracts/changeModels.ts';
import type { Clock, ReadStore } from '../../contracts/ports.ts';
import { closeLmdb } from '../../infra/lmdb/env.ts';
import { lmdbEventStore } from '../../infra/lmdb/eventStore.ts';
import { lmdbApiKeyStore } from '../../infra/lmdb/apiKeyStore.ts';
import { lmdbReadStore } from '../../infra/lmdb/readStore.ts';
import { inProcessSearchIndex } from '../../infra/search/inProcessSearch.ts';
import { changeKey } from '../../projections/changes.ts';
import { CHANGES_COLLECTION, HISTORY_COLLECTION, changeBlockWrites } from '../fixtures/changeBlocks.ts';
import { createApiKey } from '../../services/api/keys.ts';
import { startApi, type RunningApi } from '../../services/api/server.ts';
import { encodeCursor, FEED_EXAMINE_MAX } from '../../services/changes/feed.ts';
import { testLinkTokens } from './api.linkTokens.ts';
import { assertResponsive, probeHealthzDuring } from './hostile.support.ts';

const clock: Clock = { now: () => new Date('2026-11-21T08:00:00Z') };
const FEED = 30_000;

describe('hostile requests to the change feed (e2e)', function () {
  this.timeout(120_000);
  let dir: string;
  let readStore: ReadStore;
  let api: RunningApi;
  let key: string;
  const closers: Array<() => Promise<void>> = [];

  const get = async (path: string) => {
    const res = await fetch(`${api.url}${path}`, { headers: { authorization: `Bearer ${key}` } });
    return { status: res.status, body: (await res.json()) as any };
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'marquee-hostile-changes-'));
    readStore = lmdbReadStore({ dataDir: dir });
    const eventStore = lmdbEventStore({ dataDir: dir, clock });
    const search = inProcessSearchIndex();
    // A long feed of one title's changes, written as the projection writes them.
    const writes = changeBlockWrites(Array.from({ length: FEED }, (_, i): ChangeDoc => {
      const position = i + 1;
      const offer = { providerId: 'netflix', addonProviderId: null, seasonNumber: null, episodeNumber: null, webUrl: `https://n.example/${position}` };
      return { position, type: 'removed', at: '2026-11-20T06:00:00Z', country: 'US', mediaId: 'mv00000001', kind: 'movie', offer, after: null, changed: [] };
    }));
    for (let i = 0; i < writes.length; i += 5) await readStore.writeBatch(CHANGES_COLLECTION, writes.slice(i, i + 5));
    await readStore.setCheckpoint(CHANGES_COLLECTION, FEED);
    await readStore.setCheckpoint(HISTORY_COLLECTION, FEED);
    const apiKeys = lmdbApiKeyStore({ dataDir: dir });
    api = await startApi({ port: 0, readStore, apiKeys, eventStore, search, linkTokens: await testLinkTokens(), clock, rateLimit: { perMinute: 1_000_000 } });
    key = (await createApiKey(apiKeys, 'hostile', clock)).key;
    closers.push(() => api.close(), () => search.close(), () => eventStore.close(), () => apiKeys.close(), () => readStore.close());
  });

  after(async () => {
    for (const close of closers) await close();
    await closeLmdb(dir);
    rmSync(dir, { recursive: true, force: true });
  });

  it('examines a bounded stretch of the feed for a filter that matches nothing, and moves the cursor past it', async () => {
    const attack = get('/v1/changes?country=US&media_id=mv99999999&provider=nobody&limit=1000');
    const result = await probeHealthzDuring(api.url, attack);
    assertResponsive(result);
    const r = result.outcome;
    assert.equal(r.status, 200);
    assert.deepEqual([r.body.results.length, r.body.has_more], [0, true]);
    assert.equal(r.body.next_cursor, encodeCursor(changeKey('US', FEED_EXAMINE_MAX)));
  });

  it('refuses forged and oversized cursors and lists past their bound with 400', async () => {
    const attacks = [
      `since=${'A'.repeat(10_000)}`,
      `since=${Buffer.from('US:../../etc/passwd').toString('base64url')}`,
      'since=99999999999999999999',
      'since=-000000000000001',
      `media_id=${Array.from({ length: 101 }, (_, i) => `mv${i}`).join(',')}`,
      `type=${'new,'.repeat(200)}`,
      'provider=,,,',
    ];
    const run = Promise.all(attacks.map((q) => get(`/v1/changes?country=US&${q}`)));
    const result = await probeHealthzDuring(api.url, run);
    assertResponsive(result);
    for (const [i, r] of result.outcome.entries()) {
      assert.equal(r.status, 400, String(attacks[i]).slice(0, 60));
      assert.equal(r.body.code, 'invalid_parameter');
    }
  });

  it('clamps huge limits and day windows instead of doing unbounded work', async () => {
    const run = Promise.all([
      get('/v1/changes?country=US&limit=999999999'),
      get('/v1/new?country=US&days=999999999&limit=999999999'),
      get('/v1/leaving?country=US&days=999999999&offset=999999999'),
    ]);
    const result = await probeHealthzDuring(api.url, run);
    assertResponsive(result);
    const [changes, fresh, leaving] = result.outcome;
    assert.deepEqual([changes?.status, changes?.body.results.length, changes?.body.has_more], [200, 1000, true]);
    assert.deepEqual([fresh?.status, fresh?.body.limit, fresh?.body.from], [200, 200, '2026-08-24']);
    assert.deepEqual([leaving?.status, leaving?.body.to], [200, '2027-02-19']);
  });
});
