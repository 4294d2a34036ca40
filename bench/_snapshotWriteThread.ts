/**
 * A write-phase thread of bench/_snapshotWrite.ts, as a release build thread writes
 * (services/snapshot/buildThreads.ts, buildWorkerMain.ts): told to, it reads the rows of the
 * tasks it may be handed back into memory (not timed); then, told a task at a time, writes
 * that task's files with our writer, encoding on this thread (the media pass on a helper
 * thread, as the build's), and says how long it took.
 */
import { createWriteStream, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parentPort } from 'node:worker_threads';
import { tableFromIPC, type Vector } from 'apache-arrow';
import { readParquet } from 'parquet-wasm';
import { METADATA_FILES, PER_COUNTRY_FILES, TRANSLATIONS_FILE, type SnapshotFileSchema } from '../contracts/snapshotSchema.ts';
import type { SnapshotRow, SnapshotValue } from '../services/snapshot/arrowSchema.ts';
import { openParquetWriter } from '../services/snapshot/parquet.ts';
import type { EncoderName } from '../services/snapshot/parquetEncoder.ts';
import { encodeOnHelper, encodeOnThisThread } from '../services/snapshot/parquetPool.ts';
import type { FromWriteThread, ToWriteThread, WriteTask } from './_snapshotWrite.ts';

if (parentPort === null) throw new Error('_snapshotWriteThread.ts must run in a worker thread');
const port = parentPort;
await encodeOnThisThread();
const post = (msg: FromWriteThread): void => port.postMessage(msg);

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

/** Every file's rows, read once: a task's files may be handed to either thread. */
const loaded = new Map<string, SnapshotRow[]>();
// The encoder bench/snapshot.ts asks for (--encoder; a worker inherits the environment).
const encoder = process.env.MARQUEE_BENCH_ENCODER as EncoderName | undefined;

/**
 * Writes the files of one group together, as one pass of the build feeds them: a step per row
 * of the first file (the pass's document, about), each file given its share of rows at each
 * step, and the chunks that filled up awaited once the step is over (metadata.ts `partWriter`).
 */
async function writeGroup(group: readonly string[], outDir: string, prefix: string): Promise<{ rows: number; bytes: number }> {
  const parts = group.map((file) => {
    const target = join(outDir, `${prefix}-${basename(file)}`);
    const writer = openParquetWriter(
      schemaOf(file),
      async (bytes) => {
        await pipeline(Readable.from(bytes), createWriteStream(target));
      },
      encoder ? { encoder } : {},
    );
    return { rows: loaded.get(file) as SnapshotRow[], writer, target };
  });
  const steps = Math.max(1, parts[0]?.rows.length ?? 0);
  const pending: Array<Promise<void>> = [];
  for (let i = 0; i < steps; i++) {
    for (const { rows, writer } of parts) {
      const from = Math.floor((i * rows.length) / steps);
      const to = Math.floor(((i + 1) * rows.length) / steps);
      const wait = to - from === 1 ? writer.append(rows[from] as SnapshotRow) : to > from ? writer.appendAll(rows.slice(from, to)) : undefined;
      if (wait !== undefined) pending.push(wait);
    }
    if (pending.length > 0) await Promise.all(pending.splice(0));
  }
  let rows = 0;
  let bytes = 0;
  for (const part of parts) {
    rows += (await part.writer.close()).rows;
    bytes += statSync(part.target).size;
  }
  return { rows, bytes };
}

async function writeTask(task: WriteTask, outDir: string): Promise<{ rows: number; bytes: number }> {
  const prefix = task.name.replace(/[^a-zA-Z0-9-]/g, '_');
  const body = async (): Promise<{ rows: number; bytes: number }> => {
    let rows = 0;
    let bytes = 0;
    for (const group of task.groups) {
      const wrote = await writeGroup(group, outDir, prefix);
      rows += wrote.rows;
      bytes += wrote.bytes;
    }
    return { rows, bytes };
  };
  return task.helper ? encodeOnHelper(body) : body();
}

port.on('message', async (msg: ToWriteThread) => {
  if ('close' in msg) process.exit(0);
  if ('read' in msg) {
    let rows = 0;
    for (const file of msg.read.flatMap((task) => task.groups.flat())) {
      if (!loaded.has(file)) loaded.set(file, readRows(file, schemaOf(file)));
      rows += loaded.get(file)?.length ?? 0;
    }
    // The garbage of reading collected before the writes are timed (with node --expose-gc).
    (globalThis as { gc?: () => void }).gc?.();
    post({ read: rows, heapMb: Math.round(process.memoryUsage().heapUsed / 1048576) });
    return;
  }
  const started = performance.now();
  const cpuBefore = process.threadCpuUsage();
  const { rows, bytes } = await writeTask(msg.write, msg.outDir);
  const cpu = process.threadCpuUsage(cpuBefore);
  post({ wrote: msg.write.name, ms: performance.now() - started, cpuMs: (cpu.user + cpu.system) / 1000, rows, bytes });
});
post({ ready: true });
