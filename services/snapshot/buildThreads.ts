/**
 * A release's files built on threads of their own. Built on the calling thread, the release
 * kept one core busy reading the read models, making rows, Arrow columns and link tokens, while
 * the Parquet encoding threads waited for it (three quarters of their time at 50,000 titles).
 * Here each thread (buildWorkerMain.ts) opens its own read store on the same LMDB environment,
 * takes whole files as tasks — a country's four files, the seasons pass, the media pass, the
 * small read models — and reads, makes rows and tokens, and encodes them itself, so every core
 * does all the work of its files. This thread hands their bytes to the release (a release
 * store may be remote, and keeps its own state) and hands out the tasks, largest first. The
 * media pass, the largest task by far, has its files encoded on a helper thread of its own
 * (parquetPool.ts `encodeOnHelper`), so the other thread, done first, is not left waiting for
 * it with a core idle.
 *
 * Every file is still written by one writer, its rows in order, so its bytes are those of a
 * build on one thread; the manifest lists files sorted, whoever finished first.
 */
import { Worker } from 'node:worker_threads';
import { AppError, type ErrorCode } from '../../contracts/errors.ts';
import type { ReleaseFile, ReleaseWriter } from '../../contracts/ports.ts';
import type { LmdbReadStoreOptions } from '../../infra/lmdb/readStore.ts';
import type { LinkTokensOptions } from '../links/linkTokens.ts';
import { metadataResult, type MetadataPart, type MetadataResult, type SnapshotCollections } from './metadata.ts';
import type { ParquetWriterOptions } from './parquet.ts';
import { PARQUET_WORKERS } from './parquetPool.ts';
import type { SeasonCounts } from './rows.ts';

/** Threads of a build: one per core, two at most (the machines running the weekly job have two). */
export const BUILD_THREADS = PARQUET_WORKERS;

export interface BuildThreadsOptions {
  /** The LMDB read store each thread opens: the same data directory as the build's read store. */
  lmdb: LmdbReadStoreOptions;
  /** The keys the build's link tokens are made with: each thread makes the tokens of its links. */
  linkKeys: LinkTokensOptions;
  /** Threads. Default BUILD_THREADS. */
  count?: number;
}

/** How long the threads have to end after a failure before they are terminated, in ms. */
const STOP_GRACE_MS = 30_000;

/** A unit of work of one thread, from its start to its files' last bytes. */
export type BuildTask =
  | { kind: 'media' }
  | { kind: 'seasons' }
  | { kind: 'small' }
  | { kind: 'country'; country: string }
  | { kind: 'translations'; languages: string[] };

export interface TaskResult {
  part?: MetadataPart;
  /** The seasons pass: each show's counts, which the media pass needs for tv_shows.parquet. */
  counts?: PackedCounts;
  /** The media pass: every language met, and those whose overlays it wrote. */
  languages?: string[];
  written?: string[];
}

/**
 * The seasons' counts as they cross threads (seasons thread -> this thread -> media thread):
 * every show's media id in one string, where each ends, and its counts. As a Map of 75,000
 * shows (250,000 titles) each crossing cloned every id and made an object per show, then a Map,
 * on the receiving thread: 40-80 ms a crossing. One string and three typed arrays clone at
 * once; only the media thread makes the Map, once.
 */
export interface PackedCounts {
  ids: string;
  /** Where each id ends in `ids`. */
  ends: Int32Array;
  seasons: Int32Array;
  episodes: Int32Array;
}

export function packCounts(counts: ReadonlyMap<string, SeasonCounts>): PackedCounts {
  const ends = new Int32Array(counts.size);
  const seasons = new Int32Array(counts.size);
  const episodes = new Int32Array(counts.size);
  const ids: string[] = [];
  let at = 0;
  let k = 0;
  for (const [id, c] of counts) {
    ids.push(id);
    at += id.length;
    ends[k] = at;
    seasons[k] = c.seasons;
    episodes[k] = c.episodes;
    k += 1;
  }
  return { ids: ids.join(''), ends, seasons, episodes };
}

