/**
 * A faster writer of the bytes msgpackr writes for the read store's hottest documents: `changes`
 * (blocks of offer events' changes), `links` and `availability_history` (rewritten whenever a
 * title's offers in a country change), the offers blocks of `ranking_inputs` (rewritten
 * whenever one of their titles' offers changes), the blocks of the daily charts of `rankings`,
 * the documents of the day indexes (`arrivals`, `departures`, `upcoming`), and each title's
 * `search` and `media` documents. Encoding them with msgpackr was the largest part of the
 * projection thread's time on a first start (20 of its 64 CPU seconds in a profile of the sample
 * load; the charts, day indexes, search and media documents, left to it later, 2.5 of the 3.6 s
 * it still took). Their shapes are fixed by their projections, so they are written field by
 * field instead (recordWriter.ts), with the store's shared structures, as msgpackr writes them:
 * the stored format is unchanged (the test compares the bytes).
 *
 * Anything else — another document, a key added or reordered, a shape not shared yet — returns
 * null, and the store's own encoder writes it.
 */
import {
  CAST_MEMBER, CONTENT_RATING, DETAILS, detailsRecord, EPISODE, OFFER, OFFER_KEY, offerFields, RATING, SEASON, seasonRecord, SOURCE_ID, TRANSLATION, translationRecord,
} from './eventEncoder.ts';
import { isRecord } from './recordRule.ts';
import { recordWriter, UNSUPPORTED, type RecordWriter, type SharedStructures } from './recordWriter.ts';

/** The read store's value: `{ doc, position }` (readStore.ts). */
const VALUE = ['doc', 'position'] as const;
const LINK_OFFER = [...OFFER, 'firstSeenAt', 'startedOn'] as const;
const LINKS = ['mediaId', 'kind', 'country', 'offers'] as const;
const HISTORY = ['mediaId', 'kind', 'country', 'intervals'] as const;
const INTERVAL = ['offer', 'from', 'fromPosition', 'to', 'toPosition'] as const;
// In the order the changes projection builds them.
const CHANGE_BLOCK = ['changes'] as const;
const CHANGE = ['position', 'at', 'mediaId', 'type', 'offer', 'changed'] as const;
// A `ranking_inputs` offers block (projections/rankingInputs.ts), rewritten whole whenever one
// of its titles' offers changes; its offers are strings (packRankingOffer).
const RANKING_BLOCK = ['titles'] as const;
const RANKING_TITLE = ['mediaId', 'kind', 'offers'] as const;
// A block of 50 ranks of a chart (projections/rankings.ts): every country's chart is written
// whole every day, its entries as the ranking job made them (services/ranking/formula.ts). A
// block of a day's trending (projections/trending.ts) has the same field, its entries another
// shape; the day's whole trending list is rewritten with each batch of its PositionChanged.
const ENTRIES = ['entries'] as const;
const RANKING_ENTRY = ['mediaId', 'kind', 'position', 'score', 'points'] as const;
const TRENDING_ENTRY = ['mediaId', 'kind', 'position', 'previousPosition'] as const;
const TRENDING_DAY = ['country', 'date', 'entries'] as const;
// A show's `seasons` document (projections/seasons.ts): its seasons as their events carried them.
const SEASONS = ['mediaId', 'seasons'] as const;
// An `arrivals`, `departures` or `upcoming` document (projections/dayIndexes.ts): one per title
// and day, nearly one per title and country on a first crawl.
const DAY_INDEX = ['country', 'date', 'mediaId', 'kind', 'providers'] as const;
// A title's `search` document (projections/search.ts), rewritten with each batch that touches the
// title, and its `media` document (projections/media.ts), the details as its events carried them.
// Their dictionaries keyed by country or language are maps; an empty one, a record of no fields.
const SEARCH = ['id', 'kind', 'title', 'originalTitle', 'titles', 'year', 'genreIds', 'popularity', 'availability', 'offerCounts', 'registered'] as const;
const MEDIA = ['id', 'kind', 'sourceId', 'slug', 'details', 'translations', 'firstSeenAt'] as const;
const NO_FIELDS = [] as const;
const SHAPES = {
  VALUE, OFFER, OFFER_KEY, LINK_OFFER, LINKS, HISTORY, INTERVAL, CHANGE_BLOCK, CHANGE, RANKING_BLOCK, RANKING_TITLE, ENTRIES, RANKING_ENTRY,
  TRENDING_ENTRY, TRENDING_DAY, DAY_INDEX, SEARCH, MEDIA, NO_FIELDS, DETAILS, RATING, SOURCE_ID, CONTENT_RATING, CAST_MEMBER, TRANSLATION,
  SEASONS, SEASON, EPISODE,
};

