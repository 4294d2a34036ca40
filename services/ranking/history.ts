/**
 * What the ranking job needs of a country's ranking stream, read from its end: whether the day
 * is already complete, the previous day's chart, the stream's revision. Never the whole stream:
 * a stream grows by a chart a day (about 9 MB for a 250,000-title country).
 *
 * It reads backwards (EventStore.readStreamBackwards). A day's last part is its last event and
 * says how many parts the day has and how many PositionChanged sit just before it, after the
 * other parts (the job appends a day under an expected revision, so nothing interleaves). So
 * the walk jumps over a day to the event before its first part, and reads only the first parts
 * of the day it compares with (those holding the top `chartSize` positions). Each part carries `latestDate`, the newest day in the
 * stream once its day was complete: when that is before the day ranked, nothing earlier can be
 * the day itself or a newer previous day, and the walk stops. For a day after every other (the
 * daily run) that is at the first day met: a read of its last part and of its first part. A stream
 * written before parts (no latestDate) is walked to its start, once: the next day carries it.
 */
import type { RankingEntry } from '../../contracts/domain.ts';
import { AppError } from '../../contracts/errors.ts';
import { chartPart, type RankingComputed, type RecordedEvent } from '../../contracts/events.ts';
import type { EventStore } from '../../contracts/ports.ts';

export interface RankingHistory {
  /** The stream's last revision, -1 when it does not exist. */
  revision: number;
  /** Whether the stream holds the day ranked, complete. */
  exists: boolean;
  /** The newest complete day before it, with its entries of the top `chartSize` positions. */
  previous: { date: string; entries: RankingEntry[] } | null;
  /** The newest complete day in the stream as far as read (the whole answer unless `exists`). */
  latest: string | null;
}

/** Events read by the first request, and after a jump; each next one reads twice as many, up to MAX_PAGE. */
const FIRST_PAGE = 1;
const MAX_PAGE = 256;

export async function readRankingHistory(store: EventStore, stream: string, date: string, chartSize: number): Promise<RankingHistory> {
  let revision = -1;
  let previous: RankingHistory['previous'] = null;
  let latest: string | null = null;
  /** Once known: the newest day appended before the point reached (earlier days are not newer). */
  let bound: string | null = null;
  /** The next revision to read, downwards; undefined: from the end. */
  let cursor: number | undefined;
  let pageSize = FIRST_PAGE;
  for (;;) {
    const page = await store.readStreamBackwards(stream, { fromRevision: cursor, limit: pageSize });
    if (page.length === 0) break;
    if (cursor === undefined) revision = page[0]?.revision ?? -1;
    for (const event of page) {
      // Events of a day already jumped over.
      if (cursor !== undefined && event.revision > cursor) continue;
      cursor = event.revision - 1;
      if (!isRankingComputed(event)) continue;
      const { part, parts } = chartPart(event.data);
      // Parts met without their day's last part are a day a crash left unfinished: not a day.
      if (part !== parts) continue;
      const day = event.data.date;
      const known = event.data.latestDate ?? null;
      latest = newest(newest(latest, day), known);
      if (day === date) return { revision, exists: true, previous: null, latest };
      // The day's events run from its first part to this one, its PositionChanged just before it.
      const first = event.revision - (event.data.positionChanges ?? 0) - (parts - 1);
      if (day < date && (previous === null || day > previous.date)) {
        previous = { date: day, entries: await topEntries(store, stream, event, first, chartSize) };
      }
      cursor = first - 1;
      if (known !== null && known < date) bound = newest(bound, known);
      if (bound !== null && previous !== null && previous.date >= bound) return { revision, exists: false, previous, latest };
    }
    if (cursor === undefined || cursor < 0) break;
    // After a jump over a day the next event is the day before's last part: read it alone.
    // Walking over events one by one (a stream from before parts), read more at a time.
    pageSize = (page.at(-1)?.revision ?? 0) > cursor + 1 ? FIRST_PAGE : Math.min(MAX_PAGE, pageSize * 2);
  }
  return { revision, exists: false, previous, latest };
}

function isRankingComputed(event: RecordedEvent): event is RecordedEvent<RankingComputed> {
  return event.type === 'RankingComputed';
}

function newest(a: string | null, b: string | null): string | null {
  if (a === null) return b;
  return b !== null && b > a ? b : a;
}

function notPart(stream: string, revision: number, part: number, last: RecordedEvent<RankingComputed>): AppError {
  const { parts } = chartPart(last.data);
  return new AppError('internal', `ranking stream ${stream}: revision ${revision} is not part ${part} of ${parts} of ${last.data.date}`);
}

/**
 * The entries of positions up to `chartSize` of the day whose last part is `last` and whose
 * first part is at revision `first`: its first parts, read one by one until one reaches past
 * the chart (parts are consecutive ranges of positions).
 */
async function topEntries(
  store: EventStore, stream: string, last: RecordedEvent<RankingComputed>, first: number, chartSize: number,
): Promise<RankingEntry[]> {
  const out: RankingEntry[] = [];
  const { parts } = chartPart(last.data);
  for (let part = 1; part <= parts; part += 1) {
    const at = first + part - 1;
    const event = part === parts ? last : (await store.readStreamBackwards(stream, { fromRevision: at, limit: 1 }))[0];
    if (event === undefined || !isRankingComputed(event) || event.data.date !== last.data.date || chartPart(event.data).part !== part) {
      throw notPart(stream, at, part, last);
    }
    out.push(...event.data.entries.filter((e) => e.position <= chartSize));
    if (event.data.entries.some((e) => e.position >= chartSize)) break;
  }
  return out;
}