export function unpackCounts(packed: PackedCounts): Map<string, SeasonCounts> {
  const counts = new Map<string, SeasonCounts>();
  let from = 0;
  for (let k = 0; k < packed.ends.length; k++) {
    const to = packed.ends[k] as number;
    counts.set(packed.ids.slice(from, to), { seasons: packed.seasons[k] as number, episodes: packed.episodes[k] as number });
    from = to;
  }
  return counts;
}

export interface BuildWorkerData {
  lmdb: LmdbReadStoreOptions;
  linkKeys: LinkTokensOptions;
  collections: SnapshotCollections;
  version: string;
  /** ISO time the build started. */
  now: string;
  workDir: string;
  parquet?: ParquetWriterOptions;
}

/** An error as it crosses threads (its code kept, so guards by code still match). */
export interface SentError {
  message: string;
  code?: string;
  retriable?: boolean;
  stack?: string;
}

export function sendError(err: unknown): SentError {
  if (!(err instanceof Error)) return { message: String(err) };
  const { code, retriable } = err as { code?: unknown; retriable?: unknown };
  return {
    message: err.message,
    ...(typeof code === 'string' ? { code } : {}),
    ...(typeof retriable === 'boolean' ? { retriable } : {}),
    ...(err.stack === undefined ? {} : { stack: err.stack }),
  };
}

export function receivedError(sent: SentError): Error {
  const err = sent.code === undefined ? new Error(sent.message) : new AppError(sent.code as ErrorCode, sent.message, sent.retriable === undefined ? {} : { retriable: sent.retriable });
  if (sent.stack !== undefined) err.stack = sent.stack;
  return err;
}

/** Messages to a build thread. */
export type ToThread =
  | { type: 'task'; id: number; task: BuildTask; counts?: PackedCounts }
  | { type: 'counts'; counts: PackedCounts }
  /** One chunk of a release file was taken by the release: another may come. */
  | { type: 'taken'; file: number }
  | { type: 'written'; file: number; result: ReleaseFile }
  | { type: 'writeFailed'; file: number; error: SentError }
  /** The build failed elsewhere: reads fail from now on. */
  | { type: 'stop'; error: SentError }
  | { type: 'close' };

/** Messages from a build thread. */
export type FromThread =
  | { type: 'ready' }
  | { type: 'finished'; path: string; rows: number }
  /** A release file begins; its chunks follow (transferred), then its end or failure. */
  | { type: 'write'; file: number; path: string }
  | { type: 'chunk'; file: number; chunk: Uint8Array }
  | { type: 'end'; file: number }
  | { type: 'fail'; file: number; error: SentError }
  | { type: 'done'; id: number; result: TaskResult }
  | { type: 'failed'; id: number; error: SentError };

/** A release file whose bytes come from a thread. */
interface IncomingFile {
  push(chunk: Uint8Array): void;
  end(): void;
  fail(reason: unknown): void;
}

interface Thread {
  worker: Worker;
  task: { id: number; task: BuildTask } | null;
  files: Map<number, IncomingFile>;
  exited: Promise<void>;
  gone: boolean;
}

/**
 * Writes every country's files and the metadata on build threads. `metadata` settles once the
 * metadata files are written (the caller bundles them while the countries go on); `countries`
 * once everything is over, every thread closed and every release write settled.
 */
