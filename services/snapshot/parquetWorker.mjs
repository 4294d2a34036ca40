// Parquet encoding thread of the snapshot (see parquetPool.ts). Plain JavaScript importing only
// parquetEncoder.ts (erasable TypeScript, loaded by Node's own type stripping) and parquet-wasm,
// so the thread needs no TypeScript loader. Each thread has its own wasm instance; several
// files may be open on one thread at once (the metadata pass interleaves eight).
//
// Messages in:  { type: 'open', id, props: { maxRowGroupRows, dictionaryOff, plainColumns } }
//               { type: 'batch', id, ipc: Uint8Array }   (an Arrow IPC stream, transferred)
//               { type: 'close', id } | { type: 'abort', id }
// Messages out: { type: 'ready' }                        (once, parquet-wasm loaded)
//               { type: 'ack', id }                      (one 'batch' fully taken by the writer)
//               { type: 'bytes', id, chunk: Uint8Array } (Parquet bytes, transferred, in order)
//               { type: 'done', id } | { type: 'error', id, message }
import { parentPort } from 'node:worker_threads';
import { openEncoder } from './parquetEncoder.ts';

if (parentPort === null) throw new Error('parquetWorker.mjs must run in a worker thread');
const port = parentPort;

function openFile(id, props) {
  return openEncoder(props, {
    ack: () => port.postMessage({ type: 'ack', id }),
    bytes: (chunk) => port.postMessage({ type: 'bytes', id, chunk }, [chunk.buffer]),
    done: () => port.postMessage({ type: 'done', id }),
    error: (message) => port.postMessage({ type: 'error', id, message }),
  });
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
