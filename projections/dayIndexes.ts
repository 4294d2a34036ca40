/**
 * `arrivals` and `departures` read models: per country, the titles by the day an offer arrived
 * (its OfferAdded) or announced it leaves (`availableTo`), keyed `${country}:${date}:${mediaId}`
 * so `/v1/new` and `/v1/leaving` read one key range of days. Each event touches one document;
 * an entry a later event made obsolete (the offer left, the expiry moved) stays, and the API
 * confirms entries against `links`, which knows the current offers.
 */
import type { Offer } from '../contracts/domain.ts';
import type { RecordedEvent } from '../contracts/events.ts';
import { kindOfMediaId } from '../contracts/ids.ts';
import { defineProjection } from '../contracts/projection.ts';
import type { DayIndexDoc } from '../contracts/changeModels.ts';
import { compareStrings } from './offerOrder.ts';
import { eventDate } from './time.ts';

export function dayIndexKey(country: string, date: string, mediaId: string): string {
  return `${country}:${date}:${mediaId}`;
}

function withProvider(doc: DayIndexDoc | null, country: string, date: string, mediaId: string, offer: Offer): DayIndexDoc | null {
  const kind = kindOfMediaId(mediaId);
  if (kind === null) return doc;
  const base = doc ?? { country, date, mediaId, kind, providers: [] };
  if (base.providers.includes(offer.providerId)) return base;
  return { ...base, providers: sortedWith(base.providers, offer.providerId) };
}

/**
 * `[...providers, added].sort(compareStrings)`, by insertion: the same order (a stable sort of a
 * consistent comparison), without the working copy Array.prototype.sort allocates on every call
 * (a few providers each, but once for nearly every offer event of a first crawl).
 */
function sortedWith(providers: readonly string[], added: string): string[] {
  const out = [...providers, added];
  for (let i = 1; i < out.length; i += 1) {
    const item = out[i] as string;
    let j = i - 1;
    for (; j >= 0 && compareStrings(out[j] as string, item) > 0; j -= 1) out[j + 1] = out[j] as string;
    out[j + 1] = item;
  }
  return out;
}

export const arrivalsProjection = defineProjection<DayIndexDoc>({
  name: 'arrivals',
  version: 1,
  canHandle: ['OfferAdded'],
  documentId(event: RecordedEvent): string | null {
    return event.type === 'OfferAdded' ? dayIndexKey(event.data.country, eventDate(event), event.data.mediaId) : null;
  },
  evolve(doc: DayIndexDoc | null, event: RecordedEvent): DayIndexDoc | null {
    if (event.type !== 'OfferAdded') return doc;
    const { country, mediaId, offer } = event.data;
    return withProvider(doc, country, eventDate(event), mediaId, offer);
  },
});

export const departuresProjection = defineProjection<DayIndexDoc>({
  name: 'departures',
  version: 1,
  canHandle: ['OfferAdded', 'OfferChanged'],
  documentId(event: RecordedEvent): string | null {
    if (event.type !== 'OfferAdded' && event.type !== 'OfferChanged') return null;
    const to = event.data.offer.availableTo;
    return to === null ? null : dayIndexKey(event.data.country, to, event.data.mediaId);
  },
  evolve(doc: DayIndexDoc | null, event: RecordedEvent): DayIndexDoc | null {
    if (event.type !== 'OfferAdded' && event.type !== 'OfferChanged') return doc;
    const { country, mediaId, offer } = event.data;
    if (offer.availableTo === null) return doc;
    return withProvider(doc, country, offer.availableTo, mediaId, offer);
  },
});
