/**
 * `search` projection, key: media id. Folds what full-text search needs about a title from two
 * kinds of stream: its media stream (titles per language, year, genres, popularity) and its
 * availability streams (which providers offer it, per country).
 *
 * Choices (documented here because the SearchIndex consumes the result):
 * - Availability holds provider **ids (slugs)** per country, as offer events carry them, not
 *   provider short ids: short ids belong to the providers read model and may change without any
 *   offer changing. The API maps a `provider=<short_id>` filter to the provider id through the
 *   providers read model at query time, and passes that id to the index.
 * - Genres are kept as **ids** (`genreIds`); `toSearchDocument` resolves them to slugs with the
 *   genre table when the document is handed to the index, because the genre table is a separate
 *   stream and a projection folds one document at a time.
 * - To handle OfferRemoved exactly, the document counts, per country, the offers of each
 *   provider (an offer's identity includes its provider, so a removal names the provider whose
 *   count drops); availability is the providers whose count is above zero. Counting keeps the
 *   document small, which matters: this projection folds every offer event of every crawl.
 *   The counts are an array beside `availability[country]` (same order), not an object keyed
 *   by provider: every combination of providers would be another msgpack record shape, and
 *   thousands of them filled the read store's shared structures, after which every document
 *   write and read carried its shapes inline (version 3).
 * - Offers may be folded before the title's registration (different streams). Such a document
 *   is a stub (`registered: false`) that `toSearchDocument` does not index until registration.
 */
import type { Genre } from '../contracts/domain.ts';
import type { RecordedEvent } from '../contracts/events.ts';
import { kindOfMediaId } from '../contracts/ids.ts';
import { isOfferEvent } from './links.ts';
import { defineProjection } from '../contracts/projection.ts';
import type { SearchDocument } from '../contracts/ports.ts';
import { sortedRecord, withSortedKey } from './media.ts';

export interface SearchProjectionDoc extends Omit<SearchDocument, 'genres'> {
  genreIds: number[];
  /** country -> the number of offers of each provider of `availability[country]`, in that order. */
  offerCounts: Record<string, number[]>;
  /** false while only offers of the title have been folded. */
  registered: boolean;
}

export const searchProjection = defineProjection<SearchProjectionDoc>({
  name: 'search',
  version: 3,
  canHandle: [
    'MediaRegistered', 'MediaDetailsChanged', 'MediaTranslationChanged',
    'OfferAdded', 'OfferChanged', 'OfferRemoved',
  ],
  documentId(event: RecordedEvent): string | null {
    switch (event.type) {
      case 'MediaRegistered':
      case 'MediaDetailsChanged':
      case 'MediaTranslationChanged':
      case 'OfferAdded':
      case 'OfferChanged':
      case 'OfferRemoved':
        return event.data.mediaId;
      default:
        return null;
    }
  },
  evolve(doc: SearchProjectionDoc | null, event: RecordedEvent): SearchProjectionDoc | null {
    switch (event.type) {
      case 'MediaRegistered':
      case 'MediaDetailsChanged': {
        // Details changed before any registration or offer: nothing to attach them to.
        if (event.type === 'MediaDetailsChanged' && doc === null) return null;
        const base = doc ?? stub(event.data.mediaId);
        if (base === null) return null;
        const { details } = event.data;
        return {
          ...base,
          kind: event.type === 'MediaRegistered' ? event.data.kind : base.kind,
          title: details.title,
          originalTitle: details.originalTitle,
          year: details.year,
          genreIds: [...details.genreIds].sort((a, b) => a - b),
          popularity: details.popularity ?? 0,
          registered: base.registered || event.type === 'MediaRegistered',
        };
      }
      case 'MediaTranslationChanged': {
        if (doc === null) return null;
        const { language, translation } = event.data;
        const titles = { ...doc.titles };
        if (translation.title === null || translation.title === '') delete titles[language];
        else titles[language] = translation.title;
        return { ...doc, titles: sortedRecord(titles) };
      }
      case 'OfferAdded':
      case 'OfferChanged': {
        const { mediaId, country, offer } = event.data;
        const base = doc ?? stub(mediaId);
        if (base === null) return null;
        const current = countOf(base, country, offer.providerId);
        // A change is the same offer again: it counts only if its addition was never seen.
        if (event.type === 'OfferChanged' && current > 0) return base;
        return withCount(base, country, offer.providerId, current + 1);
      }
      case 'OfferRemoved': {
        if (doc === null) return null;
        const { country, offer } = event.data;
        const current = countOf(doc, country, offer.providerId);
        return withCount(doc, country, offer.providerId, Math.max(0, current - 1));
      }
      default:
        return doc;
    }
  },
  // The fold above, with each run of offer events counted in place on one copy of the
  // per-country maps, which are re-sorted once at the end of the run: a title's document holds
  // every country (up to 50), and copying both maps per offer event was most of this fold.
  evolveAll(doc: SearchProjectionDoc | null, events: readonly RecordedEvent[]): SearchProjectionDoc | null {
    let current = doc;
    let i = 0;
    while (i < events.length) {
      const first = events[i] as RecordedEvent;
      if (current === null || !isOfferEvent(first)) {
        current = searchProjection.evolve(current, first);
        i += 1;
        continue;
      }
      const run = countRun(current, events, i);
      current = run.doc;
      i = run.next;
    }
    return current;
  },
});