export interface ReadModelEncoder {
  /** The stored value's bytes (valid until the next call), or null when the store's encoder must write it. */
  encode(doc: unknown, position: number): Buffer | null;
}

/** `structures()` returns the store encoder's structures as they are now (see recordWriter). */
export function readModelEncoder(structures: () => SharedStructures | undefined): ReadModelEncoder {
  const w: RecordWriter<keyof typeof SHAPES> = recordWriter(SHAPES, structures);
  let position = 0;

  /** An offer, or a link offer (`linked`: the offer, its firstSeenAt and startedOn). */
  function offer(o: unknown, linked: boolean): void {
    w.open(o, linked ? 'LINK_OFFER' : 'OFFER');
    offerFields(w, o, true);
    if (linked) {
      w.strOrNull(o['firstSeenAt']);
      w.strOrNull(o['startedOn']);
    }
  }

  /** mediaId, kind and country: the first three fields of both `links` and `availability_history`. */
  function stream(doc: Record<string, unknown>): void {
    w.strOrNull(doc['mediaId']);
    w.strOrNull(doc['kind']);
    w.strOrNull(doc['country']);
  }

  function links(doc: Record<string, unknown>): void {
    w.open(doc, 'LINKS');
    stream(doc);
    const offers = doc['offers'];
    w.array(offers);
    for (let i = 0; i < offers.length; i += 1) offer(offers[i], true);
  }

  function history(doc: Record<string, unknown>): void {
    w.open(doc, 'HISTORY');
    stream(doc);
    w.records(doc['intervals'], 'INTERVAL', (interval) => {
      offer(interval['offer'], true);
      w.strOrNull(interval['from']);
      w.uint(interval['fromPosition']);
      w.strOrNull(interval['to']);
      w.uintOrNull(interval['toPosition']);
    });
  }

  /** A ChangeEntry: its offer whole, or its key alone when removed. */
  function change(doc: unknown): void {
    w.open(doc, 'CHANGE');
    w.uint(doc['position']);
    w.strOrNull(doc['at']);
    w.strOrNull(doc['mediaId']);
    const type = doc['type'];
    w.strOrNull(type);
    const o = doc['offer'];
    if (type === 'removed') {
      w.open(o, 'OFFER_KEY');
      offerFields(w, o, false);
    } else {
      offer(o, false);
    }
    w.strings(doc['changed']);
  }

  function changeBlock(doc: Record<string, unknown>): void {
    w.open(doc, 'CHANGE_BLOCK');
    const changes = doc['changes'];
    w.array(changes);
    for (let i = 0; i < changes.length; i += 1) change(changes[i]);
  }

  function rankingBlock(doc: Record<string, unknown>): void {
    w.open(doc, 'RANKING_BLOCK');
    w.records(doc['titles'], 'RANKING_TITLE', (title) => {
      w.strOrNull(title['mediaId']);
      w.strOrNull(title['kind']);
      w.strings(title['offers']);
    });
  }

  function rankingEntries(entries: unknown): void {
    w.records(entries, 'RANKING_ENTRY', (entry) => {
      w.strOrNull(entry['mediaId']);
      w.strOrNull(entry['kind']);
      w.uint(entry['position']);
      w.numOrNull(entry['score']);
      w.numOrNull(entry['points']);
    });
  }

  function trendingEntries(entries: unknown): void {
    w.records(entries, 'TRENDING_ENTRY', (entry) => {
      w.strOrNull(entry['mediaId']);
      w.strOrNull(entry['kind']);
      w.uintOrNull(entry['position']);
      w.uintOrNull(entry['previousPosition']);
    });
  }

  /** A block of a chart or of a day's trending (told apart by their first entry), or a day's whole trending list. */
  function entriesDoc(doc: Record<string, unknown>): void {
    if ('country' in doc) {
      w.open(doc, 'TRENDING_DAY');
      w.strOrNull(doc['country']);
      w.strOrNull(doc['date']);
      trendingEntries(doc['entries']);
      return;
    }
    w.open(doc, 'ENTRIES');
    const entries = doc['entries'];
    const first: unknown = Array.isArray(entries) ? entries[0] : undefined;
    if (typeof first === 'object' && first !== null && 'previousPosition' in first) trendingEntries(entries);
    else rankingEntries(entries);
  }

  function seasons(doc: Record<string, unknown>): void {
    w.open(doc, 'SEASONS');
    w.strOrNull(doc['mediaId']);
    const list = doc['seasons'];
    w.array(list);
    for (let i = 0; i < list.length; i += 1) seasonRecord(w, list[i]);
  }

  function dayIndex(doc: Record<string, unknown>): void {
    w.open(doc, 'DAY_INDEX');
    w.strOrNull(doc['country']);
    w.strOrNull(doc['date']);
    w.strOrNull(doc['mediaId']);
    w.strOrNull(doc['kind']);
    w.strings(doc['providers']);
  }

  /**
   * A dictionary keyed by data (countries, languages) as the store writes it (recordRule.ts): a
   * map, or when empty the record of no fields; one whose first key is a field name it would
   * make a record of, which no projection builds, is left to msgpackr.
   */
  function dictionary(v: unknown, value: (item: unknown) => void): void {
    if (typeof v !== 'object' || v === null || !isRecord(v)) w.map(v, value);
    else if (Object.keys(v).length === 0) w.open(v, 'NO_FIELDS');
    else throw UNSUPPORTED;
  }

  function uints(v: unknown): void {
    w.array(v);
    for (let i = 0; i < v.length; i += 1) w.uint(v[i]);
  }

  function search(doc: Record<string, unknown>): void {
    w.open(doc, 'SEARCH');
    w.strOrNull(doc['id']);
    w.strOrNull(doc['kind']);
    w.strOrNull(doc['title']);
    w.strOrNull(doc['originalTitle']);
    dictionary(doc['titles'], w.strOrNull);
    w.numOrNull(doc['year']);
    const genreIds = doc['genreIds'];
    w.array(genreIds);
    for (let i = 0; i < genreIds.length; i += 1) w.numOrNull(genreIds[i]);
    w.numOrNull(doc['popularity']);
    dictionary(doc['availability'], w.strings);
    dictionary(doc['offerCounts'], uints);
    w.boolOrNull(doc['registered']);
  }

  function media(doc: Record<string, unknown>): void {
    w.open(doc, 'MEDIA');
    w.strOrNull(doc['id']);
    w.strOrNull(doc['kind']);
    w.numOrNull(doc['sourceId']);
    w.strOrNull(doc['slug']);
    detailsRecord(w, doc['details']);
    dictionary(doc['translations'], (t) => translationRecord(w, t));
    w.strOrNull(doc['firstSeenAt']);
  }

  /**
   * Each document written here, told apart by the field only it has (open then checks every
   * other one: a trending block has entries of another shape, a `providers` document other
   * fields); the first that matches writes it. `offerCounts` comes before `titles`, which a
   * search document has too (its translated titles). A document with none is msgpackr's.
   */
  const writers: ReadonlyArray<readonly [string, (doc: Record<string, unknown>) => void]> = [
    ['offers', links], ['intervals', history], ['offerCounts', search], ['titles', rankingBlock], ['entries', entriesDoc],
    ['seasons', seasons], ['providers', dayIndex], ['details', media], ['changes', changeBlock],
  ];
  let write: (doc: Record<string, unknown>) => void = links;

  function value(doc: Record<string, unknown>): void {
    w.record('VALUE');
    write(doc);
    w.uint(position);
  }

  return {
    encode(doc, at) {
      if (typeof doc !== 'object' || doc === null) return null;
      const d = doc as Record<string, unknown>;
      const writer = writers.find(([field]) => field in d);
      if (writer === undefined) return null;
      write = writer[1];
      position = at;
      return w.attempt(value, d);
    },
  };
}
