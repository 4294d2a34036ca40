/**
 * A faster writer of the bytes msgpackr writes for the events ingest appends most: the offer
 * events (83% of a sample day's events) and a title's registration, translations and seasons
 * (more than half of a first crawl of a synthetic catalog: eight translations per title). The event store's
 * msgpackr encoder (shared record structures) spent more main-thread CPU per event than anything
 * else in ingest: it walks a trie of key names per object and dispatches on every value's type.
 * These events have fixed shapes (the availability and media deciders build them), so this
 * writes them field by field instead, after checking each object has exactly the expected keys
 * in the expected order.
 *
 * The bytes are exactly msgpackr's (the tests compare them, strings in every script included),
 * so nothing about the stored format changes and every reader, old or new, decodes them alike.
 * Anything else — another type, an unexpected key or value, a record structure not yet shared —
 * returns null and the store's own encoder writes the event.
 */

import { recordWriter, type RecordWriter, type SharedStructures } from './recordWriter.ts';

export type { SharedStructures };

const STORED = ['type', 'data', 'metadata', 'streamId', 'revision', 'recordedAt'] as const;
const METADATA = ['observationId', 'observedAt', 'producer'] as const;
const OFFER_DATA = ['mediaId', 'country', 'offer'] as const;
const CHANGED_DATA = ['mediaId', 'country', 'offer', 'changedFields'] as const;
const REGISTERED_DATA = ['mediaId', 'kind', 'sourceId', 'slug', 'details'] as const;
const DETAILS_DATA = ['mediaId', 'details', 'changedFields'] as const;
export const DETAILS = [
  'title', 'originalTitle', 'year', 'releaseDate', 'tagline', 'overview', 'classification', 'poster', 'backdrop', 'popularity',
  'tmdbRating', 'voteCount', 'runtime', 'inProduction', 'lastAirDate', 'genreIds', 'ratings', 'externalIds', 'videos',
  'contentRatings', 'cast',
] as const;
export const RATING = ['source', 'rating'] as const;
/** An external id and a video: the same keys, so the same shared structure. */
export const SOURCE_ID = ['source', 'id'] as const;
export const CONTENT_RATING = ['country', 'rating'] as const;
export const CAST_MEMBER = ['personId', 'name', 'role', 'character', 'order'] as const;
const TRANSLATION_DATA = ['mediaId', 'language', 'translation'] as const;
export const TRANSLATION = ['title', 'overview', 'tagline', 'poster', 'backdrop'] as const;
const SEASON_DATA = ['mediaId', 'season'] as const;
export const SEASON = ['seasonNumber', 'title', 'overview', 'poster', 'airDate', 'episodes'] as const;
export const EPISODE = ['episodeNumber', 'title', 'overview', 'backdrop', 'airDate'] as const;
export const OFFER_KEY = ['providerId', 'addonProviderId', 'seasonNumber', 'episodeNumber', 'webUrl'] as const;
export const OFFER = [
  ...OFFER_KEY, 'priceTypes', 'formats', 'audioLanguages', 'subtitleLanguages', 'availableFrom', 'availableTo', 'platforms',
] as const;
const SHAPES = {
  STORED, METADATA, OFFER_DATA, CHANGED_DATA, OFFER_KEY, OFFER, REGISTERED_DATA, DETAILS_DATA, DETAILS, RATING, SOURCE_ID,
  CONTENT_RATING, CAST_MEMBER, TRANSLATION_DATA, TRANSLATION, SEASON_DATA, SEASON, EPISODE,
};

/**
 * The values of an offer (`full`: OFFER) or of its key (OFFER_KEY), after its record id, in the
 * order of the shape: shared with the read-model encoder, whose documents hold offers too.
 */
export function offerFields(w: RecordWriter<string>, o: Record<string, unknown>, full: boolean): void {
  w.strOrNull(o['providerId']);
  w.strOrNull(o['addonProviderId']);
  w.uintOrNull(o['seasonNumber']);
  w.uintOrNull(o['episodeNumber']);
  w.strOrNull(o['webUrl']);
  if (!full) return;
  w.strings(o['priceTypes']);
  w.strings(o['formats']);
  w.strings(o['audioLanguages']);
  w.strings(o['subtitleLanguages']);
  w.strOrNull(o['availableFrom']);
  w.strOrNull(o['availableTo']);
  w.strings(o['platforms']);
}

/** External ids and videos (SOURCE_ID), content ratings (CONTENT_RATING): records of two strings. */
function stringPairs(w: RecordWriter<string>, v: unknown, shape: 'SOURCE_ID' | 'CONTENT_RATING', first: string, second: string): void {
  w.records(v, shape, (item) => {
    w.strOrNull(item[first]);
    w.strOrNull(item[second]);
  });
}

/**
 * A title's details (DETAILS, with its RATING, SOURCE_ID, CONTENT_RATING and CAST_MEMBER
 * records): shared with the read-model encoder, whose `media` documents hold them as the
 * events carried them.
 */
