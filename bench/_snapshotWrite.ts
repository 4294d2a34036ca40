/**
 * Child process of bench/snapshot.ts: the pure write phase, measured the way DuckDB's is, and
 * written the way a release build writes (services/snapshot/buildThreads.ts): on PARQUET_WORKERS
 * threads, each of which builds the Arrow columns of its file and encodes it itself. For every
 * file, its thread first reads its rows back into memory as the plain rows our writer takes
 * (not timed), then writes them again to a new file (timed).
 * DuckDB gets the same treatment in the parent: read the file into a table, time the COPY.
 * Prints one JSON line: write time, CPU, bytes, rows, and per-file times.
 * Usage: node --import tsx bench/_snapshotWrite.ts <outDir> <file.parquet>...
 */
import { once } from 'node:events';
import { statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { PARQUET_WORKERS } from '../services/snapshot/parquetPool.ts';

const [outDir, ...files] = process.argv.slice(2);
if (!outDir || files.length === 0) throw new Error('usage: _snapshotWrite.ts <outDir> <file.parquet>...');

/** Sends one message to a thread and waits for its answer. */
async function ask<T>(worker: Worker, message: unknown): Promise<T> {
  worker.postMessage(message);
  const [answer] = (await once(worker, 'message')) as [T];
  return answer;
}

const threads = await Promise.all(
  Array.from({ length: PARQUET_WORKERS }, async () => {
    const worker = new Worker(new URL('./_snapshotWriteWorker.mjs', import.meta.url));
    await once(worker, 'message');
    return worker;
  }),
);
// Files are written PARQUET_WORKERS at a time, largest first (so a group's files take about as
// long as each other), one per thread: the group's rows are read first (not timed), then the
// group's writes are timed together, wall clock and the CPU of every thread of the process.
const bySize = [...files].sort((a, b) => statSync(b).size - statSync(a).size || (a < b ? -1 : 1));
let writeMs = 0;
let writeCpuMs = 0;
let bytes = 0;
let rowCount = 0;
const perFile: Record<string, number> = {};
/** Each file's write time, in `bySize` order. */
const writeTimes: number[] = [];
for (let g = 0; g < bySize.length; g += threads.length) {
  const group = bySize.slice(g, g + threads.length).map((file, k) => ({ file, i: g + k, thread: threads[k] as Worker, target: join(outDir, `ours-${g + k}.parquet`) }));
  const counts = await Promise.all(group.map(({ file, thread }) => ask<{ rows: number }>(thread, { read: file })));
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  await Promise.all(
    group.map(async ({ file, i, thread, target }, k) => {
      const { ms } = await ask<{ ms: number }>(thread, { write: target });
      perFile[file.slice(-60)] = Math.round(ms);
      writeTimes[i] = ms;
      process.stderr.write(`  write ${i + 1}/${files.length} ${basename(file)} ${counts[k]?.rows} rows ${Math.round(ms)} ms\n`);
    }),
  );
  writeMs += performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  writeCpuMs += (cpu.user + cpu.system) / 1000;
  for (const [k, { target }] of group.entries()) {
    bytes += statSync(target).size;
    rowCount += counts[k]?.rows ?? 0;
  }
}
for (const thread of threads) thread.postMessage({ close: true });
// The same files handed out as a build hands out its tasks: in the same order, each to the first
// thread free, from the times measured above. The groups leave a thread idle whenever a group's
// files take unequal times (episodes.parquet against media_details.parquet: 5.6 s against 3.4 s
// at 250,000 titles); this says what the writes take without that wait.
const free = threads.map(() => 0);
for (const ms of writeTimes) {
  const first = free.indexOf(Math.min(...free));
  free[first] = (free[first] ?? 0) + ms;
}
const queueMs = Math.max(...free);
console.log(JSON.stringify({ write_ms: Math.round(writeMs), write_queue_ms: Math.round(queueMs), write_cpu_ms: Math.round(writeCpuMs), bytes, rows: rowCount, per_file_ms: perFile }));
