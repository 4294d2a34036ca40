/**
 * The domain rules of observations: what their Avro schemas cannot say (an id's range, a
 * country code, a real calendar date, a non-negative count, no duplicate keys). Together with
 * the schema they are the one validation of an observation (codec.ts `validateObservation`,
 * and the buses after decoding); ingest decides on what passed both and checks nothing again.
 *
 * Called only on a value that matches its schema (decoded, or checked by the codec first), so
 * the types are known here and only values are looked at. Each reason names the field, for the
 * person reading the dead letters. Pure.
 */
import { FORMATS, MAX_WEB_URL_BYTES } from './domain.ts';
import { digitsAt, isCollectionSlug, isCountryCode, isIsoDate, isIsoDateAt, MAX_SLUG_CHARS } from './ids.ts';
import type {
  AvailabilityObserved,
  CollectionObserved,
  FeaturedObserved,
  GenresObserved,
  MediaObserved,
  MediaRef,
  MediaTranslationObserved,
  Observation,
  ProvidersObserved,
  SeasonsObserved,
} from './observations.ts';

/** Largest crawler source id that fits a media id (ids.ts `mediaIdOf`). */
export const MAX_SOURCE_ID = 99_999_999;

const RFC3339 = /^(\d{4}-\d{2}-\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|([+-])(\d{2}):(\d{2}))$/;
/** A language code such as `de`, `pt-BR` or `zh_Hans`. */
const LANGUAGE = /^[a-z]{2,3}(?:[-_][A-Za-z0-9]{2,8})*$/;
const FORMAT_SET: ReadonlySet<string> = new Set(FORMATS);

/** An RFC 3339 timestamp with a zone whose date and time of day exist. */
export function isRfc3339(value: unknown): value is string {
  return typeof value === 'string' && (isPlainRfc3339(value) || isRfc3339ByPattern(value));
}

/**
 * The whole check of isRfc3339, by its regular expression and Date.parse, which says what a
 * timestamp is; isRfc3339 runs it only where its fast path (isPlainRfc3339) does not say true.
 * Exported for the test that holds the two to the same answers.
 */
export function isRfc3339ByPattern(value: string): boolean {
  const m = RFC3339.exec(value);
  if (!m) return false;
  const [, date, hh, mm, ss, , , , oh, om] = m;
  if (date === undefined || !isIsoDate(date)) return false;
  if (Number(hh) > 23 || Number(mm) > 59 || Number(ss) > 60) return false;
  if (oh !== undefined && (Number(oh) > 23 || Number(om) > 59)) return false;
  return !Number.isNaN(Date.parse(value));
}

/**
 * The timestamps crawlers send (`2026-11-28T10:00:00Z`, with a fraction or an offset `+05:30`),
 * checked code unit by code unit: true only where the full check of isRfc3339 says true as well
 * (a date that exists, a second below 60, an offset within a day); false leaves the decision to
 * that check (a leap second, a lower-case `t` or `z`). Each observation's observedAt passes here
 * as the bus decodes it: the regular expression's captures, their numbers and Date.parse took
 * about 0.4 us a timestamp (2.5% of ingest's main thread in a profile of a 40,000-title crawl),
 * this 0.05-0.08 us.
 */
function isPlainRfc3339(v: string): boolean {
  const n = v.length;
  if (n < 20 || v.charCodeAt(10) !== 84 || v.charCodeAt(13) !== 58 || v.charCodeAt(16) !== 58) return false;
  if (!isIsoDateAt(v, 0)) return false;
  const hh = digitsAt(v, 11, 13);
  const mm = digitsAt(v, 14, 16);
  const ss = digitsAt(v, 17, 19);
  if (hh < 0 || hh > 23 || mm < 0 || mm > 59 || ss < 0 || ss > 59) return false;
  let i = 19;
  if (v.charCodeAt(i) === 46) {
    const digits = ++i;
    while (i < n && digitsAt(v, i, i + 1) >= 0) i += 1;
    if (i === digits) return false;
  }
  if (i === n - 1) return v.charCodeAt(i) === 90;
  if (i !== n - 6) return false;
  const sign = v.charCodeAt(i);
  if ((sign !== 43 && sign !== 45) || v.charCodeAt(i + 3) !== 58) return false;
  const oh = digitsAt(v, i + 1, i + 3);
  const om = digitsAt(v, i + 4, i + 6);
  return oh >= 0 && oh <= 23 && om >= 0 && om <= 59;
}

