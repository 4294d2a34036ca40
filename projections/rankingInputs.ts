/**
 * `ranking_inputs` read model: what the daily ranking job (services/ranking/job.ts) reads, and
 * nothing else, in blocks of titles.
 *
 * Why: the job ranks every title of every country every day. Read from `links` and `media` that
 * is one document per title and country (51,780 on the sample) decoded whole, languages,
 * platforms and URLs included, about 70 MB a day that grows with each offer, then a `media`
 * document per title: most of a sample day's ranking time, and on FerretDB a round trip and a
 * BSON<->JSON conversion per document. The formula reads of an offer only its provider, price
 * types and dates, and of a title six facts.
 *
 * Keys (block = 25 consecutive media ids, rankingBlockOf, so a block is bounded however large
 * the catalog; key order is id order):
 * - `o:${country}:${block}`: per title of the block with an offer in the country, its kind and
 *   of each offer the formula's fields and its key (`offerKeyString`), which an OfferChanged or
 *   OfferRemoved names, packed in one string (packRankingOffer). A title and its offers are there
 *   exactly when `links` has its document.
 * - `f:${block}`: per title of the block that has a `media` document, the formula's facts.
 *   Facts are per title, not per country: the job reads a block once per run for every country.
 *
 * Lists ordered by media id, not objects keyed by it: on LMDB a list of objects of one shape is
 * encoded as msgpack records (the field names once), while an object keyed by ids is a map that
 * every reader decodes key by key; on MongoDB ids as field names would be data in the schema.
 *
 * Why blocks of 25 ids: a block is rewritten whole when one of its titles changes, so its size
 * trades the job's reads against the projector's writes. Measured folding the sample week
 * (327,524 events, batches of 5,000, CPU time at load 6-8): blocks of 100 ids (2,112 documents
 * for the job, about 25 titles each) cost 6.0-6.6 s against 4.4-5.2 s for `links`; blocks of 25
 * cost about 4.0 s (19,442 writes against 60,624 for `links`) and leave the job 8,145 offer
 * blocks (at most 18 titles, 6.4 on average) and 165 facts blocks instead of 55,811 documents.
 */
import { offerKeyString, type MediaDetails, type Offer, type PriceType } from '../contracts/domain.ts';
import type { AvailabilityEvent, RecordedEvent } from '../contracts/events.ts';
import { kindOfMediaId } from '../contracts/ids.ts';
import { defineProjection } from '../contracts/projection.ts';
import type {
  RankingFacts,
  RankingFactsBlock,
  RankingInputOffer,
  RankingInputsDoc,
  RankingInputTitle,
  RankingOffersBlock,
} from '../contracts/readModels.ts';
import { isOfferEvent, OFFER_EVENT_TYPES } from './links.ts';

/**
 * The block of a media id: 25 consecutive ids (`mv00012345` -> `mv0001231`, ids 25 to 49 of the
 * hundred), in id order. Ids are two letters and eight digits (MEDIA_ID_PATTERN, checked at ingest).
 */
export function rankingBlockOf(mediaId: string): string {
  return mediaId.slice(0, -2) + String(Math.floor(Number(mediaId.slice(-2)) / BLOCK_IDS));
}

/** Ids per block (a divisor of 100). */
const BLOCK_IDS = 25;

/** The common start of the keys of a country's offer blocks. */
export function rankingOffersPrefix(country: string): string {
  return `o:${country}:`;
}

export function rankingFactsKey(block: string): string {
  return `f:${block}`;
}

function rankingFactsOf(details: MediaDetails): RankingFacts {
  return {
    tmdbRating: details.tmdbRating,
    voteCount: details.voteCount,
    popularity: details.popularity,
    releaseDate: details.releaseDate,
    lastAirDate: details.lastAirDate,
    year: details.year,
  };
}

