/**
 * Identifiers and stream names. Media ids are `mv` + 8 digits for movies and `tv` + 8 digits
 * for TV shows, derived from the crawler's source id so a re-crawl never mints a new id.
 */
import type { ContentType } from './domain.ts';
import type { Observation } from './observations.ts';

/** Also the OpenAPI `pattern` of media id parameters: `[0-9]`, as Python's `\d` would take any digit. */
export const MEDIA_ID_PATTERN = /^(mv|tv)([0-9]{8})$/;

/**
 * Collection slugs: lower-case words and dashes (they become stream names and read-model keys),
 * at most MAX_SLUG_CHARS long, the length slugify cuts its slugs to. A much longer one would
 * not fit a store's key (LMDB refuses keys over 1,978 bytes), and no URL needs one.
 */
export const MAX_SLUG_CHARS = 80;
export const SLUG_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

export function mediaIdOf(kind: ContentType, sourceId: number): string {
  if (!Number.isInteger(sourceId) || sourceId < 0 || sourceId > 99_999_999) {
    throw new RangeError(`source id ${sourceId} does not fit a media id (0..99999999)`);
  }
  return `${kind === 'movie' ? 'mv' : 'tv'}${String(sourceId).padStart(8, '0')}`;
}

export function isMediaId(value: string): boolean {
  return MEDIA_ID_PATTERN.test(value);
}

export function kindOfMediaId(id: string): ContentType | null {
  // A test, not a match: projections ask this for every offer event they fold, and each match
  // allocated its array of groups (about 130 MB of the projection thread's garbage over a first
  // start's first day).
  if (!MEDIA_ID_PATTERN.test(id)) return null;
  return id.charCodeAt(0) === 109 /* m */ ? 'movie' : 'tv_show';
}

/** Whether a code unit is one a slug keeps: a lower-case ASCII letter or a digit. */
function isSlugCode(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 48 && c <= 57);
}

/**
 * Lower-case ASCII slug: `The Land Girls` -> `the-land-girls`. ASCII text (nearly every name and
 * title the crawler and ingest slug) takes one pass over its code units, a third of the time
 * of the normalization and five regular expressions of `slugifyUnicode`, which the rest takes
 * and which defines the slug.
 */
export function slugify(text: string): string {
  for (let i = 0; i < text.length; i++) {
    if (text.charCodeAt(i) >= 128) return slugifyUnicode(text);
  }
  const lower = text.toLowerCase();
  let out = '';
  let start = -1;
  // Runs of letters and digits joined by single dashes; `&` is the word `and` between two.
  for (let i = 0; i <= lower.length; i++) {
    const c = i < lower.length ? lower.charCodeAt(i) : 32;
    if (isSlugCode(c)) {
      if (start < 0) start = i;
      continue;
    }
    if (start >= 0) {
      out += out.length > 0 ? `-${lower.slice(start, i)}` : lower.slice(start, i);
      start = -1;
    }
    if (c === 38 /* & */) out += out.length > 0 ? '-and' : 'and';
  }
  return cut(out) || 'untitled';
}

/** The first MAX_SLUG_CHARS characters, less a dash the cut left at the end (SLUG_PATTERN has none there). */
function cut(slug: string): string {
  const head = slug.slice(0, MAX_SLUG_CHARS);
  return head.endsWith('-') ? head.slice(0, -1) : head;
}

/** `slugify` of any text: accents dropped (NFKD), `&` as `and`, every other character a separator. */
export function slugifyUnicode(text: string): string {
  const slug = text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/&/g, ' and ')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return cut(slug) || 'untitled';
}

/** A slug `slugify` could have made: what may name a collection, in ingest and in API paths alike. */
export function isCollectionSlug(value: string): boolean {
  return value.length <= MAX_SLUG_CHARS && SLUG_PATTERN.test(value);
}

export const streams = {
  media: (mediaId: string) => `media-${mediaId}`,
  availability: (mediaId: string, country: string) => `availability-${mediaId}-${country}`,
  providers: (country: string) => `providers-${country}`,
  genres: () => 'genres',
  collection: (slug: string) => `collection-${slug}`,
  featured: (country: string) => `featured-${country}`,
  ranking: (country: string) => `ranking-${country}`,
} as const;

/** The stream kind is the part before the first `-` (`availability-mv00000001-US` -> `availability`). */
export function streamKind(streamId: string): string {
  const dash = streamId.indexOf('-');
  return dash === -1 ? streamId : streamId.slice(0, dash);
}

const COUNTRY = /^[A-Za-z]{2}$/;
export function isCountryCode(value: string): boolean {
  return COUNTRY.test(value);
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
/** The value of the ASCII digits of `s` from `at` to `end`, or -1 when one is not a digit. */
export function digitsAt(s: string, at: number, end: number): number {
  let n = 0;
  for (let i = at; i < end; i += 1) {
    const d = s.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n;
}
/**
 * A real calendar date in `YYYY-MM-DD` form (ASCII digits), checked by character codes: the bus
 * calls this for the dates of every offer it decodes, and a regular expression's match array
 * per date was garbage for the collector.
 */
export function isIsoDate(value: string): boolean {
  return value.length === 10 && isIsoDateAt(value, 0);
}

/** `isIsoDate` of the 10 code units of `value` from `at` (a timestamp's date, without slicing it out). */
export function isIsoDateAt(value: string, at: number): boolean {
  if (value.length < at + 10 || value.charCodeAt(at + 4) !== 45 || value.charCodeAt(at + 7) !== 45) return false;
  const year = digitsAt(value, at, at + 4);
  const month = digitsAt(value, at + 5, at + 7);
  const day = digitsAt(value, at + 8, at + 10);
  if (year < 0 || month < 1 || month > 12 || day < 1) return false;
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const max = month === 2 && leap ? 29 : (DAYS_IN_MONTH[month - 1] ?? 0);
  return day <= max;
}

/**
 * The stream an observation concerns, the one routing shared by ingest (which decides on that
 * stream) and the Kafka transport (which keys records by it, so a stream stays in one
 * partition and in order). Country codes are accepted in any case and used upper case.
 */
export function streamOfObservation(observation: Observation): string {
  switch (observation.type) {
    case 'MediaObserved':
    case 'MediaTranslationObserved':
      return streams.media(mediaIdOf(observation.data.contentType, observation.data.sourceId));
    case 'SeasonsObserved':
      // Seasons belong to TV shows only.
      return streams.media(mediaIdOf('tv_show', observation.data.sourceId));
    case 'AvailabilityObserved':
      return streams.availability(
        mediaIdOf(observation.data.contentType, observation.data.sourceId),
        observation.data.country.toUpperCase(),
      );
    case 'ProvidersObserved':
      return streams.providers(observation.data.country.toUpperCase());
    case 'GenresObserved':
      return streams.genres();
    case 'CollectionObserved':
      return streams.collection(observation.data.slug);
    case 'FeaturedObserved':
      return streams.featured(observation.data.country.toUpperCase());
  }
}
