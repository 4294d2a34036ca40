/**
 * metadata.tar.gz: the metadata Parquet files, streamed from disk through tar and gzip into
 * the release (never buffered whole). Headers are fixed (mode, owner, mtime = the release's
 * publication time) so the bundle depends only on its files.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, stat } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { PassThrough } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';
import { extract, pack } from 'tar-stream';

export interface TarEntry {
  /** Name inside the archive. */
  name: string;
  /** File on disk. */
  file: string;
}

/** A gzip'd tar of `entries`, in the order given, as a byte stream. */
export function tarGzStream(entries: readonly TarEntry[], mtime: Date): AsyncIterable<Uint8Array> {
  const tar = pack();
  const out = new PassThrough();
  const gzip = createGzip({ level: 6 });
  const feeding = (async () => {
    for (const entry of entries) {
      const { size } = await stat(entry.file);
      const sink = tar.entry({ name: entry.name, size, mtime, mode: 0o644, uid: 0, gid: 0, uname: '', gname: '', type: 'file' });
      await pipeline(createReadStream(entry.file), sink);
    }
    tar.finalize();
  })();
  feeding.catch((err: unknown) => tar.destroy(err as Error));
  pipeline(tar, gzip, out).catch((err: unknown) => out.destroy(err as Error));
  return out;
}

/**
 * Extracts a .tar.gz (a metadata bundle) into `dir`; returns the entry names in archive
 * order. For tools and tests; entries that would land outside `dir` are refused.
 */
export async function extractTarGz(file: string, dir: string): Promise<string[]> {
  const root = resolve(dir);
  const names: string[] = [];
  const tar = extract();
  tar.on('entry', (header, stream, next) => {
    const target = resolve(join(root, header.name));
    if (!target.startsWith(root + sep) || header.type !== 'file') {
      stream.resume();
      next(new Error(`refusing tar entry ${header.name}`));
      return;
    }
    names.push(header.name);
    mkdir(dirname(target), { recursive: true })
      .then(() => pipeline(stream, createWriteStream(target)))
      .then(() => next(), (err: unknown) => next(err as Error));
  });
  await pipeline(createReadStream(file), createGunzip(), tar);
  return names;
}
