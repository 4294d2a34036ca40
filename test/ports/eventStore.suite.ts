/**
 * The EventStore behaviour suite. Every adapter runs it through its own `*.int.test.ts`:
 *
 *   eventStoreSuite('lmdbEventStore', async () => ({ store, cleanup }));
 *
 * Tests use unique stream names and positions relative to the head, so an adapter may hand the
 * same (non-empty) server to every test.
 *
 * Positions are exact (head + 1, head + 2, ...) for an adapter whose positions are gapless, and
 * only checked to increase for one whose positions are not (`positions: 'increasing'`, e.g.
 * EventStoreDB's log offsets); such an adapter may also commit the requests of one appendMany
 * for different streams in any order.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isAppError } from '../../contracts/errors.ts';
import type { RecordedEvent } from '../../contracts/events.ts';
import type { AppendResult, EventStore } from '../../contracts/ports.ts';
import { printed, spawnTs, succeeded } from '../fixtures/child.ts';
import { openEventStoreSpec } from '../fixtures/eventStoreSpec.ts';
import { genreEvent, uniqueName, waitFor } from './support.ts';

export interface EventStoreFixture {
  store: EventStore;
  cleanup(): Promise<void>;
  /** How a child process opens the same log as `store` (test/fixtures/eventStoreSpec.ts). */
  spec: string;
}

export interface EventStoreSuiteOptions {
  /** `gapless`: 1, 2, 3... as appended; `increasing`: only ordered. Default `gapless`. */
  positions?: 'gapless' | 'increasing';
}

const isConflict = (err: unknown) => isAppError(err, 'wrong_expected_revision');
const genreId = (event: RecordedEvent) => (event.data as { genre: { id: number } }).genre.id;

