/**
 * The projection runner of a process (projections/group.ts) on LMDB's polling subscription:
 * several projections off one subscription, a projection whose batch fails held back while the
 * others go on and fed again from its own checkpoint once it heals, a replay alias followed, and
 * the guard (the projector lease) fencing every write. And the lease itself: one holder at a
 * time, a standby taking over once the holder's lease expires, a paused holder refused, and a
 * holder that knows it holds the lease with half of it to spare renewing it without a read.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EventStore, ReadStore } from '../../contracts/ports.ts';
import { defineProjection } from '../../contracts/projection.ts';
import { lmdbEventStore } from '../../infra/lmdb/eventStore.ts';
import { lmdbReadStore } from '../../infra/lmdb/readStore.ts';
import { ProjectionGroup, type ProjectionGroupOptions, type RunnerLog } from '../../projections/group.ts';
import { LEASES_COLLECTION, LeaseKeeper, takeLease } from '../../services/shared/lease.ts';
import { countingProjection, type StreamTally } from '../fixtures/countingProjection.ts';
import { genreEvent, positionEvent, waitFor } from '../ports/support.ts';

const quiet: RunnerLog = { info: () => undefined, warn: () => undefined, error: () => undefined };

describe('projection runner of a process (group) on LMDB', () => {
  let dataDir: string;
  let eventStore: EventStore;
  let readStore: ReadStore;
  let group: ProjectionGroup | undefined;

  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'marquee-group-'));
    eventStore = lmdbEventStore({ dataDir });
    readStore = lmdbReadStore({ dataDir });
  });

  afterEach(async () => {
    await group?.stop();
    group = undefined;
    await eventStore.close();
    await readStore.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** The counting projection behind a guard that refuses, as a lost lease does, while `allowed()` is false. */
  const fencedGroup = (allowed: () => boolean, options: Partial<ProjectionGroupOptions>) =>
    new ProjectionGroup({
      eventStore,
      readStore,
      projections: [countingProjection],
      logger: quiet,
      idleMs: 5,
      ...options,
      guard: () => {
        if (!allowed()) throw new Error('lease lost');
      },
    });

  const append = async (stream: string, n: number) => {
    await eventStore.append(stream, [genreEvent(n)], 'any');
  };

  it('feeds every projection off one subscription; one that fails is held back and caught up once it heals', async () => {
    let failing = true;
    const flaky = defineProjection<StreamTally>({
      ...countingProjection,
      name: 'flaky',
      evolve(doc, event) {
        if (failing) throw new Error('projection bug, fixed later');
        return countingProjection.evolve(doc, event);
      },
    });
    const states: string[] = [];
    group = new ProjectionGroup({
      eventStore,
      readStore,
      projections: [countingProjection, flaky],
      logger: quiet,
      batchSize: 2,
      idleMs: 5,
      aliasRefreshMs: 100,
      report: { state: (s) => states.push(s), parked: () => undefined },
    });
    group.start();
    for (let i = 1; i <= 5; i += 1) await append(`s${i % 2}`, i);
    const head = await eventStore.headPosition();
    await waitFor('the healthy projection at the head', async () => (await readStore.getCheckpoint('tally_v1')) === head);
    assert.equal(await readStore.getCheckpoint('flaky_v1'), 0, 'the failing one holds its checkpoint');
    assert.ok(states.includes('backing_off'));
    failing = false;
    await waitFor('the healed projection at the head', async () => (await readStore.getCheckpoint('flaky_v1')) === head, 15_000);
    assert.deepEqual((await readStore.get<StreamTally>('flaky_v1', 's1'))?.doc, (await readStore.get<StreamTally>('tally_v1', 's1'))?.doc);
    await waitFor('running again', () => states.at(-1) === 'running');
  });

  it('catches up to a bound of its caller, in its batches, then on to the head', async () => {
    const folded: number[] = [];
    const counted = defineProjection<StreamTally>({
      ...countingProjection,
      evolve(doc, event) {
        folded.push(event.position);
        return countingProjection.evolve(doc, event);
      },
    });
    group = new ProjectionGroup({ eventStore, readStore, projections: [counted], logger: quiet, batchSize: 4, idleMs: 5 });
    for (let i = 1; i <= 10; i += 1) await append(`s${i % 3}`, i);
    const head = await eventStore.headPosition();
    await group.catchUp(undefined, 8);
    assert.equal(await readStore.getCheckpoint('tally_v1'), 8, 'stopped at the bound, not at the head');
    assert.equal(group.position, 8);
    assert.deepEqual([...folded].sort((a, b) => a - b), [1, 2, 3, 4, 5, 6, 7, 8], 'each event up to the bound folded once');
    await group.catchUp();
    assert.equal(await readStore.getCheckpoint('tally_v1'), head);
    assert.equal(folded.length, head, 'nothing folded twice');
  });

  it('hands each projection the events of its own types alone, in log order, a lagging one only those past its checkpoint', async () => {
    /** A projection that records the events it folds, by type: one document for the whole log. */
    const recorder = (name: string, canHandle: Array<'GenreDefined' | 'PositionChanged'>) => {
      const seen: Array<[string, number]> = [];
      const projection = defineProjection<{ n: number }>({
        name,
        version: 1,
        canHandle,
        documentId: () => 'all',
        evolve(doc, event) {
          seen.push([event.type, event.position]);
          return { n: (doc?.n ?? 0) + 1 };
        },
      });
      return { projection, seen };
    };
    const genres = recorder('genres_only', ['GenreDefined']);
    // A type named twice is still handed over once per event.
    const both = recorder('both', ['PositionChanged', 'GenreDefined', 'PositionChanged']);
    const positions = recorder('positions_only', ['PositionChanged']);
    for (let i = 1; i <= 9; i += 1) {
      if (i % 3 === 0) await eventStore.append(`m${i}`, [positionEvent(`movie-${i}`, i)], 'any');
      else await append(`g${i}`, i);
    }
    // The positions-only projection already holds the first 4 events (a replay caught it up so far).
    await readStore.writeBatch('positions_only_v1', [], { name: 'positions_only_v1', position: 4 });
    const all = (await eventStore.readAll({ after: 0, limit: 100 })).map((e): [string, number] => [e.type, e.position]);
    group = new ProjectionGroup({ eventStore, readStore, projections: [genres.projection, both.projection, positions.projection], logger: quiet, batchSize: 4, idleMs: 5 });
    await group.catchUp();
    assert.deepEqual(genres.seen, all.filter(([type]) => type === 'GenreDefined'));
    assert.deepEqual(both.seen, all);
    assert.deepEqual(positions.seen, all.filter(([type, position]) => type === 'PositionChanged' && position > 4));
    for (const name of ['genres_only_v1', 'both_v1', 'positions_only_v1']) assert.equal(await readStore.getCheckpoint(name), 9, name);
  });

  it('folds several projections at once when told to, each to the same documents, a failing one held back alone', async () => {
    const copies = ['a', 'b', 'c', 'd'].map((suffix) => defineProjection<StreamTally>({ ...countingProjection, name: `tally${suffix}` }));
    const broken = defineProjection<StreamTally>({
      ...countingProjection,
      name: 'broken',
      evolve() {
        throw new Error('projection bug');
      },
    });
    let inFlight = 0;
    let most = 0;
    const counted: ReadStore = {
      ...readStore,
      async writeBatch(collection, writes, checkpoint) {
        inFlight += 1;
        most = Math.max(most, inFlight);
        try {
          // A pause, so writes of several projections are seen in flight together.
          await new Promise((resolve) => setTimeout(resolve, 5));
          return await readStore.writeBatch(collection, writes, checkpoint);
        } finally {
          inFlight -= 1;
        }
      },
    };
    for (let i = 1; i <= 9; i += 1) await append(`s${i % 3}`, i);
    group = new ProjectionGroup({ eventStore, readStore: counted, projections: [...copies, broken], logger: quiet, batchSize: 4, parallel: 3 });
    const head = await eventStore.headPosition();
    await Promise.race([group.catchUp(), waitFor('every healthy copy at the head', async () => {
      const checkpoints = await Promise.all(copies.map((p) => readStore.getCheckpoint(`${p.name}_v1`)));
      return checkpoints.every((c) => c === head);
    })]);
    assert.equal(most, 3, 'three projections in flight at most, and at once');
    assert.equal(await readStore.getCheckpoint('broken_v1'), 0);
    const docs = await Promise.all(copies.map(async (p) => (await readStore.get<StreamTally>(`${p.name}_v1`, 's1'))?.doc));
    assert.deepEqual(docs[0], { stream: 's1', count: 3, sum: 1 + 4 + 7, revisions: [0, 1, 2] });
    for (const doc of docs) assert.deepEqual(doc, docs[0]);
  });

  it('follows an alias switched by replay, and writes nothing while its guard refuses', async () => {
    let allowed = true;
    group = fencedGroup(() => allowed, { aliasRefreshMs: 50 });
    group.start();
    await append('a', 1);
    await waitFor('tally_v1 folded', async () => (await readStore.getCheckpoint('tally_v1')) === 1);
    await readStore.setAlias('tally', 'tally_v1_rebuilt');
    // Followed at the next refresh (50 ms here, 2 s by default): events after it go to the new one.
    await new Promise((r) => setTimeout(r, 200));
    await append('a', 2);
    await waitFor('the switched collection fed', async () => (await readStore.getCheckpoint('tally_v1_rebuilt')) === 2);
    assert.equal(await readStore.getCheckpoint('tally_v1'), 1, 'the old collection is left alone');
    allowed = false;
    await append('a', 3);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(await readStore.getCheckpoint('tally_v1_rebuilt'), 2, 'fenced: nothing written');
    allowed = true;
    await waitFor('written once allowed', async () => (await readStore.getCheckpoint('tally_v1_rebuilt')) === 3, 15_000);
  });

  it('ends a catch-up with its guard\'s error, writing nothing, once the guard refuses', async () => {
    let allowed = true;
    group = fencedGroup(() => allowed, { batchSize: 1 });
    await append('a', 1);
    await group.catchUp();
    assert.equal(await readStore.getCheckpoint('tally_v1'), 1);
    await append('a', 2);
    await append('a', 3);
    // A lease lost between two batches: the first batch is in, the catch-up stops at the next.
    let batches = 0;
    await assert.rejects(group.catchUp(() => {
      batches += 1;
      if (batches === 2) allowed = false;
    }), /lease lost/);
    assert.equal(await readStore.getCheckpoint('tally_v1'), 2, 'nothing written once refused');
  });

  it('gives a lease to one holder; a standby takes it once it expires; a paused holder is refused', async () => {
    let now = 1_000;
    const clock = () => now;
    const a = new LeaseKeeper(readStore, 'projector', 'a', 1000, clock);
    const b = new LeaseKeeper(readStore, 'projector', 'b', 1000, clock);
    const taken = await Promise.all([a.take(), b.take()]);
    assert.deepEqual(taken.filter(Boolean).length, 1, 'exactly one of two racing takes');
    const [holder, standby] = taken[0] ? [a, b] : [b, a];
    assert.ok(holder.holds());
    now += 600;
    assert.equal(await standby.take(), false, 'still held');
    assert.equal(await holder.take(), true, 'renewed');
    now += 900;
    assert.equal(await standby.take(), false, 'the renewal holds');
    // The holder is paused (SIGSTOP, a long GC) past its lease: the standby takes over, and the
    // holder's own check refuses its next write without asking the store.
    now += 1200;
    assert.throws(() => holder.check(), /not held/);
    assert.equal(await standby.take(), true, 'taken over once expired');
    assert.equal(await holder.take(), false);
    await standby.release();
    assert.equal(await holder.take(), true, 'a released lease is free at once');
  });

  it('renews a lease it holds with more than half to spare without asking the store', async () => {
    let now = 1_000;
    let calls = 0;
    // Every call to the store counted (a renewal scans, inserts, reads back).
    const counted = new Proxy(readStore, {
      get: (target, key: keyof ReadStore) => {
        const value = target[key];
        return typeof value === 'function' ? (...args: unknown[]) => ((calls += 1), (value as (...a: unknown[]) => unknown).apply(target, args)) : value;
      },
    });
    const keeper = new LeaseKeeper(counted, 'projector', 'a', 1000, () => now);
    assert.equal(await keeper.take(), true);
    assert.ok(calls > 0);
    calls = 0;
    now += 400;
    assert.equal(await keeper.take(), true, 'still held');
    assert.equal(calls, 0, 'held with 600 of 1000 ms to spare: nothing to read');
    now += 200;
    assert.equal(await keeper.take(), true, 'renewed');
    assert.ok(calls > 0, 'half of it gone: renewed in the store');
    now += 500;
    assert.ok(keeper.holds(), 'the renewal holds past the first lease (until 2,000)');
  });

  it('purges past epochs, tombstones too, and refuses a taker that read an epoch since purged and then stalled', async () => {
    let now = 1_000;
    const a = new LeaseKeeper(readStore, 'projector', 'a', 1000, () => now);
    assert.equal(await a.take(), true);
    // What a taker reads and then sits on (a long GC, SIGSTOP): epoch 1, which will have expired.
    const [stale] = await readStore.scan<{ holder: string; until: number }>(LEASES_COLLECTION, { prefix: 'projector:', reverse: true, limit: 1 });
    assert.equal(stale?.key, 'projector:000000000001');
    for (let i = 0; i < 5; i++) {
      now += 600;
      assert.equal(await a.take(), true);
    }
    assert.deepEqual((await readStore.scan(LEASES_COLLECTION, { prefix: 'projector:' })).map((l) => l.key), ['projector:000000000005', 'projector:000000000006']);
    // Purged outright: a deletion's tombstone would refuse this write (position 1) for good.
    assert.deepEqual(await readStore.writeBatch(LEASES_COLLECTION, [{ key: 'projector:000000000003', doc: { holder: 'probe', until: 0 }, position: 1 }]), { written: 1, skipped: 0 });
    await readStore.purge(LEASES_COLLECTION, ['projector:000000000003']);

    // The stalled taker goes on from what it read: epoch 1, expired; epoch 2 is free to insert again.
    let first = true;
    const stalled = new Proxy(readStore, {
      get: (target, key: keyof ReadStore) => {
        if (key !== 'scan') return typeof target[key] === 'function' ? (target[key] as (...a: unknown[]) => unknown).bind(target) : target[key];
        return async (...args: Parameters<ReadStore['scan']>) => {
          if (first && args[1]?.reverse === true) {
            first = false;
            return [stale];
          }
          return target.scan(...args);
        };
      },
    });
    assert.equal(await takeLease(stalled, LEASES_COLLECTION, 'projector', 'stalled', now, 1000), null, 'its epoch is not the newest');
    assert.ok(a.holds());
    now += 600;
    assert.equal(await a.take(), true, 'the holder renews as before');
  });
});