class Broken extends Error {}

function fail(path: string, message: string): never {
  throw new Broken(`${path}: ${message}`);
}

function show(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value);
  return JSON.stringify(value) ?? String(value);
}

/*
 * Every check below runs for each offer, cast member and episode of every crawl (the bus
 * validates each record it decodes), so the happy path builds no string: a field's path and
 * the reason are made only for the one that fails.
 */

function isBlank(v: string): boolean {
  return v.trim() === '';
}

function nonEmpty(v: string, path: string): void {
  if (isBlank(v)) fail(path, 'must not be empty');
}

/** Why a number breaks "finite and >= 0" (null passes), or null. Avro `int`/`long` are integers already; a double may still be NaN or infinite. */
function negativeReason(v: number | null): string | null {
  if (v === null) return null;
  if (!Number.isFinite(v)) return `expected a finite number, got ${show(v)}`;
  return v < 0 ? `must be >= 0, got ${v}` : null;
}

function atLeastZero(v: number | null, path: string): void {
  const reason = negativeReason(v);
  if (reason !== null) fail(path, reason);
}

function dateReason(v: string | null): string | null {
  return v === null || isIsoDate(v) ? null : `expected a date YYYY-MM-DD, got ${show(v)}`;
}

function date(v: string | null, path: string): void {
  const reason = dateReason(v);
  if (reason !== null) fail(path, reason);
}

function country(v: string | null, path: string): void {
  if (v !== null && !isCountryCode(v)) fail(path, `expected a two-letter country code, got ${show(v)}`);
}

function language(v: string | null, path: string): void {
  if (v !== null && !LANGUAGE.test(v)) fail(path, `expected a language code, got ${show(v)}`);
}

/** The index of the first blank string of a list (null: none), or -1. */
function firstBlank(list: readonly string[] | null | undefined): number {
  if (!list) return -1;
  for (let i = 0; i < list.length; i += 1) if (isBlank(list[i] as string)) return i;
  return -1;
}

function mediaRef(ref: MediaRef, path: string): void {
  if (ref.sourceId < 0 || ref.sourceId > MAX_SOURCE_ID) fail(`${path}.sourceId`, `source id out of range 0..${MAX_SOURCE_ID}: ${show(ref.sourceId)}`);
}

function noDuplicates(keys: ReadonlyArray<string | number>, path: string, what: string): void {
  const seen = new Set<string | number>();
  for (const key of keys) {
    if (seen.has(key)) fail(path, `duplicate ${what} ${show(String(key))}`);
    seen.add(key);
  }
}

