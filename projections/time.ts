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
  if (/^\d{4}-\d{2}-\d{2}T[^Z]*Z$/.test(timestamp) || /^\d{4}-\d{2}-\d{2}$/.test(timestamp)) {
    return timestamp.slice(0, 10);
  }
  const ms = Date.parse(timestamp);
  return Number.isNaN(ms) ? timestamp.slice(0, 10) : new Date(ms).toISOString().slice(0, 10);
}
