import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isAppError } from '../../contracts/errors.ts';
import { lmdbEventStore } from '../../infra/lmdb/eventStore.ts';
import { lmdbReadStore } from '../../infra/lmdb/readStore.ts';
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
});
