/**
 * Field checks of observations. Observations arrive from crawlers we do not control (Avro over
 * Kafka, or JSON published through the CLI), so every field is checked for type and range
 * before anything is decided; the reason names the field, for the person reading dead letters.
 * Pure: no I/O.
 */
import { FORMATS, PLATFORMS, PRICE_TYPES } from '../../contracts/domain.ts';
import { isIsoDate } from '../../contracts/ids.ts';
import { OBSERVATION_TYPES } from '../../contracts/observations.ts';
import type { Observation } from '../../contracts/observations.ts';

/** Largest crawler source id that fits a media id (contracts/ids.ts `mediaIdOf`). */
const MAX_SOURCE_ID = 99_999_999;

const RFC3339 = /^(\d{4}-\d{2}-\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|([+-])(\d{2}):(\d{2}))$/;
const COUNTRY = /^[A-Za-z]{2}$/;
/** A language code such as `de`, `pt-BR` or `zh_Hans`. */
const LANGUAGE = /^[a-z]{2,3}(?:[-_][A-Za-z0-9]{2,8})*$/;
/** Collection slugs become stream names, so they are kept to lower-case words and dashes. */
const SLUG = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

class Invalid extends Error {}

function fail(path: string, message: string): never {
  throw new Invalid(`${path}: ${message}`);
}

function show(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value);
  if (value === undefined) return 'missing';
  return JSON.stringify(value) ?? String(value);
}

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

function object(v: unknown, path: string): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) fail(path, `expected an object, got ${show(v)}`);
  return v as Record<string, unknown>;
}

function array(v: unknown, path: string): unknown[] {
  if (!Array.isArray(v)) fail(path, `expected an array, got ${show(v)}`);
  return v;
}

function string(v: unknown, path: string, nonEmpty = false): string {
  if (typeof v !== 'string') fail(path, `expected a string, got ${show(v)}`);
  if (nonEmpty && v.trim() === '') fail(path, 'must not be empty');
  return v;
}

function optString(v: unknown, path: string): void {
  if (v !== null) string(v, path);
}

function int(v: unknown, path: string, min = 0, max = Number.MAX_SAFE_INTEGER): void {
  if (typeof v !== 'number' || !Number.isInteger(v)) fail(path, `expected an integer, got ${show(v)}`);
  if (v < min) fail(path, `must be >= ${min}, got ${v}`);
  if (v > max) fail(path, `must be <= ${max}, got ${v}`);
}

function optInt(v: unknown, path: string, min = 0): void {
  if (v !== null) int(v, path, min);
}

function num(v: unknown, path: string, min = -Infinity): void {
  if (typeof v !== 'number' || !Number.isFinite(v)) fail(path, `expected a finite number, got ${show(v)}`);
  if (v < min) fail(path, `must be >= ${min}, got ${v}`);
}

function optNum(v: unknown, path: string, min = -Infinity): void {
  if (v !== null) num(v, path, min);
}

function optBool(v: unknown, path: string): void {
  if (v !== null && typeof v !== 'boolean') fail(path, `expected a boolean or null, got ${show(v)}`);
}

function optDate(v: unknown, path: string): void {
  if (v === null) return;
  if (typeof v !== 'string' || !isIsoDate(v)) fail(path, `expected a date YYYY-MM-DD, got ${show(v)}`);
}

function country(v: unknown, path: string): void {
  if (typeof v !== 'string' || !COUNTRY.test(v)) fail(path, `expected a two-letter country code, got ${show(v)}`);
}

function optCountry(v: unknown, path: string): void {
  if (v !== null) country(v, path);
}

function language(v: unknown, path: string): void {
  if (typeof v !== 'string' || !LANGUAGE.test(v)) fail(path, `expected a language code, got ${show(v)}`);
}

function optLanguage(v: unknown, path: string): void {
  if (v !== null) language(v, path);
}

function sourceId(v: unknown, path: string): void {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > MAX_SOURCE_ID) {
    fail(path, `source id out of range 0..${MAX_SOURCE_ID}: ${show(v)}`);
  }
}

function contentType(v: unknown, path: string): void {
  if (v !== 'movie' && v !== 'tv_show') fail(path, `unknown content type ${show(v)} (movie, tv_show)`);
}

