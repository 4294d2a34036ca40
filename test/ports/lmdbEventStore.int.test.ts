import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isAppError } from '../../contracts/errors.ts';
import type { DomainEvent, RecordedEvent } from '../../contracts/events.ts';
import { lmdbEventStore } from '../../infra/lmdb/eventStore.ts';
import { spawnTs, succeeded } from '../fixtures/child.ts';
import { eventStoreSuite } from './eventStore.suite.ts';
import { genreEvent, waitFor } from './support.ts';

const worker = 'test/fixtures/appendWorker.ts';

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'marquee-es-'));
}

eventStoreSuite('lmdbEventStore', async () => {
  const dataDir = tempDir();
  const store = lmdbEventStore({ dataDir });
  return {
    store,
    spec: `lmdb:${dataDir}`,
    async cleanup() {
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
});

describe('lmdbEventStore', () => {
  let dataDir: string;
  beforeEach(() => {
    dataDir = tempDir();
  });
  afterEach(() => {
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('rolls back an append that fails half-way and keeps the appends committed beside it', async () => {
    const store = lmdbEventStore({ dataDir });
    try {
      // msgpack cannot encode this BigInt: the second event of the request fails mid-write.
      const unencodable = { ...genreEvent(2), data: { genre: { id: 10n ** 30n } } } as unknown as DomainEvent;
      const outcomes = await Promise.allSettled([
        store.append('a', [genreEvent(1)], 'no_stream'),
        store.append('b', [genreEvent(2), unencodable], 'no_stream'),
        store.append('c', [genreEvent(3)], 'no_stream'),
      ]);
      assert.deepEqual(outcomes.map((o) => o.status), ['fulfilled', 'rejected', 'fulfilled']);
      const failure = (outcomes[1] as PromiseRejectedResult).reason;
      assert.equal(isAppError(failure, 'internal'), true);
      assert.equal(await store.streamRevision('b'), -1);
      assert.deepEqual((await store.readAll()).map((e) => [e.position, e.streamId]), [[1, 'a'], [2, 'c']]);
      assert.equal(await store.headPosition(), 2);
    } finally {
      await store.close();
    }
  });

  it('refuses calls after close with closed', async () => {
    const store = lmdbEventStore({ dataDir });
    await store.close();
    await assert.rejects(store.append('a', [genreEvent(1)], 'any'), (err) => isAppError(err, 'closed'));
    await assert.rejects(store.readAll(), (err) => isAppError(err, 'closed'));
    await assert.rejects(store.headPosition(), (err) => isAppError(err, 'closed'));
  });

  it('keeps its events when the data directory is opened again', async () => {
    const first = lmdbEventStore({ dataDir });
    await first.append('a', [genreEvent(1), genreEvent(2)], 'no_stream');
    await first.close();
    const second = lmdbEventStore({ dataDir });
    try {
      assert.equal(await second.streamRevision('a'), 1);
      const next = await second.append('a', [genreEvent(3)], 1);
      assert.deepEqual(next, { nextExpectedRevision: 2, position: 3 });
    } finally {
      await second.close();
    }
  });
});

describe('lmdbEventStore across processes', function () {
  // Two children start tsx each; on a busy two-core machine that takes a few seconds.
  this.timeout(60_000);
  let dataDir: string;
  beforeEach(() => {
    dataDir = tempDir();
  });
  afterEach(() => {
    rmSync(dataDir, { recursive: true, force: true });
  });

  // Two processes racing on the same streams: the suite's `across processes` cases.

  it('delivers to a subscription events that another process appends', async () => {
    const store = lmdbEventStore({ dataDir });
    try {
      await store.append('local', [genreEvent(1)], 'no_stream');
      const seen: RecordedEvent[] = [];
      const subscription = store.subscribeAll(async (batch) => {
        seen.push(...batch);
      }, { idleMs: 10 });
      await waitFor('the local event', () => seen.length === 1);
      writeFileSync(join(dataDir, 'go'), '');
      await succeeded(spawnTs(worker, [dataDir, 'child', '5', '1']));
      await waitFor('the events of the other process', () => seen.length === 6, 20_000);
      await subscription.stop();
      assert.deepEqual(seen.map((e) => e.position), [1, 2, 3, 4, 5, 6]);
      assert.deepEqual(seen.slice(1).map((e) => [e.streamId, e.revision, e.metadata.producer]), [
        ['shared-0', 0, 'child'], ['shared-0', 1, 'child'], ['shared-0', 2, 'child'], ['shared-0', 3, 'child'], ['shared-0', 4, 'child'],
      ]);
      assert.equal(await store.streamRevision('shared-0'), 4);
      assert.equal(await store.headPosition(), 6);
    } finally {
      await store.close();
    }
  });
});
