/** /v1/rankings, /v1/trending and /v1/featured: positions per country joined with list items. */
import type { ContentType, FeaturedItemRef, FeaturedPeriod } from '../../../contracts/domain.ts';
import type { FeaturedDoc, TrendingEntry, TrendingHeadDoc } from '../../../contracts/readModels.ts';
import { rankingBlockEntries, rankingPageRead } from '../../../projections/rankings.ts';
import { changeOf, trendingHeadKey, trendingHeadPrefix, trendingPageRead } from '../../../projections/trending.ts';
import { int, reqStr, str } from '../params.ts';
import type { HandlerInput } from '../types.ts';
import { listItems } from './common.ts';

export async function getRankings(input: HandlerInput): Promise<unknown> {
  const { params, catalog } = input;
  const country = reqStr(params, 'country');
  const kind = str(params, 'kind') as ContentType | undefined;
  const limit = int(params, 'limit');
  const offset = int(params, 'offset');
  const stored = await catalog.get('rankings', country);
  // The served chart; a newer one whose parts are still arriving is not shown until complete.
  const head = stored !== null && 'chart' in stored ? stored.chart : null;
  // Positions stay those of the overall chart: a kind filter selects rows, it does not re-rank.
  const { total, slice, items } = await chartPage(input, head, kind, offset, limit, async (slice, first, count) => {
    // Ranks are stored in blocks: read the one or two holding the page, keep the page.
    const read = rankingPageRead(country, head!.slot, slice, first, count);
    const blocks = await catalog.scan('rankings', { prefix: read.prefix, start: read.start, limit: read.limit });
    return rankingBlockEntries(blocks.map((b) => b.doc)).slice(read.skip, read.skip + count);
  });
  const results = [];
  for (const e of slice) {
    const item = items.get(e.mediaId);
    if (item) results.push({ ...item, position: e.position, score: e.score, points: e.points });
  }
  return { total, limit, offset, country, date: head?.date ?? null, results };
}

/**
 * One page of a chart stored by rank (rankings and trending in blocks of ranks):
 * the head's total for the kind, then one range read of the page's own rows, so a page costs
 * the same at 4,000 titles as at 250,000. `read` gives the rows of the ranks `offset + 1` to
 * `offset + count` of a slice (`all` or a kind).
 */
async function chartPage<Row extends { mediaId: string }>(
  input: HandlerInput,
  head: { total: number; totals: Partial<Record<ContentType, number>> } | null,
  kind: ContentType | undefined,
  offset: number,
  limit: number,
  read: (slice: ContentType | 'all', offset: number, count: number) => Promise<Row[]>,
) {
  const total = head === null ? 0 : kind === undefined ? head.total : (head.totals[kind] ?? 0);
  const count = Math.max(0, Math.min(limit, total - offset));
  const slice = head !== null && count > 0 ? await read(kind ?? 'all', offset, count) : [];
  const items = await listItems(input, slice.map((e) => e.mediaId));
  return { total, slice, items };
}

/** The head of a day, or of the newest computed day of a country (the last of its heads). */
async function trendingHead(input: HandlerInput, country: string, date: string | undefined): Promise<TrendingHeadDoc | null> {
  const found = date === undefined
    ? (await input.catalog.scan('trending', { prefix: trendingHeadPrefix(country), reverse: true, limit: 1 }))[0]?.doc ?? null
    : await input.catalog.get('trending', trendingHeadKey(country, date));
  return found !== null && 'totals' in found ? found : null;
}

export async function getTrending(input: HandlerInput): Promise<unknown> {
  const { params, catalog } = input;
  const country = reqStr(params, 'country');
  const kind = str(params, 'kind') as ContentType | undefined;
  const date = str(params, 'date');
  const limit = int(params, 'limit');
  const offset = int(params, 'offset');
  const head = await trendingHead(input, country, date);
  const day = head?.date ?? date ?? null;
  // Only titles still in the chart are stored as rows (those that left are not trending).
  const { total, slice, items } = await chartPage(input, head, kind, offset, limit, async (slice, first, count) => {
    // Served ranks are stored in blocks, as rankings are: read the one or two holding the page.
    const read = trendingPageRead(country, head!.date, slice, first, count);
    const blocks = await catalog.scan('trending', { prefix: read.prefix, start: read.start, limit: read.limit });
    return rankingBlockEntries<TrendingEntry>(blocks.map((b) => b.doc)).slice(read.skip, read.skip + count);
  });
  const results = [];
  for (const e of slice) {
    const item = items.get(e.mediaId);
    if (item) {
      results.push({ ...item, position: e.position, previous_position: e.previousPosition, change: changeOf(e), date: day });
    }
  }
  return { total, limit, offset, country, date: day, results };
}

/**
 * Spec 4.5: featured is one answer of about 10-20 items. The crawler's selections hold 10-20
 * items each, and the read model keeps them whole (the releases export them so); the cut is
 * made here, by position, so that both selections together still fit one answer.
 */
export const FEATURED_MAX = 20;

/**
 * The refs one answer shows: with both periods the first FEATURED_MAX / 2 of each, a shorter
 * selection leaving its room to the other; with one period its first FEATURED_MAX. Daily first.
 */
export function featuredRefs(
  doc: Pick<FeaturedDoc, 'daily' | 'weekly'>, period: FeaturedPeriod | undefined,
): Array<{ ref: FeaturedItemRef; period: FeaturedPeriod }> {
  const daily = period === 'weekly' ? [] : doc.daily;
  const weekly = period === 'daily' ? [] : doc.weekly;
  const half = FEATURED_MAX / 2;
  const dailyCount = Math.min(daily.length, Math.max(half, FEATURED_MAX - weekly.length));
  const weeklyCount = Math.min(weekly.length, FEATURED_MAX - dailyCount);
  return [
    ...daily.slice(0, dailyCount).map((ref) => ({ ref, period: 'daily' as const })),
    ...weekly.slice(0, weeklyCount).map((ref) => ({ ref, period: 'weekly' as const })),
  ];
}

export async function getFeatured(input: HandlerInput): Promise<unknown> {
  const { params, catalog } = input;
  const country = reqStr(params, 'country');
  const period = str(params, 'period') as FeaturedPeriod | undefined;
  const doc = await catalog.get('featured', country);
  const picked = doc ? featuredRefs(doc, period) : [];
  const items = await listItems(input, picked.map((p) => p.ref.mediaId));
  const results = [];
  for (const { ref, period: p } of picked) {
    const item = items.get(ref.mediaId);
    if (item) results.push({ ...item, position: ref.position, period: p });
  }
  return { country, updated_at: doc?.updatedAt ?? null, results };
}
