/**
 * The change-feed reader and the webhook store on each read store (LMDB, and MongoDB/FerretDB
 * when MONGODB_URL is set): a filtered scan examines a bounded number of changes and moves
 * its cursor past them; nothing beyond the committed checkpoints is read, and what commits
 * later is read exactly once from an earlier cursor; updates and leases are compare-and-set.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MongoClient } from 'mongodb';
import type { ChangeDoc } from '../../contracts/changeModels.ts';
import type { ReadStore } from '../../contracts/ports.ts';
import { closeLmdb } from '../../infra/lmdb/env.ts';
import { lmdbReadStore } from '../../infra/lmdb/readStore.ts';
import { mongoReadStore } from '../../infra/mongo/readStore.ts';
import { changeKey } from '../../projections/changes.ts';
import { CHANGES_COLLECTION, HISTORY_COLLECTION, changeBlockWrites } from '../fixtures/changeBlocks.ts';
import { feedSourceOf, readFeed } from '../../services/changes/feed.ts';
import { acquireLease } from '../../services/webhooks/store.ts';
import { describeWithServer } from '../ports/requireServer.ts';

function change(position: number, mediaId: string): ChangeDoc {
  const offer = { providerId: 'netflix', addonProviderId: null, seasonNumber: null, episodeNumber: null, webUrl: `u${position}` };
  return {
    position, type: 'new', at: '2026-11-02T06:00:00Z', country: 'US', mediaId, kind: 'movie', offer,
    after: { ...offer, priceTypes: ['flatrate'], formats: null, audioLanguages: null, subtitleLanguages: null, availableFrom: null, availableTo: null, platforms: null },
    changed: [],
  };
}

/** Writes changes at these positions (every 100th is of `mv00000001`) and commits the feed up to `committed`. */
async function seed(store: ReadStore, positions: number[], committed: number): Promise<void> {
  const writes = changeBlockWrites(positions.map((p) => change(p, p % 100 === 0 ? 'mv00000001' : 'mv00000002')));
  for (let i = 0; i < writes.length; i += 5) await store.writeBatch(CHANGES_COLLECTION, writes.slice(i, i + 5));
  await store.setCheckpoint(CHANGES_COLLECTION, committed);
  await store.setCheckpoint(HISTORY_COLLECTION, committed);
}

