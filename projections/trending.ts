/**
 * `trending` read model, key: `${country}:${date}`. Built only from PositionChanged, one entry
 * per title that moved, entered or left the chart that day, stored in the order the API serves.
 *
 * Order (docs/api.md: "largest climb first (new entries ranked by their position), ties by
 * position"), with change = previousPosition - position:
 *   1. climbers (change > 0): largest change first, ties by position;
 *   2. new entries (previousPosition null): by position, after the climbers, because a title
 *      that entered has no measured climb but is trending more than one that fell;
 *   3. fallers (change <= 0): smallest fall first, ties by position;
 *   4. titles that left the chart (position null): by their previous position.
 * A final tie-break by media id makes the order total.
 *
 * Stored so a page costs the page (as rankings are): the fold keeps the whole day under its key
 * (the next PositionChanged needs it, the weekly release exports it), and its layout adds what
 * the API reads: a head under `head:${country}:${date}` (day and counts) and the served entries
 * in blocks of TRENDING_BLOCK consecutive ranks, overall and per kind, under
 * `row:${country}:${date}:${slice}:${block}` (block zero-padded, so key order is rank order).
 * Served means still in the chart: titles that left have no position that day and are not
 * trending. Heads and rows live under their own prefixes so the `${country}:` prefix still holds
 * only days. A fold writes only the blocks in which a rank changed hands, and deletes those
 * past the new end.
 *
 * Why blocks (version 3): a row per rank was 110,748 documents written over the sample's first
 * start, each a write of its own (on FerretDB a round trip and a BSON<->JSON conversion) for a
 * few dozen bytes; a day's entries arrive together, so a block is written about as often as
 * each of its rows was. A page of 50 from a multiple of 50 (the API's default) is one block.
 *
 * Version 2 stored a row per rank; version 1 only the day, which the API read and sorted whole
 * per request.
 */
import type { ContentType } from '../contracts/domain.ts';
import type { RecordedEvent } from '../contracts/events.ts';
import { defineProjection, type StoredLayout } from '../contracts/projection.ts';
import type { TrendingDoc, TrendingEntry, TrendingHeadDoc, TrendingRowDoc } from '../contracts/readModels.ts';
import { blockRange } from './rankings.ts';
import { compareStrings } from './offerOrder.ts';

/** Blocks up to 9,999,999 keep key order equal to rank order. */
const BLOCK_DIGITS = 7;

/** Served ranks per stored block: the API's default page (50 ranks from a multiple of 50) reads one. */
export const TRENDING_BLOCK = 50;

export type TrendingSlice = ContentType | 'all';

export function trendingKey(country: string, date: string): string {
  return `${country}:${date}`;
}

/** The common start of a country's heads: the newest day is the last key under it. */
export function trendingHeadPrefix(country: string): string {
  return `head:${country}:`;
}

export function trendingHeadKey(country: string, date: string): string {
  return trendingHeadPrefix(country) + date;
}

/** The common start of the row keys of one slice of a day. */
export function trendingRowPrefix(country: string, date: string, slice: TrendingSlice): string {
  return `row:${country}:${date}:${slice}:`;
}

/** The key of the `block`th (0-based: ranks block * TRENDING_BLOCK + 1 on) block of a slice of a day. */
export function trendingBlockKey(country: string, date: string, slice: TrendingSlice, block: number): string {
  return trendingRowPrefix(country, date, slice) + String(block).padStart(BLOCK_DIGITS, '0');
}

/** The range read of the served ranks `offset + 1` to `offset + count` (count >= 1) of a slice of a day. */
export function trendingPageRead(
  country: string, date: string, slice: TrendingSlice, offset: number, count: number,
): { prefix: string; start: string; limit: number; skip: number } {
  const { first, limit, skip } = blockRange(offset, count, TRENDING_BLOCK);
  return { prefix: trendingRowPrefix(country, date, slice), start: trendingBlockKey(country, date, slice, first), limit, skip };
}

/** previousPosition - position; null for a title that entered or left (nothing to compare). */
export function changeOf(entry: Pick<TrendingEntry, 'position' | 'previousPosition'>): number | null {
  if (entry.position === null || entry.previousPosition === null) return null;
  return entry.previousPosition - entry.position;
}