export function detailsRecord(w: RecordWriter<string>, d: unknown): void {
  w.open(d, 'DETAILS');
  w.strOrNull(d['title']);
  w.strOrNull(d['originalTitle']);
  w.numOrNull(d['year']);
  w.strOrNull(d['releaseDate']);
  w.strOrNull(d['tagline']);
  w.strOrNull(d['overview']);
  w.strOrNull(d['classification']);
  w.strOrNull(d['poster']);
  w.strOrNull(d['backdrop']);
  w.numOrNull(d['popularity']);
  w.numOrNull(d['tmdbRating']);
  w.numOrNull(d['voteCount']);
  w.numOrNull(d['runtime']);
  w.boolOrNull(d['inProduction']);
  w.strOrNull(d['lastAirDate']);
  const genreIds = d['genreIds'];
  w.array(genreIds);
  for (let i = 0; i < genreIds.length; i += 1) w.numOrNull(genreIds[i]);
  w.records(d['ratings'], 'RATING', (rating) => {
    w.strOrNull(rating['source']);
    w.numOrNull(rating['rating']);
  });
  stringPairs(w, d['externalIds'], 'SOURCE_ID', 'source', 'id');
  stringPairs(w, d['videos'], 'SOURCE_ID', 'source', 'id');
  stringPairs(w, d['contentRatings'], 'CONTENT_RATING', 'country', 'rating');
  w.records(d['cast'], 'CAST_MEMBER', (member) => {
    w.strOrNull(member['personId']);
    w.strOrNull(member['name']);
    w.strOrNull(member['role']);
    w.strOrNull(member['character']);
    w.numOrNull(member['order']);
  });
}

/**
 * A translation overlay (TRANSLATION), field by field with the names written out: a loop over a
 * shape's keys read each value by a computed name, which made these writes five times slower
 * than msgpackr's. Shared with the read-model encoder (`media` documents hold them by language).
 */
export function translationRecord(w: RecordWriter<string>, t: unknown): void {
  w.open(t, 'TRANSLATION');
  w.strOrNull(t['title']);
  w.strOrNull(t['overview']);
  w.strOrNull(t['tagline']);
  w.strOrNull(t['poster']);
  w.strOrNull(t['backdrop']);
}

/** A season with its episodes (SEASON, EPISODE): shared with the read-model encoder (`seasons` documents). */
export function seasonRecord(w: RecordWriter<string>, season: unknown): void {
  w.open(season, 'SEASON');
  w.uint(season['seasonNumber']);
  w.strOrNull(season['title']);
  w.strOrNull(season['overview']);
  w.strOrNull(season['poster']);
  w.strOrNull(season['airDate']);
  w.records(season['episodes'], 'EPISODE', (episode) => {
    w.uint(episode['episodeNumber']);
    w.strOrNull(episode['title']);
    w.strOrNull(episode['overview']);
    w.strOrNull(episode['backdrop']);
    w.strOrNull(episode['airDate']);
  });
}

export interface EventEncoder {
  /** The event's bytes (valid until the next call), or null when the store's encoder must write it. */
  encode(stored: object): Buffer | null;
}

/** The event types written here; encode() leaves every other one to msgpackr. */
const WRITTEN = new Set([
  'OfferAdded', 'OfferChanged', 'OfferRemoved', 'MediaRegistered', 'MediaDetailsChanged', 'MediaTranslationChanged', 'SeasonChanged',
]);

/** `structures()` returns the store encoder's structures as they are now (see recordWriter). */
export function eventEncoder(structures: () => SharedStructures | undefined): EventEncoder {
  const w: RecordWriter<keyof typeof SHAPES> = recordWriter(SHAPES, structures);

  function offerData(type: string, data: unknown): void {
    // OfferRemoved carries the offer's key only.
    const full = type === 'OfferAdded' || type === 'OfferChanged';
    w.open(data, type === 'OfferChanged' ? 'CHANGED_DATA' : 'OFFER_DATA');
    w.strOrNull(data['mediaId']);
    w.strOrNull(data['country']);
    const offer = data['offer'];
    w.open(offer, full ? 'OFFER' : 'OFFER_KEY');
    offerFields(w, offer, full);
    if (type === 'OfferChanged') w.strings(data['changedFields']);
  }

  function mediaData(type: string, data: unknown): void {
    if (type === 'MediaRegistered') {
      w.open(data, 'REGISTERED_DATA');
      w.strOrNull(data['mediaId']);
      w.strOrNull(data['kind']);
      w.numOrNull(data['sourceId']);
      w.strOrNull(data['slug']);
      detailsRecord(w, data['details']);
      return;
    }
    w.open(data, 'DETAILS_DATA');
    w.strOrNull(data['mediaId']);
    detailsRecord(w, data['details']);
    w.strings(data['changedFields']);
  }

  function translationData(data: unknown): void {
    w.open(data, 'TRANSLATION_DATA');
    w.strOrNull(data['mediaId']);
    w.strOrNull(data['language']);
    translationRecord(w, data['translation']);
  }

  function seasonData(data: unknown): void {
    w.open(data, 'SEASON_DATA');
    w.strOrNull(data['mediaId']);
    seasonRecord(w, data['season']);
  }

  function writeEvent(stored: object): void {
    w.open(stored, 'STORED');
    const type = stored['type'] as string;
    w.str(type);
    const data = stored['data'];
    if (type === 'MediaTranslationChanged') translationData(data);
    else if (type === 'MediaRegistered' || type === 'MediaDetailsChanged') mediaData(type, data);
    else if (type === 'SeasonChanged') seasonData(data);
    else offerData(type, data);
    const metadata = stored['metadata'];
    w.open(metadata, 'METADATA');
    w.strOrNull(metadata['observationId']);
    w.strOrNull(metadata['observedAt']);
    w.strOrNull(metadata['producer']);
    w.strOrNull(stored['streamId']);
    w.uint(stored['revision']);
    w.strOrNull(stored['recordedAt']);
  }

  return {
    encode(stored) {
      const type = (stored as { type?: unknown }).type;
      if (typeof type !== 'string' || !WRITTEN.has(type)) return null;
      return w.attempt(writeEvent, stored);
    },
  };
}
