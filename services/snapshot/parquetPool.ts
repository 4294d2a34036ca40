/**
 * Parquet encoding off the main thread. parquet-wasm encodes (ZSTD, statistics) on one thread,
 * and that was the snapshot's bottleneck; a small pool of worker threads, each with its own wasm
 * instance (parquetWorker.mjs), lets the main thread build Arrow batches while files encode, and
 * two files encode at once. A file is bound to one worker for its whole life (the least busy
 * when it opens); its batches go over as Arrow IPC bytes (transferred, not copied) and its
 * Parquet bytes come back the same way, in order, to the sink on the main thread.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { AppError } from '../../contracts/errors.ts';

/** Writer settings chosen by the main thread (the dictionary columns from the first chunk). */
export interface EncodeProperties {
  maxRowGroupRows: number;
  dictionaryOff: boolean;
  plainColumns: readonly string[];
}

/**
 * IPC messages a file may have in flight to its worker before `send` waits. Two keep the
 * worker busy while the main thread builds the next batch, and bound the memory per file.
 */
const IN_FLIGHT = 2;

/** How long a thread with no open file is kept for the next one, in ms. */
const IDLE_MS = 30_000;

type WorkerReply =
  | { type: 'ready' }
  | { type: 'ack'; id: number }
  | { type: 'bytes'; id: number; chunk: Uint8Array }
  | { type: 'done'; id: number }
  | { type: 'error'; id: number; message: string };

/** The main thread's side of one file being encoded on a worker. */
export interface EncodingFile {
  /** Hands one Arrow IPC stream over (its buffer is transferred); resolves when another may be sent. */
  send(ipc: Uint8Array): Promise<void>;
  /** No more batches: the worker finishes the file. */
  end(): void;
  /** Abandons the file; the byte stream fails with `reason`. */
  abort(reason: unknown): void;
  /** The file's Parquet bytes, in order; fails if encoding fails. Read it exactly once. */
  bytes: AsyncIterable<Uint8Array>;
}

interface FileState {
  credits: number;
  waiting: Array<() => void>;
  chunks: Uint8Array[];
  finished: boolean;
  failure: unknown;
  wake: (() => void) | null;
}

class PooledWorker {
  readonly worker: Worker;
  readonly files = new Map<number, FileState>();
  private idle: NodeJS.Timeout | null = null;
  /** Settles once the thread has loaded parquet-wasm. */
  readonly ready: Promise<void>;
  private readyNow: () => void = () => {};

  constructor() {
    // Plain JavaScript: the thread needs none of the parent's loaders (tsx), which would only
    // slow its start.
    this.worker = new Worker(new URL('./parquetWorker.mjs', import.meta.url), { execArgv: [] });
    this.ready = new Promise<void>((resolve) => {
      this.readyNow = resolve;
    });
    this.worker.unref();
    this.worker.on('message', (msg: WorkerReply) => this.onMessage(msg));
    this.worker.on('error', (err) => this.failAll(err));
    this.worker.on('exit', (code) => {
      this.readyNow();
      this.failAll(new AppError('internal', `parquet worker exited with code ${code}`));
    });
  }

  private onMessage(msg: WorkerReply): void {
    if (msg.type === 'ready') {
      this.readyNow();
      return;
    }
    const file = this.files.get(msg.id);
    if (file === undefined) return;
    if (msg.type === 'ack') {
      file.credits += 1;
      file.waiting.shift()?.();
      return;
    }
    if (msg.type === 'bytes') file.chunks.push(msg.chunk);
    else if (msg.type === 'done') file.finished = true;
    else file.failure ??= new AppError('internal', `parquet encoding failed: ${msg.message}`);
    if (msg.type !== 'bytes') this.release(msg.id, file);
    file.wake?.();
  }

  private failAll(err: unknown): void {
    for (const [id, file] of this.files) {
      file.failure ??= err;
      this.release(id, file);
      file.wake?.();
    }
    pool = pool?.filter((w) => w !== this) ?? null;
  }

  /** The file is over (finished, failed or aborted): its waiters go, the worker idles if it can. */
  release(id: number, file: FileState): void {
    for (const w of file.waiting.splice(0)) w();
    if (this.files.delete(id) && this.files.size === 0) {
      this.worker.unref();
      // A thread idle for long is stopped (a server builds once a week); the timer is unref'd,
      // so it never holds the process open.
      this.idle = setTimeout(() => this.stop(), IDLE_MS);
      this.idle.unref();
    }
  }

  private stop(): void {
    pool = pool?.filter((w) => w !== this) ?? null;
    this.worker.terminate().catch(() => {});
  }

  open(id: number, props: EncodeProperties): EncodingFile {
    const file: FileState = { credits: IN_FLIGHT, waiting: [], chunks: [], finished: false, failure: null, wake: null };
    // A worker with a file open holds the process open: the file's caller awaits its replies.
    if (this.idle !== null) clearTimeout(this.idle);
    this.idle = null;
    if (this.files.size === 0) this.worker.ref();
    this.files.set(id, file);
    this.worker.postMessage({ type: 'open', id, props });
    const self = this;
    return {
      async send(ipc) {
        if (file.failure !== null) throw file.failure;
        file.credits -= 1;
        const buffer = ipc.byteOffset === 0 && ipc.byteLength === ipc.buffer.byteLength ? ipc : ipc.slice();
        self.worker.postMessage({ type: 'batch', id, ipc: buffer }, [buffer.buffer as ArrayBuffer]);
        if (file.credits <= 0) await new Promise<void>((resolve) => file.waiting.push(resolve));
        if (file.failure !== null) throw file.failure;
      },
      end() {
        self.worker.postMessage({ type: 'close', id });
      },
      abort(reason) {
        if (!self.files.has(id)) return;
        file.failure ??= reason;
        self.worker.postMessage({ type: 'abort', id });
        self.release(id, file);
        file.wake?.();
      },
      bytes: {
        async *[Symbol.asyncIterator]() {
          for (;;) {
            const chunk = file.chunks.shift();
            if (chunk !== undefined) {
              yield chunk;
              continue;
            }
            if (file.failure !== null) throw file.failure;
            if (file.finished) return;
            await new Promise<void>((resolve) => {
              file.wake = () => {
                file.wake = null;
                resolve();
              };
            });
          }
        },
      },
    };
  }
}

/** Threads in the pool: two at most (the machines running the weekly job have two cores). */
export const PARQUET_WORKERS = Math.max(1, Math.min(2, availableParallelism()));

let pool: PooledWorker[] | null = null;
let nextId = 0;

/**
 * Starts encoding one file on an idle worker, a new one while the pool has room, or the least
 * busy. Threads start only when needed: a thread started and never used keeps the process
 * open even when unref'd (seen on Node 20).
 */
export function openEncodingFile(props: EncodeProperties): EncodingFile {
  pool ??= [];
  let best: PooledWorker | null = null;
  for (const w of pool) if (best === null || w.files.size < best.files.size) best = w;
  if (best === null || (best.files.size > 0 && pool.length < PARQUET_WORKERS)) {
    best = new PooledWorker();
    pool.push(best);
  }
  nextId += 1;
  return best.open(nextId, props);
}

/**
 * Starts every thread of the pool and waits until each has loaded parquet-wasm, so the first
 * files do not pay for it (a bench times the writes alone, as it does DuckDB's). Optional.
 */
export async function warmParquetPool(): Promise<void> {
  pool ??= [];
  while (pool.length < PARQUET_WORKERS) pool.push(new PooledWorker());
  await Promise.all(pool.map((w) => w.ready));
}
