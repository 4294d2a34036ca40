/**
 * Parquet encoding off the main thread. parquet-wasm encodes (ZSTD, statistics) on one thread,
 * and that was the snapshot's bottleneck; a small pool of worker threads, each with its own wasm
 * instance (parquetWorker.mjs), lets the main thread build Arrow batches while files encode, and
 * two files encode at once. A file is bound to one worker for its whole life (the least busy
 * when it opens); its batches go over as Arrow IPC bytes (transferred, not copied) and its
 * Parquet bytes come back the same way, in order, to the sink on the main thread.
 *
 * A release build thread (buildThreads.ts) is itself one of the threads that keep the cores
 * busy: it encodes its files on its own thread (`encodeOnThisThread`), with the same encoder.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { AppError } from '../../contracts/errors.ts';
import type { EncodeProperties, EncoderEvents, openEncoder } from './parquetEncoder.ts';

export type { EncodeProperties };

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

/** What an encoder does with one file's batches: a pool thread's (messages) or this thread's. */
interface EncoderInput {
  batch(ipc: Uint8Array): void;
  close(): void;
  abort(): void;
}

/**
 * The caller's side of one file: credits for the batches in flight, the Parquet bytes as they
 * come, and the end or failure. `events` is what the encoder tells; `over` runs once the file
 * is finished, failed or aborted.
 */
function encodingFile(input: () => EncoderInput, over: () => void): { file: EncodingFile; events: EncoderEvents } {
  let credits = IN_FLIGHT;
  const waiting: Array<() => void> = [];
  const chunks: Uint8Array[] = [];
  let finished = false;
  let failure: unknown = null;
  let wake: (() => void) | null = null;
  let ended = false;
  const end = (): void => {
    if (ended) return;
    ended = true;
    for (const w of waiting.splice(0)) w();
    over();
  };
  const events: EncoderEvents = {
    ack() {
      credits += 1;
      waiting.shift()?.();
    },
    bytes(chunk) {
      chunks.push(chunk);
      wake?.();
    },
    done() {
      finished = true;
      end();
      wake?.();
    },
    error(message) {
      failure ??= new AppError('internal', `parquet encoding failed: ${message}`);
      end();
      wake?.();
    },
  };
  const file: EncodingFile = {
    async send(ipc) {
      if (failure !== null) throw failure;
      credits -= 1;
      input().batch(ipc);
      if (credits <= 0) await new Promise<void>((resolve) => waiting.push(resolve));
      if (failure !== null) throw failure;
    },
    end() {
      input().close();
    },
    abort(reason) {
      if (ended) return;
      failure ??= reason;
      input().abort();
      end();
      wake?.();
    },
    bytes: {
      async *[Symbol.asyncIterator]() {
        for (;;) {
          const chunk = chunks.shift();
          if (chunk !== undefined) {
            yield chunk;
            continue;
          }
          if (failure !== null) throw failure;
          if (finished) return;
          await new Promise<void>((resolve) => {
            wake = () => {
              wake = null;
              resolve();
            };
          });
        }
      },
    },
  };
  return { file, events };
}

/** A file open on a pool thread: where that thread's replies about it go. */
type OpenFile = { events: EncoderEvents };

class PooledWorker {
  readonly worker: Worker;
  readonly files = new Map<number, OpenFile>();
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
    this.worker.on('error', (err) => this.failAll(err instanceof Error ? err.message : String(err)));
    this.worker.on('exit', (code) => {
      this.readyNow();
      this.failAll(`parquet worker exited with code ${code}`);
    });
  }

  private onMessage(msg: WorkerReply): void {
    if (msg.type === 'ready') {
      this.readyNow();
      return;
    }
    const file = this.files.get(msg.id);
    if (file === undefined) return;
    if (msg.type === 'ack') file.events.ack();
    else if (msg.type === 'bytes') file.events.bytes(msg.chunk);
    else if (msg.type === 'done') file.events.done();
    else file.events.error(msg.message);
  }

  private failAll(message: string): void {
    for (const file of [...this.files.values()]) file.events.error(message);
    pool = pool?.filter((w) => w !== this) ?? null;
  }

  /** The file is over (finished, failed or aborted): the worker idles if it can. */
  private release(id: number): void {
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
    // A worker with a file open holds the process open: the file's caller awaits its replies.
    if (this.idle !== null) clearTimeout(this.idle);
    this.idle = null;
    if (this.files.size === 0) this.worker.ref();
    const worker = this.worker;
    const input: EncoderInput = {
      batch(ipc) {
        const buffer = ipc.byteOffset === 0 && ipc.byteLength === ipc.buffer.byteLength ? ipc : ipc.slice();
        worker.postMessage({ type: 'batch', id, ipc: buffer }, [buffer.buffer as ArrayBuffer]);
      },
      close: () => worker.postMessage({ type: 'close', id }),
      abort: () => worker.postMessage({ type: 'abort', id }),
    };
    const { file, events } = encodingFile(() => input, () => this.release(id));
    this.files.set(id, { events });
    worker.postMessage({ type: 'open', id, props });
    return file;
  }
}

/** Threads in the pool: two at most (the machines running the weekly job have two cores). */
export const PARQUET_WORKERS = Math.max(1, Math.min(2, availableParallelism()));

let pool: PooledWorker[] | null = null;
let nextId = 0;
let onThisThread: typeof openEncoder | null = null;
/** Files are encoded on a helper thread (see encodeOnHelper) while this is above zero. */
let helped = 0;

/**
 * Encodes every file this thread opens from now on on this thread itself, not the pool: for a
 * release build thread, which is already one of the threads sharing the cores (a pool of its
 * own would only add threads and wasm instances). Loads parquet-wasm here, which a thread
 * using the pool never does.
 */
export async function encodeOnThisThread(): Promise<void> {
  onThisThread = (await import('./parquetEncoder.ts')).openEncoder;
}

/**
 * Runs `body` with the files it opens encoded on a helper thread (a pool of one) rather than on
 * this thread, which encodes its files itself (encodeOnThisThread): for a build thread's largest
 * task, whose end the other build thread would otherwise wait for with a core idle.
 */
export async function encodeOnHelper<T>(body: () => Promise<T>): Promise<T> {
  helped += 1;
  try {
    return await body();
  } finally {
    helped -= 1;
  }
}

/**
 * Starts encoding one file on an idle worker, a new one while the pool has room, or the least
 * busy (or on this thread, see encodeOnThisThread). Threads start only when needed: a thread
 * started and never used keeps the process open even when unref'd (seen on Node 20).
 */
export function openEncodingFile(props: EncodeProperties): EncodingFile {
  if (onThisThread !== null && helped === 0) {
    let encoder: EncoderInput | null = null;
    const { file, events } = encodingFile(() => encoder as EncoderInput, () => {});
    encoder = onThisThread(props, events);
    return file;
  }
  pool ??= [];
  let best: PooledWorker | null = null;
  for (const w of pool) if (best === null || w.files.size < best.files.size) best = w;
  // A thread that encodes its own files has one helper at most (encodeOnHelper).
  const size = onThisThread === null ? PARQUET_WORKERS : 1;
  if (best === null || (best.files.size > 0 && pool.length < size)) {
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
