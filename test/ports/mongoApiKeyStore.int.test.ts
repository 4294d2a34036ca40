/**
 * The ApiKeyStore behaviour suite on MongoDB (FerretDB 1.x in CI), plus what only this adapter
 * has to prove: keys are plain documents an operator can query by field.
 *
 * Needs MONGODB_URL (`bash infra/local/servers.sh up ferretdb`); see requireServer.ts.
 */
import assert from 'node:assert/strict';
import { MongoClient } from 'mongodb';
import { mongoApiKeyStore } from '../../infra/mongo/apiKeyStore.ts';
import { apiKeyStoreSuite } from './apiKeyStore.suite.ts';
import { describeWithServer } from './requireServer.ts';
import { dropDatabaseAfterAll, uniqueName } from './support.ts';

describeWithServer('mongoApiKeyStore', 'MONGODB_URL', (url) => {
  // One database for the file, a collection per test.
  const database = `marquee_keys_${process.pid}_${Date.now().toString(36)}`;

  dropDatabaseAfterAll(url, database);

  apiKeyStoreSuite('mongoApiKeyStore', async () => {
    const collection = uniqueName('keys').replace(/-/g, '_');
    const store = await mongoApiKeyStore({ url, database, collection });
    return {
      store,
      reopen: () => mongoApiKeyStore({ url, database, collection }),
      async cleanup() {
        await store.close();
      },
    };
  });

  it('stores each key as a document whose fields a plain MongoDB query filters on', async () => {
    const collection = uniqueName('keys').replace(/-/g, '_');
    const store = await mongoApiKeyStore({ url, database, collection });
    const client = new MongoClient(url, { serverSelectionTimeoutMS: 3000 });
    try {
      const hash = 'ab'.repeat(32);
      await store.create({ id: 'key_abababababab', name: 'ops', hash, prefix: 'mk_live_abab', createdAt: '2026-11-10T10:00:00Z', revokedAt: null, lastUsedAt: null });
      await store.revoke(hash, '2026-11-11T10:00:00Z');
      const found = await client.db(database).collection(collection).find({ revokedAt: { $ne: null }, name: 'ops' }).toArray();
      assert.equal(found.length, 1);
      assert.equal(found[0]?._id, hash);
      assert.equal(found[0]?.revokedAt, '2026-11-11T10:00:00Z');
    } finally {
      await client.close();
      await store.close();
    }
  });

  it('answers unavailable quickly when the server is down', async function () {
    this.timeout(10_000);
    const started = Date.now();
    await assert.rejects(mongoApiKeyStore({ url: 'mongodb://127.0.0.1:9/', database, serverSelectionTimeoutMS: 500 }), (err) => (err as { code?: string }).code === 'unavailable');
    assert.ok(Date.now() - started < 5000);
  });
});
