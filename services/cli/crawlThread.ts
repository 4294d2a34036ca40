/**
 * Runs the sample crawler on a worker thread (crawlWorkerMain.ts). The sample load asks for the
 * next day while the current one is ingested, projected and ranked, and appends its records to
 * the inbox only when that day's turn comes (a day's ranking must not see the next day's
 * observations); ingest consumes them as they are appended. The records are the bytes `publish`
 * would have written, in the same order.
 */
import { Worker } from 'node:worker_threads';
import { AppError } from '../../contracts/errors.ts';
import type { LmdbInbox } from '../../infra/lmdb/inbox.ts';
import type { CrawlOptions } from '../crawler/catalog.ts';
import type { CrawlChunk, CrawlReady, CrawlRequest } from './crawlWorkerMain.ts';

export interface CrawlThread {
  /**
   * Resolves once the worker has loaded its modules and can generate (rejects if it failed to
   * start): a bench waits for it to time the crawl, not the thread's start.
   */
  readonly ready: Promise<void>;
  /** Starts generating `day` in the worker, if not asked already. */
  prepare(day: number): void;
  /** The encoded records of `day` in crawl order, chunk by chunk (asks for it first if needed). */
  take(day: number): AsyncGenerator<Uint8Array[]>;
  stop(): Promise<void>;
}

export function startCrawlThread(options: Omit<CrawlOptions, 'day'>): CrawlThread {
  // V8's default young generation: garbage collection is a small part of this thread's work
  // (2 s of 36 s over a sample load), and a larger one only adds to the peak memory.
  const worker = new Worker(new URL('./crawlWorker.mjs', import.meta.url));
  const days = new Map<number, { chunks: CrawlChunk[]; wake: (() => void) | null }>();
  let failure: Error | null = null;
  let started!: { resolve: () => void; reject: (err: Error) => void };
  const ready = new Promise<void>((resolve, reject) => (started = { resolve, reject }));
  // Nobody need wait for it: a failed start also reaches `take`.
  ready.catch(() => undefined);
  const fail = (err: Error) => {
    failure ??= err;
    started.reject(err);
    for (const d of days.values()) d.wake?.();
  };
  worker.on('error', fail);
  worker.on('exit', (code) => fail(new Error(`the crawl worker exited with code ${code}`)));
  worker.on('message', (message: CrawlChunk | CrawlReady) => {
    if ('ready' in message) {
      started.resolve();
      return;
    }
    const chunk = message;
    const day = days.get(chunk.day);
    if (!day) return;
    day.chunks.push(chunk);
    day.wake?.();
  });

  function prepare(day: number): void {
    if (days.has(day)) return;
    days.set(day, { chunks: [], wake: null });
    worker.postMessage({ type: 'crawl', day, options } satisfies CrawlRequest);
  }

  return {
    ready,
    prepare,
    async *take(day) {
      prepare(day);
      const state = days.get(day)!;
      try {
        for (;;) {
          const chunk = state.chunks.shift();
          if (!chunk) {
            if (failure) throw failure;
            await new Promise<void>((resolve) => (state.wake = resolve));
            state.wake = null;
            continue;
          }
          if (chunk.error !== undefined) throw new AppError('internal', `the crawl of day ${day} failed: ${chunk.error}`);
          worker.postMessage({ type: 'ack', day } satisfies CrawlRequest);
          const view = new Uint8Array(chunk.bytes);
          const records: Uint8Array[] = new Array(chunk.ends.length);
          let at = 0;
          chunk.ends.forEach((end, i) => {
            records[i] = view.subarray(at, end);
            at = end;
          });
          yield records;
          if (chunk.last) return;
        }
      } finally {
        days.delete(day);
      }
    },
    async stop() {
      worker.removeAllListeners('exit');
      await worker.terminate();
    },
  };
}

/**
 * Appends a crawled day to the inbox chunk by chunk while `ingestUntilIdle` consumes it, and
 * returns once every record is appended and ingested (or soon after `signal` aborts: the rest of
 * the day is appended by the resumed load). Resolves to the records appended.
 */
export async function publishWhileIngesting(
  inbox: LmdbInbox,
  chunks: AsyncIterable<Uint8Array[]>,
  ingestUntilIdle: () => Promise<void>,
  signal?: AbortSignal,
): Promise<number> {
  let published = 0;
  let done = false;
  const publishing = (async () => {
    try {
      for await (const records of chunks) {
        if (signal?.aborted) break;
        await inbox.publishRaw(records);
        published += records.length;
      }
    } finally {
      done = true;
    }
  })();
  // Ingest stops whenever it catches up with the appends; go again until the crawl is all in.
  const ingesting = (async () => {
    while (!done && !signal?.aborted) {
      const before = inbox.lastSequence();
      await ingestUntilIdle();
      if (inbox.lastSequence() === before && !done) await new Promise((r) => setTimeout(r, 10));
    }
    await ingestUntilIdle();
  })();
  await Promise.all([publishing, ingesting]);
  return published;
}
