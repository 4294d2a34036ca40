import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Clock, ReadStore } from '../../contracts/ports.ts';
import { API_KEYS_COLLECTION } from '../../contracts/readModels.ts';
import { lmdbReadStore } from '../../infra/lmdb/readStore.ts';
import { createApiKey, createKeyLookup, hashApiKey, listApiKeys, revokeApiKey } from '../../services/api/keys.ts';

describe('API keys', () => {
  let dir: string;
  let store: ReadStore;
  let now = Date.parse('2026-11-21T08:00:00Z');
  const clock: Clock = { now: () => new Date(now) };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'marquee-keys-'));
    store = lmdbReadStore({ dataDir: dir });
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
    const stored = await store.scan(API_KEYS_COLLECTION);
    assert.equal(stored.length, 1);
    assert.equal(JSON.stringify(stored).includes(key), false);
  });

  it('looks a key up, and refuses it once revoked', async () => {
    const { key, doc } = await createApiKey(store, 'bob', clock);
    const lookup = createKeyLookup(store, 0);
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
});
