/**
 * The four files of one country of a release: links (with their link tokens), the served
 * ranking chart, the trending lists of the release week, and the week's changes.
 */
import type { ReadStore, ReleaseWriter } from '../../contracts/ports.ts';
import type { LinksDoc, RankingHeadDoc, RankingRowDoc, TrendingDoc } from '../../contracts/readModels.ts';
import { CHANGES_FILE, LINKS_FILE, RANKINGS_FILE, TRENDING_FILE, releasePaths, type SnapshotFileSchema } from '../../contracts/snapshotSchema.ts';
import { rankingRowPrefix } from '../../projections/index.ts';
import { linksKey } from '../../projections/links.ts';
import { trendingKey } from '../../projections/trending.ts';
import type { SnapshotRow } from './arrowSchema.ts';
import { changeRows } from './changes.ts';
import type { SnapshotCollections } from './metadata.ts';
import { openParquetWriter, writeParquetRows, type ParquetWriterOptions } from './parquet.ts';
import { linkRows, rankingRows, trendingRows, type LinkTokenEncoder } from './rows.ts';
import { scanAll, scanPages } from './scan.ts';
import { trendingDays, weekStart } from './week.ts';

export interface CountryInput {
  readStore: ReadStore;
  release: Pick<ReleaseWriter, 'write'>;
  collections: SnapshotCollections;
  country: string;
  /** Release label `YYYY-Www`. */
  version: string;
  /** When the build started: the trending days of the week end there. */
  now: Date;
  /** The tokens of many URLs, in order (tokenBatches). */
  linkTokens: (urls: readonly string[]) => string[];
  parquet?: ParquetWriterOptions;
  /** Called as each file is finished. */
  finished: (file: string, rows: number) => void;
}

/** `encodeMany` of a codec, or `encode` of each URL when it has none. */
export function tokenBatches(codec: LinkTokenEncoder): (urls: readonly string[]) => string[] {
  return codec.encodeMany?.bind(codec) ?? ((urls: readonly string[]) => urls.map((url) => codec.encode(url)));
}

function* urlsOf(page: ReadonlyArray<{ doc: LinksDoc }>): Generator<string> {
  for (const { doc } of page) for (const offer of doc.offers) yield offer.webUrl;
}

export async function writeCountry(input: CountryInput): Promise<void> {
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
      // No cache of them across pages or countries: a provider URL recurs in the countries
      // that offer the title (36 % of the sample's links), but looking each URL up and keeping
      // ~100,000 of them cost more than the tokens it saved (hashing and copying the long URL
      // strings, old-space garbage).
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

  const days = trendingDays(input.version, input.now);
  const docs = await readStore.getMany<TrendingDoc>(collections.trending, days.map((day) => trendingKey(country, day)));
  await write(TRENDING_FILE, docs.flatMap((stored) => (stored ? trendingRows(stored.doc) : [])));

  // The release week's changes, Monday 00:00 to the next Monday 00:00 UTC.
  const monday = weekStart(input.version);
  const window = { from: monday, to: monday + 7 * 86_400_000 };
  await write(CHANGES_FILE, changeRows(readStore, country, window, { encode: (url) => linkTokens([url])[0] as string }));
}
