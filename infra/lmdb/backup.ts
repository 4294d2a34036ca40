/**
 * A consistent copy of a data directory's LMDB environment, taken while other processes go on
 * writing to it: LMDB's own copy (`mdb_env_copy2` through lmdb-js `backup`) reads every page in
 * one read transaction, so the copy is the environment as of one commit. Copying `data.mdb`
 * with `cp` instead reads pages while commits rewrite them: a copy taken during ingest can hold
 * half a commit, and a copy cut short kills the process that maps it at its first read past the
 * end (SIGBUS).
 *
 * Compacted: free pages are left out (pages LMDB keeps for reuse after the inbox's retention
 * removed records, or a replay dropped a collection), so the copy is no larger than the data.
 */
import { mkdirSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { AppError } from '../../contracts/errors.ts';
import { openLmdbHandle } from './env.ts';

export interface LmdbBackupResult {
  /** Size of the copy's data file, in bytes. */
  bytes: number;
  /** Size of the environment's used pages when the copy began (the copy is at most this). */
  usedBytes: number;
}

/**
 * Copies `<dataDir>/lmdb` to `<outDir>/lmdb`, an empty or new directory. `onProgress` gets the
 * bytes written so far and the used size of the source, every `everyMs` while the copy runs
 * (a native call with no progress of its own: the copy's file size is what moves).
 */
export async function backupLmdb(
  dataDir: string,
  outDir: string,
  onProgress?: (written: number, used: number) => void,
  everyMs = 250,
): Promise<LmdbBackupResult> {
  const source = join(dataDir, 'lmdb');
  if (!existsDir(source)) {
    throw new AppError('not_found', `${source} does not exist: ${dataDir} holds no embedded data (is DATA_DIR right?)`, { retriable: false });
  }
  const target = join(outDir, 'lmdb');
  mkdirSync(target, { recursive: true });
  if (readdirSync(target).length > 0) throw new AppError('internal', `${target} is not empty: a backup never writes over files`, { retriable: false });
  const root = openLmdbHandle({ dataDir });
  const file = join(target, 'data.mdb');
  try {
    const { lastPageNumber, pageSize } = root.getStats() as { lastPageNumber: number; pageSize: number };
    const usedBytes = (lastPageNumber + 1) * pageSize;
    const tick = onProgress ? setInterval(() => onProgress(sizeOf(file), usedBytes), everyMs) : null;
    try {
      await root.backup(target, true);
    } catch (err) {
      // The system's words (`File too large`, `No space left on device`) are what the operator
      // needs, and lmdb-js gives nothing else; lmdbError would say only "unavailable".
      throw new AppError('unavailable', `the copy of ${source} to ${target} failed: ${(err as Error).message}`, { cause: err, retriable: false });
    } finally {
      if (tick) clearInterval(tick);
    }
    const bytes = sizeOf(file);
    onProgress?.(bytes, usedBytes);
    return { bytes, usedBytes };
  } finally {
    await root.close();
  }
}

function sizeOf(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

function existsDir(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
