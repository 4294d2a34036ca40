/**
 * Day-to-day chart changes. Only the top `chartSize` of each day is a chart: a title that moved
 * within it, entered it or left it gets one PositionChanged. Positions outside the chart do not
 * count, so a title climbing from 250 to 150 (chart 200) "entered" (previousPosition null).
 */
import type { ContentType, RankingEntry } from '../../contracts/domain.ts';

export interface ChartChange {
  mediaId: string;
  kind: ContentType;
  position: number | null;
  previousPosition: number | null;
}

/**
 * Changes from `previous` (null: no earlier day) to `current`: first the titles in today's chart
 * by position (moved or entered), then those that left, by their previous position.
 */
export function diffCharts(
  previous: readonly RankingEntry[] | null,
  current: readonly RankingEntry[],
  chartSize: number,
): ChartChange[] {
  const before = new Map<string, RankingEntry>();
  for (const e of previous ?? []) if (e.position <= chartSize) before.set(e.mediaId, e);
  const todayChart = current.filter((e) => e.position <= chartSize).sort((a, b) => a.position - b.position);
  const inToday = new Set(todayChart.map((e) => e.mediaId));

  const changes: ChartChange[] = [];
  for (const e of todayChart) {
    const was = before.get(e.mediaId);
    if (was !== undefined && was.position === e.position) continue;
    changes.push({ mediaId: e.mediaId, kind: e.kind, position: e.position, previousPosition: was?.position ?? null });
  }
  const left = [...before.values()].filter((e) => !inToday.has(e.mediaId)).sort((a, b) => a.position - b.position);
  for (const e of left) changes.push({ mediaId: e.mediaId, kind: e.kind, position: null, previousPosition: e.position });
  return changes;
}
