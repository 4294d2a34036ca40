/**
 * ReleaseStore on a local directory.
 *
 *   <dir>/<version>/manifest.json, <dir>/<version>/<files...>   published releases
 *   <dir>/.staging/<version>.<pid>.<random>/                      releases being written
 *
 * A release is written into its staging directory and published by one rename, with its
 * manifest already inside: readers see either no release or the whole of it. A published
 * directory is never written again (immutability), and pruning renames a release out of the
 * way before deleting it, so a reader never sees half a release.
 *
 * Reads serve only exact manifest entries; the resolved path must stay inside the release
 * directory and no component of it may be a symlink, so neither `..`, absolute paths nor a
 * planted symlink ever reach a file outside the release.
 */
import { createHash, randomBytes } from 'node:crypto';
import { constants, readFileSync } from 'node:fs';
import { lstat, mkdir, open, readdir, readFile, rename, rm, type FileHandle } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { AppError, isAppError } from '../../contracts/errors.ts';
import type { ReleaseFile, ReleaseManifest, ReleaseStore, ReleaseWriter } from '../../contracts/ports.ts';
import { RELEASE_VERSION_PATTERN, isReleasePath } from '../../contracts/snapshotSchema.ts';
import { byVersionDesc, checkRange, releaseManifest } from './manifest.ts';

export interface FsReleaseStoreOptions {
  /** Root directory of the releases; created when missing. */
  dir: string;
}

const MANIFEST = 'manifest.json';
const STAGING = '.staging';

function notFound(what: string): AppError {
  return new AppError('not_found', what);
}

function ioError(err: unknown, what: string): AppError {
  if (isAppError(err)) return err;
  // The system's own words (`ENOSPC: no space left on device, write`): the operator who reads
  // the line needs them. API answers of 5xx never show a message.
  const system = typeof (err as { code?: unknown } | null)?.code === 'string' && err instanceof Error ? `: ${err.message}` : '';
  return new AppError('unavailable', `release store: ${what} failed${system}`, { cause: err, retriable: true });
}

function isMissing(err: unknown): boolean {
  return (err as { code?: unknown })?.code === 'ENOENT' || (err as { code?: unknown })?.code === 'ENOTDIR';
}