export function writeOnThreads(input: {
  threads: BuildThreadsOptions;
  collections: SnapshotCollections;
  countries: readonly string[];
  version: string;
  now: Date;
  workDir: string;
  release: Pick<ReleaseWriter, 'write'>;
  parquet?: ParquetWriterOptions;
  onFile: (path: string, rows: number) => void;
}): { countries: Promise<void>; metadata: Promise<MetadataResult> } {
  const count = Math.max(1, input.threads.count ?? BUILD_THREADS);
  // The metadata first, so that its bundle's gzip (on libuv's threads) overlaps the countries:
  // the media pass (eight files, the people), the seasons pass (the episodes), the small read
  // models (the bundle waits for their files too), then the countries. The media pass waits
  // for the seasons' counts at its end: on one thread, the seasons come first.
  const passes: BuildTask[] = count > 1 ? [{ kind: 'media' }, { kind: 'seasons' }] : [{ kind: 'seasons' }, { kind: 'media' }];
  const queue: BuildTask[] = [...passes, { kind: 'small' }, ...input.countries.map((country) => ({ kind: 'country' as const, country }))];
  const parts: MetadataPart[] = [];
  let metadataLeft = 3;
  let counts: PackedCounts | null = null;
  let mediaThread: Thread | null = null;
  let failure: { reason: unknown } | null = null;
  let nextTask = 0;
  let finishing = false;
  const writes: Array<Promise<unknown>> = [];
  const metadata = Promise.withResolvers<MetadataResult>();
  const countries = Promise.withResolvers<void>();
  metadata.promise.catch(() => {});

  const data: BuildWorkerData = {
    lmdb: input.threads.lmdb,
    linkKeys: input.threads.linkKeys,
    collections: input.collections,
    version: input.version,
    now: input.now.toISOString(),
    workDir: input.workDir,
    ...(input.parquet ? { parquet: input.parquet } : {}),
  };

  const fail = (reason: unknown): void => {
    if (failure !== null) return;
    failure = { reason };
    for (const t of threads) if (!t.gone) t.worker.postMessage({ type: 'stop', error: sendError(reason) } satisfies ToThread);
    // A thread normally ends its task at its next read; one that does not (stuck waiting for a
    // thread that died, say, in the unmap group) is ended, so that the build fails rather than hangs.
    setTimeout(() => {
      for (const t of threads) if (!t.gone) void t.worker.terminate();
    }, STOP_GRACE_MS).unref();
  };

  /** A release file from thread `t`: its chunks are handed to the release as they come. */
  function incoming(t: Thread, file: number, path: string): IncomingFile {
    const chunks: Uint8Array[] = [];
    let ended = false;
    let failed: { reason: unknown } | null = null;
    let wake: (() => void) | null = null;
    const poke = (): void => {
      const w = wake;
      wake = null;
      w?.();
    };
    async function* bytes(): AsyncGenerator<Uint8Array> {
      for (;;) {
        const chunk = chunks.shift();
        if (chunk !== undefined) {
          yield chunk;
          // Taken: the thread may send another (the release store's pace is the backpressure).
          if (!t.gone) t.worker.postMessage({ type: 'taken', file } satisfies ToThread);
          continue;
        }
        if (failed !== null) throw failed.reason;
        if (ended) return;
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
      }
    }
    writes.push(
      input.release.write(path, bytes()).then(
        (result) => {
          if (!t.gone) t.worker.postMessage({ type: 'written', file, result } satisfies ToThread);
        },
        (err: unknown) => {
          fail(err);
          if (!t.gone) t.worker.postMessage({ type: 'writeFailed', file, error: sendError(err) } satisfies ToThread);
        },
      ),
    );
    return {
      push(chunk) {
        chunks.push(chunk);
        poke();
      },
      end() {
        ended = true;
        poke();
      },
      fail(reason) {
        failed ??= { reason };
        poke();
      },
    };
  }

  function assign(t: Thread): void {
    const task = failure === null ? queue.shift() : undefined;
    if (task === undefined) {
      finish();
      return;
    }
    nextTask += 1;
    t.task = { id: nextTask, task };
    if (task.kind === 'media') mediaThread = t;
    t.worker.postMessage({ type: 'task', id: nextTask, task, ...(task.kind === 'media' && counts !== null ? { counts } : {}) } satisfies ToThread);
  }

  function done(t: Thread, result: TaskResult): void {
    const task = t.task?.task;
    t.task = null;
    if (task !== undefined && task.kind !== 'country') {
      if (result.part) parts.push(result.part);
      metadataLeft -= 1;
      if (task.kind === 'seasons' && result.counts) {
        counts = result.counts;
        if (mediaThread !== null && !mediaThread.gone) mediaThread.worker.postMessage({ type: 'counts', counts } satisfies ToThread);
      }
      if (task.kind === 'media') {
        const written = new Set(result.written ?? []);
        const rest = (result.languages ?? []).filter((language) => !written.has(language));
        if (rest.length > 0) {
          metadataLeft += 1;
          queue.unshift({ kind: 'translations', languages: rest });
        }
      }
      if (metadataLeft === 0 && failure === null) {
        try {
          metadata.resolve(metadataResult(parts));
        } catch (err) {
          fail(err);
        }
      }
    }
    assign(t);
  }

  /** Once no thread has a task: every thread closed, every write settled, then the outcome. */
  function finish(): void {
    if (finishing || threads.some((t) => t.task !== null && !t.gone)) return;
    finishing = true;
    for (const t of threads) if (!t.gone) t.worker.postMessage({ type: 'close' } satisfies ToThread);
    void (async () => {
      await Promise.all(threads.map((t) => t.exited));
      await Promise.allSettled(writes);
      if (failure === null && (metadataLeft > 0 || queue.length > 0)) failure = { reason: new AppError('internal', 'release build threads ended with work left') };
      if (failure !== null) {
        metadata.reject(failure.reason);
        countries.reject(failure.reason);
      } else countries.resolve();
    })();
  }

  function onMessage(t: Thread, msg: FromThread): void {
    switch (msg.type) {
      case 'ready':
        assign(t);
        return;
      case 'finished':
        input.onFile(msg.path, msg.rows);
        return;
      case 'write':
        t.files.set(msg.file, incoming(t, msg.file, msg.path));
        return;
      case 'chunk':
        t.files.get(msg.file)?.push(msg.chunk);
        return;
      case 'end':
        t.files.get(msg.file)?.end();
        t.files.delete(msg.file);
        return;
      case 'fail':
        t.files.get(msg.file)?.fail(receivedError(msg.error));
        t.files.delete(msg.file);
        return;
      case 'done':
        done(t, msg.result);
        return;
      case 'failed':
        fail(receivedError(msg.error));
        t.task = null;
        finish();
        return;
    }
  }

  /** A thread that ended: before it was told to close, it died, and the build fails with it. */
  function lost(t: Thread, reason: unknown): void {
    if (t.gone) return;
    t.gone = true;
    if (!finishing || t.files.size > 0) fail(reason);
    t.task = null;
    for (const file of t.files.values()) file.fail(reason);
    t.files.clear();
    finish();
  }

  const threads: Thread[] = [];
  for (let i = 0; i < count; i += 1) {
    // Node's own type stripping loads the thread's TypeScript (erasable syntax only, as
    // everything the thread imports is), with none of this thread's loaders (tsx): under them
    // each thread spent about a second of CPU starting, compiling through esbuild.
    const worker = new Worker(new URL('./buildWorkerMain.ts', import.meta.url), {
      workerData: data,
      // A profiled build profiles its threads too.
      execArgv: process.execArgv.filter((arg) => arg.startsWith('--cpu-prof')),
    });
    const exited = Promise.withResolvers<void>();
    const t: Thread = { worker, task: null, files: new Map(), exited: exited.promise, gone: false };
    worker.on('message', (msg: FromThread) => onMessage(t, msg));
    worker.on('error', (err) => lost(t, err));
    worker.on('exit', (code) => {
      lost(t, new AppError('internal', `a release build thread exited with code ${code}`));
      exited.resolve();
    });
    threads.push(t);
  }
  return { countries: countries.promise, metadata: metadata.promise };
}