export function eventStoreSuite(
  name: string,
  make: () => Promise<EventStoreFixture>,
  suiteOptions: EventStoreSuiteOptions = {},
): void {
  const gapless = (suiteOptions.positions ?? 'gapless') === 'gapless';

  /** `count` positions after `head`: exactly head + 1.. when gapless, else strictly increasing. */
  function assertPositionsAfter(actual: number[], head: number, count: number): void {
    if (gapless) {
      assert.deepEqual(actual, Array.from({ length: count }, (_, i) => head + i + 1));
      return;
    }
    assert.equal(actual.length, count, `positions ${actual.join(', ')}`);
    actual.forEach((position, i) => {
      assert.ok(position > (i === 0 ? head : (actual[i - 1] as number)), `positions ${actual.join(', ')} after ${head}`);
    });
  }

  describe(`EventStore behaviour: ${name}`, () => {
    let fixture: EventStoreFixture;
    let store: EventStore;
    beforeEach(async () => {
      fixture = await make();
      store = fixture.store;
    });
    afterEach(async () => {
      await fixture.cleanup();
    });

    describe('append and readStream', () => {
      it('appends events to a new stream and reads them back as recorded events', async () => {
        const stream = uniqueName('s');
        const head = await store.headPosition();
        const result = await store.append(stream, [genreEvent(1), genreEvent(2)], 'no_stream');
        assert.equal(result.nextExpectedRevision, 1);

        const events = await store.readStream(stream);
        assert.equal(events.length, 2);
        assertPositionsAfter(events.map((e) => e.position), head, 2);
        assert.equal(result.position, events[1]?.position);
        assert.deepEqual(
          events.map((e) => ({ type: e.type, data: e.data, metadata: e.metadata, streamId: e.streamId, revision: e.revision })),
          [
            { ...genreEvent(1), streamId: stream, revision: 0 },
            { ...genreEvent(2), streamId: stream, revision: 1 },
          ],
        );
        for (const event of events) {
          assert.match(event.recordedAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
        }
      });

      it('reports revision -1 and no events for a stream that does not exist', async () => {
        const stream = uniqueName('missing');
        assert.equal(await store.streamRevision(stream), -1);
        assert.deepEqual(await store.readStream(stream), []);
      });

      it('reports the revision of the last event of a stream', async () => {
        const stream = uniqueName('s');
        await store.append(stream, [genreEvent(1), genreEvent(2), genreEvent(3)], 'no_stream');
        assert.equal(await store.streamRevision(stream), 2);
      });

      it('reads a stream from a given revision', async () => {
        const stream = uniqueName('s');
        await store.append(stream, [genreEvent(0), genreEvent(1), genreEvent(2), genreEvent(3)], 'no_stream');
        const events = await store.readStream(stream, { fromRevision: 2 });
        assert.deepEqual(events.map((e) => e.revision), [2, 3]);
        assert.deepEqual(events.map((e) => (e.data as { genre: { id: number } }).genre.id), [2, 3]);
        assert.deepEqual(await store.readStream(stream, { fromRevision: 4 }), []);
      });

      it('reads a stream backwards from its end, newest first, up to a limit', async () => {
        const stream = uniqueName('s');
        await store.append(stream, [genreEvent(0), genreEvent(1), genreEvent(2), genreEvent(3)], 'no_stream');
        const last2 = await store.readStreamBackwards(stream, { limit: 2 });
        assert.deepEqual(last2.map((e) => [e.revision, genreId(e)]), [[3, 3], [2, 2]]);
        assert.deepEqual(last2.map((e) => e.streamId), [stream, stream]);
        assert.deepEqual((await store.readStreamBackwards(stream)).map((e) => e.revision), [3, 2, 1, 0]);
        assert.deepEqual(await store.readStreamBackwards(uniqueName('missing')), []);
      });

      it('reads a stream backwards from a given revision, past-the-end revisions reading from the last', async () => {
        const stream = uniqueName('s');
        const other = uniqueName('o');
        await store.append(stream, [genreEvent(0), genreEvent(1), genreEvent(2), genreEvent(3)], 'no_stream');
        await store.append(other, [genreEvent(9)], 'no_stream');
        assert.deepEqual((await store.readStreamBackwards(stream, { fromRevision: 2, limit: 2 })).map((e) => e.revision), [2, 1]);
        assert.deepEqual((await store.readStreamBackwards(stream, { fromRevision: 1, limit: 10 })).map((e) => genreId(e)), [1, 0]);
        assert.deepEqual((await store.readStreamBackwards(stream, { fromRevision: 0, limit: 1 })).map((e) => e.revision), [0]);
        assert.deepEqual((await store.readStreamBackwards(stream, { fromRevision: 40, limit: 1 })).map((e) => e.revision), [3]);
        // Positions are those readStream reports for the same events.
        const forwards = await store.readStream(stream);
        const backwards = await store.readStreamBackwards(stream);
        assert.deepEqual(backwards.map((e) => e.position), forwards.map((e) => e.position).reverse());
      });

      it('keeps the streams apart', async () => {
        const a = uniqueName('a');
        const b = uniqueName('b');
        await store.append(a, [genreEvent(1)], 'no_stream');
        await store.append(b, [genreEvent(2), genreEvent(3)], 'no_stream');
        await store.append(a, [genreEvent(4)], 0);
        assert.deepEqual((await store.readStream(a)).map((e) => [e.streamId, e.revision]), [[a, 0], [a, 1]]);
        assert.deepEqual((await store.readStream(b)).map((e) => [e.streamId, e.revision]), [[b, 0], [b, 1]]);
      });
    });

    describe('expected revision', () => {
      it('appends when the stream is at the expected revision', async () => {
        const stream = uniqueName('s');
        await store.append(stream, [genreEvent(1)], 'no_stream');
        const result = await store.append(stream, [genreEvent(2)], 0);
        assert.equal(result.nextExpectedRevision, 1);
      });

      it('refuses an append at a stale revision with wrong_expected_revision and writes nothing', async () => {
        const stream = uniqueName('s');
        await store.append(stream, [genreEvent(1), genreEvent(2)], 'no_stream');
        const head = await store.headPosition();
        await assert.rejects(store.append(stream, [genreEvent(3)], 0), isConflict);
        await assert.rejects(store.append(stream, [genreEvent(3)], 5), isConflict);
        assert.equal(await store.streamRevision(stream), 1);
        assert.equal((await store.readStream(stream)).length, 2);
        assert.equal(await store.headPosition(), head);
      });

      it('refuses a numeric expected revision on a stream that does not exist', async () => {
        await assert.rejects(store.append(uniqueName('s'), [genreEvent(1)], 0), isConflict);
      });

      it("refuses 'no_stream' when the stream exists", async () => {
        const stream = uniqueName('s');
        await store.append(stream, [genreEvent(1)], 'no_stream');
        await assert.rejects(store.append(stream, [genreEvent(2)], 'no_stream'), isConflict);
        assert.equal(await store.streamRevision(stream), 0);
      });

      it("appends with 'any' whether or not the stream exists", async () => {
        const stream = uniqueName('s');
        const first = await store.append(stream, [genreEvent(1)], 'any');
        const second = await store.append(stream, [genreEvent(2)], 'any');
        assert.equal(first.nextExpectedRevision, 0);
        assert.equal(second.nextExpectedRevision, 1);
      });

      it('lets exactly one of several concurrent appends at the same revision win', async () => {
        const stream = uniqueName('s');
        await store.append(stream, [genreEvent(0)], 'no_stream');
        const outcomes = await Promise.allSettled(
          [1, 2, 3, 4, 5].map((n) => store.append(stream, [genreEvent(n)], 0)),
        );
        const won = outcomes.filter((o) => o.status === 'fulfilled');
        const lost = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
        assert.equal(won.length, 1);
        assert.equal(lost.length, 4);
        for (const o of lost) assert.equal(isConflict(o.reason), true);
        assert.equal(await store.streamRevision(stream), 1);
      });
    });

    describe('appendMany', () => {
      it('appends to several streams and returns one result per request, in order', async () => {
        const a = uniqueName('a');
        const b = uniqueName('b');
        const head = await store.headPosition();
        const results = await store.appendMany([
          { stream: a, events: [genreEvent(1), genreEvent(2)], expectedRevision: 'no_stream' },
          { stream: b, events: [genreEvent(3)], expectedRevision: 'no_stream' },
        ]);
        assert.equal(results.length, 2);
        const [ra, rb] = results as AppendResult[];
        assert.equal(ra?.nextExpectedRevision, 1);
        assert.equal(rb?.nextExpectedRevision, 0);
        if (gapless) {
          assert.ok(ra!.position > head && rb!.position > ra!.position);
          assert.equal(await store.headPosition(), rb!.position);
        } else {
          assert.ok(ra!.position > head && rb!.position > head && ra!.position !== rb!.position);
          assert.equal(await store.headPosition(), Math.max(ra!.position, rb!.position));
        }
      });

      it('puts an AppError in the slot of a conflicting request and appends the others', async () => {
        const a = uniqueName('a');
        const b = uniqueName('b');
        const c = uniqueName('c');
        await store.append(b, [genreEvent(0)], 'no_stream');
        const results = await store.appendMany([
          { stream: a, events: [genreEvent(1)], expectedRevision: 'no_stream' },
          { stream: b, events: [genreEvent(2)], expectedRevision: 'no_stream' },
          { stream: c, events: [genreEvent(3)], expectedRevision: 'any' },
        ]);
        assert.equal(isConflict(results[1]), true);
        assert.equal(isConflict(results[0]), false);
        assert.equal(isConflict(results[2]), false);
        assert.equal(await store.streamRevision(a), 0);
        assert.equal(await store.streamRevision(b), 0);
        assert.equal(await store.streamRevision(c), 0);
        assert.deepEqual((await store.readStream(b)).map((e) => (e.data as { genre: { id: number } }).genre.id), [0]);
      });

      it('checks a later request against the events of an earlier one on the same stream', async () => {
        const a = uniqueName('a');
        const results = await store.appendMany([
          { stream: a, events: [genreEvent(1)], expectedRevision: 'no_stream' },
          { stream: a, events: [genreEvent(2)], expectedRevision: 0 },
          { stream: a, events: [genreEvent(3)], expectedRevision: 0 },
        ]);
        assert.equal((results[0] as AppendResult).nextExpectedRevision, 0);
        assert.equal((results[1] as AppendResult).nextExpectedRevision, 1);
        assert.equal(isConflict(results[2]), true);
        assert.equal(await store.streamRevision(a), 1);
      });
    });

    describe('readAll and headPosition', () => {
      it('reads events of all streams in global order after a position, up to a limit', async () => {
        const a = uniqueName('a');
        const b = uniqueName('b');
        const head = await store.headPosition();
        await store.append(a, [genreEvent(1)], 'no_stream');
        await store.append(b, [genreEvent(2)], 'no_stream');
        await store.append(a, [genreEvent(3), genreEvent(4)], 0);
        await store.append(b, [genreEvent(5)], 0);

        const all = await store.readAll({ after: head, limit: 100 });
        const positions = all.map((e) => e.position);
        assertPositionsAfter(positions, head, 5);
        assert.deepEqual(all.map((e) => (e.data as { genre: { id: number } }).genre.id), [1, 2, 3, 4, 5]);
        assert.deepEqual(all.map((e) => e.streamId), [a, b, a, a, b]);

        const page = await store.readAll({ after: head, limit: 2 });
        assert.deepEqual(page.map((e) => e.position), positions.slice(0, 2));
        const rest = await store.readAll({ after: positions[1], limit: 100 });
        assert.deepEqual(rest.map((e) => e.position), positions.slice(2));
        assert.deepEqual(await store.readAll({ after: positions[4] }), []);
      });

      it('reads from the start when no position is given', async () => {
        await store.append(uniqueName('s'), [genreEvent(1)], 'no_stream');
        const first = await store.readAll({ limit: 1 });
        assert.equal(first.length, 1);
        if (gapless) assert.equal(first[0]?.position, 1);
        else assert.ok((first[0]?.position ?? 0) >= 1);
        assert.deepEqual(await store.readAll({ after: 0, limit: 1 }), first);
      });

      it('moves the head position to the position of the last appended event', async () => {
        const result = await store.append(uniqueName('s'), [genreEvent(1), genreEvent(2)], 'no_stream');
        assert.equal(await store.headPosition(), result.position);
      });
    });

    describe('subscribeAll', () => {
      it('delivers the history after the checkpoint, then live events, in order', async () => {
        const stream = uniqueName('s');
        const head = await store.headPosition();
        await store.append(stream, [genreEvent(1), genreEvent(2), genreEvent(3)], 'no_stream');
        const seen: RecordedEvent[] = [];
        const subscription = store.subscribeAll(
          async (batch) => {
            seen.push(...batch);
          },
          { after: head, idleMs: 10 },
        );
        try {
          await waitFor('the history', () => seen.length >= 3);
          await store.append(stream, [genreEvent(4)], 2);
          await store.append(stream, [genreEvent(5)], 3);
          await waitFor('the live events', () => seen.length >= 5);
        } finally {
          await subscription.stop();
        }
        assertPositionsAfter(seen.map((e) => e.position), head, 5);
        assert.deepEqual(seen.map((e) => e.position), (await store.readAll({ after: head, limit: 5 })).map((e) => e.position));
        assert.deepEqual(seen.map((e) => e.revision), [0, 1, 2, 3, 4]);
      });

      it('hands over batches no larger than batchSize and waits for each handler', async () => {
        const stream = uniqueName('s');
        const head = await store.headPosition();
        await store.append(stream, [1, 2, 3, 4, 5].map((n) => genreEvent(n)), 'no_stream');
        const sizes: number[] = [];
        let inFlight = 0;
        let overlapped = false;
        const subscription = store.subscribeAll(
          async (batch) => {
            inFlight += 1;
            if (inFlight > 1) overlapped = true;
            sizes.push(batch.length);
            await new Promise((resolve) => setTimeout(resolve, 5));
            inFlight -= 1;
          },
          { after: head, batchSize: 2, idleMs: 10 },
        );
        await waitFor('all five events', () => sizes.reduce((a, b) => a + b, 0) >= 5);
        await subscription.stop();
        assert.deepEqual(sizes, [2, 2, 1]);
        assert.equal(overlapped, false);
      });

      it('delivers nothing after stop() and settles done', async () => {
        const stream = uniqueName('s');
        const head = await store.headPosition();
        const first = await store.append(stream, [genreEvent(1)], 'no_stream');
        const seen: number[] = [];
        const subscription = store.subscribeAll(
          async (batch) => {
            seen.push(...batch.map((e) => e.position));
          },
          { after: head, idleMs: 10 },
        );
        await waitFor('the first event', () => seen.length === 1);
        await subscription.stop();
        await subscription.done;
        await store.append(stream, [genreEvent(2)], 0);
        // A second subscription polling at the same pace sees the new event: a (wrongly) still
        // running first loop would have had the same chance to deliver it.
        let laterSaw = 0;
        const later = store.subscribeAll(
          async (batch) => {
            laterSaw += batch.length;
          },
          { after: first.position, idleMs: 10 },
        );
        await waitFor('the second subscription', () => laterSaw === 1);
        await later.stop();
        assert.deepEqual(seen, [first.position]);
        if (gapless) assert.equal(first.position, head + 1);
      });

      it('rejects done with the error of a handler that throws', async () => {
        const head = await store.headPosition();
        await store.append(uniqueName('s'), [genreEvent(1)], 'no_stream');
        const subscription = store.subscribeAll(
          async () => {
            throw new Error('projection failed');
          },
          { after: head, idleMs: 10 },
        );
        await assert.rejects(subscription.done, /projection failed/);
      });
    });

    describe('across processes', function () {
      // Each case starts children that load tsx and connect: seconds on a busy two-core machine.
      this.timeout(90_000);
      let controlDir: string;
      beforeEach(() => {
        controlDir = mkdtempSync(join(tmpdir(), 'marquee-es-ctl-'));
      });
      afterEach(() => {
        rmSync(controlDir, { recursive: true, force: true });
      });

      it('never duplicates or skips a revision when two processes append to the same streams at once, and every reader sees one order', async () => {
        const count = 60;
        const prefix = `${uniqueName('race')}-`;
        const head = await store.headPosition();
        // A projection following the log live while the race runs: nothing may ever appear
        // behind a position it has been handed, so it must end with exactly the final order.
        const live: RecordedEvent[] = [];
        const subscription = store.subscribeAll(async (batch) => {
          live.push(...batch);
        }, { after: head, idleMs: 10 });
        const children = ['one', 'two'].map((worker) => spawnTs('test/fixtures/appendWorker.ts', [controlDir, worker, String(count), '3', fixture.spec, prefix]));
        try {
          await Promise.all(children.map((c) => printed(c, 'ready', 60_000)));
          writeFileSync(join(controlDir, 'go'), '');
          await Promise.all(children.map(succeeded));
        } finally {
          for (const c of children) c.process.kill('SIGKILL');
        }

        // Everything after head: the race, and one warm-up event of each worker before it.
        const everything = await store.readAll({ after: head, limit: 100_000 });
        assert.equal(everything.length, 2 * count + 2);
        assertPositionsAfter(everything.map((e) => e.position), head, 2 * count + 2);
        try {
          await waitFor('the live subscription', () => live.length >= everything.length);
        } finally {
          await subscription.stop();
        }
        assert.deepEqual(live.map((e) => [e.position, e.streamId, e.revision]), everything.map((e) => [e.position, e.streamId, e.revision]));
        const all = everything.filter((e) => e.streamId.startsWith(prefix));
        assert.equal(all.length, 2 * count);
        for (const worker of ['one', 'two']) {
          const ids = all.filter((e) => e.metadata.producer === worker).map(genreId).sort((a, b) => a - b);
          assert.deepEqual(ids, Array.from({ length: count }, (_, i) => i), `events of worker ${worker}`);
        }
        // The appends really raced: the producers alternate somewhere in the global order, or one
        // worker had an append refused (a conflict, or on Kafka a fenced write) because of the other.
        const switches = all.filter((e, i) => i > 0 && e.metadata.producer !== all[i - 1]?.metadata.producer).length;
        const refused = children.map((c) => /^done (\d+) (\d+)$/.exec(c.lines.at(-1) ?? '')).reduce((n, m) => n + Number(m?.[1] ?? 0) + Number(m?.[2] ?? 0), 0);
        assert.ok(switches > 1 || refused > 0, `the two workers did not overlap (${switches} switches, ${refused} refused appends)`);
        for (const stream of [0, 1, 2].map((n) => `${prefix}shared-${n}`)) {
          const events = await store.readStream(stream);
          assert.deepEqual(events.map((e) => e.revision), events.map((_, i) => i), `revisions of ${stream}`);
          assert.equal(await store.streamRevision(stream), events.length - 1);
          // Per stream, the global order is the revision order.
          assert.deepEqual(all.filter((e) => e.streamId === stream).map((e) => [e.revision, e.position]), events.map((e) => [e.revision, e.position]));
        }

        // A second reader of the same log, built on its own, computes the very same order.
        const peer = await openEventStoreSpec(fixture.spec);
        try {
          const seen = (await peer.readAll({ after: head, limit: 100_000 })).filter((e) => e.streamId.startsWith(prefix));
          assert.deepEqual(seen.map((e) => [e.position, e.streamId, e.revision, genreId(e)]), all.map((e) => [e.position, e.streamId, e.revision, genreId(e)]));
        } finally {
          await peer.close();
        }
      });

      it('refuses the append a writer decided before it was paused and another process appended (a zombie)', async () => {
        const stream = uniqueName('zombie');
        const head = await store.headPosition();
        const zombie = spawnTs('test/fixtures/zombieWorker.ts', [controlDir, fixture.spec, stream, 'stale']);
        try {
          await printed(zombie, 'owner', 60_000);
          zombie.process.kill('SIGSTOP');
          const taken = await store.append(stream, [genreEvent(200)], 0);
          assert.equal(taken.nextExpectedRevision, 1);
        } finally {
          zombie.process.kill('SIGCONT');
          writeFileSync(join(controlDir, 'go'), '');
        }
        await succeeded(zombie);
        const result = zombie.lines.find((l) => l.startsWith('result ')) ?? '(none)';
        // Refused by the revision check, or (Kafka) by the fencing of its old producer epoch.
        assert.match(result, /^result (wrong_expected_revision fenced=false|unavailable fenced=true)$/);
        assert.deepEqual((await store.readStream(stream)).map((e) => [e.revision, genreId(e)]), [[0, 100], [1, 200]]);
        assert.deepEqual((await store.readAll({ after: head, limit: 100_000 })).filter((e) => e.streamId === stream).map(genreId), [100, 200]);
      });
    });
  });
}
