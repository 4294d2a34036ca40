import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DomainEvent, GenreChanged } from '../../contracts/events.ts';
import type { DocumentWrite, EventStore, ReadStore } from '../../contracts/ports.ts';
import type { Projection } from '../../contracts/projection.ts';
import { lmdbEventStore } from '../../infra/lmdb/eventStore.ts';
import { lmdbReadStore } from '../../infra/lmdb/readStore.ts';
import { catchUp, runProjection, type BatchInfo, type CatchUpOptions } from '../../projections/runner.ts';
import { countingProjection, type StreamTally } from '../fixtures/countingProjection.ts';
import { genreEvent, positionEvent, waitFor } from '../ports/support.ts';

const deletion: GenreChanged = {
  type: 'GenreChanged',
  data: { genre: { id: 0, slug: 'x', name: 'x' } },
  metadata: {},
};

describe('projection runner on LMDB', () => {
  let dataDir: string;
  let eventStore: EventStore;
  let readStore: ReadStore;
  let getManyCalls: string[][];
  let writeBatches: Array<Array<DocumentWrite<unknown>>>;

  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'marquee-runner-'));
    eventStore = lmdbEventStore({ dataDir });
    const inner = lmdbReadStore({ dataDir });
    getManyCalls = [];
    writeBatches = [];
    // Spies on the two calls the runner makes per batch.
    readStore = {
      ...inner,
      getMany: (collection, keys) => {
        getManyCalls.push([...keys]);
        return inner.getMany(collection, keys);
      },
      writeBatch: (collection, writes, checkpoint) => {
        writeBatches.push(writes as Array<DocumentWrite<unknown>>);
        return inner.writeBatch(collection, writes, checkpoint);
      },
    };
  });

  afterEach(async () => {
    await eventStore.close();
    await readStore.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  function options(extra: Partial<CatchUpOptions<StreamTally>> = {}): CatchUpOptions<StreamTally> {
    return { projection: countingProjection, eventStore, readStore, collection: 'tally_v1', checkpointName: 'tally', ...extra };
  }

  async function append(stream: string, events: DomainEvent[]): Promise<void> {
    await eventStore.append(stream, events, 'any');
  }

  it('writes the documents of a projection of one document per event without reading them, and a replay of its events is skipped', async () => {
    const perEvent: Projection<{ position: number; revision: number }> = {
      name: 'per_event', version: 1, canHandle: ['GenreDefined'], onePerEvent: true,
      documentId: (event) => `e${event.position}`,
      evolve: (_doc, event) => ({ position: event.position, revision: event.revision }),
    };
    await append('a', [genreEvent(1), genreEvent(2)]);
    await append('b', [genreEvent(3)]);
    const opts = { projection: perEvent, eventStore, readStore, collection: 'per_event_v1', checkpointName: 'per_event' };
    await catchUp(opts);
    assert.deepEqual(getManyCalls, []);
    const written = await readStore.scan('per_event_v1');
    assert.deepEqual(written.map((d) => [d.key, d.doc, d.position]), [['e1', { position: 1, revision: 0 }, 1], ['e2', { position: 2, revision: 1 }, 2], ['e3', { position: 3, revision: 0 }, 3]]);
    // Replayed from the start (a checkpoint lost, a redelivery): the same writes, all skipped.
    await readStore.setCheckpoint('per_event', 0);
    const batches: BatchInfo[] = [];
    await catchUp({ ...opts, onBatch: (info) => batches.push(info) });
    assert.deepEqual(batches.map((b) => [b.written, b.skipped]), [[0, 3]]);
    assert.deepEqual(await readStore.scan('per_event_v1'), written);
  });

  it('loads each document once per batch, folds its events and writes it once stamped with its last event', async () => {
    await append('a', [genreEvent(1)]);
    await append('b', [genreEvent(10)]);
    await append('a', [genreEvent(2), genreEvent(3)]);
    await append('other', [positionEvent('m1', 1)]);

    const result = await catchUp(options());

    assert.deepEqual(result, { position: 5, head: 5, events: 5 });
    assert.deepEqual(getManyCalls, [['a', 'b']]);
    assert.equal(writeBatches.length, 1);
    assert.deepEqual(writeBatches[0], [
      { key: 'a', doc: { stream: 'a', count: 3, sum: 6, revisions: [0, 1, 2] }, position: 4 },
      { key: 'b', doc: { stream: 'b', count: 1, sum: 10, revisions: [0] }, position: 2 },
    ]);
    assert.equal(await readStore.getCheckpoint('tally'), 5);
    assert.deepEqual(await readStore.get('tally_v1', 'a'), {
      key: 'a',
      doc: { stream: 'a', count: 3, sum: 6, revisions: [0, 1, 2] },
      position: 4,
    });
  });

  it('moves the checkpoint over a batch with no event the projection handles', async () => {
    await append('other', [positionEvent('m1', 1), positionEvent('m2', 2)]);
    const result = await catchUp(options());
    assert.equal(result.position, 2);
    assert.equal(await readStore.getCheckpoint('tally'), 2);
    assert.deepEqual(getManyCalls, []);
    assert.deepEqual(writeBatches, [[]]);
  });

  it('goes on from the checkpoint in batches and reports progress against the head', async () => {
    for (let i = 1; i <= 7; i += 1) await append(`s${i % 2}`, [genreEvent(i)]);
    const progress: Array<[number, number]> = [];
    await catchUp(options({ batchSize: 3, onProgress: (position, head) => progress.push([position, head]) }));
    assert.deepEqual(progress, [[0, 7], [3, 7], [6, 7], [7, 7]]);
    assert.deepEqual((await readStore.get<StreamTally>('tally_v1', 's1'))?.doc, { stream: 's1', count: 4, sum: 16, revisions: [0, 1, 2, 3] });
    assert.deepEqual((await readStore.get<StreamTally>('tally_v1', 's0'))?.doc, { stream: 's0', count: 3, sum: 12, revisions: [0, 1, 2] });

    await append('s0', [genreEvent(100)]);
    const again = await catchUp(options({ batchSize: 3 }));
    assert.deepEqual(again, { position: 8, head: 8, events: 1 });
    assert.deepEqual((await readStore.get<StreamTally>('tally_v1', 's0'))?.doc.sum, 112);
  });

  it('deletes a document the projection folds to null', async () => {
    await append('a', [genreEvent(1)]);
    await append('b', [genreEvent(2)]);
    await catchUp(options());
    await append('a', [deletion]);
    await catchUp(options());
    assert.equal(await readStore.get('tally_v1', 'a'), null);
    assert.deepEqual(await readStore.scan('tally_v1').then((docs) => docs.map((d) => d.key)), ['b']);
  });

  it('leaves every document unchanged when the same events are replayed from checkpoint 0', async () => {
    for (let i = 1; i <= 20; i += 1) await append(`s${i % 3}`, [i % 7 === 0 ? deletion : genreEvent(i)]);
    await catchUp(options({ batchSize: 4 }));
    const before = await readStore.scan('tally_v1');

    await readStore.setCheckpoint('tally', 0);
    const batches: BatchInfo[] = [];
    await catchUp(options({ batchSize: 4, onBatch: (info) => batches.push(info) }));

    assert.deepEqual(await readStore.scan('tally_v1'), before);
    assert.equal(batches.reduce((sum, b) => sum + b.written, 0), 0);
    assert.equal(await readStore.getCheckpoint('tally'), 20);
  });

  it('folds only the events newer than a stored document when a batch overlaps it', async () => {
    await append('a', [genreEvent(1), genreEvent(2)]);
    await catchUp(options());
    await append('a', [genreEvent(3)]);
    // The checkpoint falls behind the document (as after a crash between a document write and
    // a checkpoint on an engine that cannot write both at once).
    await readStore.setCheckpoint('tally', 1);
    await catchUp(options());
    assert.deepEqual(await readStore.get('tally_v1', 'a'), {
      key: 'a',
      doc: { stream: 'a', count: 3, sum: 6, revisions: [0, 1, 2] },
      position: 3,
    });
  });

  it('hands the written documents to the afterWrite sink', async () => {
    await append('a', [genreEvent(1)]);
    await append('b', [genreEvent(2)]);
    await append('a', [deletion]);
    const sunk: Array<Array<DocumentWrite<StreamTally>>> = [];
    await catchUp(options({ afterWrite: async (writes) => void sunk.push(writes) }));
    assert.deepEqual(sunk, [[
      { key: 'a', doc: null, position: 3 },
      { key: 'b', doc: { stream: 'b', count: 1, sum: 2, revisions: [0] }, position: 2 },
    ]]);
  });

  it('runs live: catches up, then folds events appended later, until stopped', async () => {
    await append('a', [genreEvent(1)]);
    const runner = runProjection(options({ idleMs: 10 }));
    try {
      await waitFor('the history', async () => (await readStore.getCheckpoint('tally')) === 1);
      await append('a', [genreEvent(2)]);
      await append('b', [genreEvent(5)]);
      await waitFor('the live events', async () => (await readStore.getCheckpoint('tally')) === 3);
    } finally {
      await runner.stop();
    }
    await runner.done;
    assert.deepEqual((await readStore.get<StreamTally>('tally_v1', 'a'))?.doc, { stream: 'a', count: 2, sum: 3, revisions: [0, 1] });
    assert.deepEqual((await readStore.get<StreamTally>('tally_v1', 'b'))?.doc, { stream: 'b', count: 1, sum: 5, revisions: [0] });
  });

  it('stops when its abort signal fires', async () => {
    const controller = new AbortController();
    const runner = runProjection(options({ idleMs: 10, signal: controller.signal }));
    await append('a', [genreEvent(1)]);
    await waitFor('the first event', async () => (await readStore.getCheckpoint('tally')) === 1);
    controller.abort();
    await runner.done;
  });

  it('rejects done and holds the checkpoint when the projection throws', async () => {
    await append('a', [genreEvent(1)]);
    await catchUp(options());
    await append('a', [genreEvent(2)]);
    const failing = { ...countingProjection, evolve: () => { throw new Error('bad fold'); } };
    const runner = runProjection({ ...options({ idleMs: 10 }), projection: failing });
    await assert.rejects(runner.done, /bad fold/);
    assert.equal(await readStore.getCheckpoint('tally'), 1);
  });
});
