/**
 * Child process of bench/snapshot.ts: the pure write phase, measured the way DuckDB's is, and
 * handed out the way a release build hands out its work (services/snapshot/buildThreads.ts):
 * the release's files grouped into the build's tasks (the media pass, the seasons pass, the
 * small read models, each country), the tasks in the build's order, each to the first of
 * PARQUET_WORKERS threads free, and each thread writing its task's files as the build writes
 * them: together where the build's pass feeds them together (their rows interleaved), the media
 * pass encoded on a helper thread (parquetPool.ts `encodeOnHelper`).
 *
 * Every thread first reads back, untimed, the rows of every task it may be handed (the first
 * task of each thread is known; any later one may go to either thread, so both read those) as
 * the plain rows our writer takes. Then the tasks are written, timed together: the wall clock
 * from the first task handed out to the last file closed, and the CPU of every thread of the
 * process (the helper's included) over the same span.
 * DuckDB gets the same treatment in the parent: read the file into a table, time the COPY.
 * Prints one JSON line: write time, CPU, bytes, rows, and each task's time and thread.
 * Usage: node --import tsx bench/_snapshotWrite.ts <outDir> <file.parquet>...
 */
import { once } from 'node:events';
import { basename, dirname } from 'node:path';
import { Worker } from 'node:worker_threads';
import { PARQUET_WORKERS } from '../services/snapshot/parquetPool.ts';
import { TRANSLATIONS_PER_PASS } from '../services/snapshot/metadata.ts';

const [outDir, ...files] = process.argv.slice(2);
if (!outDir || files.length === 0) throw new Error('usage: _snapshotWrite.ts <outDir> <file.parquet>...');

/**
 * One task of a build: `groups` are written one after the other; the files of a group are
 * written together, their rows interleaved, as one pass of the build feeds them.
 */
export interface WriteTask {
  name: string;
  groups: string[][];
  /** Its files encoded on a helper thread, as the build's media pass (buildWorkerMain.ts). */
  helper: boolean;
}

/** Messages to a thread of _snapshotWriteThread.ts, and its answers. */
export type ToWriteThread = { read: WriteTask[] } | { write: WriteTask; outDir: string } | { close: true };
export type FromWriteThread = { ready: true } | { read: number; heapMb: number } | { wrote: string; ms: number; cpuMs: number; rows: number; bytes: number };

// The build's tasks, named by the files they write (metadata.ts, country.ts).
const named = new Map(files.map((file) => [basename(dirname(file)).startsWith('country=') ? `${basename(dirname(file))}/${basename(file)}` : basename(file), file]));
const taken = new Set<string>();
const pick = (...names: string[]): string[] =>
  names.flatMap((name) => {
    const file = named.get(name);
    if (file === undefined) return [];
    taken.add(name);
    return [file];
  });
const languages = [...named.keys()].filter((name) => /^lang_.*\.parquet$/.test(name)).sort();
// The media pass writes the overlays of the first TRANSLATIONS_PER_PASS languages it meets; the
// others take passes of their own (a task the build queues first once the media pass is over).
const early = languages.slice(0, TRANSLATIONS_PER_PASS);
const media: WriteTask = {
  name: 'media',
  helper: true,
  groups: [
    pick('media_details.parquet', 'movies.parquet', 'media_genres.parquet', 'media_ids.parquet', 'media_ratings.parquet', 'media_videos.parquet', 'media_talents.parquet', ...early),
    pick('peoples.parquet'),
    pick('tv_shows.parquet'),
  ],
};
const seasons: WriteTask = { name: 'seasons', helper: false, groups: [pick('seasons.parquet', 'episodes.parquet')] };
const small: WriteTask = {
  name: 'small',
  helper: false,
  groups: [pick('genres.parquet'), pick('providers.parquet', 'provider_weights.parquet'), pick('collections.parquet'), pick('featured.parquet')],
};
const countries: WriteTask[] = [...new Set([...named.keys()].filter((name) => name.startsWith('country=')).map((name) => name.split('/')[0] as string))]
  .sort()
  .map((country) => ({
    name: country,
    helper: false,
    groups: ['links', 'rankings', 'trending', 'changes'].map((file) => pick(`${country}/${file}.parquet`)),
  }));
const rest = languages.slice(TRANSLATIONS_PER_PASS);
const translations: WriteTask[] = [];
for (let i = 0; i < rest.length; i += TRANSLATIONS_PER_PASS) translations.push({ name: `translations-${i}`, helper: false, groups: [pick(...rest.slice(i, i + TRANSLATIONS_PER_PASS))] });
const left = [...named.keys()].filter((name) => !taken.has(name));
if (left.length > 0) throw new Error(`no build task writes ${left.join(', ')}`);
for (const task of [media, seasons, small, ...countries, ...translations]) task.groups = task.groups.filter((group) => group.length > 0);

/** Sends one message to a thread and waits for its answer. */
async function ask(worker: Worker, message: ToWriteThread): Promise<FromWriteThread> {
  worker.postMessage(message);
  const [answer] = (await once(worker, 'message')) as [FromWriteThread];
  return answer;
}

const threads = await Promise.all(
  Array.from({ length: PARQUET_WORKERS }, async () => {
    const worker = new Worker(new URL('./_snapshotWriteWorker.mjs', import.meta.url));
    await once(worker, 'message');
    return worker;
  }),
);
// As buildThreads.ts: the media and seasons passes first (the seasons first on one thread), one
// to each thread as it starts; then the small read models and the countries, each to the first
// thread free. The media pass's leftover languages come first once it is over.
const first = threads.length > 1 ? [media, seasons] : [seasons, media];
const later = [small, ...countries];
const opening = first.slice(0, threads.length);
const queue = [...first.slice(threads.length), ...later];
const heapMb = await Promise.all(
  threads.map(async (thread, k) => {
    const answer = await ask(thread, { read: [opening[k] as WriteTask, ...queue, ...translations] });
    if (!('heapMb' in answer)) throw new Error('a write thread did not read its rows');
    return answer.heapMb;
  }),
);
process.stderr.write(`  rows read back: ${heapMb.map((mb) => `${mb} MB`).join(', ')} of heap per thread\n`);

const perTask: Record<string, { thread: number; ms: number; cpu_ms: number }> = {};
let bytes = 0;
let rowCount = 0;
const started = performance.now();
const cpuBefore = process.cpuUsage();
await Promise.all(
  threads.map(async (thread, k) => {
    for (let task = opening[k]; task !== undefined; task = queue.shift()) {
      const answer = await ask(thread, { write: task, outDir });
      if (!('wrote' in answer)) throw new Error(`a write thread did not write ${task.name}`);
      perTask[task.name] = { thread: k, ms: Math.round(answer.ms), cpu_ms: Math.round(answer.cpuMs) };
      bytes += answer.bytes;
      rowCount += answer.rows;
      process.stderr.write(`  write ${task.name} on thread ${k}: ${answer.rows} rows ${Math.round(answer.ms)} ms\n`);
      if (task === media) queue.unshift(...translations);
    }
  }),
);
const writeMs = performance.now() - started;
const cpu = process.cpuUsage(cpuBefore);
for (const thread of threads) thread.postMessage({ close: true } satisfies ToWriteThread);
console.log(JSON.stringify({ write_ms: Math.round(writeMs), write_cpu_ms: Math.round((cpu.user + cpu.system) / 1000), bytes, rows: rowCount, thread_rows_heap_mb: heapMb, per_task_ms: perTask }));
