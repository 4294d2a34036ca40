/**
 * `changes` read model: the change feed. One document per offer event, keyed
 * `${country}:${position padded}` so a country's feed is one prefix scan in position order,
 * and a cursor (the last key read) resumes exactly after what was read, whatever was
 * committed meanwhile: positions only grow. A replay from 0 rebuilds the same keys.
 *
 * Ingest appends nothing for a re-crawl that changes nothing, so every event is a change.
 */
import type { OfferKey } from '../contracts/domain.ts';
import type { RecordedEvent } from '../contracts/events.ts';
import { kindOfMediaId } from '../contracts/ids.ts';
import { defineProjection } from '../contracts/projection.ts';
import type { ChangeDoc } from '../contracts/changeModels.ts';
import { isOfferEvent, OFFER_EVENT_TYPES } from './links.ts';
import { eventTime } from './time.ts';

/** Wide enough for any safe-integer position, so key order is position order. */
const POSITION_DIGITS = 16;

export function changeKey(country: string, position: number): string {
  return `${country}:${String(position).padStart(POSITION_DIGITS, '0')}`;
}

/** The position in a change key, or null when the key is not one. */
export function positionOfChangeKey(key: string): { country: string; position: number } | null {
  const m = /^([A-Z]{2}):(\d{16})$/.exec(key);
  return m ? { country: m[1] as string, position: Number(m[2]) } : null;
}

/**
 * The change id receivers deduplicate on: derived from the event position alone, padded so ids
 * sort as the feed does (changes.parquet is sorted by it).
 */
export function changeId(position: number): string {
  return `chg_${String(position).padStart(POSITION_DIGITS, '0')}`;
}

function keyOf(o: OfferKey): OfferKey {
  return { providerId: o.providerId, addonProviderId: o.addonProviderId, seasonNumber: o.seasonNumber, episodeNumber: o.episodeNumber, webUrl: o.webUrl };
}

export const changesProjection = defineProjection<ChangeDoc>({
  name: 'changes',
  version: 1,
  canHandle: OFFER_EVENT_TYPES,
  // Keyed by the event's position: nothing to read before writing (a first start writes
  // 219,000 of them for the sample, each a lookup of a key not yet stored otherwise).
  onePerEvent: true,
  documentId(event: RecordedEvent): string | null {
    return isOfferEvent(event) ? changeKey(event.data.country, event.position) : null;
  },
  evolve(doc: ChangeDoc | null, event: RecordedEvent): ChangeDoc | null {
    if (!isOfferEvent(event)) return doc;
    const { mediaId, country } = event.data;
    const kind = kindOfMediaId(mediaId);
    // Ingest validates ids; an id that names no kind has no link to describe.
    if (kind === null) return doc;
    const base = { position: event.position, at: eventTime(event), country, mediaId, kind, offer: keyOf(event.data.offer) };
    switch (event.type) {
      case 'OfferAdded':
        return { ...base, type: 'new', after: event.data.offer, changed: [] };
      case 'OfferChanged':
        return { ...base, type: 'updated', after: event.data.offer, changed: [...event.data.changedFields] };
      case 'OfferRemoved':
        return { ...base, type: 'removed', after: null, changed: [] };
    }
  },
});
