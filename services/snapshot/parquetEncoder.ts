/**
 * One Parquet file encoded from Arrow IPC batches, on whichever thread runs it: a thread of the
 * encoding pool (parquetWorker.mjs, which loads this file through Node's own type stripping, so
 * only erasable TypeScript here and no imports but parquet-wasm and ./parquetWriterWasm.ts) or a
 * release build thread, which encodes its files itself (parquetPool.ts `encodeOnThisThread`).
 * Two encoders write the same bytes: ours (./parquetWriterWasm.ts, arrow-rs built for speed; the
 * default) and parquet-wasm's. One place sets the properties, so every thread writes the same
 * bytes for the same batches.
 */
import * as parquet from 'parquet-wasm';
import { openWasmEncoder, parquetWriterWasmPresent } from './parquetWriterWasm.ts';

/** Which encoder writes a file (parquet.ts `ParquetWriterOptions.encoder`). */
export type EncoderName = 'arrow-rs' | 'parquet-wasm';

/** Writer settings chosen by the writer (parquet.ts; the dictionary columns from the first chunk). */
export interface EncodeProperties {
  maxRowGroupRows: number;
  dictionaryOff: boolean;
  plainColumns: readonly string[];
  /** Default: 'arrow-rs' when its module is in place (encoderName). */
  encoder?: EncoderName;
}

/** What the encoder tells about its file. */
export interface EncoderEvents {
  /** One batch was fully taken by the writer (another may be sent). */
  ack(): void;
  /** Parquet bytes, in order; each chunk's buffer is its own (it may be transferred). */
  bytes(chunk: Uint8Array): void;
  done(): void;
  error(message: string): void;
}

export interface Encoder {
  /** Hands one Arrow IPC stream over (copied into wasm memory at once). */
  batch(ipc: Uint8Array): void;
  /** No more batches: the file is finished. */
  close(): void;
  /** Abandons the file: nothing more is told. */
  abort(): void;
}

/**
 * The footer's `created_by`. It still names parquet-wasm, whose writer (arrow-rs's) makes every
 * byte of the file whichever encoder runs: releases stay byte-identical to those made before
 * the encoder of ./parquetWriterWasm.ts.
 */
const CREATED_BY = 'marquee snapshot (parquet-wasm)';

/** The default encoder: ours, unless its module is missing (a checkout that deleted it). */
export function encoderName(): EncoderName {
  return parquetWriterWasmPresent() ? 'arrow-rs' : 'parquet-wasm';
}

/** Starts encoding one file with `props.encoder` (default `encoderName()`); both write the same bytes. */
export function openEncoder(props: EncodeProperties, events: EncoderEvents): Encoder {
  return (props.encoder ?? encoderName()) === 'arrow-rs' ? openWasmEncoder(props, CREATED_BY, events) : openParquetWasmEncoder(props, events);
}

function writerProperties({ maxRowGroupRows, dictionaryOff, plainColumns }: EncodeProperties): parquet.WriterProperties {
  let builder = new parquet.WriterPropertiesBuilder()
    .setCompression(parquet.Compression.ZSTD)
    .setStatisticsEnabled(parquet.EnabledStatistics.Page)
    .setMaxRowGroupSize(maxRowGroupRows)
    .setCreatedBy(CREATED_BY);
  if (dictionaryOff) builder = builder.setDictionaryEnabled(false);
  else for (const name of plainColumns) builder = builder.setColumnDictionaryEnabled(name, false);
  return builder.build();
}

type Queued = { batches: parquet.RecordBatch[]; table: parquet.Table } | 'end';

/** Starts encoding one file with parquet-wasm; batches are taken by its pull, in order. */
export function openParquetWasmEncoder(props: EncodeProperties, events: EncoderEvents): Encoder {
  const queue: Queued[] = [];
  let wake: (() => void) | null = null;
  let aborted = false;
  const next = (): Promise<Queued> =>
    queue.length > 0
      ? Promise.resolve(queue[0] as Queued)
      : new Promise((resolve) => {
          wake = () => {
            wake = null;
            resolve(queue[0] as Queued);
          };
        });
  const input = new ReadableStream<parquet.RecordBatch>(
    {
      async pull(controller) {
        for (;;) {
          const head = await next();
          if (head === 'end') {
            controller.close();
            return;
          }
          const batch = head.batches.shift();
          if (head.batches.length === 0) {
            queue.shift();
            head.table.free();
            if (!aborted) events.ack();
          }
          if (batch !== undefined) {
            controller.enqueue(batch);
            return;
          }
        }
      },
    },
    { highWaterMark: 0 },
  );
  const push = (item: Queued): void => {
    queue.push(item);
    wake?.();
  };
  const run = (async () => {
    const output = await parquet.transformParquetStream(input as never, writerProperties(props));
    for await (const chunk of output as AsyncIterable<Uint8Array>) {
      if (aborted) return;
      // A chunk of its own (never a view of a larger buffer), so the receiver may keep or transfer it.
      const whole = chunk.byteOffset === 0 && chunk.byteLength === chunk.buffer.byteLength && chunk.buffer instanceof ArrayBuffer;
      events.bytes(whole ? chunk : new Uint8Array(chunk));
    }
    if (!aborted) events.done();
  })();
  run.catch((err: unknown) => {
    if (!aborted) events.error(err instanceof Error ? err.message : String(err));
  });
  return {
    batch(ipc) {
      const table = parquet.Table.fromIPCStream(ipc);
      push({ batches: table.recordBatches(), table });
    },
    close() {
      push('end');
    },
    abort() {
      aborted = true;
      for (const item of queue.splice(0)) if (item !== 'end') item.table.free();
      push('end');
    },
  };
}
