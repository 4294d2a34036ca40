/**
 * Event time helpers shared by projections. Point-in-time questions ("when was this offer first
 * seen?") are answered by when the crawler saw it, not by when the store appended it; events made
 * by jobs carry no observedAt, so the append time stands in.
 */
import type { RecordedEvent } from '../contracts/events.ts';

/** RFC 3339 instant the event describes: metadata.observedAt, else recordedAt. */
export function eventTime(event: RecordedEvent): string {
  return event.metadata.observedAt ?? event.recordedAt;
}

/** `YYYY-MM-DD` of eventTime (the UTC date part of an RFC 3339 UTC timestamp). */
export function eventDate(event: RecordedEvent): string {
  return dateOf(eventTime(event));
}

/**
 * The UTC calendar date of an RFC 3339 timestamp. A timestamp with an offset is converted, so
 * `2026-01-01T23:30:00-05:00` is `2026-01-02`; a value that does not parse is cut to 10 chars.
 */
export function dateOf(timestamp: string): string {
  // /^\d{4}-\d{2}-\d{2}T[^Z]*Z$/ or /^\d{4}-\d{2}-\d{2}$/, checked by character codes: several
  // projections ask this of every offer event they fold, and the two regular expressions were
  // the larger part of it.
  const n = timestamp.length;
  const utc = n === 10 || (n > 11 && timestamp.charCodeAt(10) === 84 /* T */ && timestamp.indexOf('Z', 11) === n - 1);
  if (utc && startsWithDate(timestamp)) return timestamp.slice(0, 10);
  const ms = Date.parse(timestamp);
  return Number.isNaN(ms) ? timestamp.slice(0, 10) : new Date(ms).toISOString().slice(0, 10);
}

/** Whether `text` begins with four ASCII digits, a dash, two digits, a dash and two digits. */
function startsWithDate(text: string): boolean {
  for (let i = 0; i < 10; i += 1) {
    const c = text.charCodeAt(i);
    if (i === 4 || i === 7 ? c !== 45 /* - */ : !(c >= 48 && c <= 57)) return false;
  }
  return true;
}
