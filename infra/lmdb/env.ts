/**
 * One LMDB environment per data directory, shared by the event store, the inbox and the read
 * store. LMDB allows several processes on one environment (a CLI appends while the server
 * runs), each opening its own named databases inside it.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { open, type RootDatabase } from 'lmdb';
import { isCommitFailure } from './errors.ts';

export interface LmdbOptions {
  /** Data directory; the environment lives in `<dataDir>/lmdb`. */
  dataDir: string;
  /** Upper bound of the memory map; LMDB grows the file up to it. Default 64 GiB (sparse). */
  mapSize?: number;
}

const opened = new Map<string, { root: RootDatabase; refs: number }>();

/** Opens (or shares, within this process) the environment of a data directory. */
export function openLmdb(options: LmdbOptions): RootDatabase {
  const path = join(options.dataDir, 'lmdb');
  const existing = opened.get(path);
  if (existing) {
    existing.refs += 1;
    return existing.root;
  }
  const root = openHandle(path, options);
  opened.set(path, { root, refs: 1 });
  return root;
}

/**
 * A handle of its own on the environment, outside the sharing above: its owner closes it
 * (`root.close()`) when it likes. lmdb-js still shares the native environment with every other
 * handle of the process on the same file, so closing this one unmaps the file (and drops its
 * pages from the process's resident memory) only when no other handle is open.
 */
export function openLmdbHandle(options: LmdbOptions): RootDatabase {
  return openHandle(join(options.dataDir, 'lmdb'), options);
}

let commitFailuresHandled = false;

/**
 * When a commit fails (a full disk, an I/O error), lmdb-js rejects promises that no caller can
 * await: the commit promise of each batch it starts on its own, and the commit's error, hung on
 * every failed write as `commitError`. Unhandled, either ends the process, though each write of
 * that commit also fails through the promise its caller awaits, which maps the error and reports
 * it (seen: `start --sample` on a full disk died with lmdb-js's own stack and no word of ours;
 * known upstream, kriszyp/lmdb-js#294). Those two are dropped here, once per thread; any other
 * unhandled rejection still ends the process, as Node's default does.
 */
function handleCommitFailures(): void {
  if (commitFailuresHandled) return;
  commitFailuresHandled = true;
  process.on('unhandledRejection', (reason) => {
    if (!isCommitFailure(reason)) throw reason;
    reason.commitError.catch(() => {});
  });
}

function openHandle(path: string, options: LmdbOptions): RootDatabase {
  handleCommitFailures();
  mkdirSync(path, { recursive: true });
  return open({
    path,
    maxDbs: 256,
    mapSize: options.mapSize ?? 64 * 1024 ** 3,
    // Durable when a write resolves: every commit is fsync'd (no noSync, no overlapping sync).
    overlappingSync: false,
  });
}

/** Releases one reference; the last one closes the environment. */
export async function closeLmdb(dataDir: string): Promise<void> {
  const path = join(dataDir, 'lmdb');
  const entry = opened.get(path);
  if (!entry) return;
  entry.refs -= 1;
  if (entry.refs > 0) return;
  opened.delete(path);
  await entry.root.close();
}
