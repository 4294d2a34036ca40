import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open } from 'lmdb';
import { isAppError } from '../../contracts/errors.ts';
import { lmdbEventStore } from '../../infra/lmdb/eventStore.ts';
import type { ReadStore } from '../../contracts/ports.ts';
import { lmdbReadStore } from '../../infra/lmdb/readStore.ts';
import { lmdbUnmapGroup } from '../../infra/lmdb/unmapGroup.ts';
import { scanAll } from '../../services/snapshot/scan.ts';
import { readStoreSuite } from './readStore.suite.ts';

readStoreSuite('lmdbReadStore', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'marquee-rs-'));
  const store = lmdbReadStore({ dataDir });
  return {
    store,
    async cleanup() {
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
});

// The same behaviour with the handle reopened before every read (an allowance of 0 MB).
readStoreSuite('lmdbReadStore (unmapAfterMb)', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'marquee-rs-'));
  const store = lmdbReadStore({ dataDir, unmapAfterMb: 0 });
  return {
    store,
    async cleanup() {
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
});

// The same again in an unmap group with a second member, idle, that has to close with it.
readStoreSuite('lmdbReadStore (unmapAfterMb, in an unmap group)', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'marquee-rs-'));
  const unmapGroup = lmdbUnmapGroup();
  const store = lmdbReadStore({ dataDir, unmapAfterMb: 0, unmapGroup });
  const idle = lmdbReadStore({ dataDir, unmapAfterMb: 0, unmapGroup });
  return {
    store,
    async cleanup() {
      await store.close();
      await idle.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
});

