/**
 * The ReadStore behaviour suite on MongoDB (FerretDB 1.x in CI), plus what only this adapter
 * has to prove: batches written many commands at a time, documents stored as BSON fields (with
 * what FerretDB cannot store as such, arrays of arrays, and names MongoDB restricts, escaped
 * reversibly), and a fast `unavailable` when the server is down.
 *
 * Needs MONGODB_URL (`bash infra/local/servers.sh up ferretdb`); see requireServer.ts.
 */
import assert from 'node:assert/strict';
import { MongoClient } from 'mongodb';
import { isAppError } from '../../contracts/errors.ts';
import type { ReadStore } from '../../contracts/ports.ts';
import { metaCollectionName, mongoCollectionName } from '../../infra/mongo/keys.ts';
import { mongoReadStore } from '../../infra/mongo/readStore.ts';
import { readStoreSuite } from './readStore.suite.ts';
import { describeWithServer } from './requireServer.ts';
import { dropDatabaseAfterAll, uniqueName } from './support.ts';

describeWithServer('mongoReadStore', 'MONGODB_URL', (url) => {
  // One database for the whole file, a collection prefix per test: a database is a PostgreSQL
  // schema (or an SQLite file) on FerretDB, so one per test would be slow for nothing.
  const database = `marquee_rs_${process.pid}_${Date.now().toString(36)}`;
  let fixtures = 0;

  dropDatabaseAfterAll(url, database);

  async function open(options: { concurrency?: number } = {}): Promise<ReadStore> {
    fixtures += 1;
    return mongoReadStore({ url, database, collectionPrefix: `t${fixtures}_`, ...options });
  }

  readStoreSuite('mongoReadStore', async () => {
    const store = await open();
    return { store, cleanup: () => store.close() };
  });

  {
    describe('MongoDB specifics', function () {
      this.timeout(60_000);
      let store: ReadStore;
      beforeEach(async () => {
        store = await open({ concurrency: 3 });
      });
      afterEach(async () => {
        await store.close();
      });

      it('overwrites a batch written several commands at a time, guarding each document', async () => {
        const col = uniqueName('col');
        const keys = Array.from({ length: 30 }, (_, i) => `k${String(i).padStart(2, '0')}`);
        await store.writeBatch(col, keys.map((key, i) => ({ key, doc: { v: 1 }, position: 10 + i })));
        // Even keys move ahead, odd keys are replayed at their stored position, one key is new.
        const result = await store.writeBatch(col, [
          ...keys.map((key, i) => ({ key, doc: { v: 2 }, position: i % 2 === 0 ? 100 + i : 10 + i })),
          { key: 'new', doc: { v: 2 }, position: 1 },
        ]);
        assert.deepEqual(result, { written: 16, skipped: 15 });
        const docs = await store.scan<{ v: number }>(col);
        assert.equal(docs.length, 31);
        for (const [i, key] of keys.entries()) {
          const doc = docs.find((d) => d.key === key);
          assert.deepEqual(doc, i % 2 === 0 ? { key, doc: { v: 2 }, position: 100 + i } : { key, doc: { v: 1 }, position: 10 + i });
        }
      });

      it('guards a batch of hundreds of keys', async () => {
        const col = uniqueName('col');
        const keys = Array.from({ length: 300 }, (_, i) => `k${String(i).padStart(3, '0')}`);
        await store.writeBatch(col, keys.map((key) => ({ key, doc: { v: 1 }, position: 10 })));
        const result = await store.writeBatch(col, keys.map((key, i) => ({ key, doc: { v: 2 }, position: i < 100 ? 11 : 10 })));
        assert.deepEqual(result, { written: 100, skipped: 200 });
        const docs = await store.scan<{ v: number }>(col);
        assert.deepEqual(docs.map((d) => d.doc.v), keys.map((_, i) => (i < 100 ? 2 : 1)));
      });

      it('writes right whatever the last read found, when another store wrote or dropped meanwhile', async () => {
        const col = uniqueName('col');
        const other = await mongoReadStore({ url, database, collectionPrefix: `t${fixtures}_` });
        try {
          await store.writeBatch(col, [{ key: 'a', doc: { v: 1 }, position: 1 }]);
          // The read finds `a` only; `b` is then written by another store, `c` is new.
          assert.deepEqual((await store.getMany(col, ['a', 'b', 'c'])).map((d) => d?.key ?? null), ['a', null, null]);
          await other.writeBatch(col, [{ key: 'b', doc: { v: 1 }, position: 5 }]);
          const result = await store.writeBatch(col, [
            { key: 'a', doc: { v: 2 }, position: 2 },
            { key: 'b', doc: { v: 2 }, position: 4 },
            { key: 'c', doc: { v: 2 }, position: 3 },
          ]);
          assert.deepEqual(result, { written: 2, skipped: 1 });
          assert.deepEqual((await store.getMany(col, ['a', 'b', 'c'])).map((d) => d?.position), [2, 5, 3]);
          // The read found all three; the collection is then dropped elsewhere.
          await other.dropCollection(col);
          assert.deepEqual(await store.writeBatch(col, [{ key: 'a', doc: { v: 3 }, position: 1 }]), { written: 1, skipped: 0 });
          assert.deepEqual(await store.scan(col), [{ key: 'a', doc: { v: 3 }, position: 1 }]);
        } finally {
          await other.close();
        }
      });

      it('finds keys another store wrote in buckets this store last read as missing', async () => {
        const col = uniqueName('col');
        const other = await mongoReadStore({ url, database, collectionPrefix: `t${fixtures}_` });
        try {
          await store.writeBatch(col, [{ key: 'NL:mv00001000', doc: 1, position: 1 }]);
          // The batch's keys are in NL:mv0000100 (stored), NL:mv0000101 and DE:mv0000100 (missing).
          const keys = ['NL:mv00001000', 'NL:mv00001001', 'NL:mv00001012', 'DE:mv00001000'];
          assert.deepEqual((await store.getMany(col, keys)).map((d) => d?.doc ?? null), [1, null, null, null]);
          // Another store now makes those buckets and fills them: a bucket found missing once is
          // looked up again by the next read.
          await other.writeBatch(col, [
            { key: 'NL:mv00001001', doc: 2, position: 2 },
            { key: 'NL:mv00001012', doc: 3, position: 3 },
            { key: 'DE:mv00001000', doc: 4, position: 4 },
          ]);
          assert.deepEqual((await store.getMany(col, keys)).map((d) => d?.doc ?? null), [1, 2, 3, 4]);
          assert.deepEqual((await store.scan(col)).map((d) => d.key), ['DE:mv00001000', 'NL:mv00001000', 'NL:mv00001001', 'NL:mv00001012']);
        } finally {
          await other.close();
        }
      });

      it('scans keys written later under a bucket that held only keys, by this store or another', async () => {
        const col = uniqueName('col');
        const other = await mongoReadStore({ url, database, collectionPrefix: `t${fixtures}_` });
        try {
          await store.writeBatch(col, [{ key: 'US:1000', doc: 1, position: 1 }]);
          await store.writeBatch(col, [{ key: 'US:100000', doc: 2, position: 2 }]);
          // `other` knows nothing of the directory this store made: it learns it from the server.
          await other.writeBatch(col, [{ key: 'US:10000000', doc: 3, position: 3 }, { key: 'US:1001', doc: 4, position: 4 }]);
          await store.writeBatch(col, [{ key: 'US:1000000000', doc: 5, position: 5 }]);
          const expected = ['US:1000', 'US:100000', 'US:10000000', 'US:1000000000', 'US:1001'];
          for (const reader of [store, other]) {
            assert.deepEqual((await reader.scan(col, { prefix: 'US:1' })).map((d) => d.key), expected);
            assert.deepEqual((await reader.scan(col, { reverse: true, limit: 2 })).map((d) => d.key), ['US:1001', 'US:1000000000']);
          }
        } finally {
          await other.close();
        }
      });

      it('gives documents written before the key directory their buckets when it opens, so scans see them', async () => {
        const prefix = `old${fixtures}_`;
        const keys = ['US:mv0001', 'US:mv0002', 'US:mv00021', 'DE:mv0001', 'X'];
        const client = new MongoClient(url, { serverSelectionTimeoutMS: 3000 });
        try {
          // The layout of the previous version: fields and `_position`, no `_b`, no directory.
          await client.db(database).collection<{ _id: string }>(mongoCollectionName(prefix, 'links')).insertMany(keys.map((key, i) => ({ _id: key, _position: i + 1, n: i })));
        } finally {
          await client.close();
        }
        const upgraded = await mongoReadStore({ url, database, collectionPrefix: prefix });
        try {
          assert.deepEqual((await upgraded.scan('links', { prefix: 'US:' })).map((d) => d.key), ['US:mv0001', 'US:mv0002', 'US:mv00021']);
          assert.deepEqual((await upgraded.scan('links', { reverse: true })).map((d) => d.key), ['X', 'US:mv00021', 'US:mv0002', 'US:mv0001', 'DE:mv0001']);
          assert.deepEqual((await upgraded.get('links', 'US:mv0002'))?.doc, { n: 1 });
        } finally {
          await upgraded.close();
        }
      });

      it('reads an alias set before switches were numbered, and the first switch answers it replaced', async () => {
        const prefix = `oldalias${fixtures}_`;
        const client = new MongoClient(url, { serverSelectionTimeoutMS: 3000 });
        try {
          // The record of the previous version: one document an alias, updated in place. And an
          // alias whose name begins with this one's, which must not be taken for one of its switches.
          await client.db(database).collection<{ _id: string; collection: string }>(metaCollectionName(prefix)).insertOne({ _id: 'alias:links', collection: 'links_v1_rold' });
        } finally {
          await client.close();
        }
        const upgraded = await mongoReadStore({ url, database, collectionPrefix: prefix });
        try {
          await upgraded.setAlias('links:x', 'other_v1');
          assert.equal(await upgraded.getAlias('links'), 'links_v1_rold');
          assert.equal(await upgraded.setAlias('links', 'links_v1_rnew'), 'links_v1_rold');
          assert.equal(await upgraded.getAlias('links'), 'links_v1_rnew');
          assert.equal(await upgraded.setAlias('links', 'links_v1_rnewer'), 'links_v1_rnew');
          assert.equal(await upgraded.getAlias('links:x'), 'other_v1');
        } finally {
          await upgraded.close();
        }
      });

      it('stores documents with arrays of arrays and keys that MongoDB restricts', async () => {
        const col = uniqueName('col');
        const doc = { matrix: [[1, 2], [3, [4]]], $price: 1, 'a.b': { '': 'empty key' }, big: 2 ** 53 - 1 };
        await store.writeBatch(col, [{ key: 'weird', doc, position: 1 }]);
        assert.deepEqual((await store.get(col, 'weird'))?.doc, doc);
      });

      it('stores the fields of a document as BSON fields that a plain driver query finds', async () => {
        const col = uniqueName('col');
        await store.writeBatch(col, [
          { key: 'a', doc: { title: 'Dune', year: 2021, genres: ['sf'], 'x.y': 1, _id: 'own' }, position: 3 },
          { key: 'b', doc: { title: 'Heat', year: 1995, genres: ['crime'] }, position: 4 },
          { key: 'c', doc: [1, [2]], position: 5 },
        ]);
        const client = new MongoClient(url, { serverSelectionTimeoutMS: 3000 });
        try {
          const raw = client.db(database).collection<{ _id: string; _position?: number }>(mongoCollectionName(`t${fixtures}_`, col));
          const found = await raw.find({ year: 2021 }).toArray();
          assert.deepEqual(found, [{ _id: 'a', _position: 3, _b: '', title: 'Dune', year: 2021, genres: ['sf'], 'x%2Ey': 1, '%5Fid': 'own' }]);
          assert.equal((await raw.findOne({ _id: 'c' }))?._position, 5);
        } finally {
          await client.close();
        }
        assert.deepEqual((await store.get(col, 'a'))?.doc, { title: 'Dune', year: 2021, genres: ['sf'], 'x.y': 1, _id: 'own' });
        assert.deepEqual((await store.get(col, 'c'))?.doc, [1, [2]]);
      });

      it('keeps read-model collections whose names hold $, % and NUL apart and lists them by name', async () => {
        const base = uniqueName('col');
        const names = [`${base}$x`, `${base}%24x`, `${base}\0x`, `${base}.v1`];
        for (const [i, name] of names.entries()) await store.writeBatch(name, [{ key: 'k', doc: i, position: 1 }]);
        assert.deepEqual(await Promise.all(names.map(async (name) => (await store.get(name, 'k'))?.doc)), [0, 1, 2, 3]);
        const listed = await store.listCollections();
        assert.deepEqual(listed.filter((name) => name.startsWith(base)).sort(), [...names].sort());
      });
    });
  }
});

describe('mongoReadStore without a server', function () {
  this.timeout(15_000);

  it('fails with a retriable unavailable error within the server selection timeout', async () => {
    const started = Date.now();
    // Port 9 (discard) is closed on this machine: nothing answers the MongoDB protocol there.
    await assert.rejects(
      mongoReadStore({ url: 'mongodb://127.0.0.1:9', database: 'none', serverSelectionTimeoutMS: 500 }),
      (err: unknown) => isAppError(err, 'unavailable') && err.retriable === true,
    );
    assert.ok(Date.now() - started < 5_000, `took ${Date.now() - started} ms`);
  });
});
