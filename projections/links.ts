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
  version: 1,
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
        const previous = findOffer(base.offers, offer);
        // firstSeenAt belongs to the offer's first OfferAdded and survives changes. An
        // OfferChanged for an offer we never saw added (should not happen) counts as its first
        // sighting rather than being dropped.
        const firstSeenAt = previous?.firstSeenAt ?? eventDate(event);
        return withOffers(base, [...withoutOffer(base.offers, offer), toLinkOffer(offer, firstSeenAt)]);
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
        offers.set(key, toLinkOffer(offer, offers.get(key)?.firstSeenAt ?? eventDate(event)));
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

/** The link-offer of an offer event (shared with the availability history). */
export function toLinkOffer(offer: Offer, firstSeenAt: string): LinkOffer {
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
  };
}