export function fsReleaseStore(options: FsReleaseStoreOptions): ReleaseStore {
  const root = resolve(options.dir);

  async function readManifest(version: string): Promise<ReleaseManifest | null> {
    if (!RELEASE_VERSION_PATTERN.test(version)) return null;
    try {
      const text = await readFile(join(root, version, MANIFEST), 'utf8');
      return JSON.parse(text) as ReleaseManifest;
    } catch (err) {
      if (isMissing(err)) return null;
      throw ioError(err, `reading the manifest of ${version}`);
    }
  }

  async function list(): Promise<ReleaseManifest[]> {
    let names: string[];
    try {
      names = await readdir(root);
    } catch (err) {
      if (isMissing(err)) return [];
      throw ioError(err, 'listing releases');
    }
    const manifests = await Promise.all(names.filter((n) => RELEASE_VERSION_PATTERN.test(n)).map(readManifest));
    return manifests.filter((m): m is ReleaseManifest => m !== null).sort(byVersionDesc);
  }

  /** The file of a manifest entry, refusing anything that is not plainly inside the release. */
  async function openEntry(version: string, path: string): Promise<{ handle: FileHandle; entry: ReleaseFile }> {
    const manifest = await readManifest(version);
    if (manifest === null) throw notFound(`Release ${version} not found.`);
    const entry = isReleasePath(path) ? manifest.files.find((f) => f.path === path) : undefined;
    if (!entry) throw notFound(`${path} is not a file of release ${version}.`);
    const releaseDir = join(root, version);
    const full = resolve(releaseDir, path);
    if (!full.startsWith(releaseDir + sep)) throw notFound(`${path} is not a file of release ${version}.`);
    // No symlink anywhere from the release directory down (O_NOFOLLOW covers only the last).
    let current = releaseDir;
    for (const segment of ['', ...path.split('/')]) {
      current = segment === '' ? current : join(current, segment);
      const info = await lstat(current).catch((err: unknown) => {
        if (isMissing(err)) throw notFound(`${path} is missing from release ${version}.`);
        throw ioError(err, `checking ${path}`);
      });
      if (info.isSymbolicLink()) throw notFound(`${path} is not a file of release ${version}.`);
    }
    let handle: FileHandle;
    try {
      handle = await open(full, constants.O_RDONLY | constants.O_NOFOLLOW);
    } catch (err) {
      if (isMissing(err) || (err as { code?: unknown })?.code === 'ELOOP') throw notFound(`${path} is not a file of release ${version}.`);
      throw ioError(err, `opening ${path}`);
    }
    const info = await handle.stat();
    if (!info.isFile() || info.size !== entry.sizeBytes) {
      await handle.close();
      throw new AppError('internal', `${version}/${path} does not match its manifest entry`);
    }
    return { handle, entry };
  }

  return {
    async begin(version) {
      if (!RELEASE_VERSION_PATTERN.test(version)) {
        throw new AppError('invalid_parameter', `Not a release version: ${version}`, { details: { parameter: 'version' } });
      }
      if ((await readManifest(version)) !== null) {
        throw new AppError('forbidden', `Release ${version} is already published; releases are immutable.`);
      }
      // A build of this week killed before its end left its staging behind; it is built anew.
      await removeOrphanedStaging(join(root, STAGING), version);
      const staging = join(root, STAGING, `${version}.${process.pid}.${randomBytes(6).toString('hex')}`);
      try {
        await mkdir(staging, { recursive: true });
      } catch (err) {
        throw ioError(err, `creating the staging directory of ${version}`);
      }
      ownStaging.add(staging);
      return stagingWriter(root, version, staging);
    },
    list,
    async latest() {
      return (await list())[0] ?? null;
    },
    get: readManifest,
    async read(version, path, range) {
      const { handle, entry } = await openEntry(version, path);
      if (range !== undefined) {
        try {
          checkRange(entry, range);
        } catch (err) {
          await handle.close();
          throw err;
        }
        return handle.createReadStream({ start: range.start, end: range.end, autoClose: true });
      }
      return handle.createReadStream({ autoClose: true });
    },
    async prune(keep) {
      const releases = await list();
      const removed: string[] = [];
      for (const manifest of releases.slice(Math.max(0, keep))) {
        const trash = join(root, STAGING, `pruned-${manifest.version}.${randomBytes(6).toString('hex')}`);
        try {
          await mkdir(join(root, STAGING), { recursive: true });
          // The rename is the removal readers see; deleting the bytes comes after.
          await rename(join(root, manifest.version), trash);
          await rm(trash, { recursive: true, force: true });
        } catch (err) {
          throw ioError(err, `pruning ${manifest.version}`);
        }
        removed.push(manifest.version);
      }
      await removeAbandonedStaging(join(root, STAGING));
      return removed;
    },
  };
}

/** Staging directories this process is writing (the others named with its pid are a previous incarnation's). */
const ownStaging = new Set<string>();

/**
 * Removes the staging directories of `version` whose build process is gone (SIGKILL, a crash):
 * nothing will ever finish them. The directory name carries the builder's pid; a live pid
 * (another process building the same week) is left alone.
 */
async function removeOrphanedStaging(dir: string, version: string): Promise<void> {
  const names = await readdir(dir).catch(() => [] as string[]);
  for (const name of names) {
    const m = /^(.+)\.(\d+)\.[0-9a-f]+$/.exec(name);
    if (m === null || m[1] !== version) continue;
    const path = join(dir, name);
    const pid = Number(m[2]);
    if (ownStaging.has(path) || (pid !== process.pid && isAlive(pid))) continue;
    await rm(path, { recursive: true, force: true }).catch(() => {});
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    // EPERM: it exists but belongs to someone else.
    return (err as { code?: unknown }).code === 'EPERM';
  }
  // A killed builder whose parent died too can linger as a zombie where nothing reaps orphans
  // (a container whose first process is not an init): signal 0 still reaches it, but it builds
  // nothing. Linux says so in /proc; elsewhere the signal's answer stands.
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true;
  }
}

