/**
 * The weekly release: every file for every country of the providers read model, the metadata
 * bundle and the translation overlays, published at once with a manifest, then pruned to the
 * newest `keep` releases.
 *
 * Releases are immutable: building a week that is already published is a no-op that returns
 * the published manifest (`created: false`), so a scheduler may retry the weekly job freely.
 * A build that fails half-way leaves nothing visible (its staging directory is aborted).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppError, isAppError } from '../../contracts/errors.ts';
import type { Clock, ReadStore, ReleaseManifest, ReleaseStore } from '../../contracts/ports.ts';
import { METADATA_BUNDLE, SNAPSHOT_SCHEMA_VERSION } from '../../contracts/snapshotSchema.ts';
import {
  collectionsProjection,
  featuredProjection,
  genresProjection,
  linksProjection,
  mediaProjection,
  providersProjection,
  rankingsProjection,
  seasonsProjection,
  trendingProjection,
} from '../../projections/index.ts';
import { resolveCollection } from '../shared/readModels.ts';
import { writeOnThreads, type BuildThreadsOptions } from './buildThreads.ts';
import { tokenBatches, writeCountry } from './country.ts';
import { writeMetadata, type MetadataResult, type SnapshotCollections } from './metadata.ts';
import type { ParquetWriterOptions } from './parquet.ts';
import type { LinkTokenEncoder } from './rows.ts';
import { scanAll, stopOnFailure } from './scan.ts';
import { tarGzStream } from './tarball.ts';
import { releaseWeek, rfc3339 } from './week.ts';

export type { BuildThreadsOptions };

export const DEFAULT_RELEASES_KEEP = 8;

/**
 * `unmapAfterMb` of the LMDB read store a standalone build reads through (infra/lmdb/readStore.ts):
 * a build reads every document once, and without it ends with the whole read-model file resident
 * (912 MB of a 1.7 GB peak at 250,000 titles). Smaller costs more reopenings (a few ms each).
 */
export const BUILD_UNMAP_AFTER_MB = 192;

export interface BuildProgress {
  /** Release path of the file just finished (or `publish`). */
  file: string;
  rows: number;
  /** Files finished so far, and the count expected (it grows once the languages are known). */
  done: number;
  total: number;
}

export interface BuildReleaseOptions {
  readStore: ReadStore;
  releases: ReleaseStore;
  linkTokens: LinkTokenEncoder;
  clock: Clock;
  /** Release label `YYYY-Www`. Default: the ISO week of `clock.now()`. */
  week?: string;
  /** Releases kept after publishing. Default 8 (`RELEASES_KEEP`). */
  keep?: number;
  /** Where the metadata files are staged before bundling. Default a fresh directory under the OS temp dir. */
  workDir?: string;
  /** Row-group and batch sizes. Default parquet.ts's. */
  parquet?: ParquetWriterOptions;
  onProgress?: (progress: BuildProgress) => void;
  /**
   * Builds the files on threads of their own (buildThreads.ts), each reading the read models
   * through a store it opens itself, so that both cores read, make rows and tokens and encode;
   * this thread then only hands their bytes to `releases` and bundles the metadata. Absent:
   * everything but the Parquet encoding runs on this thread, through `readStore`.
   */
  threads?: BuildThreadsOptions;
}

export interface BuildReleaseResult {
  manifest: ReleaseManifest;
  /** false when the week was already published (nothing was written). */
  created: boolean;
  /** Rows per release path (metadata files by their name inside the bundle). */
  rowCounts: Record<string, number>;
  /** Versions removed by pruning. */
  pruned: string[];
  durationMs: number;
}

async function snapshotCollections(readStore: ReadStore): Promise<SnapshotCollections> {
  const of = (p: { name: string; version: number }) => resolveCollection(readStore, p);
  return {
    media: await of(mediaProjection),
    seasons: await of(seasonsProjection),
    links: await of(linksProjection),
    providers: await of(providersProjection),
    genres: await of(genresProjection),
    collections: await of(collectionsProjection),
    featured: await of(featuredProjection),
    rankings: await of(rankingsProjection),
    trending: await of(trendingProjection),
  };
}

/** Countries covered: those with providers (the providers model drops a country without any). */
async function coveredCountries(readStore: ReadStore, collection: string): Promise<string[]> {
  const countries: string[] = [];
  for await (const { key } of scanAll(readStore, collection)) countries.push(key);
  return countries;
}

