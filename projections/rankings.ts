/**
 * `rankings` read model: per country the newest complete day's chart. A chart for an older day
 * (a backfill) never replaces a newer one, and a complete day is never replaced.
 *
 * Stored split so a page costs the page, not the chart (a country's chart of 250,000 titles is
 * about 9 MB): a header under the country (RankingHeadDoc) and one row per rank, overall under
 * `${country}:${slot}:all:${rank}` and per kind under `${country}:${slot}:${kind}:${rank}` (rank
 * zero-padded so key order is rank order). A page is then one range read of `limit` rows.
 *
 * The ranking job appends a large chart as parts (RankingComputed `part` of `parts`, a bounded
 * range of positions each) over several appends, since EventStoreDB refuses an append over
 * 1 MiB; a crash may leave a day's first parts without the rest until the job runs it again
 * from part 1. So the parts of a new chart are written in the slot the served chart does not
 * use, and the header switches slot only with the last part: an answer always comes from one
 * complete chart. Rows the new slot still holds beyond the new chart are deleted in that same
 * write. An event from before the split holds the whole chart: part 1 of 1.
 *
 * The fold carries the rows of the parts folded since the document was last stored (`writes`);
 * `layout` hands them to the runner beside the header, at the same position, in the same batch.
 *
 * Version 3: version 2 kept one chart's rows, overwritten in place; version 1 the whole chart in
 * one document.
 */
import type { ContentType, RankingEntry } from '../contracts/domain.ts';
import { chartPart, type RankingComputed, type RecordedEvent } from '../contracts/events.ts';
import { defineProjection, type StoredLayout } from '../contracts/projection.ts';
import type {
  RankingDoc,
  RankingHeadDoc,
  RankingPendingChart,
  RankingSlice,
  RankingSlot,
} from '../contracts/readModels.ts';

export type { RankingSlice } from '../contracts/readModels.ts';

/** Ranks up to 9,999,999 keep key order equal to rank order. */
const RANK_DIGITS = 7;

const SLICES: readonly RankingSlice[] = ['all', 'movie', 'tv_show'];

/** The common start of the row keys of one slice of a country's chart stored in `slot`. */
export function rankingRowPrefix(country: string, slot: RankingSlot, slice: RankingSlice): string {
  return `${country}:${slot}:${slice}:`;
}

/** The key of the `rank`th row (1-based) of a country's chart in `slot`, overall or of one kind. */
export function rankingRowKey(country: string, slot: RankingSlot, slice: RankingSlice, rank: number): string {
  return rankingRowPrefix(country, slot, slice) + String(rank).padStart(RANK_DIGITS, '0');
}

type RowWrite = { key: string; doc: RankingEntry | null };

/** The header as the fold carries it: with the rows folded since it was last stored. */
export interface RankingFold extends RankingHeadDoc {
  /** One list per part folded since the header was stored (appending a list keeps the fold linear). */
  writes?: RowWrite[][];
}

function emptyHead(country: string): RankingHeadDoc {
  const none = { all: 0, movie: 0, tv_show: 0 };
  return { country, chart: null, pending: null, stored: { a: { ...none }, b: { ...none } } };
}

function lengthsOf(chart: { total: number; totals: Record<ContentType, number> }): Record<RankingSlice, number> {
  return { all: chart.total, ...chart.totals };
}

/**
 * Folds one part of a day's chart into a country's header. `replace`: the chart replaces the
 * served one whatever its day (writers of synthetic catalogs); the log never does.
 */
function foldPart(doc: RankingFold | null, data: RankingComputed['data'], replace = false): RankingFold | null {
  const { part, parts } = chartPart(data);
  const head: RankingFold = doc ?? emptyHead(data.country);
  const served = head.chart;
  // `YYYY-MM-DD` strings order like the dates they name.
  if (!replace && served !== null && data.date <= served.date) return doc;
  let pending: RankingPendingChart;
  if (part === 1) {
    // A first part starts the chart over: a day the job runs again after a crash, or a newer
    // day after an unfinished one (whose rows the new one overwrites in the same slot).
    const slot: RankingSlot = served?.slot === 'a' ? 'b' : 'a';
    pending = { date: data.date, formulaVersion: data.formulaVersion, slot, total: 0, totals: { movie: 0, tv_show: 0 }, parts, received: 0 };
  } else {
    const p = head.pending;
    // A part without the ones before it folded: nothing to add it to (the job never writes one).
    if (p === null || p.date !== data.date || p.parts !== parts || p.received !== part - 1) return doc;
    pending = { ...p, totals: { ...p.totals } };
  }
  const { country } = head;
  const slot = pending.slot;
  const rows: RowWrite[] = [];
  for (const entry of [...data.entries].sort((a, b) => a.position - b.position)) {
    pending.total += 1;
    pending.totals[entry.kind] += 1;
    rows.push({ key: rankingRowKey(country, slot, 'all', pending.total), doc: entry });
    rows.push({ key: rankingRowKey(country, slot, entry.kind, pending.totals[entry.kind]), doc: entry });
  }
  pending.received = part;
  const lengths = lengthsOf(pending);
  const held = head.stored[slot];
  const writes = [...(head.writes ?? []), rows];
  if (part < parts) {
    const most = { all: Math.max(held.all, lengths.all), movie: Math.max(held.movie, lengths.movie), tv_show: Math.max(held.tv_show, lengths.tv_show) };
    return { ...head, pending, stored: { ...head.stored, [slot]: most }, writes };
  }
  // The last part: the chart is complete and served from its slot; the rows that slot holds
  // beyond it (an older, longer chart, or an unfinished one) go in the same write.
  for (const slice of SLICES) {
    for (let rank = lengths[slice] + 1; rank <= held[slice]; rank += 1) rows.push({ key: rankingRowKey(country, slot, slice, rank), doc: null });
  }
  const { parts: _parts, received: _received, ...chart } = pending;
  return { country, chart, pending: null, stored: { ...head.stored, [slot]: lengths }, writes };
}

/** The header stored and the rows written beside it; a key written twice keeps its last write. */
function layout(_id: string, doc: RankingFold | null): StoredLayout<RankingFold> {
  if (doc === null) return { document: null, rows: [] };
  const { writes, ...head } = doc;
  const rows = new Map<string, RowWrite>();
  for (const list of writes ?? []) for (const row of list) rows.set(row.key, row);
  return { document: head, rows: [...rows.values()] };
}

/**
 * The writes that store `chart` as a country's served chart over `previous` (its stored
 * header, or null), whatever its day: for writers of synthetic catalogs (bench/).
 */
export function layoutRanking(chart: RankingDoc, previous: RankingHeadDoc | null): StoredLayout<RankingFold> {
  return layout(chart.country, foldPart(previous, { ...chart, part: 1, parts: 1 }, true));
}

export const rankingsProjection = defineProjection<RankingFold>({
  name: 'rankings',
  version: 3,
  canHandle: ['RankingComputed'],
  documentId(event: RecordedEvent): string | null {
    return event.type === 'RankingComputed' ? event.data.country : null;
  },
  evolve(doc: RankingFold | null, event: RecordedEvent): RankingFold | null {
    return event.type === 'RankingComputed' ? foldPart(doc, event.data) : doc;
  },
  layout,
});
