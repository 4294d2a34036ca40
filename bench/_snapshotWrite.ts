/**
 * Child process of bench/snapshot.ts: the pure write phase, measured the way DuckDB's is, and
 * written the way a release build writes (services/snapshot/buildThreads.ts): files handed out
 * largest first to PARQUET_WORKERS threads, each of which builds the Arrow columns and encodes
 * its files itself. For every file, its thread first reads its rows back into memory as the
 * plain rows our writer takes (not timed), then writes them again to a new file (timed).
 * DuckDB gets the same treatment in the parent: read the file into a table, time the COPY.
 *
 * `write_ms` is the longest of the threads' summed write times (the wall time of the files
 * written that many at a time with their rows in memory); `write_cpu_ms` is the CPU of the
 * writing threads while they write.
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

// Largest first, so the last files handed out are short and the threads end together.
const queue = [...files]
  .sort((a, b) => statSync(b).size - statSync(a).size || (a < b ? -1 : 1))
  .map((file, i) => ({ file, i, target: join(outDir, `ours-${i}.parquet`) }));
const perFile: Record<string, number> = {};
let writeCpuMs = 0;
let rowCount = 0;
let bytes = 0;

const threadTimes = await Promise.all(
  Array.from({ length: PARQUET_WORKERS }, async () => {
    const worker = new Worker(new URL('./_snapshotWriteWorker.mjs', import.meta.url));
    let total = 0;
    await once(worker, 'message');
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
      const { file, i, target } = next;
      worker.postMessage({ file, target });
      const [done] = (await once(worker, 'message')) as [{ ms: number; cpuMs: number; rows: number }];
      total += done.ms;
      writeCpuMs += done.cpuMs;
      rowCount += done.rows;
      bytes += statSync(target).size;
      perFile[file.slice(-60)] = Math.round(done.ms);
      process.stderr.write(`  write ${i + 1}/${files.length} ${basename(file)} ${done.rows} rows ${Math.round(done.ms)} ms\n`);
    }
    worker.postMessage({ close: true });
    return total;
  }),
);
console.log(JSON.stringify({ write_ms: Math.round(Math.max(...threadTimes)), write_cpu_ms: Math.round(writeCpuMs), thread_ms: threadTimes.map(Math.round), bytes, rows: rowCount, per_file_ms: perFile }));