/** Sets `providerId`'s count in a country's arrays, in place: a provider at 0 leaves them, a new one is inserted in order. */
function setCount(providers: string[], counts: number[], providerId: string, count: number): void {
  let index = providers.indexOf(providerId);
  if (index >= 0 && count > 0) counts[index] = count;
  else if (index >= 0) {
    providers.splice(index, 1);
    counts.splice(index, 1);
  } else if (count > 0) {
    index = 0;
    while (index < providers.length && (providers[index] as string) < providerId) index += 1;
    providers.splice(index, 0, providerId);
    counts.splice(index, 0, count);
  }
}

/**
 * Folds the offer events from `events[start]` on (while they are offer events) onto `doc`, as
 * `withCount` would one by one: the same arrays, in place, on copies made once per country.
 * Stops after an event that deletes the document (a stub losing its last offer), so the caller
 * folds the rest from nothing. Keys come out ascending, as `withSortedKey` keeps them.
 */
function countRun(doc: SearchProjectionDoc, events: readonly RecordedEvent[], start: number): { doc: SearchProjectionDoc | null; next: number } {
  const availability = { ...doc.availability };
  const offerCounts = { ...doc.offerCounts };
  const copied = new Set<string>();
  let i = start;
  for (; i < events.length; i += 1) {
    const event = events[i] as RecordedEvent;
    if (!isOfferEvent(event)) break;
    const { country, offer } = event.data;
    const providerId = offer.providerId;
    if (!copied.has(country)) {
      copied.add(country);
      availability[country] = availability[country]?.slice() ?? [];
      offerCounts[country] = offerCounts[country]?.slice() ?? [];
    }
    const providers = availability[country] as string[];
    const counts = offerCounts[country] as number[];
    const index = providers.indexOf(providerId);
    const current = index < 0 ? 0 : (counts[index] ?? 0);
    if (event.type === 'OfferChanged' && current > 0) continue;
    setCount(providers, counts, providerId, event.type === 'OfferRemoved' ? Math.max(0, current - 1) : current + 1);
    if (providers.length === 0) {
      // Gone from the maps; copied again (empty) if the country comes back in this run.
      copied.delete(country);
      delete availability[country];
      delete offerCounts[country];
      if (!doc.registered && Object.keys(offerCounts).length === 0) return { doc: null, next: i + 1 };
    }
  }
  return { doc: { ...doc, offerCounts: sortedRecord(offerCounts), availability: sortedRecord(availability) }, next: i };
}

/** The index document of a title, or null while it is an unregistered stub (do not index). */
export function toSearchDocument(doc: SearchProjectionDoc, genres: readonly Genre[]): SearchDocument | null {
  if (!doc.registered) return null;
  const slugById = new Map(genres.map((g) => [g.id, g.slug] as const));
  const slugs: string[] = [];
  for (const id of doc.genreIds) {
    const slug = slugById.get(id);
    // A genre id missing from the table (not crawled yet) cannot be filtered on by slug.
    if (slug !== undefined) slugs.push(slug);
  }
  return {
    id: doc.id,
    kind: doc.kind,
    title: doc.title,
    originalTitle: doc.originalTitle,
    titles: doc.titles,
    year: doc.year,
    genres: slugs,
    popularity: doc.popularity,
    availability: doc.availability,
  };
}

function stub(mediaId: string): SearchProjectionDoc | null {
  const kind = kindOfMediaId(mediaId);
  if (kind === null) return null;
  return {
    id: mediaId,
    kind,
    title: '',
    originalTitle: null,
    titles: {},
    year: null,
    genreIds: [],
    popularity: 0,
    availability: {},
    offerCounts: {},
    registered: false,
  };
}

/** Offers of `providerId` in `country` folded into `doc`. */
function countOf(doc: SearchProjectionDoc, country: string, providerId: string): number {
  const index = doc.availability[country]?.indexOf(providerId) ?? -1;
  return index < 0 ? 0 : (doc.offerCounts[country]?.[index] ?? 0);
}

/**
 * `doc` with `providerId`'s offer count in `country` set to `count`. Providers stay in ascending
 * order (as `sort()` orders them) and countries too, so equal folds give byte-equal documents;
 * only the changed country's arrays are copied, and its maps re-sorted only when a country
 * comes or goes (this runs once per offer event).
 */
function withCount(doc: SearchProjectionDoc, country: string, providerId: string, count: number): SearchProjectionDoc | null {
  const providers = doc.availability[country]?.slice() ?? [];
  const counts = doc.offerCounts[country]?.slice() ?? [];
  setCount(providers, counts, providerId, count);
  let offerCounts: Record<string, number[]>;
  let availability: Record<string, string[]>;
  if (providers.length === 0) {
    offerCounts = { ...doc.offerCounts };
    availability = { ...doc.availability };
    delete offerCounts[country];
    delete availability[country];
  } else {
    offerCounts = withSortedKey(doc.offerCounts, country, counts);
    availability = withSortedKey(doc.availability, country, providers);
  }
  // A stub whose last offer went away describes nothing: delete it.
  if (!doc.registered && providers.length === 0 && Object.keys(offerCounts).length === 0) return null;
  return { ...doc, offerCounts, availability };
}