function groupOf(entry: TrendingEntry): number {
  if (entry.position === null) return 3;
  if (entry.previousPosition === null) return 1;
  return entry.previousPosition - entry.position > 0 ? 0 : 2;
}

/** The trending order described above; exported so a query over raw entries can reuse it. */
export function compareTrending(a: TrendingEntry, b: TrendingEntry): number {
  const ga = groupOf(a);
  const gb = groupOf(b);
  if (ga !== gb) return ga - gb;
  const byChange = (changeOf(b) ?? 0) - (changeOf(a) ?? 0);
  const byPosition = (a.position ?? a.previousPosition ?? 0) - (b.position ?? b.previousPosition ?? 0);
  return byChange || byPosition || compareStrings(a.mediaId, b.mediaId);
}

/** The entries the API serves, per slice, in the stored (trending) order. */
function servedSlices(doc: TrendingDoc | null): Record<TrendingSlice, TrendingEntry[]> {
  const slices: Record<TrendingSlice, TrendingEntry[]> = { all: [], movie: [], tv_show: [] };
  for (const entry of doc?.entries ?? []) {
    if (entry.position === null) continue;
    slices.all.push(entry);
    slices[entry.kind].push(entry);
  }
  return slices;
}

/** Equal entries, or both past the end of their lists. */
function sameEntry(a: TrendingEntry | undefined, b: TrendingEntry | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.mediaId === b.mediaId && a.kind === b.kind && a.position === b.position && a.previousPosition === b.previousPosition;
}

/** Whether the entries from `from` to `to` (exclusive) are the same in both lists (a shorter one differs). */
function sameRange(a: readonly TrendingEntry[], b: readonly TrendingEntry[], from: number, to: number): boolean {
  for (let i = from; i < to; i += 1) if (!sameEntry(a[i], b[i])) return false;
  return true;
}

/**
 * The day as stored, with its head and the blocks that changed since `previous` (see the header).
 * Exported for writers of synthetic catalogs (bench/).
 */
export function layoutTrending(_id: string, doc: TrendingDoc | null, previous: TrendingDoc | null): StoredLayout<TrendingDoc> {
  const day = doc ?? previous;
  if (day === null) return { document: null, rows: [] };
  const { country, date } = day;
  const next = servedSlices(doc);
  const before = servedSlices(previous);
  const rows: Array<{ key: string; doc: TrendingRowDoc | TrendingHeadDoc | null }> = [];
  for (const slice of ['all', 'movie', 'tv_show'] as const) {
    const blocks = Math.ceil(next[slice].length / TRENDING_BLOCK);
    for (let block = 0; block < blocks; block += 1) {
      const from = block * TRENDING_BLOCK;
      const to = Math.min(from + TRENDING_BLOCK, next[slice].length);
      // Compared up to the full block's end, so a block whose length changed is rewritten too.
      if (sameRange(next[slice], before[slice], from, from + TRENDING_BLOCK)) continue;
      rows.push({ key: trendingBlockKey(country, date, slice, block), doc: { entries: next[slice].slice(from, to) } });
    }
    for (let block = blocks; block < Math.ceil(before[slice].length / TRENDING_BLOCK); block += 1) {
      rows.push({ key: trendingBlockKey(country, date, slice, block), doc: null });
    }
  }
  const head: TrendingHeadDoc | null = doc === null
    ? null
    : { country, date, total: next.all.length, totals: { movie: next.movie.length, tv_show: next.tv_show.length } };
  rows.push({ key: trendingHeadKey(country, date), doc: head });
  return { document: doc, rows };
}

export const trendingProjection = defineProjection<TrendingDoc>({
  name: 'trending',
  version: 3,
  canHandle: ['PositionChanged'],
  documentId(event: RecordedEvent): string | null {
    return event.type === 'PositionChanged' ? trendingKey(event.data.country, event.data.date) : null;
  },
  evolve(doc: TrendingDoc | null, event: RecordedEvent): TrendingDoc | null {
    if (event.type !== 'PositionChanged') return doc;
    const { country, date, mediaId, kind, position, previousPosition } = event.data;
    // One entry per title and day: a redelivered event replaces its own entry.
    const others = (doc?.entries ?? []).filter((e) => e.mediaId !== mediaId);
    const entry: TrendingEntry = { mediaId, kind, position, previousPosition };
    return { country, date, entries: [...others, entry].sort(compareTrending) };
  },
  layout: layoutTrending,
});