function mediaObserved({ data: d }: MediaObserved): void {
  mediaRef(d, 'data');
  nonEmpty(d.title, 'data.title');
  atLeastZero(d.year, 'data.year');
  date(d.releaseDate, 'data.releaseDate');
  atLeastZero(d.popularity, 'data.popularity');
  atLeastZero(d.tmdbRating, 'data.tmdbRating');
  atLeastZero(d.voteCount, 'data.voteCount');
  atLeastZero(d.runtime, 'data.runtime');
  date(d.lastAirDate, 'data.lastAirDate');
  d.genreIds.forEach((g, i) => {
    const reason = negativeReason(g);
    if (reason !== null) fail(`data.genreIds[${i}]`, reason);
  });
  d.ratings.forEach((r, i) => {
    if (isBlank(r.source)) fail(`data.ratings[${i}].source`, 'must not be empty');
    const reason = negativeReason(r.rating);
    if (reason !== null) fail(`data.ratings[${i}].rating`, reason);
  });
  for (const field of ['externalIds', 'videos'] as const) {
    d[field].forEach((r, i) => {
      if (isBlank(r.source)) fail(`data.${field}[${i}].source`, 'must not be empty');
      if (isBlank(r.id)) fail(`data.${field}[${i}].id`, 'must not be empty');
    });
  }
  d.contentRatings.forEach((r, i) => {
    if (!isCountryCode(r.country)) fail(`data.contentRatings[${i}].country`, `expected a two-letter country code, got ${show(r.country)}`);
    if (isBlank(r.rating)) fail(`data.contentRatings[${i}].rating`, 'must not be empty');
  });
  d.cast.forEach((c, i) => {
    if (isBlank(c.personId)) fail(`data.cast[${i}].personId`, 'must not be empty');
    if (isBlank(c.name)) fail(`data.cast[${i}].name`, 'must not be empty');
    if (isBlank(c.role)) fail(`data.cast[${i}].role`, 'must not be empty');
    const reason = negativeReason(c.order);
    if (reason !== null) fail(`data.cast[${i}].order`, reason);
  });
}

function mediaTranslationObserved({ data: d }: MediaTranslationObserved): void {
  mediaRef(d, 'data');
  if (!LANGUAGE.test(d.language)) fail('data.language', `expected a language code, got ${show(d.language)}`);
}

function seasonsObserved({ data: d }: SeasonsObserved): void {
  mediaRef({ contentType: 'tv_show', sourceId: d.sourceId }, 'data');
  d.seasons.forEach((s, i) => {
    let reason = negativeReason(s.seasonNumber);
    if (reason !== null) fail(`data.seasons[${i}].seasonNumber`, reason);
    reason = dateReason(s.airDate);
    if (reason !== null) fail(`data.seasons[${i}].airDate`, reason);
    s.episodes.forEach((e, j) => {
      let why = negativeReason(e.episodeNumber);
      if (why !== null) fail(`data.seasons[${i}].episodes[${j}].episodeNumber`, why);
      why = dateReason(e.airDate);
      if (why !== null) fail(`data.seasons[${i}].episodes[${j}].airDate`, why);
    });
    noDuplicates(s.episodes.map((e) => e.episodeNumber), `data.seasons[${i}].episodes`, 'episode number');
  });
  noDuplicates(d.seasons.map((s) => s.seasonNumber), 'data.seasons', 'season number');
}

const offerField = (i: number, field: string): string => `data.offers[${i}].${field}`;

function availabilityObserved({ data: d }: AvailabilityObserved): void {
  mediaRef(d, 'data');
  country(d.country, 'data.country');
  const offers = d.offers;
  for (let i = 0; i < offers.length; i += 1) {
    const o = offers[i] as AvailabilityObserved['data']['offers'][number];
    if (isBlank(o.providerId)) fail(offerField(i, 'providerId'), 'must not be empty');
    let reason = negativeReason(o.seasonNumber);
    if (reason !== null) fail(offerField(i, 'seasonNumber'), reason);
    reason = negativeReason(o.episodeNumber);
    if (reason !== null) fail(offerField(i, 'episodeNumber'), reason);
    if (isBlank(o.webUrl)) fail(offerField(i, 'webUrl'), 'must not be empty');
    // Its link token must stay under the length /go accepts (services/links/linkTokens.ts). A
    // UTF-16 unit is at most 3 bytes of UTF-8, so only a long URL needs counting.
    if (o.webUrl.length * 3 > MAX_WEB_URL_BYTES && Buffer.byteLength(o.webUrl) > MAX_WEB_URL_BYTES) {
      fail(offerField(i, 'webUrl'), `longer than ${MAX_WEB_URL_BYTES} bytes`);
    }
    // Formats are Avro strings ("4k" is no enum symbol), so their set is checked here.
    const formats = o.formats;
    if (formats) {
      for (const format of formats) if (!FORMAT_SET.has(format)) fail(offerField(i, 'formats'), `${show(format)} is not one of ${FORMATS.join(', ')}`);
    }
    const audio = firstBlank(o.audioLanguages);
    if (audio >= 0) fail(offerField(i, `audioLanguages[${audio}]`), 'must not be empty');
    const subtitles = firstBlank(o.subtitleLanguages);
    if (subtitles >= 0) fail(offerField(i, `subtitleLanguages[${subtitles}]`), 'must not be empty');
    reason = dateReason(o.availableFrom);
    if (reason !== null) fail(offerField(i, 'availableFrom'), reason);
    reason = dateReason(o.availableTo);
    if (reason !== null) fail(offerField(i, 'availableTo'), reason);
  }
}

