/**
 * The crawl worker: generates a sample day's crawl and encodes it on a thread of its own, so the
 * main thread only appends finished bytes. Records are not checked here: the inbox's consumer
 * decodes and checks each one (the crawler's tests check every observation it generates), so
 * an observation is validated once instead of at both ends. It
 * answers in chunks, each carrying its records back-to-back in one transferred buffer (copied
 * once, from the buffer they were encoded into), and runs at most WINDOW chunks ahead of the
 * chunks the main thread has taken.
 */
import { parentPort } from 'node:worker_threads';
import { encodeObservationInto } from '../../contracts/codec.ts';
import type { Observation } from '../../contracts/observations.ts';
import { generateCrawl, type CrawlOptions } from '../crawler/catalog.ts';

export type CrawlRequest = { type: 'crawl'; day: number; options: CrawlOptions } | { type: 'ack'; day: number };

/** What the worker posts once its modules are loaded, before any chunk. */
export interface CrawlReady {
  ready: true;
}

export interface CrawlChunk {
  day: number;
  /** The encoded records, one after the other. */
  bytes: ArrayBuffer;
  /** The end offset of each record in `bytes`. */
  ends: Uint32Array;
  /** The day's last chunk. */
  last: boolean;
  error?: string;
}

/** Records per chunk. */
export const CHUNK = 5000;
/**
 * Records of a day's first chunk: ingest waits for it when the load begins (the later days are
 * generated ahead), and 5,000 records took the thread a few tenths of a second to generate.
 */
export const FIRST_CHUNK = 500;
/** Chunks generated ahead of the ones taken: 100,000 records, a whole sample day. */
const WINDOW = 20;

const acked = new Map<number, number>();
let wake: (() => void) | null = null;

/**
 * The chunk being filled: its records encoded one after the other straight into a buffer reused
 * from chunk to chunk (a buffer per record, then their concatenation, cost the thread about a
 * fifth of its encoding time in allocation and copies).
 */
// Grown (doubled) as a chunk needs: a sample chunk takes a few MB, so every crawl grows it.
let scratch = Buffer.allocUnsafeSlow(256 * 1024);
let filled = 0;
const ends = new Uint32Array(CHUNK);
let count = 0;

function add(observation: Observation): void {
  for (;;) {
    const end = encodeObservationInto(observation, scratch, filled);
    if (end >= 0) {
      ends[count++] = end;
      filled = end;
      return;
    }
    const bigger = Buffer.allocUnsafeSlow(scratch.length * 2);
    scratch.copy(bigger, 0, 0, filled);
    scratch = bigger;
  }
}

/** Sends the chunk filled so far (its bytes copied out, the buffer kept for the next one). */
function send(day: number, last: boolean): void {
  const bytes = (scratch.buffer as ArrayBuffer).slice(scratch.byteOffset, scratch.byteOffset + filled);
  const chunk: CrawlChunk = { day, bytes, ends: ends.slice(0, count), last };
  parentPort?.postMessage(chunk, [bytes, chunk.ends.buffer as ArrayBuffer]);
  filled = 0;
  count = 0;
}

async function crawlDay(day: number, options: CrawlOptions): Promise<void> {
  filled = 0;
  count = 0;
  let sent = 0;
  for (const observation of generateCrawl({ ...options, day })) {
    add(observation);
    if (count < (sent === 0 ? FIRST_CHUNK : CHUNK)) continue;
    send(day, false);
    sent += 1;
    while (sent - (acked.get(day) ?? 0) >= WINDOW) await new Promise<void>((resolve) => (wake = resolve));
  }
  send(day, true);
}

let queue = Promise.resolve();
parentPort?.on('message', (message: CrawlRequest) => {
  if (message.type === 'ack') {
    acked.set(message.day, (acked.get(message.day) ?? 0) + 1);
    wake?.();
    return;
  }
  // One day at a time, in the order asked.
  queue = queue.then(() =>
    crawlDay(message.day, message.options).catch((err: Error) => {
      const failed: CrawlChunk = { day: message.day, bytes: new ArrayBuffer(0), ends: new Uint32Array(0), last: true, error: err.message };
      parentPort?.postMessage(failed);
    }),
  );
});
parentPort?.postMessage({ ready: true } satisfies CrawlReady);
