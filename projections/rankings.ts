/**
 * `rankings` read model. Only the newest day's full ranking per country: a RankingComputed
 * for an older day (a backfill, or a replay racing nothing) never replaces a newer one. The
 * same day computed again replaces it, which keeps a replay idempotent.
 *
 * Stored split so a page costs the page, not the chart (a country's chart of 250,000 titles is
 * about 9 MB): a header under the country (day and lengths, RankingHeadDoc) and one row per
 * rank, overall under `${country}:all:${rank}` and per kind under `${country}:${kind}:${rank}`
 * (rank zero-padded so key order is rank order). A page is then one range read of `limit`
 * rows. Rows a shorter new chart no longer has are deleted in the same write as the header.
 *
 * Version 2: version 1 stored the whole chart in one document.
 */
import type { ContentType, RankingEntry } from '../contracts/domain.ts';
import type { RecordedEvent } from '../contracts/events.ts';
import { defineProjection, type StoredLayout } from '../contracts/projection.ts';
import type { RankingDoc, RankingHeadDoc } from '../contracts/readModels.ts';

/** Ranks up to 9,999,999 keep key order equal to rank order. */
const RANK_DIGITS = 7;

export type RankingSlice = ContentType | 'all';

/** The common start of the row keys of one slice of a country's chart. */
export function rankingRowPrefix(country: string, slice: RankingSlice): string {
  return `${country}:${slice}:`;
}

/** The key of the `rank`th row (1-based) of a country's chart, overall or of one kind. */
export function rankingRowKey(country: string, slice: RankingSlice, rank: number): string {
  return rankingRowPrefix(country, slice) + String(rank).padStart(RANK_DIGITS, '0');
}

/** What the fold stores under the country: the header, or the chart not yet laid out. */
export type RankingFold = RankingDoc | RankingHeadDoc;

function isHead(doc: RankingFold): doc is RankingHeadDoc {
  return !('entries' in doc);
}

function lengths(doc: RankingFold | null): Record<RankingSlice, number> {
  if (doc === null) return { all: 0, movie: 0, tv_show: 0 };
  if (isHead(doc)) return { all: doc.total, ...doc.totals };
  const movie = doc.entries.filter((e) => e.kind === 'movie').length;
  return { all: doc.entries.length, movie, tv_show: doc.entries.length - movie };
}

/**
 * The header and the rows of a folded chart. A header folded again (an older day ignored)
 * keeps the rows it has. Exported for writers of synthetic catalogs (bench/).
 */
export function layoutRanking(country: string, doc: RankingFold | null, previous: RankingFold | null): StoredLayout<RankingFold> {
  if (doc === null || isHead(doc)) return { document: doc, rows: [] };
  const rows: Array<{ key: string; doc: RankingEntry | null }> = [];
  const next = { all: 0, movie: 0, tv_show: 0 };
  for (const entry of doc.entries) {
    next.all += 1;
    next[entry.kind] += 1;
    rows.push({ key: rankingRowKey(country, 'all', next.all), doc: entry });
    rows.push({ key: rankingRowKey(country, entry.kind, next[entry.kind]), doc: entry });
  }
  const before = lengths(previous);
  for (const slice of ['all', 'movie', 'tv_show'] as const) {
    for (let rank = next[slice] + 1; rank <= before[slice]; rank += 1) rows.push({ key: rankingRowKey(country, slice, rank), doc: null });
  }
  const head: RankingHeadDoc = {
    country: doc.country, date: doc.date, formulaVersion: doc.formulaVersion,
    total: next.all, totals: { movie: next.movie, tv_show: next.tv_show },
  };
  return { document: head, rows };
}

export const rankingsProjection = defineProjection<RankingFold>({
  name: 'rankings',
  version: 2,
  canHandle: ['RankingComputed'],
  documentId(event: RecordedEvent): string | null {
    return event.type === 'RankingComputed' ? event.data.country : null;
  },
  evolve(doc: RankingFold | null, event: RecordedEvent): RankingFold | null {
    if (event.type !== 'RankingComputed') return doc;
    const { country, date, formulaVersion, entries } = event.data;
    // `YYYY-MM-DD` strings order like the dates they name.
    if (doc !== null && date < doc.date) return doc;
    return { country, date, formulaVersion, entries: [...entries].sort((a, b) => a.position - b.position) };
  },
  layout: layoutRanking,
});
