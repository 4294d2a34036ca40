/**
 * `availability_history` read model, key: `${country}:${mediaId}` (as `links`): every state each
 * offer of a title stood in, with the events that began and ended it. Its open intervals are
 * exactly the `links` document (same link-offer fold, firstSeenAt included), and each closed
 * interval is the `before` of the change that closed it. Never deleted: a title that left a
 * country keeps its history.
 */
import type { Offer, OfferKey } from '../contracts/domain.ts';
import { offerKeyString } from '../contracts/domain.ts';
import type { RecordedEvent } from '../contracts/events.ts';
import { kindOfMediaId } from '../contracts/ids.ts';
import { defineProjection } from '../contracts/projection.ts';
import type { HistoryDoc, HistoryInterval } from '../contracts/changeModels.ts';
import { isOfferEvent, linkOfferOf, linksProjection, OFFER_EVENT_TYPES } from './links.ts';
import { eventDate, eventTime } from './time.ts';

/** Index of the interval of this offer still standing, or -1. Searched from the end: the open one is recent. */
export function openIntervalIndex(intervals: readonly HistoryInterval[], key: OfferKey): number {
  const wanted = offerKeyString(key);
  for (let i = intervals.length - 1; i >= 0; i -= 1) {
    const interval = intervals[i] as HistoryInterval;
    if (interval.to === null && offerKeyString(interval.offer) === wanted) return i;
  }
  return -1;
}

/** The state a change at `position` ended: the interval of that offer closed by it, or null. */
export function stateEndedAt(doc: HistoryDoc | null, key: OfferKey, position: number): Offer | null {
  if (doc === null) return null;
  const wanted = offerKeyString(key);
  for (let i = doc.intervals.length - 1; i >= 0; i -= 1) {
    const interval = doc.intervals[i] as HistoryInterval;
    if (interval.toPosition === position && offerKeyString(interval.offer) === wanted) return interval.offer;
  }
  return null;
}

export const availabilityHistoryProjection = defineProjection<HistoryDoc>({
  name: 'availability_history',
  // 2: the offers of its open intervals keep startedOn, as in `links`.
  version: 2,
  canHandle: OFFER_EVENT_TYPES,
  // The same document as `links`: one per availability stream.
  documentId: (event: RecordedEvent) => linksProjection.documentId(event),
  evolve(doc: HistoryDoc | null, event: RecordedEvent): HistoryDoc | null {
    if (!isOfferEvent(event)) return doc;
    const { mediaId, country } = event.data;
    const kind = kindOfMediaId(mediaId);
    if (kind === null) return doc;
    const base: HistoryDoc = doc ?? { mediaId, kind, country, intervals: [] };
    const intervals = [...base.intervals];
    const at = eventTime(event);
    const open = openIntervalIndex(intervals, event.data.offer);
    const previous = open >= 0 ? (intervals[open] as HistoryInterval) : null;
    if (previous !== null) intervals[open] = { ...previous, to: at, toPosition: event.position };
    if (event.type !== 'OfferRemoved') {
      // As in `links`: firstSeenAt and startedOn follow the offer as it stood, and restart when a removed offer returns.
      const offer = linkOfferOf(event.data.offer, previous?.offer, eventDate(event));
      intervals.push({ offer, from: at, fromPosition: event.position, to: null, toPosition: null });
    }
    return { ...base, intervals };
  },
  // The fold above, with the intervals copied once per batch and each offer's open interval
  // found in a map: a series' document gains an interval per episode offer from the same crawl,
  // and copying and searching them per event cost the square of its size.
  evolveAll(doc: HistoryDoc | null, events: readonly RecordedEvent[]): HistoryDoc | null {
    let base = doc;
    const intervals = [...(doc?.intervals ?? [])];
    /** Per offer key, the index of its open interval (the last one, as `openIntervalIndex` finds). */
    const open = new Map<string, number>();
    intervals.forEach((interval, i) => {
      if (interval.to === null) open.set(offerKeyString(interval.offer), i);
    });
    for (const event of events) {
      if (!isOfferEvent(event)) continue;
      const { mediaId, country } = event.data;
      const kind = kindOfMediaId(mediaId);
      if (kind === null) continue;
      base ??= { mediaId, kind, country, intervals: [] };
      const at = eventTime(event);
      const key = offerKeyString(event.data.offer);
      const index = open.get(key);
      const previous = index === undefined ? null : (intervals[index] as HistoryInterval);
      if (index !== undefined && previous !== null) {
        intervals[index] = { ...previous, to: at, toPosition: event.position };
        open.delete(key);
      }
      if (event.type !== 'OfferRemoved') {
        const offer = linkOfferOf(event.data.offer, previous?.offer, eventDate(event));
        open.set(key, intervals.length);
        intervals.push({ offer, from: at, fromPosition: event.position, to: null, toPosition: null });
      }
    }
    return base === null ? doc : { ...base, intervals };
  },
});
