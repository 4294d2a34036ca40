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
import { isCollectionSlug, isCountryCode, isIsoDate, MAX_SLUG_CHARS } from './ids.ts';
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
  if (typeof value !== 'string') return false;
  const m = RFC3339.exec(value);
  if (!m) return false;
  const [, date, hh, mm, ss, , , , oh, om] = m;
  if (date === undefined || !isIsoDate(date)) return false;
  if (Number(hh) > 23 || Number(mm) > 59 || Number(ss) > 60) return false;
  if (oh !== undefined && (Number(oh) > 23 || Number(om) > 59)) return false;
  return !Number.isNaN(Date.parse(value));
}

class Broken extends Error {}

function fail(path: string, message: string): never {
  throw new Broken(`${path}: ${message}`);
}

function show(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value);
  return JSON.stringify(value) ?? String(value);
}

function nonEmpty(v: string, path: string): void {
  if (v.trim() === '') fail(path, 'must not be empty');
}

/** Avro `int`/`long` are integers already; a double may still be NaN or infinite. */
function atLeastZero(v: number | null, path: string): void {
  if (v === null) return;
  if (!Number.isFinite(v)) fail(path, `expected a finite number, got ${show(v)}`);
  if (v < 0) fail(path, `must be >= 0, got ${v}`);
}

function date(v: string | null, path: string): void {
  if (v !== null && !isIsoDate(v)) fail(path, `expected a date YYYY-MM-DD, got ${show(v)}`);
}

function country(v: string | null, path: string): void {
  if (v !== null && !isCountryCode(v)) fail(path, `expected a two-letter country code, got ${show(v)}`);
}

function language(v: string | null, path: string): void {
  if (v !== null && !LANGUAGE.test(v)) fail(path, `expected a language code, got ${show(v)}`);
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
  d.genreIds.forEach((g, i) => atLeastZero(g, `data.genreIds[${i}]`));
  d.ratings.forEach((r, i) => {
    nonEmpty(r.source, `data.ratings[${i}].source`);
    atLeastZero(r.rating, `data.ratings[${i}].rating`);
  });
  for (const field of ['externalIds', 'videos'] as const) {
    d[field].forEach((r, i) => {
      nonEmpty(r.source, `data.${field}[${i}].source`);
      nonEmpty(r.id, `data.${field}[${i}].id`);
    });
  }
  d.contentRatings.forEach((r, i) => {
    if (!isCountryCode(r.country)) fail(`data.contentRatings[${i}].country`, `expected a two-letter country code, got ${show(r.country)}`);
    nonEmpty(r.rating, `data.contentRatings[${i}].rating`);
  });
  d.cast.forEach((c, i) => {
    const p = `data.cast[${i}]`;
    nonEmpty(c.personId, `${p}.personId`);
    nonEmpty(c.name, `${p}.name`);
    nonEmpty(c.role, `${p}.role`);
    atLeastZero(c.order, `${p}.order`);
  });
}

function mediaTranslationObserved({ data: d }: MediaTranslationObserved): void {
  mediaRef(d, 'data');
  if (!LANGUAGE.test(d.language)) fail('data.language', `expected a language code, got ${show(d.language)}`);
}

function seasonsObserved({ data: d }: SeasonsObserved): void {
  mediaRef({ contentType: 'tv_show', sourceId: d.sourceId }, 'data');
  d.seasons.forEach((s, i) => {
    const p = `data.seasons[${i}]`;
    atLeastZero(s.seasonNumber, `${p}.seasonNumber`);
    date(s.airDate, `${p}.airDate`);
    s.episodes.forEach((e, j) => {
      atLeastZero(e.episodeNumber, `${p}.episodes[${j}].episodeNumber`);
      date(e.airDate, `${p}.episodes[${j}].airDate`);
    });
    noDuplicates(s.episodes.map((e) => e.episodeNumber), `${p}.episodes`, 'episode number');
  });
  noDuplicates(d.seasons.map((s) => s.seasonNumber), 'data.seasons', 'season number');
}

function availabilityObserved({ data: d }: AvailabilityObserved): void {
  mediaRef(d, 'data');
  country(d.country, 'data.country');
  d.offers.forEach((o, i) => {
    const p = `data.offers[${i}]`;
    nonEmpty(o.providerId, `${p}.providerId`);
    atLeastZero(o.seasonNumber, `${p}.seasonNumber`);
    atLeastZero(o.episodeNumber, `${p}.episodeNumber`);
    nonEmpty(o.webUrl, `${p}.webUrl`);
    // Its link token must stay under the length /go accepts (services/links/linkTokens.ts).
    if (Buffer.byteLength(o.webUrl) > MAX_WEB_URL_BYTES) fail(`${p}.webUrl`, `longer than ${MAX_WEB_URL_BYTES} bytes`);
    // Formats are Avro strings ("4k" is no enum symbol), so their set is checked here.
    const format = o.formats?.find((f) => !FORMAT_SET.has(f));
    if (format !== undefined) fail(`${p}.formats`, `${show(format)} is not one of ${FORMATS.join(', ')}`);
    o.audioLanguages?.forEach((l, j) => nonEmpty(l, `${p}.audioLanguages[${j}]`));
    o.subtitleLanguages?.forEach((l, j) => nonEmpty(l, `${p}.subtitleLanguages[${j}]`));
    date(o.availableFrom, `${p}.availableFrom`);
    date(o.availableTo, `${p}.availableTo`);
  });
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
