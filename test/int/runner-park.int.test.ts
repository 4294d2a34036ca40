/**
 * The runner parks a document whose write keeps failing (projections/parking.ts), on LMDB.
 * The unwritable key of test/e2e/hostile.projections.e2e.test.ts can never be fixed; here the
 * store refuses one document's writes (a retriable failure, as a flaky engine would) until the
 * test "fixes" it, to show attempts with backoff, the rule for later events, and a retry that
 * succeeds. An outage of the whole store must park nothing.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppError } from '../../contracts/errors.ts';
import type { EventStore, ReadStore } from '../../contracts/ports.ts';
import { lmdbEventStore } from '../../infra/lmdb/eventStore.ts';
import { lmdbReadStore } from '../../infra/lmdb/readStore.ts';
import { BEHIND_PARKED, listParked, PARKED_COLLECTION, retryParked } from '../../projections/parking.ts';
import { catchUp, type BatchInfo, type CatchUpOptions } from '../../projections/runner.ts';
import { countingProjection, type StreamTally } from '../fixtures/countingProjection.ts';
import { genreEvent } from '../ports/support.ts';

describe('projection runner parking what it cannot write (LMDB)', () => {
  let dataDir: string;
  let eventStore: EventStore;
  let inner: ReadStore;
  let readStore: ReadStore;
  /** Document keys whose writes the store refuses, and whether it refuses every write. */
  let refused: Set<string>;
  let outage: boolean;
  let writeCalls: number;

  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'marquee-park-'));
    eventStore = lmdbEventStore({ dataDir });
    inner = lmdbReadStore({ dataDir });
    refused = new Set();
    outage = false;
    writeCalls = 0;
    readStore = {
      ...inner,
      writeBatch: (collection, writes, checkpoint) => {
        writeCalls += 1;
        if (outage) return Promise.reject(new AppError('unavailable', 'the store is down', { retriable: true }));
        if (collection !== PARKED_COLLECTION && writes.some((w) => refused.has(w.key))) {
          return Promise.reject(new AppError('unavailable', 'the engine refused this document', { retriable: true }));
        }
        return inner.writeBatch(collection, writes, checkpoint);
      },
    };
  });

  afterEach(async () => {
    await eventStore.close();
    await inner.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  function options(extra: Partial<CatchUpOptions<StreamTally>> = {}): CatchUpOptions<StreamTally> {
    return { projection: countingProjection, eventStore, readStore, collection: 'tally_v1', checkpointName: 'tally', attempts: 3, ...extra };
  }

  it('parks a document after its attempts, writes the rest, moves the checkpoint and unparks it on a retry once fixed', async () => {
    for (let i = 0; i < 20; i += 1) await eventStore.append(`s${i}`, [genreEvent(i)], 'any');
    refused.add('s7');
    const batches: BatchInfo[] = [];
    const started = Date.now();
    const result = await catchUp(options({ onBatch: (info) => batches.push(info) }));
    const tookMs = Date.now() - started;

    assert.deepEqual(result, { position: 20, head: 20, events: 20 });
    assert.equal(await inner.getCheckpoint('tally'), 20);
    assert.equal(await inner.count('tally_v1'), 19);
    assert.equal(await inner.get('tally_v1', 's7'), null);
    // Three attempts of the refused document: pauses of 0.1 and 0.2 s.
    assert.ok(tookMs >= 300, `took ${tookMs} ms`);
    // The whole batch, then halves down to the document: about 2 log2(20) writes, not 20.
    assert.ok(writeCalls <= 16, `${writeCalls} writes`);
    assert.deepEqual(batches.map((b) => b.parked.map((p) => p.documentId)), [['s7']]);

    const [record] = await listParked(inner, { checkpoint: 'tally' });
    assert.equal(record?.doc.documentId, 's7');
    assert.deepEqual(record?.doc.events.map(({ position, type, reason, attempts }) => ({ position, type, reason, attempts })), [
      { position: 8, type: 'GenreDefined', reason: 'the engine refused this document', attempts: 3 },
    ]);

    // Later events: s7's is parked behind the first (its stored state would otherwise lack it),
    // s3's is folded as usual.
    await eventStore.append('s7', [genreEvent(100)], 'any');
    await eventStore.append('s3', [genreEvent(300)], 'any');
    refused.clear();
    await catchUp(options());
    assert.equal(await inner.get('tally_v1', 's7'), null);
    assert.equal((await inner.get<StreamTally>('tally_v1', 's3'))?.doc.sum, 303);
    assert.deepEqual((await listParked(inner))[0]?.doc.events.map((e) => [e.position, e.reason]), [
      [8, 'the engine refused this document'],
      [21, BEHIND_PARKED],
    ]);

    // Fixed: the retry folds both, in order, and removes the record; a second retry has nothing to do.
    const outcomes = await retryParked({ projection: countingProjection, eventStore, readStore, checkpoint: 'tally' });
    assert.deepEqual(outcomes, [{ documentId: 's7', positions: [8, 21], ok: true }]);
    assert.deepEqual(await inner.get('tally_v1', 's7'), {
      key: 's7',
      doc: { stream: 's7', count: 2, sum: 107, revisions: [0, 1] },
      position: 21,
    });
    assert.deepEqual(await listParked(inner), []);
    assert.deepEqual(await retryParked({ projection: countingProjection, eventStore, readStore, checkpoint: 'tally' }), []);

    // From now on its events are folded again.
    await eventStore.append('s7', [genreEvent(1000)], 'any');
    await catchUp(options());
    assert.equal((await inner.get<StreamTally>('tally_v1', 's7'))?.doc.sum, 1107);
  });

  it('keeps the record and says why when the retry still fails, and a retry that wrote but did not unpark is harmless', async () => {
    await eventStore.append('a', [genreEvent(1)], 'any');
    await eventStore.append('b', [genreEvent(2)], 'any');
    refused.add('a');
    await catchUp(options());
    const failed = await retryParked({ projection: countingProjection, eventStore, readStore, checkpoint: 'tally' });
    assert.deepEqual(failed, [{ documentId: 'a', positions: [1], ok: false, reason: 'the engine refused this document' }]);
    assert.equal((await listParked(inner)).length, 1);

    // The document got written but the record stayed (a crash between the two): the retry
    // folds nothing twice.
    refused.clear();
    await inner.writeBatch('tally_v1', [{ key: 'a', doc: { stream: 'a', count: 1, sum: 1, revisions: [0] }, position: 1 }]);
    assert.deepEqual(await retryParked({ projection: countingProjection, eventStore, readStore, checkpoint: 'tally', position: 1 }), [
      { documentId: 'a', positions: [1], ok: true },
    ]);
    assert.deepEqual((await inner.get('tally_v1', 'a'))?.doc, { stream: 'a', count: 1, sum: 1, revisions: [0] });
    assert.deepEqual(await listParked(inner), []);
  });

  it('parks nothing and holds the checkpoint while the whole store is down', async () => {
    for (let i = 0; i < 8; i += 1) await eventStore.append(`s${i}`, [genreEvent(i)], 'any');
    outage = true;
    await assert.rejects(catchUp(options({ attempts: 2 })), /the store is down/);
    outage = false;
    assert.equal(await inner.getCheckpoint('tally'), 0);
    assert.deepEqual(await listParked(inner), []);
    // Back up: everything is written, nothing parked.
    await catchUp(options());
    assert.equal(await inner.count('tally_v1'), 8);
    assert.deepEqual(await listParked(inner), []);
  });
});
