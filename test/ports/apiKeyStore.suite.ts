/**
 * The ApiKeyStore behaviour suite, run on every adapter (LMDB and MongoDB): create, find by
 * hash, list, revoke (first time kept), touch (last use only moves forward), and concurrent
 * changes of one key losing nothing.
 */
import assert from 'node:assert/strict';
import type { ApiKeyRecord, ApiKeyStore } from '../../contracts/ports.ts';

export interface ApiKeyStoreFixture {
  store: ApiKeyStore;
  /** Opens a second store on the same data (another process's view). */
  reopen(): Promise<ApiKeyStore>;
  cleanup(): Promise<void>;
}

const codeOf = (err: unknown): string | undefined => (err as { code?: string }).code;

function record(n: number, overrides: Partial<ApiKeyRecord> = {}): ApiKeyRecord {
  const hash = n.toString(16).padStart(64, '0');
  return {
    id: `key_${hash.slice(0, 12)}`,
    name: `key ${n}`,
    hash,
    prefix: `mk_live_${hash.slice(0, 4)}`,
    createdAt: `2026-11-0${n % 9 + 1}T10:00:00Z`,
    revokedAt: null,
    lastUsedAt: null,
    ...overrides,
  };
}

export function apiKeyStoreSuite(name: string, open: () => Promise<ApiKeyStoreFixture>): void {
  describe(`ApiKeyStore behaviour: ${name}`, function () {
    this.timeout(30_000);
    let fixture: ApiKeyStoreFixture;
    let store: ApiKeyStore;

    beforeEach(async () => {
      fixture = await open();
      store = fixture.store;
    });
    afterEach(async () => {
      await fixture.cleanup();
    });

    it('creates keys and finds them by hash, with every field as stored', async () => {
      const a = record(1, { name: 'alice ünïcode' });
      await store.create(a);
      assert.deepEqual(await store.findByHash(a.hash), a);
      assert.equal(await store.findByHash(record(2).hash), null);
    });

    it('refuses a second key with the same hash and keeps the first', async () => {
      const a = record(1);
      await store.create(a);
      await assert.rejects(store.create({ ...a, name: 'impostor' }), (err) => codeOf(err) === 'forbidden');
      assert.equal((await store.findByHash(a.hash))?.name, a.name);
    });

    it('lists every key oldest first, revoked ones included', async () => {
      assert.deepEqual(await store.list(), []);
      await store.create(record(3));
      await store.create(record(1));
      await store.create(record(2, { createdAt: record(1).createdAt }));
      await store.revoke(record(3).hash, '2026-11-10T00:00:00Z');
      const listed = await store.list();
      assert.deepEqual(listed.map((k) => k.hash), [record(1).hash, record(2).hash, record(3).hash]);
      assert.equal(listed[2]?.revokedAt, '2026-11-10T00:00:00Z');
    });

    it('revokes once: the first revocation time is kept; an unknown hash is null', async () => {
      const a = record(1);
      await store.create(a);
      assert.deepEqual(await store.revoke(a.hash, '2026-11-10T00:00:00Z'), { ...a, revokedAt: '2026-11-10T00:00:00Z' });
      assert.equal((await store.revoke(a.hash, '2026-11-11T00:00:00Z'))?.revokedAt, '2026-11-10T00:00:00Z');
      assert.equal((await store.findByHash(a.hash))?.revokedAt, '2026-11-10T00:00:00Z');
      assert.equal(await store.revoke(record(9).hash, '2026-11-10T00:00:00Z'), null);
    });

    it('records the last use, only ever moving it forward', async () => {
      const a = record(1);
      await store.create(a);
      await store.touch(a.hash, '2026-11-10T10:00:00Z');
      assert.equal((await store.findByHash(a.hash))?.lastUsedAt, '2026-11-10T10:00:00Z');
      await store.touch(a.hash, '2026-11-10T09:59:00Z');
      assert.equal((await store.findByHash(a.hash))?.lastUsedAt, '2026-11-10T10:00:00Z', 'a late touch does not go back');
      await store.touch(a.hash, '2026-11-10T10:01:00Z');
      assert.equal((await store.findByHash(a.hash))?.lastUsedAt, '2026-11-10T10:01:00Z');
      await store.touch(record(9).hash, '2026-11-10T10:01:00Z');
      assert.equal(await store.findByHash(record(9).hash), null, 'touching an unknown key creates nothing');
      // A revoked key keeps its last use, and the revocation survives a later touch.
      await store.revoke(a.hash, '2026-11-10T11:00:00Z');
      await store.touch(a.hash, '2026-11-10T11:00:30Z');
      assert.deepEqual(await store.findByHash(a.hash), { ...a, revokedAt: '2026-11-10T11:00:00Z', lastUsedAt: '2026-11-10T11:00:30Z' });
    });

    it('loses neither change when two stores revoke and touch one key at once', async () => {
      const other = await fixture.reopen();
      try {
        for (let n = 1; n <= 5; n += 1) {
          const k = record(n);
          await store.create(k);
          await Promise.all([
            other.revoke(k.hash, '2026-11-10T11:00:00Z'),
            store.touch(k.hash, '2026-11-10T11:00:01Z'),
            other.touch(k.hash, '2026-11-10T10:00:00Z'),
          ]);
          const stored = await store.findByHash(k.hash);
          assert.equal(stored?.revokedAt, '2026-11-10T11:00:00Z');
          assert.equal(stored?.lastUsedAt, '2026-11-10T11:00:01Z');
        }
        // What one store wrote, the other reads.
        assert.equal((await other.list()).length, 5);
      } finally {
        await other.close();
      }
    });
  });
}
