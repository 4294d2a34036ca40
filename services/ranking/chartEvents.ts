/**
 * The events of one ranked day and the appends that carry them.
 *
 * A country's chart is split into RankingComputed parts of PART_ENTRIES positions each, and the
 * events are packed into appends of at most MAX_APPEND_BYTES: a 250,000-title chart is about
 * 9 MB of JSON, and EventStoreDB refuses an append (all its events together) over 1 MiB by
 * default (MaxAppendSize), Kafka a record over 1 MB (message.max.bytes). A large day is then
 * several appends, not one atomic write, so the day's last part is its last event: the day is
 * complete exactly when that part is in (the rankings projection and the job's history read
 * rely on it), and the PositionChanged events ride in the same final append, packed from the
 * end, so a crash never leaves them without their chart (unless a chart of several thousand
 * positions makes them outgrow an append).
 */
import type { RankingEntry } from '../../contracts/domain.ts';
import type { DomainEvent, EventMetadata } from '../../contracts/events.ts';
import type { ChartChange } from './diff.ts';

/** Positions per RankingComputed part: about 120 KB of JSON with the longest field values. */
export const PART_ENTRIES = 1000;

/** Bytes of events per append: half of EventStoreDB's default MaxAppendSize of 1 MiB. */
export const MAX_APPEND_BYTES = 512 * 1024;

/**
 * What an event adds to an append beyond its JSON data and metadata (EventStoreDB: its id,
 * type and content type fields; Kafka: the stream, revision and timestamp of the record). A
 * bound, not a measure: those are under 200 bytes.
 */
const EVENT_OVERHEAD_BYTES = 256;

export interface RankedDay {
  country: string;
  date: string;
  formulaVersion: number;
  /** The newest day the stream holds once this one is complete. */
  latestDate: string;
  /** Every ranked title, by position 1..N. */
  entries: readonly RankingEntry[];
  changes: readonly ChartChange[];
  metadata: EventMetadata;
}

/** The day's events in append order: parts 1..P-1, the PositionChanged, part P (never none: an empty chart is one empty part). */
export function dayEvents(day: RankedDay, partEntries = PART_ENTRIES): DomainEvent[] {
  const { country, date, formulaVersion, latestDate, metadata } = day;
  const parts = Math.max(1, Math.ceil(day.entries.length / partEntries));
  const computed = Array.from({ length: parts }, (_, i): DomainEvent => ({
    type: 'RankingComputed',
    data: {
      country, date, formulaVersion, part: i + 1, parts, latestDate,
      positionChanges: i + 1 === parts ? day.changes.length : 0,
      entries: day.entries.slice(i * partEntries, (i + 1) * partEntries),
    },
    metadata,
  }));
  const changes = day.changes.map((c): DomainEvent => ({ type: 'PositionChanged', data: { country, date, ...c }, metadata }));
  return [...computed.slice(0, -1), ...changes, ...computed.slice(-1)];
}

/** An event's share of an append: its JSON data and metadata, its type and EVENT_OVERHEAD_BYTES. */
export function appendBytes(event: DomainEvent): number {
  return Buffer.byteLength(JSON.stringify(event.data)) + Buffer.byteLength(JSON.stringify(event.metadata)) + Buffer.byteLength(event.type) + EVENT_OVERHEAD_BYTES;
}

/**
 * Consecutive appends of at most `maxBytes` each, filled from the last event backwards so the
 * final append holds the last part with as much as fits before it. An event larger than
 * `maxBytes` alone is an append of its own (a part never is: PART_ENTRIES keeps it far below).
 */
export function packAppends(events: readonly DomainEvent[], maxBytes = MAX_APPEND_BYTES): DomainEvent[][] {
  const appends: DomainEvent[][] = [];
  let current: DomainEvent[] = [];
  let bytes = 0;
  for (let i = events.length - 1; i >= 0; i -= 1) {
    const event = events[i] as DomainEvent;
    const size = appendBytes(event);
    if (current.length > 0 && bytes + size > maxBytes) {
      appends.push(current.reverse());
      current = [];
      bytes = 0;
    }
    current.push(event);
    bytes += size;
  }
  if (current.length > 0) appends.push(current.reverse());
  return appends.reverse();
}
