/**
 * The ReadStore behaviour suite. Every adapter runs it through its own `*.int.test.ts`:
 *
 *   readStoreSuite('lmdbReadStore', async () => ({ store, cleanup }));
 *
 * Every test uses its own collection, checkpoint and alias names, so an adapter may hand the
 * same server to every test.
 */
import assert from 'node:assert/strict';
import type { ReadStore, StoredDocument } from '../../contracts/ports.ts';
import { uniqueName } from './support.ts';

export interface ReadStoreFixture {
  store: ReadStore;
  cleanup(): Promise<void>;
}

interface Doc {
  n: number;
}

const keysOf = (docs: Array<StoredDocument<unknown>>) => docs.map((d) => d.key);

export function readStoreSuite(name: string, make: () => Promise<ReadStoreFixture>): void {
  describe(`ReadStore behaviour: ${name}`, () => {
    let fixture: ReadStoreFixture;
    let store: ReadStore;
    let col: string;
    beforeEach(async () => {
      fixture = await make();
      store = fixture.store;
      col = uniqueName('col');
    });
    afterEach(async () => {
      await fixture.cleanup();
    });

    /** Writes `keys` with docs { n: index } at positions 1.. */
    async function seed(keys: string[]): Promise<void> {
      await store.writeBatch<Doc>(col, keys.map((key, i) => ({ key, doc: { n: i }, position: i + 1 })));
    }

    describe('get and getMany', () => {
      it('returns null for a document that was never written', async () => {
        assert.equal(await store.get(col, 'nope'), null);
      });

      it('returns a written document with its key and position', async () => {
        await store.writeBatch<Doc>(col, [{ key: 'a', doc: { n: 1 }, position: 7 }]);
        assert.deepEqual(await store.get<Doc>(col, 'a'), { key: 'a', doc: { n: 1 }, position: 7 });
      });

      it('returns documents in the order of the keys asked, null where missing', async () => {
        await seed(['a', 'b', 'c']);
        const docs = await store.getMany<Doc>(col, ['c', 'x', 'a']);
        assert.deepEqual(docs, [
          { key: 'c', doc: { n: 2 }, position: 3 },
          null,
          { key: 'a', doc: { n: 0 }, position: 1 },
        ]);
      });

      it('returns many keys of similar names, some missing, one deleted, repeated keys too', async () => {
        const written = Array.from({ length: 30 }, (_, i) => `US:m${String(i * 3).padStart(4, '0')}`);
        await seed(written);
        await store.writeBatch(col, [{ key: 'US:m0003', doc: null, position: 100 }]);
        const asked = [...Array.from({ length: 40 }, (_, i) => `US:m${String(i * 2).padStart(4, '0')}`), 'US:m0003', 'US:m0000', 'UT:m0000'];
        const docs = await store.getMany<Doc>(col, asked);
        assert.deepEqual(
          docs.map((d) => d?.key ?? null),
          asked.map((key) => (written.includes(key) && key !== 'US:m0003' ? key : null)),
        );
        assert.deepEqual(docs[0], { key: 'US:m0000', doc: { n: 0 }, position: 1 });
      });

      it('keeps collections apart', async () => {
        const other = uniqueName('other');
        await store.writeBatch<Doc>(col, [{ key: 'a', doc: { n: 1 }, position: 1 }]);
        await store.writeBatch<Doc>(other, [{ key: 'a', doc: { n: 2 }, position: 1 }]);
        assert.deepEqual((await store.get<Doc>(col, 'a'))?.doc, { n: 1 });
        assert.deepEqual((await store.get<Doc>(other, 'a'))?.doc, { n: 2 });
        assert.equal(await store.count(col), 1);
      });

      it('stores nested documents as they were written', async () => {
        const doc = { title: 'Ünïcode ✓', tags: ['a', 'b'], nested: { x: null, y: 1.5, z: [1, { k: true }] } };
        await store.writeBatch(col, [{ key: 'k', doc, position: 1 }]);
        assert.deepEqual((await store.get(col, 'k'))?.doc, doc);
      });
    });

    describe('scan and count', () => {
      const keys = ['b', 'a', 'ba', 'bb', 'c', 'é', 'Z', 'a1'];
      // Byte order of UTF-8: upper case before lower case, multi-byte characters last.
      const ordered = ['Z', 'a', 'a1', 'b', 'ba', 'bb', 'c', 'é'];

      it('scans a whole collection in ascending byte order of the keys', async () => {
        await seed(keys);
        assert.deepEqual(keysOf(await store.scan(col)), ordered);
      });

      it('reads back the keys it scans, short and long, ASCII or not', async () => {
        // Either side of 64 bytes with the collection's name (an adapter may read short keys
        // another way), and non-ASCII at the start, the middle and the end.
        const odd = ['x', 'a'.repeat(40), 'a'.repeat(50), 'a'.repeat(58), 'a'.repeat(70), 'DE:mv00000001', 'ümlaut', 'mid\u00e9dle', 'end\u{1F600}', 'a'.repeat(55) + 'é', '\u007f'];
        await seed(odd);
        assert.deepEqual(keysOf(await store.scan(col)), [...odd].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))));
      });

      it('does not include documents of another collection whose name extends this one', async () => {
        await seed(['a']);
        await store.writeBatch(`${col}x`, [{ key: 'a', doc: 1, position: 1 }]);
        await store.writeBatch(`${col}`.slice(0, -1), [{ key: 'zz', doc: 1, position: 1 }]);
        assert.deepEqual(keysOf(await store.scan(col)), ['a']);
        assert.equal(await store.count(col), 1);
      });

      it('scans only keys with a prefix', async () => {
        await seed(keys);
        assert.deepEqual(keysOf(await store.scan(col, { prefix: 'b' })), ['b', 'ba', 'bb']);
        assert.deepEqual(keysOf(await store.scan(col, { prefix: 'q' })), []);
      });

      it('scans keys from start (inclusive) to end (exclusive)', async () => {
        await seed(keys);
        assert.deepEqual(keysOf(await store.scan(col, { start: 'a1', end: 'bb' })), ['a1', 'b', 'ba']);
        assert.deepEqual(keysOf(await store.scan(col, { start: 'b' })), ['b', 'ba', 'bb', 'c', 'é']);
        assert.deepEqual(keysOf(await store.scan(col, { end: 'a1' })), ['Z', 'a']);
        assert.deepEqual(keysOf(await store.scan(col, { prefix: 'b', start: 'ba' })), ['ba', 'bb']);
        // A prefix with an end (the webhook log's trim: a webhook's deliveries before one).
        assert.deepEqual(keysOf(await store.scan(col, { prefix: 'b', end: 'bb' })), ['b', 'ba']);
        assert.deepEqual(keysOf(await store.scan(col, { prefix: 'b', end: 'c', limit: 2 })), ['b', 'ba']);
        assert.deepEqual(keysOf(await store.scan(col, { prefix: 'b', end: 'a1' })), []);
        assert.deepEqual(keysOf(await store.scan(col, { start: 'c', end: 'c' })), []);
      });

      it('pages with offset and limit', async () => {
        await seed(keys);
        assert.deepEqual(keysOf(await store.scan(col, { offset: 2, limit: 3 })), ['a1', 'b', 'ba']);
        assert.deepEqual(keysOf(await store.scan(col, { offset: 7, limit: 3 })), ['é']);
        assert.deepEqual(keysOf(await store.scan(col, { offset: 8 })), []);
        assert.deepEqual(keysOf(await store.scan(col, { prefix: 'b', offset: 1, limit: 1 })), ['ba']);
      });

      it('scans in reverse with the same bounds, offset and limit', async () => {
        await seed(keys);
        assert.deepEqual(keysOf(await store.scan(col, { reverse: true })), [...ordered].reverse());
        assert.deepEqual(keysOf(await store.scan(col, { prefix: 'b', reverse: true })), ['bb', 'ba', 'b']);
        assert.deepEqual(keysOf(await store.scan(col, { start: 'a1', end: 'bb', reverse: true })), ['ba', 'b', 'a1']);
        assert.deepEqual(keysOf(await store.scan(col, { reverse: true, offset: 1, limit: 2 })), ['c', 'bb']);
      });

      it('scans keys of every length and nesting in byte order, whole, by range and page by page', async () => {
        // Keys that are prefixes of each other at every length (an adapter may group keys by
        // their leading characters), multi-byte and astral characters, a deleted key.
        const many = ['US:', 'US:1', 'US:10', 'US:100', 'US:1000', 'US:10000', 'US:1001', 'US:101', 'US:11', 'US:2', 'US:20', 'US:9',
          'US:a😀', 'US:a😀b', 'US:aé', 'US:a\uffff', 'US;', 'U', 'UT:1', 'V', 'x'.repeat(41), 'x'.repeat(40), 'x'.repeat(39), 'é1', 'é'];
        await seed(many);
        await store.writeBatch(col, [{ key: 'US:11', doc: null, position: 100 }]);
        const live = many.filter((k) => k !== 'US:11').sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
        assert.deepEqual(keysOf(await store.scan(col)), live);
        assert.deepEqual(keysOf(await store.scan(col, { reverse: true })), [...live].reverse());
        const inUs = live.filter((k) => k.startsWith('US:'));
        assert.deepEqual(keysOf(await store.scan(col, { prefix: 'US:' })), inUs);
        assert.deepEqual(keysOf(await store.scan(col, { prefix: 'US:10', reverse: true })), ['US:101', 'US:1001', 'US:10000', 'US:1000', 'US:100', 'US:10']);
        assert.deepEqual(keysOf(await store.scan(col, { start: 'US:1000', end: 'US:2' })), ['US:1000', 'US:10000', 'US:1001', 'US:101']);
        assert.deepEqual(keysOf(await store.scan(col, { start: 'US:a', end: 'V', offset: 1, limit: 3 })), ['US:a\uffff', 'US:a😀', 'US:a😀b']);
        // Paged as the ranking job and the release builder page: from just after the last key.
        for (const limit of [1, 2, 5]) {
          const paged: string[] = [];
          let start: string | undefined;
          for (;;) {
            const page = await store.scan(col, { prefix: 'US:', ...(start === undefined ? {} : { start }), limit });
            paged.push(...keysOf(page));
            if (page.length < limit) break;
            start = `${page.at(-1)?.key}\u0000`;
          }
          assert.deepEqual(paged, inUs, `pages of ${limit}`);
        }
        assert.equal(await store.count(col, { prefix: 'US:' }), inUs.length);
      });

      it('returns documents with their positions from a scan', async () => {
        await seed(['a', 'b']);
        assert.deepEqual(await store.scan<Doc>(col), [
          { key: 'a', doc: { n: 0 }, position: 1 },
          { key: 'b', doc: { n: 1 }, position: 2 },
        ]);
      });

      it('counts the documents of a collection, or of a prefix', async () => {
        assert.equal(await store.count(col), 0);
        await seed(keys);
        assert.equal(await store.count(col), 8);
        assert.equal(await store.count(col, { prefix: 'b' }), 3);
        assert.equal(await store.count(col, { prefix: 'zz' }), 0);
      });
    });

    describe('position guard', () => {
      it('writes a document whose position is ahead of the stored one', async () => {
        await store.writeBatch<Doc>(col, [{ key: 'a', doc: { n: 1 }, position: 5 }]);
        const result = await store.writeBatch<Doc>(col, [{ key: 'a', doc: { n: 2 }, position: 6 }]);
        assert.deepEqual(result, { written: 1, skipped: 0 });
        assert.deepEqual(await store.get<Doc>(col, 'a'), { key: 'a', doc: { n: 2 }, position: 6 });
      });

      it('skips a write whose position is not ahead of the stored one', async () => {
        await store.writeBatch<Doc>(col, [{ key: 'a', doc: { n: 1 }, position: 5 }]);
        const result = await store.writeBatch<Doc>(col, [{ key: 'a', doc: { n: 0 }, position: 4 }]);
        assert.deepEqual(result, { written: 0, skipped: 1 });
        assert.deepEqual(await store.get<Doc>(col, 'a'), { key: 'a', doc: { n: 1 }, position: 5 });
      });

      it('makes a redelivered batch a no-op', async () => {
        const batch = [
          { key: 'a', doc: { n: 1 }, position: 3 },
          { key: 'b', doc: { n: 2 }, position: 4 },
        ];
        assert.deepEqual(await store.writeBatch<Doc>(col, batch), { written: 2, skipped: 0 });
        assert.deepEqual(await store.writeBatch<Doc>(col, batch), { written: 0, skipped: 2 });
        assert.deepEqual(await store.scan<Doc>(col), [
          { key: 'a', doc: { n: 1 }, position: 3 },
          { key: 'b', doc: { n: 2 }, position: 4 },
        ]);
      });

      it('guards two writes of one key inside one batch against each other', async () => {
        const result = await store.writeBatch<Doc>(col, [
          { key: 'a', doc: { n: 2 }, position: 9 },
          { key: 'a', doc: { n: 1 }, position: 8 },
        ]);
        assert.deepEqual(result, { written: 1, skipped: 1 });
        assert.deepEqual((await store.get<Doc>(col, 'a'))?.doc, { n: 2 });
      });

      it('deletes with a null document, hiding it from get, getMany, scan and count', async () => {
        await seed(['a', 'b']);
        assert.deepEqual(await store.writeBatch(col, [{ key: 'a', doc: null, position: 10 }]), { written: 1, skipped: 0 });
        assert.equal(await store.get(col, 'a'), null);
        assert.deepEqual(await store.getMany(col, ['a', 'b']).then((d) => d.map((x) => x?.key ?? null)), [null, 'b']);
        assert.deepEqual(keysOf(await store.scan(col)), ['b']);
        assert.deepEqual(keysOf(await store.scan(col, { reverse: true })), ['b']);
        assert.equal(await store.count(col), 1);
      });

      it('keeps a deleted document deleted when an older write is replayed', async () => {
        await store.writeBatch<Doc>(col, [{ key: 'a', doc: { n: 1 }, position: 5 }]);
        await store.writeBatch<Doc>(col, [{ key: 'a', doc: null, position: 7 }]);
        const replay = await store.writeBatch<Doc>(col, [{ key: 'a', doc: { n: 1 }, position: 5 }, { key: 'a', doc: { n: 3 }, position: 6 }]);
        assert.deepEqual(replay, { written: 0, skipped: 2 });
        assert.equal(await store.get(col, 'a'), null);
        assert.equal(await store.count(col), 0);
      });

      it('re-creates a deleted document with a write after the deletion', async () => {
        await store.writeBatch<Doc>(col, [{ key: 'a', doc: { n: 1 }, position: 5 }]);
        await store.writeBatch<Doc>(col, [{ key: 'a', doc: null, position: 7 }]);
        assert.deepEqual(await store.writeBatch<Doc>(col, [{ key: 'a', doc: { n: 4 }, position: 8 }]), { written: 1, skipped: 0 });
        assert.deepEqual(await store.get<Doc>(col, 'a'), { key: 'a', doc: { n: 4 }, position: 8 });
        assert.equal(await store.count(col), 1);
      });

      it('skips a deletion whose position is not ahead of the stored document', async () => {
        await store.writeBatch<Doc>(col, [{ key: 'a', doc: { n: 1 }, position: 5 }]);
        assert.deepEqual(await store.writeBatch(col, [{ key: 'a', doc: null, position: 5 }]), { written: 0, skipped: 1 });
        assert.deepEqual((await store.get<Doc>(col, 'a'))?.doc, { n: 1 });
      });
    });

    describe('checkpoints', () => {
      it('reads 0 for a checkpoint that was never set', async () => {
        assert.equal(await store.getCheckpoint(uniqueName('cp')), 0);
      });

      it('reads several checkpoints at once, in the order asked, 0 for one never set', async () => {
        const [a, b, never] = [uniqueName('cp'), uniqueName('cp'), uniqueName('cp')];
        await store.setCheckpoint(a, 7);
        await store.setCheckpoint(b, 9);
        assert.deepEqual(await store.getCheckpoints([b, never, a]), [9, 0, 7]);
        assert.deepEqual(await store.getCheckpoints([]), []);
      });

      it('sets and moves a checkpoint, back to 0 too (a replay)', async () => {
        const cp = uniqueName('cp');
        await store.setCheckpoint(cp, 42);
        assert.equal(await store.getCheckpoint(cp), 42);
        await store.setCheckpoint(cp, 0);
        assert.equal(await store.getCheckpoint(cp), 0);
      });

      it('moves the checkpoint with the documents of a batch', async () => {
        const cp = uniqueName('cp');
        await store.writeBatch<Doc>(col, [{ key: 'a', doc: { n: 1 }, position: 3 }], { name: cp, position: 9 });
        assert.equal(await store.getCheckpoint(cp), 9);
        assert.deepEqual((await store.get<Doc>(col, 'a'))?.position, 3);
      });

      it('moves the checkpoint even when every write of the batch is skipped or there are none', async () => {
        const cp = uniqueName('cp');
        await store.writeBatch<Doc>(col, [{ key: 'a', doc: { n: 1 }, position: 5 }]);
        const result = await store.writeBatch<Doc>(col, [{ key: 'a', doc: { n: 0 }, position: 2 }], { name: cp, position: 11 });
        assert.deepEqual(result, { written: 0, skipped: 1 });
        assert.equal(await store.getCheckpoint(cp), 11);
        await store.writeBatch<Doc>(col, [], { name: cp, position: 12 });
        assert.equal(await store.getCheckpoint(cp), 12);
      });

      it('keeps checkpoints apart by name', async () => {
        const one = uniqueName('cp');
        const two = uniqueName('cp');
        await store.setCheckpoint(one, 1);
        await store.setCheckpoint(two, 2);
        assert.deepEqual([await store.getCheckpoint(one), await store.getCheckpoint(two)], [1, 2]);
      });
    });

    describe('aliases and collections', () => {
      it('reads null for an alias that was never set, and the collection once set', async () => {
        const alias = uniqueName('alias');
        assert.equal(await store.getAlias(alias), null);
        await store.setAlias(alias, `${col}.v1`);
        assert.equal(await store.getAlias(alias), `${col}.v1`);
        await store.setAlias(alias, `${col}.v2`);
        assert.equal(await store.getAlias(alias), `${col}.v2`);
      });

      it('answers the collection each switch replaced, one step: switches at once form one chain', async () => {
        const alias = uniqueName('alias');
        assert.equal(await store.setAlias(alias, `${col}.v0`), null);
        // Eight switches at once: were the previous value read apart from the write, two would
        // learn the same predecessor and a copy would be replaced by no one (left undropped).
        const targets = Array.from({ length: 8 }, (_, i) => `${col}.r${i}`);
        const replaced = await Promise.all(targets.map((t) => store.setAlias(alias, t)));
        const live = await store.getAlias(alias);
        assert.ok(live !== null && targets.includes(live));
        // Every collection ever named was replaced exactly once, except the one live now.
        assert.deepEqual([...replaced].sort(), [`${col}.v0`, ...targets.filter((t) => t !== live)].sort());
      });

      it('lists the collections that hold documents', async () => {
        const other = uniqueName('other');
        await seed(['a']);
        await store.writeBatch(other, [{ key: 'a', doc: 1, position: 1 }]);
        const listed = await store.listCollections();
        assert.equal(listed.includes(col), true);
        assert.equal(listed.includes(other), true);
      });

      it('drops a collection with its documents and deletions, leaving the others', async () => {
        const other = uniqueName('other');
        await seed(['a', 'b', 'c']);
        await store.writeBatch(col, [{ key: 'b', doc: null, position: 50 }]);
        await store.writeBatch(other, [{ key: 'a', doc: 1, position: 1 }]);
        await store.dropCollection(col);
        assert.equal(await store.count(col), 0);
        assert.deepEqual(await store.scan(col), []);
        assert.equal(await store.get(col, 'a'), null);
        assert.equal((await store.listCollections()).includes(col), false);
        assert.equal(await store.count(other), 1);
        // The deletion went with it: a fresh write at a low position is accepted again.
        assert.deepEqual(await store.writeBatch(col, [{ key: 'b', doc: { n: 9 }, position: 1 }]), { written: 1, skipped: 0 });
      });

      it('drops a collection that does not exist without failing', async () => {
        await store.dropCollection(uniqueName('never'));
      });

      it('purges documents and tombstones outright: a purged key takes any position again, the others are untouched', async () => {
        await store.writeBatch(col, [
          { key: 'live', doc: { v: 1 }, position: 5 },
          { key: 'gone', doc: { v: 1 }, position: 5 },
          { key: 'kept', doc: { v: 1 }, position: 5 },
        ]);
        await store.writeBatch(col, [{ key: 'gone', doc: null, position: 6 }]);
        // The tombstone holds off an older write; a purge takes it away with the live document.
        assert.deepEqual(await store.writeBatch(col, [{ key: 'gone', doc: { v: 2 }, position: 1 }]), { written: 0, skipped: 1 });
        await store.purge(col, ['live', 'gone', 'never-there']);
        assert.equal(await store.get(col, 'live'), null);
        assert.deepEqual(keysOf(await store.scan(col)), ['kept']);
        assert.equal(await store.count(col), 1);
        assert.deepEqual(await store.writeBatch(col, [{ key: 'gone', doc: { v: 3 }, position: 1 }, { key: 'live', doc: { v: 3 }, position: 1 }]), { written: 2, skipped: 0 });
        assert.deepEqual((await store.get(col, 'gone'))?.doc, { v: 3 });
        assert.deepEqual((await store.get(col, 'kept'))?.doc, { v: 1 });
        await store.purge(col, []);
      });
    });
  });
}
