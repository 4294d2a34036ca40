/** What every ReleaseStore adapter does the same way: the manifest's shape and order, and range checks. */
import { AppError } from '../../contracts/errors.ts';
import type { ReleaseFile, ReleaseManifest, ReleaseWriter } from '../../contracts/ports.ts';

/** The manifest of a release: countries and files sorted, so two builds of the same data agree byte for byte. */
export function releaseManifest(version: string, meta: Parameters<ReleaseWriter['publish']>[0], files: Iterable<ReleaseFile>): ReleaseManifest {
  return {
    version,
    publishedAt: meta.publishedAt,
    countries: [...meta.countries].sort(),
    files: [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)),
    ...(meta.schemaVersion === undefined ? {} : { schemaVersion: meta.schemaVersion }),
  };
}

/** Newest first: labels `YYYY-Www` order like the weeks they name. */
export function byVersionDesc(a: ReleaseManifest, b: ReleaseManifest): number {
  return a.version < b.version ? 1 : a.version > b.version ? -1 : 0;
}

/** Throws `invalid_parameter` unless [start, end] lies inside the file. */
export function checkRange(entry: ReleaseFile, range: { start: number; end: number }): void {
  const { start, end } = range;
  if (!Number.isInteger(start) || !Number.isInteger(end) || start < 0 || end < start || end >= entry.sizeBytes) {
    throw new AppError('invalid_parameter', `Range ${start}-${end} is outside ${entry.path} (${entry.sizeBytes} bytes).`);
  }
}
