/**
 * A write-phase thread of bench/_snapshotWrite.ts, as a release build thread writes
 * (services/snapshot/buildThreads.ts): told to, it reads a file's rows back into memory (not
 * timed), then, told again, writes them with our writer, encoding on this thread.
 */
import { createWriteStream, readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parentPort } from 'node:worker_threads';
import { tableFromIPC, type Vector } from 'apache-arrow';
import { readParquet } from 'parquet-wasm';
import { METADATA_FILES, PER_COUNTRY_FILES, TRANSLATIONS_FILE, type SnapshotFileSchema } from '../contracts/snapshotSchema.ts';
import type { SnapshotRow, SnapshotValue } from '../services/snapshot/arrowSchema.ts';
import { writeParquetRows } from '../services/snapshot/parquet.ts';
import { encodeOnThisThread } from '../services/snapshot/parquetPool.ts';

if (parentPort === null) throw new Error('_snapshotWriteThread.ts must run in a worker thread');
const port = parentPort;
await encodeOnThisThread();

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

let rows: SnapshotRow[] | null = null;
let def: SnapshotFileSchema | null = null;
port.on('message', async (msg: { read: string } | { write: string } | { close: true }) => {
  if ('close' in msg) process.exit(0);
  if ('read' in msg) {
    def = schemaOf(msg.read);
    rows = readRows(msg.read, def);
    port.postMessage({ rows: rows.length });
    return;
  }
  const started = performance.now();
  await writeParquetRows(def as SnapshotFileSchema, rows as SnapshotRow[], async (stream) => {
    await pipeline(Readable.from(stream), createWriteStream(msg.write));
  });
  rows = null;
  port.postMessage({ ms: performance.now() - started });
});
port.postMessage({ ready: true });
