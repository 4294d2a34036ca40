/**
 * A release build thread (see buildThreads.ts): it opens its own store on the read models and
 * its own link-token codec, encodes its Parquet files itself, and runs the tasks it is handed
 * one at a time. Bundle files go to the work directory; release files go, chunk by chunk, to the
 * main thread, which hands them to the release.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { ReleaseFile, ReleaseWriter } from '../../contracts/ports.ts';
import { lmdbReadStore } from '../../infra/lmdb/readStore.ts';
import { createLinkTokens } from '../links/linkTokens.ts';
import {
  packCounts,
  receivedError,
  unpackCounts,
  sendError,
  type BuildTask,
  type BuildWorkerData,
  type FromThread,
  type TaskResult,
  type ToThread,
} from './buildThreads.ts';
import { tokenBatches, writeCountry } from './country.ts';
import { writeMediaFiles, writeSeasonFiles, writeSmallFiles, writeTranslationPasses, type MetadataInput } from './metadata.ts';
import { encodeOnHelper, encodeOnThisThread } from './parquetPool.ts';
import type { SeasonCounts } from './rows.ts';
import { stopOnFailure } from './scan.ts';

if (parentPort === null) throw new Error('buildWorkerMain.ts must run in a worker thread');
const port = parentPort;
const data = workerData as BuildWorkerData;
const post = (msg: FromThread, transfer: ArrayBuffer[] = []): void => port.postMessage(msg, transfer);

await encodeOnThisThread();
const store = lmdbReadStore(data.lmdb);
let stopped: { reason: unknown } | null = null;
const readStore = stopOnFailure(store, () => stopped);
const linkTokens = tokenBatches(createLinkTokens(data.linkKeys));
const now = new Date(data.now);
const finished = (path: string, rows: number): void => post({ type: 'finished', path, rows });

/** Chunks of one release file a thread may have sent and not seen taken. */
const CHUNKS_IN_FLIGHT = 2;

interface OutgoingFile {
  credits: number;
  wake: (() => void) | null;
  failure: unknown;
  written: PromiseWithResolvers<ReleaseFile>;
}
const outgoing = new Map<number, OutgoingFile>();
let nextFile = 0;

/** The release, through the main thread: a file's chunks are transferred as they come. */
const release: Pick<ReleaseWriter, 'write'> = {
  async write(path, bytes) {
    nextFile += 1;
    const file = nextFile;
    const state: OutgoingFile = { credits: CHUNKS_IN_FLIGHT, wake: null, failure: null, written: Promise.withResolvers<ReleaseFile>() };
    outgoing.set(file, state);
    const result = state.written.promise;
    post({ type: 'write', file, path });
    try {
      for await (const chunk of bytes instanceof Uint8Array ? [bytes] : bytes) {
        if (state.credits <= 0) {
          await new Promise<void>((resolve) => {
            state.wake = resolve;
          });
        }
        if (state.failure !== null) throw state.failure;
        state.credits -= 1;
        const own = chunk.byteOffset === 0 && chunk.byteLength === chunk.buffer.byteLength ? chunk : chunk.slice();
        post({ type: 'chunk', file, chunk: own }, [own.buffer as ArrayBuffer]);
      }
    } catch (err) {
      outgoing.delete(file);
      result.catch(() => {});
      post({ type: 'fail', file, error: sendError(err) });
      throw err;
    }
    post({ type: 'end', file });
    return result;
  },
};

/** The seasons' counts, for the media pass (from the task, or told once the seasons pass is over). */
let counts: { resolve: (c: ReadonlyMap<string, SeasonCounts>) => void; reject: (reason: unknown) => void } | null = null;
let countsTold: Map<string, SeasonCounts> | null = null;

async function run(task: BuildTask): Promise<TaskResult> {
  const metadata: MetadataInput = {
    readStore,
    collections: data.collections,
    workDir: data.workDir,
    release,
    onFile: finished,
    ...(data.parquet ? { parquet: data.parquet } : {}),
  };
  switch (task.kind) {
    case 'country':
      await writeCountry({ ...metadata, country: task.country, version: data.version, now, linkTokens, finished });
      return {};
    case 'seasons': {
      const { part, counts: seasonCounts } = await writeSeasonFiles(metadata);
      return { part, counts: packCounts(seasonCounts) };
    }
    case 'media': {
      const seasons = new Promise<ReadonlyMap<string, SeasonCounts>>((resolve, reject) => {
        if (countsTold !== null) resolve(countsTold);
        else if (stopped !== null) reject(stopped.reason);
        else counts = { resolve, reject };
      });
      // The largest task, which the other thread (done with everything else) would otherwise
      // wait for with a core idle: its files are encoded on a helper thread, so that its last
      // seconds take both cores (measured at 250,000 titles: this thread's share of the task
      // went from 11.5 to 7.5 s of CPU, the rest on the helper).
      return encodeOnHelper(() => writeMediaFiles(metadata, seasons));
    }
    case 'small':
      return { part: await writeSmallFiles(metadata) };
    case 'translations':
      return { part: await writeTranslationPasses(metadata, task.languages) };
  }
}

port.on('message', (msg: ToThread) => {
  switch (msg.type) {
    case 'task':
      if (msg.counts) countsTold = unpackCounts(msg.counts);
      run(msg.task).then(
        (result) => post({ type: 'done', id: msg.id, result }),
        (err: unknown) => post({ type: 'failed', id: msg.id, error: sendError(err) }),
      );
      return;
    case 'counts':
      countsTold = unpackCounts(msg.counts);
      counts?.resolve(countsTold);
      counts = null;
      return;
    case 'taken': {
      const state = outgoing.get(msg.file);
      if (state === undefined) return;
      state.credits += 1;
      state.wake?.();
      state.wake = null;
      return;
    }
    case 'written':
      outgoing.get(msg.file)?.written.resolve(msg.result);
      outgoing.delete(msg.file);
      return;
    case 'writeFailed': {
      const state = outgoing.get(msg.file);
      if (state === undefined) return;
      state.failure = receivedError(msg.error);
      state.written.reject(state.failure);
      state.wake?.();
      state.wake = null;
      outgoing.delete(msg.file);
      return;
    }
    case 'stop':
      stopped ??= { reason: receivedError(msg.error) };
      counts?.reject(stopped.reason);
      counts = null;
      return;
    case 'close':
      // The store's handle closed before the thread ends (the main thread waits for the exit).
      store.close().finally(() => process.exit(0));
      return;
  }
});
post({ type: 'ready' });
