import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lmdbEventStore } from '../../infra/lmdb/eventStore.ts';
import { lmdbReadStore } from '../../infra/lmdb/readStore.ts';
import { catchUp, type BatchInfo } from '../../projections/runner.ts';
import { spawnTs, succeeded, type TsChild } from '../fixtures/child.ts';
import { countingProjection } from '../fixtures/countingProjection.ts';
import { waitFor } from '../ports/support.ts';

const worker = 'test/fixtures/crashWorker.ts';
const total = 3000;

/** The last `<kind> <n>` number the child printed, 0 if none. */
function lastReported(child: TsChild, kind: 'head' | 'cp'): number {
  for (let i = child.lines.length - 1; i >= 0; i -= 1) {
    const [word, value] = (child.lines[i] ?? '').split(' ');
    if (word === kind) return Number(value);
  }
  return 0;
}

async function snapshot(dataDir: string) {
  const readStore = lmdbReadStore({ dataDir });
  const eventStore = lmdbEventStore({ dataDir });
  try {
    const events = await eventStore.readAll({ limit: total + 10 });
    return {
      docs: await readStore.scan('tally_v1'),
      checkpoint: await readStore.getCheckpoint('tally'),
      // recordedAt differs between the runs; everything else must not.
      events: events.map(({ recordedAt: _recordedAt, ...rest }) => rest),
    };
  } finally {
    await readStore.close();
    await eventStore.close();
  }
}

describe('projection runner killed with SIGKILL', function () {
  // Six tsx child processes on a busy two-core machine.
  this.timeout(180_000);
  const dirs: string[] = [];
  const tempDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'marquee-crash-'));
    dirs.push(dir);
    return dir;
  };
  after(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('ends with the same documents and checkpoint as an uninterrupted run, and a replay changes nothing', async () => {
    const reference = tempDir();
    const crashed = tempDir();
    const referenceRun = succeeded(spawnTs(worker, [reference, String(total)]));

    // Kill points: once while the history is being appended, then at checkpoints further on,
    // each a random distance past the previous one.
    let kills = 0;
    let reachedCp = 0;
    const plan: Array<{ kind: 'head' | 'cp'; atLeast: () => number }> = [
      { kind: 'head', atLeast: () => 200 + Math.floor(Math.random() * 800) },
      { kind: 'cp', atLeast: () => reachedCp + 1 + Math.floor(Math.random() * 500) },
      { kind: 'cp', atLeast: () => reachedCp + 1 + Math.floor(Math.random() * 500) },
      { kind: 'cp', atLeast: () => reachedCp + 1 + Math.floor(Math.random() * 500) },
    ];
    for (const step of plan) {
      const target = Math.min(step.atLeast(), total - 200);
      const child = spawnTs(worker, [crashed, String(total)]);
      await waitFor(`${step.kind} >= ${target}`, () => lastReported(child, step.kind) >= target || child.process.exitCode !== null, 60_000);
      child.process.kill('SIGKILL');
      const exit = await child.exited;
      if (exit.signal === 'SIGKILL') kills += 1;
      else assert.equal(exit.code, 0, child.stderr());
      reachedCp = Math.max(reachedCp, lastReported(child, 'cp'));
    }
    assert.ok(kills >= 3, `only ${kills} of the runs were killed`);
    await succeeded(spawnTs(worker, [crashed, String(total)]));
    await referenceRun;

    const expected = await snapshot(reference);
    const actual = await snapshot(crashed);
    assert.equal(expected.checkpoint, total);
    assert.equal(expected.events.length, total);
    assert.ok(expected.docs.length > 10, 'the reference run produced documents');
    assert.deepEqual(actual.events, expected.events);
    assert.equal(actual.checkpoint, expected.checkpoint);
    assert.deepEqual(actual.docs, expected.docs);

    // Replay the crashed directory from 0: the position guard makes it a no-op.
    const eventStore = lmdbEventStore({ dataDir: crashed });
    const readStore = lmdbReadStore({ dataDir: crashed });
    const batches: BatchInfo[] = [];
    try {
      await readStore.setCheckpoint('tally', 0);
      await catchUp({
        projection: countingProjection, eventStore, readStore,
        collection: 'tally_v1', checkpointName: 'tally', batchSize: 500,
        onBatch: (info) => batches.push(info),
      });
    } finally {
      await eventStore.close();
      await readStore.close();
    }
    assert.equal(batches.reduce((sum, b) => sum + b.written, 0), 0);
    assert.equal(batches.reduce((sum, b) => sum + b.events, 0), total);
    const replayed = await snapshot(crashed);
    assert.deepEqual(replayed.docs, expected.docs);
    assert.equal(replayed.checkpoint, total);
  });
});
