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
});
