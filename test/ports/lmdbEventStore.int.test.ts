import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open } from 'lmdb';
import { Packr } from 'msgpackr';
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

  it('indexes a stream by runs (one entry per append) and still reads an index written with one entry per event', async () => {
    const runs = [[1, 2, 3], [4], [5, 6], [7, 8, 9, 10]];
    const store = lmdbEventStore({ dataDir });
    let revision = -1;
    for (const run of runs) {
      await store.append('x', [genreEvent(0)], 'any');
      revision = (await store.append('s', run.map((n) => genreEvent(n)), revision < 0 ? 'no_stream' : revision)).nextExpectedRevision;
    }
    const ids = (events: RecordedEvent[]) => events.map((e) => [e.revision, (e.data as { genre: { id: number } }).genre.id]);
    const expectAll = async (label: string) => {
      const all = runs.flat().map((id, r) => [r, id]);
      for (let from = 0; from <= 11; from += 1) {
        assert.deepEqual(ids(await store.readStream('s', { fromRevision: from })), all.slice(from), `${label}: forwards from ${from}`);
        for (const limit of [1, 3, 100]) {
          const expected = all.slice(0, Math.min(from, 9) + 1).reverse().slice(0, limit);
          assert.deepEqual(ids(await store.readStreamBackwards('s', { fromRevision: from, limit })), expected, `${label}: backwards from ${from}, ${limit}`);
        }
      }
    };
    const index = () => {
      const root = open({ path: join(dataDir, 'lmdb'), maxDbs: 256 });
      return { root, streams: root.openDB<number, [string, number]>({ name: 'es:streams' }) };
    };
    try {
      await expectAll('runs');
      const { root, streams } = index();
      try {
        assert.deepEqual([...streams.getRange({ start: ['s'], end: ['s', 1e9] })].map((e) => e.key[1]), [0, 3, 4, 6], 'one entry per append');
        // The layout of logs written before runs: one entry per event, at its own position.
        const recorded = await store.readStream('s');
        await streams.transaction(() => {
          for (const e of recorded) void streams.put(['s', e.revision], e.position);
        });
      } finally {
        await root.close();
      }
      await expectAll('one entry per event');
      await store.append('s', [genreEvent(11), genreEvent(12)], 9);
      runs.push([11, 12]);
      const again = await store.readStream('s', { fromRevision: 8 });
      assert.deepEqual(ids(again), [[8, 9], [9, 10], [10, 11], [11, 12]], 'a run appended after entries per event');
    } finally {
      await store.close();
    }
  });

  it('stores offer events as the bytes msgpackr writes (the format of logs written before), so any version reads them', async () => {
    const offer = (providerId: string, n: number) => ({
      providerId, addonProviderId: null, seasonNumber: n, episodeNumber: null, webUrl: `https://${providerId}.example/${'t'.repeat(n)}`,
      priceTypes: ['flatrate'], formats: ['hd'], audioLanguages: ['en', 'de'], subtitleLanguages: null,
      availableFrom: '2020-02-06', availableTo: null, platforms: ['web'],
    });
    const metadata = { observationId: 'o-1', observedAt: '2026-11-14T06:00:00.000Z', producer: 'ingest' };
    const data = (o: ReturnType<typeof offer>) => ({ mediaId: 'mv00000001', country: 'US', offer: o });
    const { webUrl: _w, ...withoutUrl } = offer('odd', 1);
    const events = [
      genreEvent(1),
      ...[0, 40, 70, 300].map((n) => ({ type: 'OfferAdded', data: data(offer('netflix', n)), metadata })),
      { type: 'OfferChanged', data: { ...data(offer('netflix', 40)), changedFields: ['formats'] }, metadata },
      { type: 'OfferRemoved', data: { mediaId: 'mv00000001', country: 'US', offer: { providerId: 'netflix', addonProviderId: null, seasonNumber: 0, episodeNumber: null, webUrl: 'u' } }, metadata },
      { type: 'OfferAdded', data: data({ ...withoutUrl, webUrl: 'u' } as ReturnType<typeof offer>), metadata },
      { type: 'OfferAdded', data: data(offer('netflix', 2)), metadata },
    ] as unknown as DomainEvent[];
    const store = lmdbEventStore({ dataDir });
    try {
      // Several appends: shapes msgpackr shares in one are written by the offer encoder in the next.
      // Most at their known revision (encoded before the write transaction), some with 'any' (inside it).
      for (const [i, event] of events.entries()) {
        const k = Math.floor(i / 2);
        const expected = i % 4 === 3 ? 'any' : k === 0 ? 'no_stream' : 2 * k - 1;
        await store.append(`availability-mv00000001-US-${i % 2}`, [event, event], expected);
      }
      const recorded = await store.readAll({ limit: 100 });
      assert.deepEqual(recorded.map((e) => ({ type: e.type, data: e.data, metadata: e.metadata })), events.flatMap((e) => [e, e]));

      // The reference: every stored value re-encoded by a msgpackr encoder reading the same
      // shared structures, as the store wrote every event before the offer encoder.
      const root = open({ path: join(dataDir, 'lmdb'), maxDbs: 256, readOnly: true });
      try {
        const raw = root.openDB({ name: 'es:events', encoding: 'binary' });
        const structures = root.openDB({ name: 'es:events', sharedStructuresKey: Symbol.for('structures') }).get(Symbol.for('structures') as never) as string[][];
        const packr = new Packr({ structures: structures.map((k) => [...k]), maxSharedStructures: 500 } as ConstructorParameters<typeof Packr>[0]);
        for (const e of recorded) {
          const bytes = raw.getBinary(e.position) as Buffer;
          const value = { type: e.type, data: e.data, metadata: e.metadata, streamId: e.streamId, revision: e.revision, recordedAt: e.recordedAt };
          assert.equal(Buffer.from(bytes).toString('hex'), Buffer.from(packr.pack(value)).toString('hex'), `event ${e.position} (${e.type})`);
        }
      } finally {
        await root.close();
      }
    } finally {
      await store.close();
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
