/**
 * Streaming Parquet writer over parquet-wasm. Rows are appended one at a time, their values
 * going straight into Arrow columns (columns.ts), handed every `chunkRows` rows as an Arrow
 * IPC record batch to parquet-wasm's streaming writer (`transformParquetStream`) on a worker
 * thread of parquetPool.ts, whose bytes flow back to a sink (a release file, a temp file) as
 * row groups complete. Neither the rows nor the file are ever held whole in memory:
 * parquet-wasm's `writeParquet` would build the whole file in wasm memory.
 *
 * Every file: ZSTD, page-level statistics (min/max/null count per column chunk and page), row
 * groups of at most `maxRowGroupRows` rows. Rows must arrive in the file's `sorted_by` order;
 * the writer does not sort.
 */
import { AppError } from '../../contracts/errors.ts';
import type { SnapshotFileSchema } from '../../contracts/snapshotSchema.ts';
import { arrowTableMaker, type SnapshotRow } from './arrowSchema.ts';
import type { EncoderName } from './parquetEncoder.ts';
import { openEncodingFile, type EncodingFile } from './parquetPool.ts';

export interface ParquetWriterOptions {
  /**
   * Rows per Arrow record batch handed to the writer. Default 4096: the batch overhead is small
   * at this size, and the bytes depend on it (16384 moves page boundaries of links.parquet), so
   * releases stay byte-identical only while it is kept. The rows themselves are not kept
   * (columns.ts); a batch's columns are, in buffers reused from batch to batch.
   */
  chunkRows?: number;
  /** Largest row group, in rows. Default 131072 (about DuckDB's 122880). */
  maxRowGroupRows?: number;
  /**
   * Which columns get dictionary encoding. A flat column keeps its dictionary when its first
   * chunk has at most this share of distinct values among its non-null ones; 1 keeps every
   * dictionary (list columns included), 0 (the default) turns dictionaries off everywhere.
   * Measured on the bench catalog: parquet-wasm's dictionary encoder costs ~25% of the
   * encoding time even on near-constant columns, while ZSTD alone leaves the files only ~4%
   * larger (0.1 gives the smallest files, 3% under 1, at nearly the cost of 1).
   */
  dictionaryMaxDistinctRatio?: number;
  /**
   * Which encoder writes the bytes: 'arrow-rs' (the default; parquetWriterWasm.ts, built for
   * speed) or 'parquet-wasm'. Both write the same bytes (test/unit/parquetWriterWasm.unit.test.ts);
   * the choice is there to show it, and a checkout without the module uses parquet-wasm.
   */
  encoder?: EncoderName;
}

export const DEFAULT_CHUNK_ROWS = 4096;
export const DEFAULT_MAX_ROW_GROUP_ROWS = 131_072;
export const DEFAULT_DICTIONARY_MAX_DISTINCT_RATIO = 0;

/** Consumes the bytes of one Parquet file (writes them somewhere) and says what it wrote. */
export type ParquetSink<T> = (bytes: AsyncIterable<Uint8Array>) => Promise<T>;

export interface ParquetRowWriter<T> {
  /**
   * Takes a row's values into the pending chunk's columns (the row object itself is not kept;
   * a value of the wrong type throws here). When the row completes a chunk it returns a promise
   * that resolves once the writer can take more (backpressure from the sink): await it before
   * appending again.
   * Otherwise it returns undefined, so the common case costs no await.
   */
  append(row: SnapshotRow): Promise<void> | undefined;
  /** `append` of each row in order; a promise only when one of them completed a chunk. */
  appendAll(rows: readonly SnapshotRow[]): Promise<void> | undefined;
  /** Flushes the last rows, finishes the file and resolves with the sink's result. */
  close(): Promise<{ rows: number; result: T }>;
  /** Abandons the file; the sink sees its byte stream fail. */
  abort(reason: unknown): Promise<void>;
}

/** Rows of the first chunk looked at to choose the dictionary columns. */
const DICTIONARY_SAMPLE_ROWS = 4096;

/** Flat columns of `def` whose values in `sample` are too varied for a dictionary to pay. */
function undictionaryColumns(def: SnapshotFileSchema, sample: readonly SnapshotRow[], maxRatio: number): string[] {
  const out: string[] = [];
  for (const col of def.columns) {
    if (col.type === 'LIST<UTF8>' || col.type === 'BOOLEAN') continue;
    const distinct = new Set<unknown>();
    let present = 0;
    // append() keeps at most DICTIONARY_SAMPLE_ROWS rows in the sample.
    for (let i = 0; i < sample.length; i++) {
      const row = sample[i] as SnapshotRow;
      const v = row[col.name];
      if (v === null || v === undefined) continue;
      present += 1;
      distinct.add(v);
    }
    if (present > 0 && distinct.size > maxRatio * present) out.push(col.name);
  }
  return out;
}