/**
 * Writes all of `chunk`. One `write` may write less than it was given and say so (a file size
 * limit, a disk that fills half-way through the chunk): taken as done, the file was cut short
 * while its manifest entry gave the whole size and hash (seen: a 32 MB file written as 20 MB
 * under a 20 MB limit, no error). Writing the rest again meets the real error.
 */
async function writeAll(handle: FileHandle, chunk: Uint8Array): Promise<void> {
  for (let at = 0; at < chunk.byteLength; ) {
    const { bytesWritten } = await handle.write(chunk, at, chunk.byteLength - at);
    if (bytesWritten === 0) throw new AppError('unavailable', 'the file system accepted no byte of a write', { retriable: true });
    at += bytesWritten;
  }
}

/** A build that crashed leaves its staging directory; one untouched for a day is abandoned. */
const ABANDONED_MS = 24 * 3600 * 1000;

async function removeAbandonedStaging(staging: string): Promise<void> {
  const names = await readdir(staging).catch(() => [] as string[]);
  for (const name of names) {
    const path = join(staging, name);
    const info = await lstat(path).catch(() => null);
    if (info !== null && Date.now() - info.mtimeMs > ABANDONED_MS) await rm(path, { recursive: true, force: true }).catch(() => {});
  }
}

function stagingWriter(root: string, version: string, staging: string): ReleaseWriter {
  const files = new Map<string, ReleaseFile>();
  let finished = false;

  function ensureWritable(): void {
    if (finished) throw new AppError('internal', `release ${version} is already published or aborted`);
  }

  return {
    async write(path, data) {
      ensureWritable();
      if (!isReleasePath(path) || path === MANIFEST) {
        throw new AppError('internal', `not a valid release file path: ${JSON.stringify(path)}`);
      }
      if (files.has(path)) throw new AppError('internal', `${path} was already written to release ${version}`);
      const full = join(staging, path);
      const hash = createHash('sha256');
      let size = 0;
      let handle: FileHandle | null = null;
      try {
        await mkdir(dirname(full), { recursive: true });
        handle = await open(full, 'wx');
        const chunks: AsyncIterable<Uint8Array> | Uint8Array[] = data instanceof Uint8Array ? [data] : data;
        for await (const chunk of chunks) {
          hash.update(chunk);
          size += chunk.byteLength;
          await writeAll(handle, chunk);
        }
        await handle.sync();
      } catch (err) {
        throw ioError(err, `writing ${path}`);
      } finally {
        await handle?.close();
      }
      const file: ReleaseFile = { path, sizeBytes: size, sha256: hash.digest('hex') };
      files.set(path, file);
      return file;
    },
    async publish(meta) {
      ensureWritable();
      const manifest = releaseManifest(version, meta, files.values());
      const target = join(root, version);
      try {
        const handle = await open(join(staging, MANIFEST), 'wx');
        try {
          await handle.writeFile(`${JSON.stringify(manifest, null, 2)}\n`);
          await handle.sync();
        } finally {
          await handle.close();
        }
        // rename() of a directory onto an existing non-empty one fails: a concurrent build of
        // the same week cannot replace a published release.
        await rename(staging, target);
      } catch (err) {
        await rm(staging, { recursive: true, force: true }).catch(() => {});
        finished = true;
        ownStaging.delete(staging);
        const code = (err as { code?: unknown })?.code;
        if (code === 'ENOTEMPTY' || code === 'EEXIST') {
          throw new AppError('forbidden', `Release ${version} is already published; releases are immutable.`);
        }
        throw ioError(err, `publishing ${version}`);
      }
      finished = true;
      ownStaging.delete(staging);
      await syncDir(root);
      return manifest;
    },
    async abort() {
      finished = true;
      ownStaging.delete(staging);
      await rm(staging, { recursive: true, force: true });
    },
  };
}

/** fsync a directory so the rename that published a release survives a crash. */
async function syncDir(dir: string): Promise<void> {
  try {
    const handle = await open(dir, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // Some filesystems refuse fsync on directories; the rename is still atomic.
  }
}
