/**
 * `links` read model, key: `${country}:${mediaId}`, so all titles of a country are one prefix
 * scan (the links snapshot reads them that way; the ranking job reads `ranking_inputs`). One
 * document per availability stream; it disappears when the title has no offer left in the country.
 */
import type { Offer, OfferKey } from '../contracts/domain.ts';
import { offerKeyString } from '../contracts/domain.ts';
import type { AvailabilityEvent, RecordedEvent } from '../contracts/events.ts';
import { kindOfMediaId } from '../contracts/ids.ts';
import { defineProjection } from '../contracts/projection.ts';
import type { LinkOffer, LinksDoc } from '../contracts/readModels.ts';
import { compareOfferKeys } from './offerOrder.ts';
import { eventDate } from './time.ts';

export function linksKey(country: string, mediaId: string): string {
  return `${country}:${mediaId}`;
}

/** The availability events every offer-derived read model folds. */
export const OFFER_EVENT_TYPES = ['OfferAdded', 'OfferChanged', 'OfferRemoved'] as const;

export function isOfferEvent(event: RecordedEvent): event is RecordedEvent<AvailabilityEvent> {
  return event.type === 'OfferAdded' || event.type === 'OfferChanged' || event.type === 'OfferRemoved';
}

export const linksProjection = defineProjection<LinksDoc>({
  name: 'links',
  // 2: each offer keeps the day its current run began (startedOn).
  version: 2,
  canHandle: OFFER_EVENT_TYPES,
  documentId(event: RecordedEvent): string | null {
    return isOfferEvent(event) ? linksKey(event.data.country, event.data.mediaId) : null;
  },
  evolve(doc: LinksDoc | null, event: RecordedEvent): LinksDoc | null {
    switch (event.type) {
      case 'OfferAdded':
      case 'OfferChanged': {
        const { mediaId, country, offer } = event.data;
        const base = doc ?? emptyDoc(mediaId, country);
        if (base === null) return doc;
        // firstSeenAt belongs to the offer's first OfferAdded and survives changes. An
        // OfferChanged for an offer we never saw added (should not happen) counts as its first
        // sighting rather than being dropped.
        const linked = linkOfferOf(offer, findOffer(base.offers, offer), eventDate(event));
        return withOffers(base, [...withoutOffer(base.offers, offer), linked]);
      }
      case 'OfferRemoved': {
        if (doc === null) return null;
        return withOffers(doc, withoutOffer(doc.offers, event.data.offer));
      }
      default:
        return doc;
    }
  },
  // The fold above, with the offers keyed once and sorted once per batch rather than per event:
  // a series' document holds an offer per episode, all added by the same crawl, so folding
  // them one by one cost the square of its size (the largest part of this model's fold).
  evolveAll(doc: LinksDoc | null, events: readonly RecordedEvent[]): LinksDoc | null {
    let base = doc;
    const offers = new Map<string, LinkOffer>();
    for (const offer of doc?.offers ?? []) offers.set(offerKeyString(offer), offer);
    for (const event of events) {
      if (event.type === 'OfferAdded' || event.type === 'OfferChanged') {
        const { mediaId, country, offer } = event.data;
        base ??= emptyDoc(mediaId, country);
        if (base === null) continue;
        const key = offerKeyString(offer);
        offers.set(key, linkOfferOf(offer, offers.get(key), eventDate(event)));
      } else if (event.type === 'OfferRemoved') offers.delete(offerKeyString(event.data.offer));
    }
    // Emptied on the way and filled again, the document is as new: `emptyDoc` holds the same
    // fields as any document of this id (the id is its country and media id).
    return base === null ? null : withOffers(base, [...offers.values()]);
  },
});

/** A new document, or null when the media id does not name a kind (ingest validates ids). */
function emptyDoc(mediaId: string, country: string): LinksDoc | null {
  const kind = kindOfMediaId(mediaId);
  if (kind === null) return null;
  return { mediaId, kind, country, offers: [] };
}

/** An empty offer list deletes the document: a title without offers is not available there. */
function withOffers(doc: LinksDoc, offers: LinkOffer[]): LinksDoc | null {
  if (offers.length === 0) return null;
  return { ...doc, offers: offers.sort(compareOfferKeys) };
}

function findOffer(offers: LinkOffer[], key: OfferKey): LinkOffer | undefined {
  const wanted = offerKeyString(key);
  return offers.find((o) => offerKeyString(o) === wanted);
}

function withoutOffer(offers: LinkOffer[], key: OfferKey): LinkOffer[] {
  const wanted = offerKeyString(key);
  return offers.filter((o) => offerKeyString(o) !== wanted);
}

/**
 * The day the offer's current run began, as of an event observed on `observed` (the previous
 * link-offer: the offer as it stood, undefined for a new run). While its `availableFrom` is ahead
 * the offer is not there yet and starts on that day (listed ahead, or its start moved later).
 * Otherwise it is there: since the day kept when it already was, else since `observed`, the day
 * it is seen there: a new offer, or one listed ahead that came early, its start cleared or moved
 * to that day or before (it came some day after the last observation, and `observed` is the day
 * we know). /v1/new confirms an arrival with it (services/changes/dayLists.ts).
 */
export function startedOn(offer: Offer, previous: LinkOffer | undefined, observed: string): string {
  const from = offer.availableFrom;
  if (from !== null && from > observed) return from;
  return previous === undefined || previous.startedOn > observed ? observed : previous.startedOn;
}

/** The link-offer an offer event makes of `offer`, after `previous` (see `startedOn`). Shared with the availability history. */
export function linkOfferOf(offer: Offer, previous: LinkOffer | undefined, observed: string): LinkOffer {
  return toLinkOffer(offer, previous?.firstSeenAt ?? observed, startedOn(offer, previous, observed));
}

/** The link-offer of an offer event, its fields in the order the read store's encoder writes them. */
function toLinkOffer(offer: Offer, firstSeenAt: string, startedOn: string): LinkOffer {
  return {
    providerId: offer.providerId,
    addonProviderId: offer.addonProviderId,
    seasonNumber: offer.seasonNumber,
    episodeNumber: offer.episodeNumber,
    webUrl: offer.webUrl,
    priceTypes: offer.priceTypes,
    formats: offer.formats,
    audioLanguages: offer.audioLanguages,
    subtitleLanguages: offer.subtitleLanguages,
    availableFrom: offer.availableFrom,
    availableTo: offer.availableTo,
    platforms: offer.platforms,
    firstSeenAt,
    startedOn,
  };
}