export function openParquetWriter<T>(
  def: SnapshotFileSchema,
  sink: ParquetSink<T>,
  options: ParquetWriterOptions = {},
): ParquetRowWriter<T> {
  const chunkRows = options.chunkRows ?? DEFAULT_CHUNK_ROWS;
  const maker = arrowTableMaker(def);
  const ratio = options.dictionaryMaxDistinctRatio ?? DEFAULT_DICTIONARY_MAX_DISTINCT_RATIO;
  // Rows are kept only when the first chunk must choose the dictionary columns (a ratio
  // strictly between 0 and 1); otherwise a row is garbage once appended (columns.ts).
  let sample: SnapshotRow[] | null = ratio > 0 && ratio < 1 ? [] : null;
  let failure: unknown = null;
  let file: EncodingFile | null = null;
  let done: Promise<T> | null = null;
  // The file starts encoding (on a pool worker) with the first chunk, whose values choose the
  // dictionary columns; the sink reads its bytes as they come back.
  const start = (): EncodingFile => {
    if (file !== null) return file;
    const opened = openEncodingFile({
      maxRowGroupRows: options.maxRowGroupRows ?? DEFAULT_MAX_ROW_GROUP_ROWS,
      dictionaryOff: ratio <= 0,
      plainColumns: sample === null ? [] : undictionaryColumns(def, sample, ratio),
      ...(options.encoder ? { encoder: options.encoder } : {}),
    });
    sample = null;
    file = opened;
    done = sink(opened.bytes);
    done.catch((err: unknown) => {
      failure ??= err;
      opened.abort(err);
    });
    return opened;
  };

  let rows = 0;
  let closed = false;

  /** Hands the rows appended since the last flush to the worker (an empty file's schema too). */
  async function flush(): Promise<void> {
    const opened = start();
    // Serialized before anything else is appended: the table is the columns' pending chunk.
    const ipc = maker.takeIPC();
    // Resolves once the worker has room for more (a bounded number of chunks in flight), which
    // is the backpressure; a failure of the worker or the sink rejects it.
    await opened.send(ipc);
    if (failure !== null) throw failure;
  }

  const append = (row: SnapshotRow): Promise<void> | undefined => {
    if (closed) throw new AppError('internal', `${def.file}: append after close`);
    if (failure !== null) throw failure;
    maker.append(row);
    if (sample !== null && sample.length < DICTIONARY_SAMPLE_ROWS) sample.push(row);
    rows += 1;
    return maker.pending >= chunkRows ? flush() : undefined;
  };
  const appendAll = (list: readonly SnapshotRow[], from = 0): Promise<void> | undefined => {
    for (let i = from; i < list.length; i++) {
      const pending = append(list[i] as SnapshotRow);
      if (pending !== undefined) return i + 1 < list.length ? pending.then(() => appendAll(list, i + 1)) : pending;
    }
    return undefined;
  };

  return {
    append,
    appendAll: (list) => appendAll(list),
    async close() {
      if (closed) throw new AppError('internal', `${def.file}: closed twice`);
      closed = true;
      // An empty file still needs its schema, which parquet-wasm takes from the first batch.
      if (rows === 0 || maker.pending > 0) await flush();
      (file as EncodingFile | null)?.end();
      return { rows, result: await (done as Promise<T>) };
    },
    async abort(reason) {
      closed = true;
      failure ??= reason;
      const opened = file as EncodingFile | null;
      if (opened === null) {
        // Never started: the sink still sees its byte stream fail, as it would mid-file.
        await sink(failingBytes(reason)).catch(() => {});
        return;
      }
      opened.abort(reason);
      await (done as Promise<T> | null)?.catch(() => {});
    },
  };
}

async function* failingBytes(reason: unknown): AsyncGenerator<Uint8Array> {
  yield* [];
  throw reason;
}

/** Writes one file from rows (an array or a generator), in the order given. */
export async function writeParquetRows<T>(
  def: SnapshotFileSchema,
  rows: Iterable<SnapshotRow> | AsyncIterable<SnapshotRow>,
  sink: ParquetSink<T>,
  options: ParquetWriterOptions = {},
): Promise<{ rows: number; result: T }> {
  const writer = openParquetWriter(def, sink, options);
  try {
    if (Symbol.asyncIterator in rows) {
      for await (const row of rows) await writer.append(row);
    } else {
      for (const row of rows) {
        const pending = writer.append(row);
        if (pending !== undefined) await pending;
      }
    }
  } catch (err) {
    await writer.abort(err);
    throw err;
  }
  return writer.close();
}
