/**
 * The ingest bench's references (bench/ingest.ts), measured on a thread of their own: the run's
 * events appended to a bare LMDB database, 1,000 per transaction, fsync'd like ours (what the
 * engine can do with no decide and no projection); then, the second reference, every document
 * the projections wrote appended the same bare way (keys `collection\0key`).
 *
 * Why a thread of its own: measured on the main thread after the run, the same loop's rate
 * depended on what that thread had run before. With ingest on the main thread it appended
 * 66,000-80,000 events/s; in runs where ingest had run on another thread, 84,000-124,000 (the
 * sample, alternated, 2026-12-08); dropping ingest's state and collecting the heap first changed
 * nothing. A fresh thread times the bare engine alone, as a reference should.
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

const rawDir = mkdtempSync(join(tmpdir(), 'marquee-bench-raw-'));
const raw = open({ path: rawDir, overlappingSync: false });
let rawSeconds = 0;
let rawCpu = 0;
let after = 0;
let key = 0;
for (;;) {
  const batch = await eventStore.readAll({ after, limit: 1000 });
  const last = batch[batch.length - 1];
  if (!last) break;
  after = last.position;
  const values = batch.map((e) => ({ type: e.type, data: e.data, metadata: e.metadata, streamId: e.streamId, revision: e.revision, recordedAt: e.recordedAt }));
  const started = performance.now();
  const cpuStarted = threadCpu();
  await raw.transaction(() => {
    for (const v of values) raw.put((key += 1), v);
  });
  rawSeconds += (performance.now() - started) / 1000;
  rawCpu += threadCpu() - cpuStarted;
}
await raw.close();
rmSync(rawDir, { recursive: true, force: true });

const fullDir = mkdtempSync(join(tmpdir(), 'marquee-bench-raw-all-'));
const full = open({ path: fullDir, overlappingSync: false });
let fullSeconds = rawSeconds;
let documents = 0;
for (const collection of await readStore.listCollections()) {
  for await (const page of scanPages<unknown>(readStore, collection, { pageSize: 1000 })) {
    const started = performance.now();
    await full.transaction(() => {
      for (const d of page) full.put(`${collection}\u0000${d.key}`, d.doc);
    });
    fullSeconds += (performance.now() - started) / 1000;
    documents += page.length;
  }
}
await full.close();
rmSync(fullDir, { recursive: true, force: true });
await Promise.allSettled([eventStore.close(), readStore.close()]);
parentPort?.postMessage({ rawSeconds, rawCpu, fullSeconds, documents } satisfies RawResult);
