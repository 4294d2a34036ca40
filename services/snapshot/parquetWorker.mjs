// Parquet encoding thread of the snapshot (see parquetPool.ts). Plain JavaScript importing only
// parquet-wasm, so the thread needs no TypeScript loader. Each thread has its own wasm instance;
// several files may be open on one thread at once (the metadata pass interleaves eight).
//
// Messages in:  { type: 'open', id, props: { maxRowGroupRows, dictionaryOff, plainColumns } }
//               { type: 'batch', id, ipc: Uint8Array }   (an Arrow IPC stream, transferred)
//               { type: 'close', id } | { type: 'abort', id }
// Messages out: { type: 'ready' }                        (once, parquet-wasm loaded)
//               { type: 'ack', id }                      (one 'batch' fully taken by the writer)
//               { type: 'bytes', id, chunk: Uint8Array } (Parquet bytes, transferred, in order)
//               { type: 'done', id } | { type: 'error', id, message }
import { parentPort } from 'node:worker_threads';
import * as parquet from 'parquet-wasm';

if (parentPort === null) throw new Error('parquetWorker.mjs must run in a worker thread');
const port = parentPort;

function writerProperties({ maxRowGroupRows, dictionaryOff, plainColumns }) {
  let builder = new parquet.WriterPropertiesBuilder()
    .setCompression(parquet.Compression.ZSTD)
    .setStatisticsEnabled(parquet.EnabledStatistics.Page)
    .setMaxRowGroupSize(maxRowGroupRows)
    .setCreatedBy('marquee snapshot (parquet-wasm)');
  if (dictionaryOff) builder = builder.setDictionaryEnabled(false);
  else for (const name of plainColumns) builder = builder.setColumnDictionaryEnabled(name, false);
  return builder.build();
}

/** One open file: IPC messages waiting to be taken by parquet-wasm's pull. */
function openFile(id, props) {
  const queue = []; // { batches: RecordBatch[], table } per IPC message, or 'end'
  let wake = null;
  let aborted = false;
  const next = () =>
    queue.length > 0 ? Promise.resolve(queue[0]) : new Promise((resolve) => { wake = () => { wake = null; resolve(queue[0]); }; });
  const input = new ReadableStream(
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
            port.postMessage({ type: 'ack', id });
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
  const push = (item) => {
    queue.push(item);
    wake?.();
  };
  const run = (async () => {
    const output = await parquet.transformParquetStream(input, writerProperties(props));
    for await (const chunk of output) {
      if (aborted) return;
      // Transfer only a buffer that is this chunk's alone (never a view of a larger one).
      const whole = chunk instanceof Uint8Array && chunk.byteOffset === 0 && chunk.byteLength === chunk.buffer.byteLength && chunk.buffer instanceof ArrayBuffer;
      const bytes = whole ? chunk : new Uint8Array(chunk);
      port.postMessage({ type: 'bytes', id, chunk: bytes }, [bytes.buffer]);
    }
    port.postMessage({ type: 'done', id });
  })();
  run.catch((err) => {
    if (!aborted) port.postMessage({ type: 'error', id, message: err instanceof Error ? err.message : String(err) });
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

port.postMessage({ type: 'ready' });

const files = new Map();
port.on('message', (msg) => {
  try {
    if (msg.type === 'open') files.set(msg.id, openFile(msg.id, msg.props));
    else {
      const file = files.get(msg.id);
      if (file === undefined) return;
      if (msg.type === 'batch') file.batch(msg.ipc);
      else {
        if (msg.type === 'close') file.close();
        else file.abort();
        files.delete(msg.id);
      }
    }
  } catch (err) {
    port.postMessage({ type: 'error', id: msg.id, message: err instanceof Error ? err.message : String(err) });
  }
});
