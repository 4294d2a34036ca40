/**
 * `arrivals`, `departures` and `upcoming` read models: per country, the titles by the day an
 * offer arrived (its OfferAdded, or the `availableFrom` it announced when that is later),
 * announced it leaves (`availableTo`) or announced it starts, observed before that day
 * (`availableFrom`), keyed `${country}:${date}:${mediaId}` so `/v1/new`, `/v1/leaving` and
 * `/v1/upcoming` read one key range of days. Each event touches one document; an entry a later
 * event made obsolete (the offer left, a date moved) stays, and the API confirms entries against
 * `links`, which knows the current offers.
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

/**
 * The day an offer first observed on `observed` starts: its announced `availableFrom` when that
 * is later (an offer listed ahead of its start is not available before it), else `observed`.
 */
export function startDay(availableFrom: string | null, observed: string): string {
  return announcedFrom(availableFrom, observed) ?? observed;
}

/** `availableFrom` when it is after `observed` (the offer was announced ahead), else null. */
function announcedFrom(availableFrom: string | null, observed: string): string | null {
  return availableFrom !== null && availableFrom > observed ? availableFrom : null;
}

/**
 * The day an offer event makes an arrival on: an added offer's start (startDay), the new start a
 * change announced ahead (a start moved later), or the day of a change that cleared the start or
 * moved it to that day or before (an offer listed ahead that came early: the day it is seen
 * there, as links' `startedOn` says); null when the event makes none. Such a change to an offer
 * that was there already makes an entry /v1/new does not confirm: its run began before.
 */
function arrivalDay(event: RecordedEvent): string | null {
  if (event.type === 'OfferAdded') return startDay(event.data.offer.availableFrom, eventDate(event));
  if (event.type !== 'OfferChanged') return null;
  const observed = eventDate(event);
  const announced = announcedFrom(event.data.offer.availableFrom, observed);
  if (announced !== null) return announced;
  return event.data.changedFields.includes('availableFrom') ? observed : null;
}

export const arrivalsProjection = defineProjection<DayIndexDoc>({
  name: 'arrivals',
  // 2: an offer announced ahead arrives on its availableFrom, not on the day it was listed.
  // 3: and on the day it came, when that was earlier than it announced.
  // 4: also when its start was cleared or moved into the past (the day it is seen there).
  version: 4,
  canHandle: ['OfferAdded', 'OfferChanged'],
  documentId(event: RecordedEvent): string | null {
    if (event.type !== 'OfferAdded' && event.type !== 'OfferChanged') return null;
    const day = arrivalDay(event);
    return day === null ? null : dayIndexKey(event.data.country, day, event.data.mediaId);
  },
  evolve(doc: DayIndexDoc | null, event: RecordedEvent): DayIndexDoc | null {
    if (event.type !== 'OfferAdded' && event.type !== 'OfferChanged') return doc;
    const day = arrivalDay(event);
    const { country, mediaId, offer } = event.data;
    return day === null ? doc : withProvider(doc, country, day, mediaId, offer);
  },
});

export const upcomingProjection = defineProjection<DayIndexDoc>({
  name: 'upcoming',
  version: 1,
  canHandle: ['OfferAdded', 'OfferChanged'],
  documentId(event: RecordedEvent): string | null {
    if (event.type !== 'OfferAdded' && event.type !== 'OfferChanged') return null;
    const from = announcedFrom(event.data.offer.availableFrom, eventDate(event));
    return from === null ? null : dayIndexKey(event.data.country, from, event.data.mediaId);
  },
  evolve(doc: DayIndexDoc | null, event: RecordedEvent): DayIndexDoc | null {
    if (event.type !== 'OfferAdded' && event.type !== 'OfferChanged') return doc;
    const { country, mediaId, offer } = event.data;
    const from = announcedFrom(offer.availableFrom, eventDate(event));
    return from === null ? doc : withProvider(doc, country, from, mediaId, offer);
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
