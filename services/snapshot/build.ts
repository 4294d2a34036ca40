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
import type { Clock, ReadStore, ReleaseManifest, ReleaseStore, ReleaseWriter } from '../../contracts/ports.ts';
import type { LinksDoc, RankingHeadDoc, RankingRowDoc, TrendingDoc } from '../../contracts/readModels.ts';
import {
  CHANGES_FILE,
  LINKS_FILE,
  METADATA_BUNDLE,
  RANKINGS_FILE,
  SNAPSHOT_SCHEMA_VERSION,
  TRENDING_FILE,
  releasePaths,
  type SnapshotFileSchema,
} from '../../contracts/snapshotSchema.ts';
import {
  collectionsProjection,
  featuredProjection,
  genresProjection,
  linksProjection,
  mediaProjection,
  providersProjection,
  rankingsProjection,
  rankingRowPrefix,
  seasonsProjection,
  trendingProjection,
} from '../../projections/index.ts';
import { linksKey } from '../../projections/links.ts';
import { trendingKey } from '../../projections/trending.ts';
import { resolveCollection } from '../shared/readModels.ts';
import { changeRows } from './changes.ts';
import { writeMetadata, type SnapshotCollections } from './metadata.ts';
import type { SnapshotRow } from './arrowSchema.ts';
import { openParquetWriter, writeParquetRows, type ParquetWriterOptions } from './parquet.ts';
import { linkRows, rankingRows, trendingRows, type LinkTokenEncoder } from './rows.ts';
import { scanAll, scanPages } from './scan.ts';
import { tarGzStream } from './tarball.ts';
import { isoWeekLabel, rfc3339, trendingDays, weekStart } from './week.ts';

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
  const version = options.week ?? isoWeekLabel(clock.now());
  weekStart(version); // refuses a malformed label before anything is written
  const existing = await releases.get(version);
  if (existing !== null) {
    return { manifest: existing, created: false, rowCounts: {}, pruned: [], durationMs: Date.now() - started };
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

  const release = await releases.begin(version);
  const workDir = options.workDir ?? (await mkdtemp(join(tmpdir(), `marquee-snapshot-${version}-`)));
  // Tokens are made a page of links at a time, every link's (see writeCountry). No cache of them
  // across countries: a provider URL recurs in the countries that offer the title (36 % of the
  // sample's links), but looking each URL up and keeping ~100,000 of them cost more than the
  // tokens it saved (hashing and copying the long URL strings, old-space garbage).
  const codec = options.linkTokens;
  const linkTokens = codec.encodeMany?.bind(codec) ?? ((urls: readonly string[]) => urls.map((url) => codec.encode(url)));
  try {
    // The countries and the metadata are written at once, as two tasks on this thread: while
    // one waits for the encoding threads (parquetPool.ts) the other makes rows, and the bundle's
    // gzip (on libuv's threads) overlaps the countries. Each file still gets its rows in order,
    // so the bytes do not depend on how the two interleave; the manifest lists files sorted.
    // The first failure stops the other task at its next read.
    let failed: { reason: unknown } | null = null;
    const reads = stopOnFailure(readStore, () => failed);
    const noteFailure = (err: unknown): never => {
      failed ??= { reason: err };
      throw err;
    };
    const countriesDone = (async () => {
      for (const country of countries) {
        await writeCountry({ ...options, readStore: reads, linkTokens, release, collections, country, version, finished });
      }
    })().catch(noteFailure);
    const metadataDone = (async () => {
      const metadata = await writeMetadata({
        readStore: reads,
        collections,
        workDir,
        release,
        ...(options.parquet ? { parquet: options.parquet } : {}),
        onFile: (path, rows) => {
          if (path.startsWith('metadata/translations/')) {
            total += 1;
            finished(path, rows);
          } else {
            rowCounts[path] = rows;
          }
        },
      });
      const bundle = await release.write(METADATA_BUNDLE, tarGzStream(metadata.bundle, clock.now()));
      return { bundle, rows: Object.values(metadata.rowCounts).reduce((a, b) => a + b, 0) };
    })().catch(noteFailure);
    // Both run to their end before a failure is thrown: the release is aborted (its staging
    // removed) only once nothing writes to it any more.
    const [countriesResult, metadataResult] = await Promise.allSettled([countriesDone, metadataDone]);
    if (countriesResult.status === 'rejected') throw countriesResult.reason;
    if (metadataResult.status === 'rejected') throw metadataResult.reason;
    finished(metadataResult.value.bundle.path, metadataResult.value.rows);
    const manifest = await release.publish({ publishedAt: rfc3339(clock.now()), countries, schemaVersion: SNAPSHOT_SCHEMA_VERSION });
    const pruned = await releases.prune(options.keep ?? DEFAULT_RELEASES_KEEP);
    return { manifest, created: true, rowCounts, pruned, durationMs: Date.now() - started };
  } catch (err) {
    await release.abort().catch(() => {});
    throw err;
  } finally {
    if (options.workDir === undefined) await rm(workDir, { recursive: true, force: true });
  }
}