function providersObserved({ data: d }: ProvidersObserved): void {
  country(d.country, 'data.country');
  d.providers.forEach((o, i) => {
    const p = `data.providers[${i}]`;
    nonEmpty(o.id, `${p}.id`);
    nonEmpty(o.name, `${p}.name`);
    atLeastZero(o.weight, `${p}.weight`);
  });
  noDuplicates(d.providers.map((o) => o.id), 'data.providers', 'provider id');
}

function genresObserved({ data: d }: GenresObserved): void {
  d.genres.forEach((g, i) => {
    atLeastZero(g.id, `data.genres[${i}].id`);
    nonEmpty(g.slug, `data.genres[${i}].slug`);
    nonEmpty(g.name, `data.genres[${i}].name`);
  });
  noDuplicates(d.genres.map((g) => g.id), 'data.genres', 'genre id');
}

function collectionObserved({ data: d }: CollectionObserved): void {
  if (!isCollectionSlug(d.slug)) {
    fail('data.slug', d.slug.length > MAX_SLUG_CHARS
      ? `longer than ${MAX_SLUG_CHARS} characters (${d.slug.length})`
      : `expected a lower-case slug, got ${show(d.slug)}`);
  }
  // A withdrawal only needs the slug; the body is checked for what gets published.
  if (d.status === 'withdrawn') return;
  nonEmpty(d.name, 'data.name');
  country(d.country, 'data.country');
  language(d.language, 'data.language');
  d.items.forEach((item, i) => {
    mediaRef(item, `data.items[${i}]`);
    atLeastZero(item.position, `data.items[${i}].position`);
  });
}

function featuredObserved({ data: d }: FeaturedObserved): void {
  country(d.country, 'data.country');
  d.items.forEach((item, i) => {
    mediaRef(item, `data.items[${i}]`);
    atLeastZero(item.position, `data.items[${i}].position`);
  });
}

const byType: { [T in Observation['type']]: (o: Extract<Observation, { type: T }>) => void } = {
  MediaObserved: mediaObserved,
  MediaTranslationObserved: mediaTranslationObserved,
  SeasonsObserved: seasonsObserved,
  AvailabilityObserved: availabilityObserved,
  ProvidersObserved: providersObserved,
  GenresObserved: genresObserved,
  CollectionObserved: collectionObserved,
  FeaturedObserved: featuredObserved,
};

/**
 * Which domain rule a schema-valid observation breaks (`<field>: <why>`), or null. The
 * envelope first: an observation id, and an `observedAt` that is a real RFC 3339 time.
 */
export function domainRuleViolation(o: Observation): string | null {
  try {
    if (o.observationId.trim() === '') return 'observationId: empty';
    if (!isRfc3339(o.observedAt)) return `observedAt: ${show(o.observedAt)} is not an RFC 3339 timestamp`;
    (byType[o.type] as (o: Observation) => void)(o);
    return null;
  } catch (err) {
    if (err instanceof Broken) return err.message;
    throw err;
  }
}