export async function buildRelease(options: BuildReleaseOptions): Promise<BuildReleaseResult> {
  const started = Date.now();
  const { readStore, releases, clock } = options;
  const version = releaseWeek(options.week, clock); // before anything is written
  const existing = await releases.get(version);
  if (existing !== null) {
    return { manifest: existing, created: false, rowCounts: {}, pruned: [], durationMs: Date.now() - started };
  }

  // A week older than every release pruning keeps was built, published and pruned at once.
  const keep = options.keep ?? DEFAULT_RELEASES_KEEP;
  const newer = (await releases.list()).map((m) => m.version).filter((v) => v > version);
  if (newer.length >= keep) {
    throw new AppError('invalid_parameter', `release week ${version} would be pruned as soon as published: the newest ${keep} releases are kept (RELEASES_KEEP), and ${newer.slice(0, keep).join(', ')} are newer`, {
      details: { parameter: 'week' },
    });
  }

  const collections = await snapshotCollections(readStore);
  const countries = await coveredCountries(readStore, collections.providers);
  const rowCounts: Record<string, number> = {};
  let done = 0;
  let total = countries.length * 4 + 1;
  const finished = (file: string, rows: number): void => {
    rowCounts[file] = rows;
    done += 1;
    options.onProgress?.({ file, rows, done, total });
  };

  /**
   * Another build of the same week (a scheduler, `snapshot build` by hand) published it after
   * this one looked: the week is released, as when it is found published at the start. Any other
   * error is thrown.
   */
  const publishedMeanwhile = async (err: unknown): Promise<BuildReleaseResult> => {
    const published = isAppError(err, 'forbidden') ? await releases.get(version) : null;
    if (published === null) throw err;
    return { manifest: published, created: false, rowCounts: {}, pruned: [], durationMs: Date.now() - started };
  };
  let release: Awaited<ReturnType<ReleaseStore['begin']>>;
  try {
    release = await releases.begin(version);
  } catch (err) {
    return await publishedMeanwhile(err);
  }
  const workDir = options.workDir ?? (await mkdtemp(join(tmpdir(), `marquee-snapshot-${version}-`)));
  // The trending lists end at the build's start (in every country alike).
  const now = clock.now();
  const onFile = (path: string, rows: number): void => {
    if (path.startsWith('metadata/translations/')) {
      total += 1;
      finished(path, rows);
    } else if (path.includes('/')) {
      finished(path, rows);
    } else {
      rowCounts[path] = rows;
    }
  };
  try {
    // The countries and the metadata are written at once, each file's rows in order, so the
    // bytes do not depend on how they interleave; the manifest lists files sorted. The first
    // failure stops the rest at their next read. Without threads, as two tasks on this thread:
    // while one waits for the encoding threads (parquetPool.ts) the other makes rows.
    let failed: { reason: unknown } | null = null;
    const noteFailure = (err: unknown): never => {
      failed ??= { reason: err };
      throw err;
    };
    let written: { countries: Promise<void>; metadata: Promise<MetadataResult> };
    if (options.threads) {
      written = writeOnThreads({
        threads: options.threads,
        collections,
        countries,
        version,
        now,
        workDir,
        release,
        onFile,
        ...(options.parquet ? { parquet: options.parquet } : {}),
      });
    } else {
      const reads = stopOnFailure(readStore, () => failed);
      const linkTokens = tokenBatches(options.linkTokens);
      const parquet = options.parquet ? { parquet: options.parquet } : {};
      written = {
        countries: (async () => {
          for (const country of countries) {
            await writeCountry({ readStore: reads, release, collections, country, version, now, linkTokens, finished: onFile, ...parquet });
          }
        })().catch(noteFailure),
        metadata: writeMetadata({ readStore: reads, collections, workDir, release, onFile, ...parquet }).catch(noteFailure),
      };
    }
    // The bundle's gzip (on libuv's threads) overlaps the countries.
    const metadataDone = written.metadata.then(async (metadata) => {
      const bundle = await release.write(METADATA_BUNDLE, tarGzStream(metadata.bundle, clock.now()));
      return { bundle, rows: Object.values(metadata.rowCounts).reduce((a, b) => a + b, 0) };
    });
    // Both run to their end before a failure is thrown: the release is aborted (its staging
    // removed) only once nothing writes to it any more.
    const [countriesResult, metadataResult] = await Promise.allSettled([written.countries, metadataDone]);
    if (countriesResult.status === 'rejected') throw countriesResult.reason;
    if (metadataResult.status === 'rejected') throw metadataResult.reason;
    finished(metadataResult.value.bundle.path, metadataResult.value.rows);
    let manifest: ReleaseManifest;
    try {
      manifest = await release.publish({ publishedAt: rfc3339(clock.now()), countries, schemaVersion: SNAPSHOT_SCHEMA_VERSION });
    } catch (err) {
      const published = await publishedMeanwhile(err);
      await release.abort().catch(() => {});
      return published;
    }
    const pruned = await releases.prune(keep);
    return { manifest, created: true, rowCounts, pruned, durationMs: Date.now() - started };
  } catch (err) {
    await release.abort().catch(() => {});
    throw err;
  } finally {
    if (options.workDir === undefined) await rm(workDir, { recursive: true, force: true });
  }
}
