/**
 * Folding events outside the runner: for point-in-time queries (`links?at=YYYY-MM-DD` folds one
 * availability stream up to the end of that day) and for tests.
 */
import type { RecordedEvent } from '../contracts/events.ts';
import type { Projection } from '../contracts/projection.ts';
import { eventTime } from './time.ts';

/**
 * Folds events of ONE document from nothing, in the order given (stream order), skipping event
 * types the projection does not handle. The caller picks the events of that document.
 */
export function foldStream<D>(projection: Projection<D>, events: readonly RecordedEvent[]): D | null {
  let doc: D | null = null;
  for (const event of events) {
    if (!projection.canHandle.includes(event.type)) continue;
    doc = projection.evolve(doc, event);
  }
  return doc;
}

/**
 * The events observed by the end of a UTC day (`YYYY-MM-DD`): observedAt (else recordedAt)
 * before the next midnight. Compared as instants, so any UTC offset in observedAt is honoured.
 */
export function eventsUntilEndOfDay(events: readonly RecordedEvent[], date: string): RecordedEvent[] {
  const end = Date.parse(`${date}T00:00:00Z`) + 86_400_000;
  return events.filter((e) => {
    const t = Date.parse(eventTime(e));
    return !Number.isNaN(t) && t < end;
  });
}