function optEnumArray(v: unknown, path: string, allowed: readonly string[], what: string): void {
  if (v === null) return;
  array(v, path).forEach((item, i) => {
    if (typeof item !== 'string' || !allowed.includes(item)) {
      fail(`${path}[${i}]`, `unknown ${what} ${show(item)} (${allowed.join(', ')})`);
    }
  });
}

function optStringArray(v: unknown, path: string): void {
  if (v === null) return;
  array(v, path).forEach((item, i) => string(item, `${path}[${i}]`, true));
}

function each(v: unknown, path: string, check: (item: Record<string, unknown>, path: string) => void): void {
  array(v, path).forEach((item, i) => check(object(item, `${path}[${i}]`), `${path}[${i}]`));
}

function noDuplicates(keys: string[], path: string, what: string): void {
  const seen = new Set<string>();
  for (const key of keys) {
    if (seen.has(key)) fail(path, `duplicate ${what} ${show(key)}`);
    seen.add(key);
  }
}

function mediaObserved(d: Record<string, unknown>): void {
  contentType(d.contentType, 'data.contentType');
  sourceId(d.sourceId, 'data.sourceId');
  string(d.title, 'data.title', true);
  optString(d.originalTitle, 'data.originalTitle');
  optInt(d.year, 'data.year');
  optDate(d.releaseDate, 'data.releaseDate');
  optString(d.tagline, 'data.tagline');
  optString(d.overview, 'data.overview');
  optString(d.classification, 'data.classification');
  optString(d.poster, 'data.poster');
  optString(d.backdrop, 'data.backdrop');
  optNum(d.popularity, 'data.popularity', 0);
  optNum(d.tmdbRating, 'data.tmdbRating', 0);
  optInt(d.voteCount, 'data.voteCount');
  optInt(d.runtime, 'data.runtime');
  optBool(d.inProduction, 'data.inProduction');
  optDate(d.lastAirDate, 'data.lastAirDate');
  array(d.genreIds, 'data.genreIds').forEach((g, i) => int(g, `data.genreIds[${i}]`));
  each(d.ratings, 'data.ratings', (r, p) => {
    string(r.source, `${p}.source`, true);
    num(r.rating, `${p}.rating`, 0);
  });
  each(d.externalIds, 'data.externalIds', (r, p) => {
    string(r.source, `${p}.source`, true);
    string(r.id, `${p}.id`, true);
  });
  each(d.videos, 'data.videos', (r, p) => {
    string(r.source, `${p}.source`, true);
    string(r.id, `${p}.id`, true);
  });
  each(d.contentRatings, 'data.contentRatings', (r, p) => {
    country(r.country, `${p}.country`);
    string(r.rating, `${p}.rating`, true);
  });
  each(d.cast, 'data.cast', (r, p) => {
    string(r.personId, `${p}.personId`, true);
    string(r.name, `${p}.name`, true);
    string(r.role, `${p}.role`, true);
    optString(r.character, `${p}.character`);
    int(r.order, `${p}.order`);
  });
}

function mediaTranslationObserved(d: Record<string, unknown>): void {
  contentType(d.contentType, 'data.contentType');
  sourceId(d.sourceId, 'data.sourceId');
  language(d.language, 'data.language');
  for (const field of ['title', 'overview', 'tagline', 'poster', 'backdrop']) optString(d[field], `data.${field}`);
}

function seasonsObserved(d: Record<string, unknown>): void {
  sourceId(d.sourceId, 'data.sourceId');
  const numbers: string[] = [];
  each(d.seasons, 'data.seasons', (s, p) => {
    int(s.seasonNumber, `${p}.seasonNumber`);
    numbers.push(String(s.seasonNumber));
    string(s.title, `${p}.title`);
    optString(s.overview, `${p}.overview`);
    optString(s.poster, `${p}.poster`);
    optDate(s.airDate, `${p}.airDate`);
    const episodes: string[] = [];
    each(s.episodes, `${p}.episodes`, (e, ep) => {
      int(e.episodeNumber, `${ep}.episodeNumber`);
      episodes.push(String(e.episodeNumber));
      string(e.title, `${ep}.title`);
      optString(e.overview, `${ep}.overview`);
      optString(e.backdrop, `${ep}.backdrop`);
      optDate(e.airDate, `${ep}.airDate`);
    });
    noDuplicates(episodes, `${p}.episodes`, 'episode number');
  });
  noDuplicates(numbers, 'data.seasons', 'season number');
}

