/**
 * `availability-{id}-{country}`: the offers of a title in a country. Each observation is the
 * full offer set, so the decision is a diff by offer identity (provider, add-on provider,
 * season, episode, web URL): new keys are added, missing keys removed, others changed.
 */
import { offerKeyOf, offerKeyString, type Offer } from '../../contracts/domain.ts';
import type { AvailabilityEvent, DomainEvent } from '../../contracts/events.ts';
import { mediaIdOf, streams } from '../../contracts/ids.ts';
import type { AvailabilityObserved } from '../../contracts/observations.ts';
import {
  alreadySeen,
  byString,
  changedFieldsOf,
  emptySeen,
  metadataOf,
  noteEvent,
  reject,
  skip,
  type Decider,
  type Decision,
  type Seen,
} from './decision.ts';
import { normalizeCountry } from './route.ts';

export interface AvailabilityState {
  seen: Seen;
  /**
   * Current offers by offerKeyString. A Map, not an object: keys are long strings (web URLs),
   * which an object turns into dictionary-mode properties, each internalized on insertion;
   * the first crawl inserts every offer of every title.
   */
  offers: ReadonlyMap<string, Offer>;
}

/** Fields of an offer that are not part of its identity; a change in any is an OfferChanged. */
export const OFFER_VALUE_FIELDS = [
  'priceTypes', 'formats', 'audioLanguages', 'subtitleLanguages', 'availableFrom', 'availableTo', 'platforms',
] as const satisfies readonly (keyof Offer)[];

const STREAM = 'stream';

/** Copies exactly the Offer fields, so extra observation fields never reach an event. */
export function offerOf(o: Offer): Offer {
  // One literal in one key order: every offer shares a hidden class and a msgpack record
  // structure (this runs for every offer of every crawl). Arrays are shared, not copied:
  // observations and events are never mutated.
  return {
    providerId: o.providerId,
    addonProviderId: o.addonProviderId,
    seasonNumber: o.seasonNumber,
    episodeNumber: o.episodeNumber,
    webUrl: o.webUrl,
    priceTypes: o.priceTypes,
    formats: o.formats,
    audioLanguages: o.audioLanguages,
    subtitleLanguages: o.subtitleLanguages,
    availableFrom: o.availableFrom,
    availableTo: o.availableTo,
    platforms: o.platforms,
  };
}

function initialState(): AvailabilityState {
  return { seen: emptySeen(), offers: new Map() };
}

/**
 * The offers are copied once for all the events (the first day of a title in a country adds
 * each of its offers: copying the map per event made that quadratic), and the copy is private
 * to the new state, so the folded state is never mutated.
 */
function evolveAll(state: AvailabilityState, events: readonly DomainEvent[]): AvailabilityState {
  let seen = state.seen;
  let offers: Map<string, Offer> | null = null;
  for (const event of events) {
    const e = event as AvailabilityEvent;
    switch (e.type) {
      case 'OfferAdded':
      case 'OfferChanged':
        offers ??= new Map(state.offers);
        offers.set(offerKeyString(e.data.offer), e.data.offer);
        break;
      case 'OfferRemoved':
        offers ??= new Map(state.offers);
        offers.delete(offerKeyString(e.data.offer));
        break;
      default:
        continue;
    }
    seen = noteEvent(seen, STREAM, e.metadata);
  }
  return offers === null ? state : { seen, offers };
}

function evolve(state: AvailabilityState, event: DomainEvent): AvailabilityState {
  return evolveAll(state, [event]);
}

function decide(state: AvailabilityState, o: AvailabilityObserved): Decision {
  const observed = new Map<string, Offer>();
  for (const [i, offer] of o.data.offers.entries()) {
    const key = offerKeyString(offer);
    if (observed.has(key)) return reject(`data.offers[${i}]: duplicate offer key ${JSON.stringify(key)}`);
    observed.set(key, offerOf(offer));
  }
  const seen = alreadySeen(state.seen, o, [STREAM]);
  if (seen !== null) return seen;

  const mediaId = mediaIdOf(o.data.contentType, o.data.sourceId);
  const country = normalizeCountry(o.data.country);
  const metadata = metadataOf(o);
  const removed: DomainEvent[] = [...state.offers.keys()]
    .filter((key) => !observed.has(key))
    .sort(byString)
    .map((key) => ({ type: 'OfferRemoved', data: { mediaId, country, offer: offerKeyOf(state.offers.get(key) as Offer) }, metadata }));
  const changed: DomainEvent[] = [];
  const added: DomainEvent[] = [];
  for (const key of [...observed.keys()].sort(byString)) {
    const offer = observed.get(key) as Offer;
    const before = state.offers.get(key);
    if (before === undefined) {
      added.push({ type: 'OfferAdded', data: { mediaId, country, offer }, metadata });
      continue;
    }
    const changedFields = changedFieldsOf(before, offer, OFFER_VALUE_FIELDS);
    if (changedFields.length > 0) changed.push({ type: 'OfferChanged', data: { mediaId, country, offer, changedFields }, metadata });
  }
  const events = [...removed, ...changed, ...added];
  if (events.length === 0) return skip('unchanged offers');
  return { kind: 'append', stream: streams.availability(mediaId, country), events };
}

export const availabilityDecider: Decider<AvailabilityState, AvailabilityObserved> = {
  kind: 'availability',
  observationTypes: ['AvailabilityObserved'],
  initialState,
  evolve,
  evolveAll,
  decide,
};
