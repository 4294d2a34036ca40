/**
 * The crawl worker: generates a sample day's crawl and encodes it on a thread of its own, so the
 * main thread only appends finished bytes. Records are not checked here: the inbox's consumer
 * decodes and checks each one (the crawler's tests check every observation it generates), so
 * an observation is validated once instead of at both ends. It
 * answers in chunks, each carrying its records back-to-back in one transferred buffer (nothing
 * is copied), and runs at most WINDOW chunks ahead of the chunks the main thread has taken.
 */
import { parentPort } from 'node:worker_threads';
import { encodeObservationUnchecked } from '../../contracts/codec.ts';
import { generateCrawl, type CrawlOptions } from '../crawler/catalog.ts';

export type CrawlRequest = { type: 'crawl'; day: number; options: CrawlOptions } | { type: 'ack'; day: number };

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
/** Chunks generated ahead of the ones taken: 100,000 records, a whole sample day. */
const WINDOW = 20;

const acked = new Map<number, number>();
let wake: (() => void) | null = null;

function send(day: number, parts: Buffer[], last: boolean): void {
  const size = parts.reduce((n, p) => n + p.length, 0);
  const bytes = new ArrayBuffer(size);
  const view = new Uint8Array(bytes);
  const ends = new Uint32Array(parts.length);
  let at = 0;
  parts.forEach((part, i) => {
    view.set(part, at);
    at += part.length;
    ends[i] = at;
  });
  const chunk: CrawlChunk = { day, bytes, ends, last };
  parentPort?.postMessage(chunk, [bytes, ends.buffer]);
}

async function crawlDay(day: number, options: CrawlOptions): Promise<void> {
  let parts: Buffer[] = [];
  let sent = 0;
  for (const observation of generateCrawl({ ...options, day })) {
    parts.push(encodeObservationUnchecked(observation));
    if (parts.length < CHUNK) continue;
    send(day, parts, false);
    sent += 1;
    parts = [];
    while (sent - (acked.get(day) ?? 0) >= WINDOW) await new Promise<void>((resolve) => (wake = resolve));
  }
  send(day, parts, true);
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
