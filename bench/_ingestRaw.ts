/**
 * The ingest bench's references (bench/ingest.ts), measured on a thread of their own: the run's
 * events appended to a bare LMDB database, 1,000 per transaction, fsync'd like ours (what the
 * engine can do with no decide and no projection); then, the second reference, every document
 * the projections wrote appended the same bare way (keys `collection\0key`).
 *
 * Why a thread of its own: measured on the main thread after the run, the same loop's rate
 * depended on what that thread had run before. With ingest on the main thread it appended
 * 52,000-80,300 events/s; in runs where ingest had run on another thread, 83,900-124,200; here,
 * 107,800-123,300 (the sample, 2026-12-08). Dropping ingest's state and collecting the heap
 * first changed nothing. A fresh thread times the bare engine alone, as a reference should.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { open } from 'lmdb';
import { openEventStore, openReadStore } from '../services/shared/adapters.ts';
import { loadConfig } from '../services/shared/config.ts';
import { scanPages } from '../services/snapshot/scan.ts';

export interface RawResult {
  /** Seconds of the events' bare appends (their transactions only). */
  rawSeconds: number;
  /** CPU seconds of this thread over those transactions. */
  rawCpu: number;
  /** rawSeconds plus the seconds of the documents' bare appends. */
  fullSeconds: number;
  documents: number;
}

function threadCpu(): number {
  const { user, system } = process.threadCpuUsage();
  return (user + system) / 1e6;
}

const config = loadConfig({ DATA_DIR: (workerData as { dataDir: string }).dataDir });
const { eventStore } = await openEventStore(config);
const { readStore } = await openReadStore(config);

/**
 * Appends each batch of `entries` to a bare LMDB database in a directory of its own, one
 * transaction per batch, fsync'd like ours; the seconds and this thread's CPU seconds of the
 * transactions alone (not of reading the entries).
 */
async function bareAppends(prefix: string, batches: AsyncIterable<Array<[string | number, unknown]>>): Promise<{ seconds: number; cpu: number; count: number }> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const db = open({ path: dir, overlappingSync: false });
  let seconds = 0;
  let cpu = 0;
  let count = 0;
  try {
    for await (const entries of batches) {
      const started = performance.now();
      const cpuStarted = threadCpu();
      await db.transaction(() => {
        for (const [key, value] of entries) db.put(key, value);
      });
      seconds += (performance.now() - started) / 1000;
      cpu += threadCpu() - cpuStarted;
      count += entries.length;
    }
  } finally {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return { seconds, cpu, count };
}

/** The log's events in batches of 1,000, as the values a bare store would hold, keyed 1, 2, ... */
async function* eventBatches(): AsyncGenerator<Array<[number, unknown]>> {
  let after = 0;
  let key = 0;
  for (;;) {
    const batch = await eventStore.readAll({ after, limit: 1000 });
    const last = batch[batch.length - 1];
    if (!last) return;
    yield batch.map((e): [number, unknown] => [(key += 1), { type: e.type, data: e.data, metadata: e.metadata, streamId: e.streamId, revision: e.revision, recordedAt: e.recordedAt }]);
    after = last.position;
  }
}

/** Every read-model document in pages of 1,000, keyed `collection\0key`. */
async function* documentPages(): AsyncGenerator<Array<[string, unknown]>> {
  for (const collection of await readStore.listCollections()) {
    for await (const page of scanPages<unknown>(readStore, collection, { pageSize: 1000 })) {
      yield page.map((d): [string, unknown] => [`${collection}\u0000${d.key}`, d.doc]);
    }
  }
}

const events = await bareAppends('marquee-bench-raw-', eventBatches());
const docs = await bareAppends('marquee-bench-raw-all-', documentPages());
await Promise.allSettled([eventStore.close(), readStore.close()]);
parentPort?.postMessage({ rawSeconds: events.seconds, rawCpu: events.cpu, fullSeconds: events.seconds + docs.seconds, documents: docs.count } satisfies RawResult);