function availabilityObserved(d: Record<string, unknown>): void {
  contentType(d.contentType, 'data.contentType');
  sourceId(d.sourceId, 'data.sourceId');
  country(d.country, 'data.country');
  each(d.offers, 'data.offers', (o, p) => {
    string(o.providerId, `${p}.providerId`, true);
    optString(o.addonProviderId, `${p}.addonProviderId`);
    optInt(o.seasonNumber, `${p}.seasonNumber`);
    optInt(o.episodeNumber, `${p}.episodeNumber`);
    string(o.webUrl, `${p}.webUrl`, true);
    optEnumArray(o.priceTypes, `${p}.priceTypes`, PRICE_TYPES, 'price type');
    optEnumArray(o.formats, `${p}.formats`, FORMATS, 'format');
    optStringArray(o.audioLanguages, `${p}.audioLanguages`);
    optStringArray(o.subtitleLanguages, `${p}.subtitleLanguages`);
    optDate(o.availableFrom, `${p}.availableFrom`);
    optDate(o.availableTo, `${p}.availableTo`);
    optEnumArray(o.platforms, `${p}.platforms`, PLATFORMS, 'platform');
  });
}

function providersObserved(d: Record<string, unknown>): void {
  country(d.country, 'data.country');
  const ids: string[] = [];
  each(d.providers, 'data.providers', (o, p) => {
    ids.push(string(o.id, `${p}.id`, true));
    optString(o.parentId, `${p}.parentId`);
    string(o.name, `${p}.name`, true);
    optString(o.logo, `${p}.logo`);
    optString(o.shortId, `${p}.shortId`);
    num(o.weight, `${p}.weight`, 0);
  });
  noDuplicates(ids, 'data.providers', 'provider id');
}

function genresObserved(d: Record<string, unknown>): void {
  const ids: string[] = [];
  each(d.genres, 'data.genres', (g, p) => {
    int(g.id, `${p}.id`);
    ids.push(String(g.id));
    string(g.slug, `${p}.slug`, true);
    string(g.name, `${p}.name`, true);
  });
  noDuplicates(ids, 'data.genres', 'genre id');
}

function collectionObserved(d: Record<string, unknown>): void {
  if (typeof d.slug !== 'string' || !SLUG.test(d.slug)) fail('data.slug', `expected a lower-case slug, got ${show(d.slug)}`);
  if (d.status !== 'published' && d.status !== 'withdrawn') fail('data.status', `unknown status ${show(d.status)} (published, withdrawn)`);
  // A withdrawal only needs the slug; the body is checked for what gets published.
  if (d.status === 'withdrawn') return;
  string(d.name, 'data.name', true);
  optString(d.description, 'data.description');
  optCountry(d.country, 'data.country');
  optLanguage(d.language, 'data.language');
  each(d.items, 'data.items', (item, p) => {
    contentType(item.contentType, `${p}.contentType`);
    sourceId(item.sourceId, `${p}.sourceId`);
    optInt(item.position, `${p}.position`);
  });
}

function featuredObserved(d: Record<string, unknown>): void {
  country(d.country, 'data.country');
  if (d.period !== 'daily' && d.period !== 'weekly') fail('data.period', `unknown period ${show(d.period)} (daily, weekly)`);
  each(d.items, 'data.items', (item, p) => {
    contentType(item.contentType, `${p}.contentType`);
    sourceId(item.sourceId, `${p}.sourceId`);
    int(item.position, `${p}.position`);
  });
}

const byType: Record<Observation['type'], (data: Record<string, unknown>) => void> = {
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
 * Why an observation is invalid (a sentence naming the field), or null when it is valid.
 * Accepts `unknown` because a JSON-published observation has not been typed by a codec.
 */
export function invalidReason(value: unknown): string | null {
  try {
    const o = object(value, 'observation');
    if (typeof o.type !== 'string' || !(OBSERVATION_TYPES as readonly string[]).includes(o.type)) {
      fail('type', `unknown observation type ${show(o.type)}`);
    }
    if (typeof o.observationId !== 'string' || o.observationId.trim() === '') {
      fail('observationId', `missing observation id (got ${show(o.observationId)})`);
    }
    if (!isRfc3339(o.observedAt)) fail('observedAt', `expected an RFC 3339 timestamp, got ${show(o.observedAt)}`);
    byType[o.type as Observation['type']](object(o.data, 'data'));
    return null;
  } catch (err) {
    if (err instanceof Invalid) return err.message;
    throw err;
  }
}
