/**
 * `rankings` read model: per country the newest complete day's chart. A chart for an older day
 * (a backfill) never replaces a newer one, and a complete day is never replaced.
 *
 * Stored split so a page costs the page, not the chart (a country's chart of 250,000 titles is
 * about 9 MB): a header under the country (RankingHeadDoc) and the ranks in blocks of
 * RANKING_BLOCK, overall under `${country}:${slot}:all:${block}` and per kind under
 * `${country}:${slot}:${kind}:${block}` (block zero-padded so key order is rank order). A page
 * is then one range read of a block or two (rankingPageRead).
 *
 * Why blocks and not a row per rank: a day's chart is written whole every day (the sample's
 * 103,000 rows a day), and almost every rank changes daily (the recency term moves every
 * title's points; measured on the sample, 31 of 620,188 rows were equal to the row of the same
 * slot two days before), so writing only the rows that differ saves nothing. A write costs a
 * document on every engine (a round trip, an index entry, on FerretDB a BSON<->JSON
 * conversion), so 50 ranks a document is 50 times fewer writes for the same bytes.
 *
 * The ranking job appends a large chart as parts (RankingComputed `part` of `parts`, a bounded
 * range of positions each) over several appends, since EventStoreDB refuses an append over
 * 1 MiB; a crash may leave a day's first parts without the rest until the job runs it again
 * from part 1. So the parts of a new chart are written in the slot the served chart does not
 * use, and the header switches slot only with the last part: an answer always comes from one
 * complete chart. Blocks the new slot still holds beyond the new chart are deleted in that same
 * write. A part may end inside a block: the header carries that block's entries (`tail`) to the
 * next part, which writes it once full. An event from before the split holds the whole chart:
 * part 1 of 1.
 *
 * The fold carries the blocks of the parts folded since the document was last stored (`writes`);
 * `layout` hands them to the runner beside the header, at the same position, in the same batch.
 *
 * Version 4: version 3 stored a row per rank; version 2 kept one chart's rows, overwritten in
 * place; version 1 the whole chart in one document.
 */
import type { ContentType, RankingEntry } from '../contracts/domain.ts';
import { chartPart, type RankingComputed, type RecordedEvent } from '../contracts/events.ts';
import { defineProjection, type StoredLayout } from '../contracts/projection.ts';
import type {
  RankingDoc,
  RankingHeadDoc,
  RankingPendingChart,
  RankingRowDoc,
  RankingSlice,
  RankingSlot,
} from '../contracts/readModels.ts';

export type { RankingSlice } from '../contracts/readModels.ts';

/** Blocks up to 9,999,999 keep key order equal to rank order. */
const BLOCK_DIGITS = 7;

/** Ranks per stored block: the API's default page (50 ranks from a multiple of 50) reads one. */
export const RANKING_BLOCK = 50;

const SLICES: readonly RankingSlice[] = ['all', 'movie', 'tv_show'];

/** The common start of the row keys of one slice of a country's chart stored in `slot`. */
export function rankingRowPrefix(country: string, slot: RankingSlot, slice: RankingSlice): string {
  return `${country}:${slot}:${slice}:`;
}

/** The key of the `block`th block (0-based: ranks block * RANKING_BLOCK + 1 on) of a slice in `slot`. */
export function rankingBlockKey(country: string, slot: RankingSlot, slice: RankingSlice, block: number): string {
  return rankingRowPrefix(country, slot, slice) + String(block).padStart(BLOCK_DIGITS, '0');
}

/**
 * The range read of the ranks `offset + 1` to `offset + count` (count >= 1) of a slice: the
 * blocks that hold them (`start`, `limit` blocks under `prefix`), and how many entries of the
 * first block come before the page (`skip`).
 */
export function rankingPageRead(
  country: string, slot: RankingSlot, slice: RankingSlice, offset: number, count: number,
): { prefix: string; start: string; limit: number; skip: number } {
  const { first, limit, skip } = blockRange(offset, count, RANKING_BLOCK);
  return { prefix: rankingRowPrefix(country, slot, slice), start: rankingBlockKey(country, slot, slice, first), limit, skip };
}

