import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ApiKeyStore, Clock, ReadStore } from '../../contracts/ports.ts';
import { API_KEYS_COLLECTION, type ApiKeyDoc } from '../../contracts/readModels.ts';
import { lmdbApiKeyStore } from '../../infra/lmdb/apiKeyStore.ts';
import { lmdbReadStore } from '../../infra/lmdb/readStore.ts';
import { createApiKey, createKeyLookup, hashApiKey, listApiKeys, moveLegacyApiKeys, revokeApiKey } from '../../services/api/keys.ts';
import { waitFor } from '../ports/support.ts';

describe('API keys', () => {
  let dir: string;
  let store: ApiKeyStore;
  let now = Date.parse('2026-11-21T08:00:00Z');
  const clock: Clock = { now: () => new Date(now) };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'marquee-keys-'));
    store = lmdbApiKeyStore({ dataDir: dir });
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('creates a mk_live_ key and stores only its SHA-256 hash', async () => {
    const { key, doc } = await createApiKey(store, 'alice', clock);
    assert.match(key, /^mk_live_[0-9a-f]{32}$/);
    assert.equal(doc.hash, hashApiKey(key));
    assert.equal(doc.prefix, key.slice(0, 12));
    assert.equal(doc.createdAt, '2026-11-21T08:00:00Z');
    assert.equal(doc.revokedAt, null);
    assert.equal(doc.lastUsedAt, null);
    const stored = await store.list();
    assert.deepEqual(stored, [doc]);
    assert.equal(JSON.stringify(stored).includes(key), false);
  });

  it('refuses a name that is empty, longer than 100 characters, or holds a control character, and stores nothing', async () => {
    for (const name of ['', '   ', 'n'.repeat(101), 'ops\nmk_live_0000…  admin  created 2026-01-01T00:00:00Z', 'tab\there', 'esc\u001b[2J', 'c1\u0085', 'sep\u2028']) {
      await assert.rejects(createApiKey(store, name, clock), (err: Error & { code?: string }) => err.code === 'invalid_parameter', JSON.stringify(name));
    }
    assert.deepEqual(await store.list(), []);
    // At the bounds, and letters of any script, are names.
    for (const name of ['n'.repeat(100), 'x', 'équipe données', '運用チーム']) await createApiKey(store, name, clock);
    assert.equal((await store.list()).length, 4);
  });

  it('looks a key up, and refuses it once revoked', async () => {
    const { key, doc } = await createApiKey(store, 'bob', clock);
    const lookup = createKeyLookup(store, { ttlMs: 0, clock });
    assert.equal((await lookup(key))?.id, doc.id);
    now += 1000;
    const revoked = await revokeApiKey(store, key, clock);
    assert.equal(revoked.revokedAt, '2026-11-21T08:00:01Z');
    assert.equal(await lookup(key), null);
    assert.equal(await lookup('mk_live_nothex'), null);
  });

  it('revokes by id or by a prefix that names one key, and lists keys', async () => {
    const a = await createApiKey(store, 'a', clock);
    const b = await createApiKey(store, 'b', clock);
    await revokeApiKey(store, a.doc.id, clock);
    await revokeApiKey(store, b.doc.prefix, clock);
    const listed = await listApiKeys(store);
    assert.deepEqual(listed.map((k) => k.revokedAt !== null), [true, true]);
    await assert.rejects(revokeApiKey(store, 'mk_live_', clock), (err: { code?: string }) => err.code === 'invalid_parameter');
    await assert.rejects(revokeApiKey(store, 'key_nope', clock), (err: { code?: string }) => err.code === 'not_found');
  });

  it('records the last use at most once a minute per key, without a write on the cached path', async () => {
    const { key, doc } = await createApiKey(store, 'carol', clock);
    let touches = 0;
    const counting: ApiKeyStore = { ...store, touch: (hash, at) => ((touches += 1), store.touch(hash, at)) };
    const lookup = createKeyLookup(counting, { ttlMs: 1000, clock });
    const stamp = () => new Date(now).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const first = stamp();
    await lookup(key);
    await waitFor('the first use to be recorded', async () => (await store.findByHash(doc.hash))?.lastUsedAt === first);
    // 200 requests within the minute: cache hits and misses alike, no further write.
    for (let i = 0; i < 200; i += 1) {
      now += 250;
      await lookup(key);
    }
    assert.equal(touches, 1);
    now += 10_000;
    await lookup(key);
    assert.equal(touches, 2, 'a minute after the last record, the next use is recorded');
    const second = stamp();
    await waitFor('the new last use', async () => (await store.findByHash(doc.hash))?.lastUsedAt === second);
    assert.equal((await lookup('mk_live_00000000000000000000000000000000')), null);
    assert.equal(touches, 2, 'an unknown key records nothing');
  });

  it('moves the keys kept in the read models before the key store existed, once', async () => {
    const readStore: ReadStore = lmdbReadStore({ dataDir: dir });
    try {
      const legacy: ApiKeyDoc = { id: 'key_0123456789ab', name: 'old', hash: '0123456789ab'.padEnd(64, '0'), prefix: 'mk_live_0123', createdAt: '2026-01-01T00:00:00Z', revokedAt: null };
      await readStore.writeBatch<ApiKeyDoc>(API_KEYS_COLLECTION, [{ key: legacy.hash, doc: legacy, position: 1 }]);
      assert.equal(await moveLegacyApiKeys(readStore, store), 1);
      assert.equal(await moveLegacyApiKeys(readStore, store), 0);
      assert.deepEqual(await store.findByHash(legacy.hash), { ...legacy, lastUsedAt: null });
    } finally {
      await readStore.close();
    }
  });
});