export const rankingInputsProjection = defineProjection<RankingInputsDoc>({
  name: 'ranking_inputs',
  version: 2,
  canHandle: [...OFFER_EVENT_TYPES, 'MediaRegistered', 'MediaDetailsChanged'],
  documentId(event: RecordedEvent): string | null {
    if (isOfferEvent(event)) return rankingOffersPrefix(event.data.country) + rankingBlockOf(event.data.mediaId);
    if (event.type === 'MediaRegistered' || event.type === 'MediaDetailsChanged') return rankingFactsKey(rankingBlockOf(event.data.mediaId));
    return null;
  },
  evolve(doc: RankingInputsDoc | null, event: RecordedEvent): RankingInputsDoc | null {
    switch (event.type) {
      case 'OfferAdded':
      case 'OfferChanged':
        return withOffer(doc as RankingOffersBlock | null, event.data.mediaId, event.data.offer);
      case 'OfferRemoved':
        return withoutOffer(doc as RankingOffersBlock | null, event.data.mediaId, offerKeyString(event.data.offer));
      case 'MediaRegistered':
        return withFacts(doc as RankingFactsBlock | null, event.data.mediaId, event.data.details, true);
      case 'MediaDetailsChanged':
        return withFacts(doc as RankingFactsBlock | null, event.data.mediaId, event.data.details, false);
      default:
        return doc;
    }
  },
  // The fold above for an offers block, with its titles and each title's offers copied once per
  // batch and updated in place, instead of per event: a block's titles gain an offer per
  // episode from the same crawl. A facts block (rare events) folds event by event.
  evolveAll(doc: RankingInputsDoc | null, events: readonly RecordedEvent[]): RankingInputsDoc | null {
    if (!events.every(isOfferEvent)) return events.reduce((d, e) => rankingInputsProjection.evolve(d, e), doc);
    const block = doc as RankingOffersBlock | null;
    const titles = block?.titles.slice() ?? [];
    /** The titles whose offers are this fold's own copy (mutable). */
    const own = new Set<RankingInputTitle>();
    let changed = false;
    for (const event of events as ReadonlyArray<RecordedEvent<AvailabilityEvent>>) {
      const { mediaId } = event.data;
      const at = indexOf(titles, mediaId);
      const key = offerKeyString(event.data.offer);
      if (event.type === 'OfferRemoved') {
        const title = titles[at.index];
        if (!at.found || title === undefined) continue;
        changed = true;
        const offers = title.offers.filter((o) => rankingOfferKey(o) !== key);
        if (offers.length > 0) {
          const copy = { ...title, offers };
          own.add(copy);
          titles[at.index] = copy;
        } else titles.splice(at.index, 1);
        continue;
      }
      let title = at.found ? (titles[at.index] as RankingInputTitle) : emptyTitle(mediaId);
      if (title === null) continue;
      changed = true;
      if (!own.has(title)) {
        title = { ...title, offers: title.offers.slice() };
        own.add(title);
      }
      titles.splice(at.index, at.found ? 1 : 0, title);
      const entry = packRankingOffer(key, event.data.offer);
      const slot = offerSlot(title.offers, key);
      title.offers.splice(slot.index, slot.found ? 1 : 0, entry);
    }
    if (!changed) return doc;
    return titles.length > 0 ? { titles } : null;
  },
});

/**
 * An offer as a block stores it: `availableFrom TAB availableTo TAB priceTypes TAB n TAB key`,
 * dates empty when null, price types joined by commas (`-` for null), `n` the length of the
 * provider id in UTF-16 code units (JavaScript's `length`), which the key starts with
 * (`offerKeyString`). None of the first four can hold a
 * tab (dates are checked at ingest, price types are enum symbols), so the key, last, may hold
 * anything.
 *
 * Why one string and not an object of five fields: FerretDB 1.24 converts every value of a
 * document between BSON and JSON in Go, and its cost follows the number of values far more than
 * their bytes. The job reads every block of every country each day: on the sample (8,310
 * blocks, 208,529 offers) one such read cost FerretDB 9.5-10.3 s of CPU with offers as objects,
 * 9.1-9.5 s with keys cut to 11 characters (a third of the bytes gone), and 3.6 s with offers
 * as strings; writing the blocks 3.1 s against 1.0 s. `ranking_inputs` is the job's input and no
 * API answer's, so its offers need no fields of their own to query.
 */
export function packRankingOffer(key: string, offer: RankingInputOffer): string {
  const priceTypes = offer.priceTypes === null ? '-' : offer.priceTypes.join(',');
  return `${offer.availableFrom ?? ''}\t${offer.availableTo ?? ''}\t${priceTypes}\t${offer.providerId.length}\t${key}`;
}

