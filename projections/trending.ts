/**
 * `trending` read model, key: `${country}:${date}`. Built only from PositionChanged, one entry
 * per title that moved, entered or left the chart that day, stored in the order the API serves.
 *
 * Order (decisions.md: "largest climb first (new entries ranked by their position), ties by
 * position"), with change = previousPosition - position:
 *   1. climbers (change > 0): largest change first, ties by position;
 *   2. new entries (previousPosition null): by position, after the climbers, because a title
 *      that entered has no measured climb but is trending more than one that fell;
 *   3. fallers (change <= 0): smallest fall first, ties by position;
 *   4. titles that left the chart (position null): by their previous position.
 * A final tie-break by media id makes the order total.
 */
import type { RecordedEvent } from '../contracts/events.ts';
import { defineProjection } from '../contracts/projection.ts';
import type { TrendingDoc, TrendingEntry } from '../contracts/readModels.ts';
import { compareStrings } from './offerOrder.ts';

export function trendingKey(country: string, date: string): string {
  return `${country}:${date}`;
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

export const trendingProjection = defineProjection<TrendingDoc>({
  name: 'trending',
  version: 1,
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
});