/** `readStore` whose reads fail once `failed()` has a reason (a Proxy: adapters may be classes). */
function stopOnFailure(readStore: ReadStore, failed: () => { reason: unknown } | null): ReadStore {
  const reads = new Set<PropertyKey>(['get', 'getMany', 'scan', 'count']);
  return new Proxy(readStore, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const f = reads.has(property) ? failed() : null;
        if (f !== null) return Promise.reject(f.reason);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

function* urlsOf(page: ReadonlyArray<{ doc: LinksDoc }>): Generator<string> {
  for (const { doc } of page) for (const offer of doc.offers) yield offer.webUrl;
}

async function writeCountry(input: Omit<BuildReleaseOptions, 'linkTokens'> & {
  /** `encodeMany` of the codec: the tokens of many URLs, in order. */
  linkTokens: (urls: readonly string[]) => string[];
  release: ReleaseWriter;
  collections: SnapshotCollections;
  country: string;
  version: string;
  finished: (file: string, rows: number) => void;
}): Promise<void> {
  const { readStore, release, collections, country, linkTokens } = input;
  const write = async (def: SnapshotFileSchema, rows: AsyncIterable<SnapshotRow> | Iterable<SnapshotRow>): Promise<void> => {
    const path = releasePaths.country(country, def.file);
    const written = await writeParquetRows(def, rows, (bytes) => release.write(path, bytes), input.parquet);
    input.finished(path, written.rows);
  };

  // Links straight from the scan into the writer (no generator per row): a country has a
  // million of them in a large catalog.
  const linksPath = releasePaths.country(country, LINKS_FILE.file);
  const links = openParquetWriter(LINKS_FILE, (bytes) => release.write(linksPath, bytes), input.parquet);
  try {
    for await (const page of scanPages<LinksDoc>(readStore, collections.links, { prefix: linksKey(country, '') })) {
      // The page's tokens in one batch (the rows sort by token, so they are needed first).
      const tokens = linkTokens([...urlsOf(page)]);
      let first = 0;
      for (const { doc } of page) {
        const pending = links.appendAll(linkRows(doc, tokens, first));
        first += doc.offers.length;
        if (pending !== undefined) await pending;
      }
    }
  } catch (err) {
    await links.abort(err);
    throw err;
  }
  input.finished(linksPath, (await links.close()).rows);

  // The chart is stored in blocks of ranks (projections/rankings.ts): the header, then its blocks.
  // Only the served chart: one still being assembled sits in the other slot.
  const chart = (await readStore.get<RankingHeadDoc>(collections.rankings, country))?.doc.chart ?? null;
  const entries: RankingRowDoc['entries'] = [];
  if (chart) {
    const rows = scanAll<RankingRowDoc>(readStore, collections.rankings, { prefix: rankingRowPrefix(country, chart.slot, 'all') });
    for await (const { doc } of rows) entries.push(...doc.entries);
  }
  await write(RANKINGS_FILE, chart ? rankingRows({ country, date: chart.date, formulaVersion: chart.formulaVersion, entries }) : []);

  const days = trendingDays(input.version, input.clock.now());
  const docs = await readStore.getMany<TrendingDoc>(collections.trending, days.map((day) => trendingKey(country, day)));
  await write(TRENDING_FILE, docs.flatMap((stored) => (stored ? trendingRows(stored.doc) : [])));

  // The release week's changes, Monday 00:00 to the next Monday 00:00 UTC.
  const monday = weekStart(input.version);
  const window = { from: monday, to: monday + 7 * 86_400_000 };
  await write(CHANGES_FILE, changeRows(readStore, country, window, { encode: (url) => linkTokens([url])[0] as string }));
}
