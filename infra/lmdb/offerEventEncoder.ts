/**
 * A faster writer of the bytes msgpackr writes for the offer events, which are most of the log
 * (83% of a sample day's events). The event store's msgpackr encoder (shared record structures)
 * spent more main-thread CPU per event than anything else in ingest: it walks a trie of key names
 * per object and dispatches on every value's type. These events have fixed shapes (the
 * availability decider builds them), so this writes them field by field instead, after checking
 * each object has exactly the expected keys in the expected order.
 *
 * The bytes are exactly msgpackr's (the test compares them over a whole sample day), so nothing
 * about the stored format changes and every reader, old or new, decodes them alike. Anything else
 * — another type, an unexpected key or value, a record structure not yet shared — returns null
 * and the store's own encoder writes the event.
 */

import { recordWriter, type RecordWriter, type SharedStructures } from './recordWriter.ts';

export type { SharedStructures };

const STORED = ['type', 'data', 'metadata', 'streamId', 'revision', 'recordedAt'] as const;
const METADATA = ['observationId', 'observedAt', 'producer'] as const;
const OFFER_DATA = ['mediaId', 'country', 'offer'] as const;
const CHANGED_DATA = ['mediaId', 'country', 'offer', 'changedFields'] as const;
export const OFFER_KEY = ['providerId', 'addonProviderId', 'seasonNumber', 'episodeNumber', 'webUrl'] as const;
export const OFFER = [
  ...OFFER_KEY, 'priceTypes', 'formats', 'audioLanguages', 'subtitleLanguages', 'availableFrom', 'availableTo', 'platforms',
] as const;
const SHAPES = { STORED, METADATA, OFFER_DATA, CHANGED_DATA, OFFER_KEY, OFFER };

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

export interface OfferEventEncoder {
  /** The event's bytes (valid until the next call), or null when the store's encoder must write it. */
  encode(stored: object): Buffer | null;
}

/** `structures()` returns the store encoder's structures as they are now (see recordWriter). */
export function offerEventEncoder(structures: () => SharedStructures | undefined): OfferEventEncoder {
  const w: RecordWriter<keyof typeof SHAPES> = recordWriter(SHAPES, structures);

  function writeEvent(stored: object): void {
    w.open(stored, 'STORED');
    const type = stored['type'];
    const data = stored['data'];
    // encode() lets only the three offer events through: the others are OfferRemoved.
    const full = type === 'OfferAdded' || type === 'OfferChanged';
    w.str(type as string);
    w.open(data, type === 'OfferChanged' ? 'CHANGED_DATA' : 'OFFER_DATA');
    w.strOrNull(data['mediaId']);
    w.strOrNull(data['country']);
    const offer = data['offer'];
    w.open(offer, full ? 'OFFER' : 'OFFER_KEY');
    offerFields(w, offer, full);
    if (type === 'OfferChanged') w.strings(data['changedFields']);
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
      if (type !== 'OfferAdded' && type !== 'OfferChanged' && type !== 'OfferRemoved') return null;
      return w.attempt(writeEvent, stored);
    },
  };
}