describe('lmdbReadStore', () => {
  let dataDir: string;
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'marquee-rs-'));
  });
  afterEach(() => {
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('writes none of a batch whose document cannot be encoded, nor its checkpoint', async () => {
    const store = lmdbReadStore({ dataDir });
    try {
      await assert.rejects(
        store.writeBatch<unknown>('c', [{ key: 'a', doc: 1, position: 1 }, { key: 'b', doc: 10n ** 30n, position: 2 }], { name: 'cp', position: 2 }),
        (err) => isAppError(err, 'internal'),
      );
      assert.equal(await store.count('c'), 0);
      assert.equal(await store.getCheckpoint('cp'), 0);
    } finally {
      await store.close();
    }
  });

  it('reads back documents of a new shape written after a batch of that shape failed, beside another new shape', async () => {
    const store = lmdbReadStore({ dataDir });
    try {
      // Shared structures already saved (as in any store in use).
      await store.writeBatch('e', [{ key: 'k', doc: { title: 'Alien', year: 1979 }, position: 1 }]);
      const shaped = { slug: 'best-of', name: 'Best of', items: [1, 2] };
      // The first document's shape is new; the batch fails on the second, inside the transaction.
      await assert.rejects(
        store.writeBatch<unknown>('c', [{ key: 'a', doc: shaped, position: 1 }, { key: 'b', doc: 10n ** 30n, position: 2 }]),
        (err) => isAppError(err, 'internal'),
      );
      await store.writeBatch('c', [{ key: 'a', doc: shaped, position: 1 }]);
      await store.writeBatch('d', [{ key: 'z', doc: { projection: 'p', collection: 'c', events: [] }, position: 1 }]);
      assert.deepEqual((await store.get('c', 'a'))?.doc, shaped);
      assert.deepEqual((await store.get('d', 'z'))?.doc, { projection: 'p', collection: 'c', events: [] });
    } finally {
      await store.close();
    }
  });

  it('writes dictionaries keyed by countries or languages as maps: their key sets never fill the shared structures', async () => {
    const store = lmdbReadStore({ dataDir });
    const countries = ['AR', 'AT', 'BE', 'BR', 'CA', 'DE', 'ES', 'FR', 'GB', 'US'];
    const languages = ['de', 'es', 'fr', 'it', 'ja', 'ko', 'nl', 'pt'];
    // 600 documents, each with key sets of its own: more shapes than the 500 shared slots.
    const docs = Array.from({ length: 600 }, (_, i) => ({
      id: `tm${i}`,
      availability: Object.fromEntries(countries.filter((_c, bit) => (i >> bit) & 1).map((c) => [c, ['netflix']])),
      titles: Object.fromEntries(languages.filter((_l, bit) => ((i * 7) >> bit) & 1).map((l) => [l, `t${i}`])),
    }));
    try {
      await store.writeBatch('c', docs.map((doc, i) => ({ key: doc.id, doc, position: i + 1 })));
      // A shape that comes after them is still shared.
      await store.writeBatch('d', [{ key: 'z', doc: { mediaId: 'tm1', kind: 'movie', position: 3 }, position: 1 }]);
      for (const doc of docs) assert.deepEqual((await store.get('c', doc.id))?.doc, doc);
    } finally {
      await store.close();
    }
    const root = open({ path: join(dataDir, 'lmdb'), readOnly: true });
    try {
      const raw = root.openDB<unknown[], Buffer>({ name: 'rs:docs', keyEncoding: 'binary', sharedStructuresKey: Buffer.from('\u0000structures') });
      const structures = raw.get(Buffer.from('\u0000structures')) ?? [];
      assert.ok(structures.length < 10, `${structures.length} shared structures`);
      assert.ok(structures.some((keys) => JSON.stringify(keys) === '["mediaId","kind","position"]'));
    } finally {
      await root.close();
    }
  });

  it('refuses a key longer than LMDB allows with a non-retriable internal error, writing nothing of the batch', async () => {
    const store = lmdbReadStore({ dataDir });
    try {
      await assert.rejects(
        store.writeBatch('c', [{ key: 'ok', doc: 1, position: 1 }, { key: 'x'.repeat(2100), doc: 2, position: 2 }], { name: 'cp', position: 2 }),
        (err) => isAppError(err, 'internal') && !err.retriable && /maximum key size \(1978\)/.test(err.message),
      );
      assert.equal(await store.count('c'), 0);
      assert.equal(await store.getCheckpoint('cp'), 0);
    } finally {
      await store.close();
    }
  });

  it('guards a write with the copy or tombstone an earlier write of the same batch made, in a collection that had none', async () => {
    // ~3.6 KB encoded, over LARGE_DOCUMENT.
    const big = (v: number): { v: number; items?: string[] } => ({ v, items: Array.from({ length: 400 }, (_, i) => `item-${i}`) });
    const store = lmdbReadStore({ dataDir });
    try {
      // Another collection's copies and tombstones are not this one's.
      await store.writeBatch('other', [{ key: 'k', doc: big(1), position: 1 }, { key: 'k', doc: big(2), position: 2 }, { key: 'g', doc: null, position: 3 }]);
      // `k`: written large, then found large (its copy kept), then deleted (the copy must go with
      // it); `n`: deleted, then written older. All in one batch of a collection with neither.
      assert.deepEqual(
        await store.writeBatch('c', [
          { key: 'k', doc: big(1), position: 10 },
          { key: 'k', doc: big(2), position: 20 },
          { key: 'k', doc: null, position: 30 },
          { key: 'n', doc: null, position: 30 },
          { key: 'n', doc: { v: 0 }, position: 25 },
        ]),
        { written: 4, skipped: 1 },
      );
      // A copy left behind would say 20 and let this older write bring `k` back.
      assert.deepEqual(await store.writeBatch('c', [{ key: 'k', doc: big(0), position: 25 }, { key: 'n', doc: { v: 0 }, position: 31 }]), { written: 1, skipped: 1 });
      assert.equal(await store.get('c', 'k'), null);
      assert.deepEqual(await store.get('c', 'n'), { key: 'n', doc: { v: 0 }, position: 31 });
    } finally {
      await store.close();
    }
  });

  it('keeps the position of a large document apart from its second write on, and guards with or without that copy', async () => {
    // ~3.6 KB encoded, over LARGE_DOCUMENT; { v } is a few bytes.
    const big = (v: number): { v: number; items?: string[] } => ({ v, items: Array.from({ length: 400 }, (_, i) => `item-${i}`) });
    const positionKeys = async (): Promise<string[]> => {
      const root = open({ path: join(dataDir, 'lmdb'), readOnly: true });
      try {
        const positions = root.openDB<number, Buffer>({ name: 'rs:positions', keyEncoding: 'binary' });
        return [...positions.getKeys()].map((key) => key.toString('utf8').replace('\0', '/'));
      } finally {
        await root.close();
      }
    };
    const store = lmdbReadStore({ dataDir });
    try {
      await store.writeBatch('c', [{ key: 'a', doc: big(1), position: 1 }, { key: 's', doc: { v: 1 }, position: 1 }, { key: 'd', doc: big(1), position: 1 }]);
      assert.deepEqual(await positionKeys(), [], 'none on a first write');
      await store.writeBatch('c', [{ key: 'a', doc: big(2), position: 5 }, { key: 's', doc: { v: 2 }, position: 5 }, { key: 'd', doc: big(2), position: 5 }]);
      assert.deepEqual(await positionKeys(), ['c/a', 'c/d'], 'the large documents, found large by the second write');
      // Guarded through the copy: older writes skipped, a newer one lands and moves the copy.
      assert.deepEqual(
        await store.writeBatch('c', [{ key: 'a', doc: big(0), position: 4 }, { key: 's', doc: { v: 0 }, position: 4 }, { key: 'd', doc: null, position: 6 }]),
        { written: 1, skipped: 2 },
      );
      assert.deepEqual(await positionKeys(), ['c/a'], 'a deletion removes the copy');
      assert.equal(await store.get('c', 'd'), null);
      assert.deepEqual(await store.writeBatch('c', [{ key: 'd', doc: big(0), position: 5 }]), { written: 0, skipped: 1 }, 'the tombstone still guards');
      // A document that shrinks keeps its copy, updated on each write.
      await store.writeBatch('c', [{ key: 'a', doc: { v: 3 }, position: 7 }]);
      assert.deepEqual(await store.writeBatch('c', [{ key: 'a', doc: { v: 0 }, position: 6 }]), { written: 0, skipped: 1 });
      assert.deepEqual(await store.get('c', 'a'), { key: 'a', doc: { v: 3 }, position: 7 });
    } finally {
      await store.close();
    }
    // As a store written before `rs:positions`: the documents alone, no copies.
    const root = open({ path: join(dataDir, 'lmdb') });
    try {
      const positions = root.openDB<number, Buffer>({ name: 'rs:positions', keyEncoding: 'binary' });
      await positions.transaction(() => {
        for (const key of [...positions.getKeys()]) positions.removeSync(key);
      });
    } finally {
      await root.close();
    }
    const reopened = lmdbReadStore({ dataDir });
    try {
      assert.deepEqual(
        await reopened.writeBatch('c', [{ key: 'a', doc: big(0), position: 6 }, { key: 's', doc: { v: 6 }, position: 6 }]),
        { written: 1, skipped: 1 },
      );
      assert.deepEqual(await reopened.get('c', 'a'), { key: 'a', doc: { v: 3 }, position: 7 });
      // A drop clears the copies too: the collection starts over.
      await reopened.writeBatch('c', [{ key: 'a', doc: big(8), position: 8 }, { key: 'a', doc: big(9), position: 9 }]);
      await reopened.dropCollection('c');
      assert.deepEqual(await reopened.writeBatch('c', [{ key: 'a', doc: { v: 1 }, position: 1 }]), { written: 1, skipped: 0 });
    } finally {
      await reopened.close();
    }
    assert.deepEqual(await positionKeys(), []);
  });

  it('stores the hot documents it writes itself (readModelEncoder) in the bytes msgpackr stores, and reads back what either wrote', async () => {
    const offer = { providerId: 'netflix', addonProviderId: null, seasonNumber: 1, episodeNumber: 2, webUrl: 'https://www.netflix.com/title/80932992', priceTypes: ['flatrate'], formats: ['hd'], audioLanguages: ['en'], subtitleLanguages: null, availableFrom: '2026-01-01', availableTo: null, platforms: ['web'] };
    const links = { mediaId: 'mv00001000', kind: 'movie', country: 'IT', offers: [{ ...offer, firstSeenAt: '2026-11-14', startedOn: '2026-11-14' }] };
    const change = { changes: [{ position: 7, at: '2026-11-14T06:00:00.060Z', mediaId: 'mv00001000', type: 'new', offer, changed: [] }] };
    const store = lmdbReadStore({ dataDir });
    try {
      // `old`: written by msgpackr, the shapes being new (as every document before the encoder);
      // `new`: the same documents once the shapes are shared, written by the encoder.
      await store.writeBatch('links', [{ key: 'old', doc: links, position: 7 }]);
      await store.writeBatch('changes', [{ key: 'old', doc: change, position: 7 }]);
      await store.writeBatch('links', [{ key: 'new', doc: links, position: 7 }]);
      await store.writeBatch('changes', [{ key: 'new', doc: change, position: 7 }]);
      for (const [collection, doc] of [['links', links], ['changes', change]] as const) {
        for (const key of ['old', 'new']) assert.deepEqual(await store.get(collection, key), { key, doc, position: 7 });
      }
    } finally {
      await store.close();
    }
    const root = open({ path: join(dataDir, 'lmdb'), readOnly: true });
    try {
      const raw = root.openDB<Buffer, Buffer>({ name: 'rs:docs', keyEncoding: 'binary', encoding: 'binary' });
      for (const collection of ['links', 'changes']) {
        const bytes = (key: string) => raw.get(Buffer.from(`${collection}\0${key}`))?.toString('hex');
        assert.ok(bytes('old'));
        assert.equal(bytes('new'), bytes('old'), collection);
      }
    } finally {
      await root.close();
    }
  });

  it('refuses calls after close with closed', async () => {
    const store = lmdbReadStore({ dataDir });
    await store.close();
    await assert.rejects(store.get('c', 'a'), (err) => isAppError(err, 'closed'));
    await assert.rejects(store.writeBatch('c', [{ key: 'a', doc: 1, position: 1 }]), (err) => isAppError(err, 'closed'));
  });

  it('shares one data directory with the event store without mixing their data', async () => {
    const events = lmdbEventStore({ dataDir });
    const store = lmdbReadStore({ dataDir });
    try {
      await events.append('s', [{ type: 'GenreDefined', data: { genre: { id: 1, slug: 'a', name: 'A' } }, metadata: {} }], 'no_stream');
      await store.writeBatch('c', [{ key: 'a', doc: 1, position: 1 }], { name: 'cp', position: 1 });
      assert.deepEqual(await store.listCollections(), ['c']);
      assert.equal((await events.readAll()).length, 1);
    } finally {
      await store.close();
      await events.close();
    }
  });
  it('with unmapAfterMb, answers reads and writes made at once while the handle is reopened under them', async () => {
    // 0 MB: every read reopens the handle first, so the calls below overlap reopenings.
    const store = lmdbReadStore({ dataDir, unmapAfterMb: 0 });
    try {
      await store.writeBatch('c', Array.from({ length: 200 }, (_, i) => ({ key: `k${String(i).padStart(3, '0')}`, doc: { i }, position: 1 })), { name: 'before', position: 4 });
      const results = await Promise.all([
        ...Array.from({ length: 40 }, (_, i) => store.get<{ i: number }>('c', `k${String(i * 5).padStart(3, '0')}`).then((d) => d?.doc.i)),
        store.scan<{ i: number }>('c', { start: 'k100', limit: 3 }).then((page) => page.map((d) => d.doc.i)),
        store.count('c'),
        store.writeBatch('d', [{ key: 'x', doc: { i: -1 }, position: 1 }], { name: 'cp', position: 9 }).then((r) => r.written),
        store.getCheckpoint('before'),
      ]);
      assert.deepEqual(results.slice(0, 40), Array.from({ length: 40 }, (_, i) => i * 5));
      assert.deepEqual(results.slice(40), [[100, 101, 102], 200, 1, 4]);
      assert.deepEqual((await store.get('d', 'x'))?.doc, { i: -1 });
      assert.equal(await store.getCheckpoint('cp'), 9);
    } finally {
      await store.close();
    }
  });

  it('with unmapAfterMb, drops the file pages a read-through touched from resident memory (Linux)', async function () {
    if (!existsSync('/proc/self/status')) this.skip();
    // 12 MB of documents, written and closed first.
    const writer = lmdbReadStore({ dataDir });
    const filler = 'x'.repeat(3000);
    for (let batch = 0; batch < 8; batch += 1) {
      await writer.writeBatch('c', Array.from({ length: 500 }, (_, i) => ({ key: `k${batch * 500 + i}`.padStart(8, '0'), doc: { filler, i }, position: 1 })));
    }
    await writer.close();
    const residentFileMb = (): number => Number(/RssFile:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]) / 1024;
    const readThrough = async (store: ReadStore): Promise<{ docs: number; growthMb: number }> => {
      const before = residentFileMb();
      let growthMb = 0;
      let docs = 0;
      try {
        for await (const { doc } of scanAll<{ filler: string }>(store, 'c', { pageSize: 100 })) {
          assert.equal(doc.filler, filler);
          docs += 1;
          growthMb = Math.max(growthMb, residentFileMb() - before);
        }
      } finally {
        await store.close();
      }
      return { docs, growthMb };
    };
    const plain = await readThrough(lmdbReadStore({ dataDir }));
    const unmapped = await readThrough(lmdbReadStore({ dataDir, unmapAfterMb: 2 }));
    assert.equal(plain.docs, 4000);
    assert.equal(unmapped.docs, 4000);
    assert.ok(plain.growthMb >= 10, `without it the read-through maps the whole file (${plain.growthMb} MB)`);
    assert.ok(unmapped.growthMb < 6, `with 2 MB allowed, at most ${unmapped.growthMb} MB stay mapped`);

    // Two stores reading through at once: a handle closed alone leaves the file mapped by the
    // other's, unless both are of one unmap group.
    const both = async (group: SharedArrayBuffer | undefined): Promise<number> => {
      const options = { dataDir, unmapAfterMb: 2, ...(group ? { unmapGroup: group } : {}) };
      const results = await Promise.all([readThrough(lmdbReadStore(options)), readThrough(lmdbReadStore(options))]);
      assert.deepEqual(results.map((r) => r.docs), [4000, 4000]);
      return Math.max(...results.map((r) => r.growthMb));
    };
    const alone = await both(undefined);
    const grouped = await both(lmdbUnmapGroup());
    assert.ok(alone >= 10, `two stores without a group map the whole file (${alone} MB)`);
    assert.ok(grouped < 6, `two stores of one group keep at most ${grouped} MB mapped`);
  });
});