/** The key (`offerKeyString`) of a packed offer. */
export function rankingOfferKey(packed: string): string {
  return packed.slice(tabAfter(packed, tabAfter(packed, tabAfter(packed, packed.indexOf('\t')))) + 1);
}

/** What the formula reads of a packed offer. */
export function unpackRankingOffer(packed: string): RankingInputOffer {
  const t1 = packed.indexOf('\t');
  const t2 = tabAfter(packed, t1);
  const t3 = tabAfter(packed, t2);
  const t4 = tabAfter(packed, t3);
  const from = packed.slice(0, t1);
  const to = packed.slice(t1 + 1, t2);
  const priceTypes = packed.slice(t2 + 1, t3);
  return {
    providerId: packed.slice(t4 + 1, t4 + 1 + Number(packed.slice(t3 + 1, t4))),
    priceTypes: priceTypes === '-' ? null : priceTypes === '' ? [] : (priceTypes.split(',') as PriceType[]),
    availableFrom: from === '' ? null : from,
    availableTo: to === '' ? null : to,
  };
}

function tabAfter(packed: string, at: number): number {
  return packed.indexOf('\t', at + 1);
}

/** As `links` does: the offer replaces the one with its key; an id that names no kind is ignored. */
function withOffer(doc: RankingOffersBlock | null, mediaId: string, offer: Offer): RankingOffersBlock | null {
  const titles = doc?.titles ?? [];
  const at = indexOf(titles, mediaId);
  const title: RankingInputTitle | null = at.found ? (titles[at.index] as RankingInputTitle) : emptyTitle(mediaId);
  if (title === null) return doc;
  const key = offerKeyString(offer);
  const offers = placed(title.offers, offerSlot(title.offers, key), packRankingOffer(key, offer));
  return { titles: placed(titles, at, { ...title, offers }) };
}

/** Offers stay in key order (code units): where the offer of `key` is, or goes. */
function offerSlot(offers: readonly string[], key: string): { index: number; found: boolean } {
  let i = 0;
  let at = '';
  while (i < offers.length && (at = rankingOfferKey(offers[i] as string)) < key) i += 1;
  return { index: i, found: i < offers.length && at === key };
}

/** As `links` does: a title without offers leaves the block, and an empty block is deleted. */
function withoutOffer(doc: RankingOffersBlock | null, mediaId: string, key: string): RankingOffersBlock | null {
  if (doc === null) return doc;
  const at = indexOf(doc.titles, mediaId);
  const title = doc.titles[at.index];
  if (!at.found || title === undefined) return doc;
  const offers = title.offers.filter((o) => rankingOfferKey(o) !== key);
  if (offers.length > 0) return { titles: placed(doc.titles, at, { ...title, offers }) };
  const titles = doc.titles.filter((_, i) => i !== at.index);
  return titles.length > 0 ? { titles } : null;
}

function emptyTitle(mediaId: string): RankingInputTitle | null {
  const kind = kindOfMediaId(mediaId);
  return kind === null ? null : { mediaId, kind, offers: [] };
}

/**
 * As `media` does: a registration sets the facts, a details change only those of a title
 * registered (a `media` document exists).
 */
function withFacts(doc: RankingFactsBlock | null, mediaId: string, details: MediaDetails, registers: boolean): RankingFactsBlock | null {
  const facts = doc?.facts ?? [];
  const at = indexOf(facts, mediaId);
  if (!registers && !at.found) return doc;
  return { facts: placed(facts, at, { mediaId, ...rankingFactsOf(details) }) };
}

type Slot = { index: number; found: boolean };

/** Where `mediaId` is, or goes, in a list ordered by media id (at most 100 entries: a walk). */
function indexOf(list: ReadonlyArray<{ mediaId: string }>, mediaId: string): Slot {
  let index = 0;
  while (index < list.length && (list[index] as { mediaId: string }).mediaId < mediaId) index += 1;
  return { index, found: list[index]?.mediaId === mediaId };
}

/** A copy of `list` with `item` in `slot` (replacing the entry found there, or inserted). */
function placed<T>(list: readonly T[], slot: Slot, item: T): T[] {
  const out = list.slice();
  out.splice(slot.index, slot.found ? 1 : 0, item);
  return out;
}