/**
 * The blocks of `size` ranks holding the ranks `offset + 1` to `offset + count` (count >= 1):
 * the first (0-based), how many, and how many entries of the first come before the page.
 */
export function blockRange(offset: number, count: number, size: number): { first: number; limit: number; skip: number } {
  const first = Math.floor(offset / size);
  const last = Math.floor((offset + count - 1) / size);
  return { first, limit: last - first + 1, skip: offset - first * size };
}

/** The entries of stored blocks, in rank order (what a reader of a range of blocks gets; trending's too). */
export function rankingBlockEntries<E = RankingEntry>(docs: Iterable<unknown>): E[] {
  const out: E[] = [];
  for (const doc of docs) {
    const entries = typeof doc === 'object' && doc !== null ? (doc as { entries?: E[] }).entries : undefined;
    if (Array.isArray(entries)) out.push(...entries);
  }
  return out;
}

type RowWrite = { key: string; doc: RankingRowDoc | null };

const blocksOf = (ranks: number) => Math.ceil(ranks / RANKING_BLOCK);

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
    // day after an unfinished one (whose blocks the new one overwrites in the same slot).
    const slot: RankingSlot = served?.slot === 'a' ? 'b' : 'a';
    pending = {
      date: data.date, formulaVersion: data.formulaVersion, slot, total: 0, totals: { movie: 0, tv_show: 0 }, parts, received: 0,
      tail: { all: [], movie: [], tv_show: [] },
    };
  } else {
    const p = head.pending;
    // A part without the ones before it folded: nothing to add it to (the job never writes one).
    if (p === null || p.date !== data.date || p.parts !== parts || p.received !== part - 1) return doc;
    pending = { ...p, totals: { ...p.totals }, tail: { all: [...p.tail.all], movie: [...p.tail.movie], tv_show: [...p.tail.tv_show] } };
  }
  const { country } = head;
  const { slot, tail } = pending;
  const rows: RowWrite[] = [];
  /** Adds the entry at `rank` of a slice; a block is written once full (or at the chart's end). */
  const add = (slice: RankingSlice, rank: number, entry: RankingEntry) => {
    tail[slice].push(entry);
    if (rank % RANKING_BLOCK !== 0) return;
    rows.push({ key: rankingBlockKey(country, slot, slice, rank / RANKING_BLOCK - 1), doc: { entries: tail[slice] } });
    tail[slice] = [];
  };
  for (const entry of [...data.entries].sort((a, b) => a.position - b.position)) {
    pending.total += 1;
    pending.totals[entry.kind] += 1;
    add('all', pending.total, entry);
    add(entry.kind, pending.totals[entry.kind], entry);
  }
  pending.received = part;
  const lengths = lengthsOf(pending);
  const held = head.stored[slot];
  const writes = [...(head.writes ?? []), rows];
  if (part < parts) {
    const most = { all: Math.max(held.all, lengths.all), movie: Math.max(held.movie, lengths.movie), tv_show: Math.max(held.tv_show, lengths.tv_show) };
    return { ...head, pending, stored: { ...head.stored, [slot]: most }, writes };
  }
  // The last part: the chart is complete and served from its slot. Each slice's last block
  // (not full), and the blocks that slot holds beyond it (an older, longer chart, or an
  // unfinished one), go in the same write.
  for (const slice of SLICES) {
    if (tail[slice].length > 0) rows.push({ key: rankingBlockKey(country, slot, slice, blocksOf(lengths[slice]) - 1), doc: { entries: tail[slice] } });
    for (let block = blocksOf(lengths[slice]); block < blocksOf(held[slice]); block += 1) {
      rows.push({ key: rankingBlockKey(country, slot, slice, block), doc: null });
    }
  }
  const { parts: _parts, received: _received, tail: _tail, ...chart } = pending;
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
  version: 4,
  canHandle: ['RankingComputed'],
  documentId(event: RecordedEvent): string | null {
    return event.type === 'RankingComputed' ? event.data.country : null;
  },
  evolve(doc: RankingFold | null, event: RecordedEvent): RankingFold | null {
    return event.type === 'RankingComputed' ? foldPart(doc, event.data) : doc;
  },
  layout,
});
