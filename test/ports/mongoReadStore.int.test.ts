/**
 * The ReadStore behaviour suite on MongoDB (FerretDB 1.x in CI), plus what only this adapter
 * has to prove: batches larger than one update command, documents FerretDB could not store as
 * BSON, and a fast `unavailable` when the server is down.
 *
 * Needs MONGODB_URL (`bash infra/local/servers.sh up ferretdb`); see requireServer.ts.
 */
import assert from 'node:assert/strict';
import { MongoClient } from 'mongodb';
import { isAppError } from '../../contracts/errors.ts';
import type { ReadStore } from '../../contracts/ports.ts';
import type { MongoDialect } from '../../infra/mongo/guardedWrite.ts';
import { mongoReadStore } from '../../infra/mongo/readStore.ts';
import { readStoreSuite } from './readStore.suite.ts';
import { describeWithServer } from './requireServer.ts';
import { uniqueName } from './support.ts';

describeWithServer('mongoReadStore', 'MONGODB_URL', (url) => {
  // One database for the whole file, a collection prefix per test: a database is a file on
  // FerretDB's SQLite backend, so one per test would be slow for nothing.
  const database = `marquee_rs_${process.pid}_${Date.now().toString(36)}`;
  let fixtures = 0;

  after(async function () {
    this.timeout(30_000);
    const client = new MongoClient(url, { serverSelectionTimeoutMS: 3000 });
    try {
      await client.db(database).dropDatabase();
    } finally {
      await client.close();
    }
  });

  async function open(options: { dialect: MongoDialect; updatesPerCommand?: number }): Promise<ReadStore> {
    fixtures += 1;
    return mongoReadStore({ url, database, collectionPrefix: `t${fixtures}_`, ...options });
  }

  // Both dialects run on whichever server this is: each is correct everywhere, and `auto`
  // only picks the faster one.
  for (const dialect of ['mongodb', 'ferretdb'] as const) {
    readStoreSuite(`mongoReadStore (${dialect} dialect)`, async () => {
      const store = await open({ dialect });
      return { store, cleanup: () => store.close() };
    });
    specifics(dialect);
  }

  function specifics(dialect: MongoDialect): void {
    describe(`MongoDB specifics (${dialect} dialect)`, function () {
      this.timeout(60_000);
      let store: ReadStore;
      beforeEach(async () => {
        store = await open({ dialect, updatesPerCommand: 7 });
      });
      afterEach(async () => {
        await store.close();
      });

      it('overwrites a batch spread over several update commands, guarding each document', async () => {
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

      it('guards a batch of more keys than are looked up one by one', async () => {
        const col = uniqueName('col');
        const keys = Array.from({ length: 300 }, (_, i) => `k${String(i).padStart(3, '0')}`);
        await store.writeBatch(col, keys.map((key) => ({ key, doc: { v: 1 }, position: 10 })));
        const result = await store.writeBatch(col, keys.map((key, i) => ({ key, doc: { v: 2 }, position: i < 100 ? 11 : 10 })));
        assert.deepEqual(result, { written: 100, skipped: 200 });
        const docs = await store.scan<{ v: number }>(col);
        assert.deepEqual(docs.map((d) => d.doc.v), keys.map((_, i) => (i < 100 ? 2 : 1)));
      });

      it('stores documents with arrays of arrays and keys that MongoDB restricts', async () => {
        const col = uniqueName('col');
        const doc = { matrix: [[1, 2], [3, [4]]], $price: 1, 'a.b': { '': 'empty key' }, big: 2 ** 53 - 1 };
        await store.writeBatch(col, [{ key: 'weird', doc, position: 1 }]);
        assert.deepEqual((await store.get(col, 'weird'))?.doc, doc);
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
