/**
 * Child process of bench/snapshot.ts: the pure write phase, measured the way DuckDB's is. For
 * every Parquet file of a built release, its rows are first read back into memory as the plain
 * rows our writer takes (not timed), then written again with our writer, on the same worker
 * pool as the build, to a new file (timed).
 * DuckDB gets the same treatment in the parent: read the file into a table, time the COPY.
 * Prints one JSON line: total write time, bytes, rows, and per-file times.
 * Usage: node --import tsx bench/_snapshotWrite.ts <outDir> <file.parquet>...
 */
import { readFileSync, statSync } from 'node:fs';
import { createWriteStream } from 'node:fs';
import { basename, join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { tableFromIPC, type Vector } from 'apache-arrow';
import { readParquet } from 'parquet-wasm';
import { METADATA_FILES, PER_COUNTRY_FILES, TRANSLATIONS_FILE, type SnapshotFileSchema } from '../contracts/snapshotSchema.ts';
import type { SnapshotRow, SnapshotValue } from '../services/snapshot/arrowSchema.ts';
import { writeParquetRows } from '../services/snapshot/parquet.ts';
import { PARQUET_WORKERS, warmParquetPool } from '../services/snapshot/parquetPool.ts';

const [outDir, ...files] = process.argv.slice(2);
if (!outDir || files.length === 0) throw new Error('usage: _snapshotWrite.ts <outDir> <file.parquet>...');

function schemaOf(file: string): SnapshotFileSchema {
  const name = basename(file);
  if (name.startsWith('lang_')) return TRANSLATIONS_FILE;
  const def = [...PER_COUNTRY_FILES, ...METADATA_FILES].find((f) => f.file === name);
  if (!def) throw new Error(`no schema for ${file}`);
  return def;
}

const isoDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/** The file's rows as our writer takes them: DATE as `YYYY-MM-DD`, lists as string arrays. */
function readRows(file: string, def: SnapshotFileSchema): SnapshotRow[] {
  const wasmTable = readParquet(new Uint8Array(readFileSync(file)));
  // intoIPCStream consumes (frees) the wasm table.
  const table = tableFromIPC(wasmTable.intoIPCStream());
  const rows: SnapshotRow[] = Array.from({ length: table.numRows }, () => ({}));
  for (const col of def.columns) {
    const vector = table.getChild(col.name) as Vector | null;
    if (!vector) throw new Error(`${file} lacks ${col.name}`);
    for (let i = 0; i < rows.length; i++) {
      const v: unknown = vector.get(i);
      let value: SnapshotValue;
      if (v === null || v === undefined) value = null;
      else if (col.type === 'DATE') value = isoDay(v instanceof Date ? v.getTime() : Number(v));
      else if (col.type === 'LIST<UTF8>') value = [...(v as Iterable<string>)];
      else value = v as SnapshotValue;
      (rows[i] as SnapshotRow)[col.name] = value;
    }
  }
  // Same key order (and so the same hidden class) as rows.ts's object literals.
  return rows.map((row) => Object.fromEntries(def.columns.map((c) => [c.name, row[c.name]])));
}

// Files are written PARQUET_WORKERS at a time (largest first), as the pool encodes them (DuckDB uses its
// threads too): a group's rows are read first (not timed), then the group's writes are timed
// together, wall clock.
// The threads load parquet-wasm before the clock starts, as this process did on import before.
await warmParquetPool();
let writeMs = 0;
let writeCpuMs = 0;
let bytes = 0;
let rowCount = 0;
const perFile: Record<string, number> = {};
// Largest first, so the files of a group take about as long as each other: in path order a
// country's links file was paired with its (near) empty changes file, and a thread sat idle.
const bySize = [...files].sort((a, b) => statSync(b).size - statSync(a).size || (a < b ? -1 : 1));
for (let g = 0; g < bySize.length; g += PARQUET_WORKERS) {
  const group = bySize.slice(g, g + PARQUET_WORKERS).map((file, k) => {
    const def = schemaOf(file);
    return { file, i: g + k, def, rows: readRows(file, def), target: join(outDir, `ours-${g + k}.parquet`) };
  });
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  await Promise.all(
    group.map(async ({ file, i, def, rows, target }) => {
      await writeParquetRows(def, rows, async (stream) => {
        await pipeline(Readable.from(stream), createWriteStream(target));
      });
      const ms = performance.now() - started;
      perFile[file.slice(-60)] = Math.round(ms);
      process.stderr.write(`  write ${i + 1}/${files.length} ${basename(file)} ${rows.length} rows ${Math.round(ms)} ms\n`);
    }),
  );
  writeMs += performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  writeCpuMs += (cpu.user + cpu.system) / 1000;
  for (const { rows, target } of group) {
    bytes += statSync(target).size;
    rowCount += rows.length;
  }
}
console.log(JSON.stringify({ write_ms: Math.round(writeMs), write_cpu_ms: Math.round(writeCpuMs), bytes, rows: rowCount, per_file_ms: perFile }));
