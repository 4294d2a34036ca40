import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { isAppError } from '../../contracts/errors.ts';
import type { ObservationRecord } from '../../contracts/ports.ts';
import { lmdbInbox } from '../../infra/lmdb/inbox.ts';
import { availability, observationBusSuite, waitFor } from './observationBus.suite.ts';

const tempDir = () => mkdtemp(join(tmpdir(), 'marquee-inbox-'));

observationBusSuite('LMDB inbox', async () => {
  const dataDir = await tempDir();
  const bus = lmdbInbox({ dataDir, pollMs: 10 });
  return {
    bus,
    publishRaw: async (bytes) => {
      await bus.publishRaw([bytes]);
    },
    cleanup: async () => {
      await bus.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
});

describe('LMDB inbox', function () {
  this.timeout(60_000);
  let dataDir: string;
  beforeEach(async () => {
    dataDir = await tempDir();
  });
  afterEach(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  const drain = async (bus: ReturnType<typeof lmdbInbox>, group: string): Promise<ObservationRecord[]> => {
    const all: ObservationRecord[] = [];
    await bus.consume(async (batch) => {
      all.push(...batch);
    }, { group, untilIdle: true }).done;
    return all;
  };

  it('keeps records and committed offsets across a close and reopen', async () => {
    const first = lmdbInbox({ dataDir });
    await first.publish([availability(0), availability(1)]);
    assert.equal((await drain(first, 'g')).length, 2);
    await first.publish([availability(2)]);
    await first.close();

    const second = lmdbInbox({ dataDir });
    assert.equal(second.lastSequence(), 3);
    assert.equal(second.committedOffset('g'), 2);
    assert.deepEqual((await drain(second, 'g')).map((r) => [r.source, r.observation.observationId]), [['inbox:3', 'obs-1-2']]);
    await second.close();
  });

  it('numbers records from 1 without gaps and names them inbox:<sequence>', async () => {
    const bus = lmdbInbox({ dataDir });
    assert.equal(await bus.publishRaw([]), 0);
    await bus.publish([availability(0)]);
    await bus.publish([availability(1), availability(2)]);
    assert.deepEqual((await drain(bus, 'g')).map((r) => r.source), ['inbox:1', 'inbox:2', 'inbox:3']);
    await bus.close();
  });

  it('dead-letters a poison record once even when its batch is redelivered', async () => {
    const bus = lmdbInbox({ dataDir });
    await bus.publishRaw([Buffer.from([0xc3, 0x01, 1, 2])]);
    await bus.publish([availability(0)]);
    const failing = bus.consume(async () => {
      throw new Error('boom');
    }, { group: 'g' });
    await assert.rejects(failing.done, /boom/);
    assert.equal((await drain(bus, 'g')).length, 1);
    const letters = await bus.listDeadLetters();
    assert.deepEqual(letters.map((l) => [l.id, l.source]), [['1', 'inbox:1']]);
    await bus.close();
  });

  it('refuses a second consumer of the same group in one process', async () => {
    const bus = lmdbInbox({ dataDir });
    const live = bus.consume(async () => {}, { group: 'g' });
    assert.throws(() => bus.consume(async () => {}, { group: 'g' }), /group g already has a consumer/);
    await bus.close();
    await live.done;
    await assert.rejects(bus.publish([availability(0)]), (err) => isAppError(err, 'closed'));
  });

  it('takes records from several publishing processes at once, none lost or duplicated', async () => {
    const child = fileURLToPath(new URL('./inboxPublisher.child.ts', import.meta.url));
    const run = promisify(execFile);
    const bus = lmdbInbox({ dataDir, pollMs: 10 });
    const received: ObservationRecord[] = [];
    const consumer = bus.consume(async (batch) => {
      received.push(...batch);
    }, { group: 'g', batchSize: 50 });
    await Promise.all([
      run(process.execPath, ['--import', 'tsx', child, dataDir, '7', '150']),
      run(process.execPath, ['--import', 'tsx', child, dataDir, '8', '150']),
      bus.publish(Array.from({ length: 50 }, (_, n) => availability(n, 9))),
    ]);
    // The children have exited: everything is published. Wait until the live consumer has it all.
    // A consumer that ended (a failed commit, say) ends the wait at once, and a failed wait says
    // where things stood (CI once timed out here, and that run said nothing more).
    let ended: unknown = null;
    consumer.done.then(() => (ended = 'ended without error'), (err: unknown) => (ended = err));
    await waitFor('all 350 records at the consumer', () => received.length >= 350 || ended !== null, 20_000).catch((err: Error) => {
      throw new Error(`${err.message}: ${received.length} received, the inbox's last sequence ${bus.lastSequence()}, the consumer's group offset ${bus.committedOffset('g')}, the consumer ${ended === null ? 'still running' : String(ended)}`);
    });
    assert.equal(ended, null, `the consumer ended: ${String(ended)}`);
    await consumer.stop();
    assert.equal(received.length, 350);
    assert.equal(bus.lastSequence(), 350);
    assert.deepEqual(received.map((r) => r.source), Array.from({ length: 350 }, (_, i) => `inbox:${i + 1}`));
    for (const key of [7, 8, 9]) {
      const ofKey = received.map((r) => r.observation.observationId).filter((id) => id.startsWith(`obs-${key}-`));
      assert.deepEqual(ofKey, Array.from({ length: key === 9 ? 50 : 150 }, (_, n) => `obs-${key}-${n}`));
    }
    await bus.close();
  });

  describe('retention', () => {
    const DAY = 24 * 3600 * 1000;
    const t0 = Date.parse('2026-12-01T00:00:00Z');
    let now = t0;
    const clock = { now: () => new Date(now) };
    beforeEach(() => {
      now = t0;
    });
    const sequences = (bus: ReturnType<typeof lmdbInbox>): number[] => {
      const kept = bus.retained();
      return kept.records === 0 ? [] : [kept.firstSequence, kept.lastSequence, kept.records];
    };

    it('removes what every group handled once it is older than the retention, never the newest record', async () => {
      const bus = lmdbInbox({ dataDir, clock, retentionMs: DAY });
      await bus.publish([availability(0), availability(1), availability(2)]);
      now += 2 * 60_000;
      await bus.publish([availability(3), availability(4)]);
      assert.equal((await drain(bus, 'g')).length, 5);
      assert.deepEqual(await bus.prune(), { records: 0, deadLetters: 0 }, 'nothing is a day old yet');

      now = t0 + 2 * DAY;
      await bus.publish([availability(5)]); // not handled yet
      assert.deepEqual(await bus.prune(), { records: 5, deadLetters: 0 });
      assert.deepEqual(sequences(bus), [6, 6, 1]);
      assert.equal(bus.retained().oldestPublishedAt, new Date(t0 + 2 * DAY).toISOString());

      // Handled, old, but the newest: the next sequence is counted from it.
      assert.equal((await drain(bus, 'g')).length, 1);
      now = t0 + 4 * DAY;
      assert.deepEqual(await bus.prune(), { records: 0, deadLetters: 0 });
      await bus.publish([availability(6)]);
      // The consumer prunes before its first batch: 6 is no longer the newest.
      assert.deepEqual((await drain(bus, 'g')).map((r) => r.source), ['inbox:7']);
      assert.deepEqual(sequences(bus), [7, 7, 1]);
      await bus.close();
    });

    it('removes nothing before a group has committed; a group that never did starts at the oldest record kept', async () => {
      const bus = lmdbInbox({ dataDir, clock, retentionMs: DAY });
      await bus.publish([availability(0), availability(1), availability(2), availability(3)]);
      now = t0 + 3 * DAY;
      assert.deepEqual(await bus.prune(), { records: 0, deadLetters: 0 }, 'no group has handled anything');
      await bus.consume(async () => {}, { group: 'fast', untilIdle: true }).done;
      assert.deepEqual(await bus.prune(), { records: 3, deadLetters: 0 });
      // A group with no commit starts at the oldest record kept, as a Kafka group at `earliest`.
      assert.deepEqual((await drain(bus, 'late')).map((r) => r.source), ['inbox:4']);
      await bus.close();
    });

    it('stops at the slowest group that committed', async () => {
      const bus = lmdbInbox({ dataDir, clock, retentionMs: DAY });
      await bus.publish(Array.from({ length: 6 }, (_, n) => availability(n)));
      await bus.consume(async () => {}, { group: 'fast', untilIdle: true }).done;
      let batches = 0;
      await bus.consume(async () => {
        batches += 1;
        if (batches === 2) throw new Error('fails on its second batch');
      }, { group: 'slow', batchSize: 2 }).done.catch(() => {});
      assert.equal(bus.committedOffset('slow'), 2);
      now = t0 + 3 * DAY;
      assert.deepEqual(await bus.prune(), { records: 2, deadLetters: 0 });
      assert.deepEqual((await drain(bus, 'slow')).map((r) => r.source), ['inbox:3', 'inbox:4', 'inbox:5', 'inbox:6']);
      assert.deepEqual(await bus.prune(), { records: 3, deadLetters: 0 });
      assert.deepEqual(sequences(bus), [6, 6, 1]);
      await bus.close();
    });

    it('removes a minute only once it is wholly past the retention, and one dated ahead by a wrong clock holds back only its own records', async () => {
      const bus = lmdbInbox({ dataDir, clock, retentionMs: DAY });
      now = t0 + 365 * DAY; // a clock set a year ahead
      await bus.publish([availability(0), availability(1)]);
      now = t0; // and set right
      await bus.publish([availability(2), availability(3)]);
      now = t0 + 30_000;
      await bus.publish([availability(4)]); // the same minute as 3 and 4
      now = t0 + 10 * DAY;
      await bus.publish([availability(5)]);
      assert.equal((await drain(bus, 'g')).length, 6);
      now = t0 + DAY + 30_000; // a day after the minute began, not after it ended
      assert.deepEqual(await bus.prune(), { records: 0, deadLetters: 0 });
      now = t0 + 11 * DAY;
      assert.deepEqual(await bus.prune(), { records: 3, deadLetters: 0 });
      assert.deepEqual((await drain(bus, 'other')).map((r) => r.source), ['inbox:1', 'inbox:2', 'inbox:6']);
      await bus.close();
    });

    it('removes dead letters older than the retention, and their keys', async () => {
      const bus = lmdbInbox({ dataDir, clock, retentionMs: DAY });
      await bus.publishRaw([Buffer.from([0xc3, 0x01, 1, 2])]);
      await bus.publish([availability(0)]);
      assert.equal((await drain(bus, 'g')).length, 1);
      now = t0 + DAY / 2;
      await bus.publishRaw([Buffer.from([0xc3, 0x01, 3, 4])]);
      await bus.publish([availability(1)]);
      assert.equal((await drain(bus, 'g')).length, 1);
      assert.deepEqual((await bus.listDeadLetters()).map((l) => l.source), ['inbox:1', 'inbox:3']);
      now = t0 + DAY + 60_000; // the first minute wholly a day old
      assert.deepEqual(await bus.prune(), { records: 2, deadLetters: 1 });
      assert.deepEqual((await bus.listDeadLetters()).map((l) => l.source), ['inbox:3']);
      assert.equal(await bus.countDeadLetters(), 1);
      await bus.close();
    });

    it('is done by the consumer itself, every pruneEveryMs', async () => {
      const bus = lmdbInbox({ dataDir, clock, retentionMs: DAY, pruneEveryMs: 1000, pollMs: 5 });
      await bus.publish(Array.from({ length: 30 }, (_, n) => availability(n)));
      let handled = 0;
      const consumer = bus.consume(async (batch) => {
        handled += batch.length;
      }, { group: 'g', batchSize: 10 });
      await waitFor('the 30 records handled', () => handled === 30, 5000);
      assert.equal(bus.retained().records, 30);
      now = t0 + 2 * DAY;
      await waitFor('the handled records removed but the newest', () => bus.retained().records === 1, 5000);
      await consumer.stop();
      await bus.close();
    });

    it('grows no further over weeks of daily crawls', async () => {
      const bus = lmdbInbox({ dataDir, clock, retentionMs: 7 * DAY });
      const crawl = Array.from({ length: 2000 }, (_, n) => availability(n));
      let keptAfterWeek = 0;
      for (let day = 0; day < 21; day += 1) {
        now = t0 + day * DAY;
        await bus.publish(crawl);
        await bus.consume(async () => {}, { group: 'ingest', untilIdle: true }).done;
        if (day === 7) keptAfterWeek = bus.retained().records;
      }
      const kept = bus.retained();
      assert.equal(kept.lastSequence, 21 * 2000);
      assert.equal(keptAfterWeek, 8 * 2000);
      assert.equal(kept.records, 8 * 2000, 'a week of crawls and the day\'s');
      await bus.close();
    });
  });
});