function suite(open: () => Promise<ReadStore>, done: () => Promise<void>): void {
  let store: ReadStore;
  before(async function () {
    this.timeout(120_000);
    store = await open();
    await seed(store, Array.from({ length: 2000 }, (_, i) => i + 1), 2000);
  });
  after(async () => {
    await store?.close();
    await done();
  });

  it('examines at most examineMax changes per call and moves the cursor past them', async () => {
    const source = feedSourceOf(store);
    const filter = { mediaIds: new Set(['mv00000001']) };
    const first = await readFeed(source, { country: 'US', after: null, limit: 100, filter, examineMax: 700 });
    assert.deepEqual(first.changes.map((c) => c.doc.position), [100, 200, 300, 400, 500, 600, 700]);
    assert.equal(first.lastKey, changeKey('US', 700));
    assert.equal(first.hasMore, true);
    const rare = await readFeed(source, { country: 'US', after: null, limit: 100, filter: { mediaIds: new Set(['nope']) }, examineMax: 700 });
    assert.deepEqual([rare.changes.length, rare.lastKey, rare.hasMore], [0, changeKey('US', 700), true]);
    let after = rare.lastKey;
    let calls = 1;
    for (;;) {
      const page = await readFeed(source, { country: 'US', after, limit: 100, filter: { mediaIds: new Set(['nope']) }, examineMax: 700 });
      calls += 1;
      after = page.lastKey;
      if (!page.hasMore) break;
    }
    assert.deepEqual([calls, after], [3, changeKey('US', 2000)]);
  });

  it('reads nothing past the committed position, and later commits exactly once from an earlier cursor', async function () {
    this.timeout(60_000);
    const source = feedSourceOf(store);
    // Written but not yet committed (a slower batch): invisible.
    // (Block 2000 begins with the seed's last change.)
    const seeded = change(2000, 'mv00000001');
    await store.writeBatch(CHANGES_COLLECTION, changeBlockWrites([seeded, ...[2001, 2003, 2004].map((p) => change(p, 'mv00000003'))]));
    const read = async (after: string | null) => {
      const ids: number[] = [];
      for (;;) {
        const page = await readFeed(source, { country: 'US', after, limit: 333 });
        ids.push(...page.changes.map((c) => c.doc.position));
        after = page.lastKey;
        if (!page.hasMore) return { ids, after };
      }
    };
    const first = await read(null);
    assert.equal(first.ids.length, 2000);
    assert.equal(first.after, changeKey('US', 2000));
    await store.setCheckpoint(CHANGES_COLLECTION, 2004);
    assert.deepEqual((await read(first.after)).ids, [], 'the history has not committed them yet');
    await store.setCheckpoint(HISTORY_COLLECTION, 2004);
    const next = await read(first.after);
    assert.deepEqual(next.ids, [2001, 2003, 2004]);
    assert.equal(next.after, changeKey('US', 2004));
    // The block read above grows (the next batch of the projection): its new change only, once committed.
    await store.writeBatch(CHANGES_COLLECTION, changeBlockWrites([seeded, ...[2001, 2003, 2004, 2006].map((p) => change(p, 'mv00000003'))]));
    assert.deepEqual((await read(next.after)).ids, []);
    await store.setCheckpoint(CHANGES_COLLECTION, 2006);
    await store.setCheckpoint(HISTORY_COLLECTION, 2006);
    const last = await read(next.after);
    assert.deepEqual(last.ids, [2006]);
    assert.deepEqual((await read(last.after)).ids, []);
    assert.deepEqual((await read(first.after)).ids, [2001, 2003, 2004, 2006]);
  });

  it('gives a webhook lease to one of several racing holders, renews it for its holder, and hands it over once expired', async () => {
    for (let round = 0; round < 5; round += 1) {
      const webhook = `wh_race${round}`;
      const got = await Promise.all(['a', 'b', 'c', 'd'].map((h) => acquireLease(store, webhook, h, 1000, 500)));
      assert.equal(got.filter(Boolean).length, 1, `round ${round}: ${got}`);
    }
    const got = await Promise.all(['a', 'b'].map((h) => acquireLease(store, 'wh_1', h, 1000, 500)));
    const holder = got[0] ? 'a' : 'b';
    const other = holder === 'a' ? 'b' : 'a';
    assert.equal(await acquireLease(store, 'wh_1', other, 1400, 500), false, 'still held');
    assert.equal(await acquireLease(store, 'wh_1', holder, 1400, 500), true, 'renewed by its holder');
    assert.equal(await acquireLease(store, 'wh_1', other, 1800, 500), false, 'the renewal holds');
    assert.equal(await acquireLease(store, 'wh_1', other, 2000, 500), true, 'taken over once expired');
    assert.equal(await acquireLease(store, 'wh_1', holder, 2100, 500), false);
    // Old epochs are cleaned up: the lease keeps a couple of documents, not one per renewal.
    for (let t = 2000; t < 6000; t += 300) await acquireLease(store, 'wh_1', other, t, 500);
    assert.ok((await store.count('webhook_leases', { prefix: 'wh_1:' })) <= 3);
  });
}

describe('change feed and webhook store on LMDB', () => {
  const dir = mkdtempSync(join(tmpdir(), 'marquee-feed-'));
  suite(async () => lmdbReadStore({ dataDir: dir }), async () => {
    await closeLmdb(dir);
    rmSync(dir, { recursive: true, force: true });
  });
});

describeWithServer('change feed and webhook store on MongoDB', 'MONGODB_URL', (url) => {
  const database = `marquee_feed_${process.pid}_${Date.now().toString(36)}`;
  suite(async () => mongoReadStore({ url, database }), async () => {
    const client = new MongoClient(url, { serverSelectionTimeoutMS: 3000 });
    try {
      await client.db(database).dropDatabase();
    } finally {
      await client.close();
    }
  });
});
