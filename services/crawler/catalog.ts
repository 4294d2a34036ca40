/**
 * The sample crawler: a deterministic stream of Observations describing a realistic catalog
 * (the real movies of vega-datasets, generated TV shows, 50 countries with their providers,
 * offers, translations, collections and featured lists).
 *
 * `day: 0` is the initial crawl; `day: N` is what a daily crawler would re-observe on day N:
 * provider lists, titles whose popularity it re-checked, new titles, shows with new episodes,
 * the listings that changed plus a few unchanged ones, collections and featured lists. Each
 * day's state is computed from (seed, key, day) alone, never by replaying earlier days.
 */
import { AppError } from '../../contracts/errors.ts';
import { isIsoDate, mediaIdOf } from '../../contracts/ids.ts';
import { OBSERVATION_TYPES } from '../../contracts/observations.ts';
import type { Observation, ObservationType } from '../../contracts/observations.ts';
import { COUNTRY_CODES, countryIndex, countryInfo } from './countries.ts';
import type { CountryInfo } from './countries.ts';
import { Curator } from './curation.ts';
import { dateOfEpochDay, epochDayOf, isoTimestamps } from './dates.ts';
import { GENRES } from './genres.ts';
import { mediaOn, popularityOn, seasonsOn, staticMedia, translationsOf } from './media.ts';
import type { Seasons } from './media.ts';
import { isListed, listingOnDay, recrawledAnyway, renderOffers } from './offers.ts';
import { SALT, unitOf } from './prng.ts';
import { providersOnDay } from './providers.ts';
import { catalogPlan } from './titles.ts';
import type { CatalogPlan, TitleSeed } from './titles.ts';

export interface CrawlOptions {
  /** Seed of every random choice; the same options always give the same observations. Default 1. */
  seed?: number;
  /** Crawl day: 0 is the initial full crawl, N a later daily crawl. Default 0. */
  day?: number;
  /** Synthetic catalog size (1..5,000,000) instead of the default sample. Default: the sample. */
  titles?: number;
  /** Countries to crawl (upper case, a subset of COUNTRIES). Default: all 50. */
  countries?: string[];
  /** Calendar date of day 0 (`YYYY-MM-DD`). Default `2026-11-14`. */
  startDate?: string;
}

export const DEFAULT_SEED = 1;
export const DEFAULT_START_DATE = '2026-11-14';
/** Share of titles whose details a later day's crawl re-checks (and so sees new popularity). */
export const MEDIA_RECRAWL_SHARE = 0.2;

/** The hour every crawl day starts observing, UTC. */
const CRAWL_HOUR = 6;

/** Start of a crawl day: `startDate + day` at 06:00:00Z (each record adds a few milliseconds). */
export function observedAtFor(day: number, startDate: string = DEFAULT_START_DATE): string {
  return new Date(Date.UTC(1970, 0, 1 + epochDayOf(startDate) + day, CRAWL_HOUR)).toISOString().replace('.000Z', 'Z');
}

interface Resolved {
  seed: number;
  day: number;
  startDate: string;
  startDay: number;
  countries: CountryInfo[];
  plan: CatalogPlan;
}

function resolve(options: CrawlOptions): Resolved {
  const seed = options.seed ?? DEFAULT_SEED;
  const day = options.day ?? 0;
  const startDate = options.startDate ?? DEFAULT_START_DATE;
  if (!Number.isSafeInteger(seed) || seed < 0) {
    throw new AppError('invalid_parameter', `seed must be a non-negative integer, got ${seed}`, { details: { seed } });
  }
  if (!Number.isInteger(day) || day < 0 || day > 10_000) {
    throw new AppError('invalid_parameter', `day must be an integer in 0..10000, got ${day}`, { details: { day } });
  }
  if (!isIsoDate(startDate)) {
    throw new AppError('invalid_parameter', `startDate must be a date YYYY-MM-DD, got ${startDate}`, { details: { startDate } });
  }
  const codes = options.countries ?? [...COUNTRY_CODES];
  const countries: CountryInfo[] = [];
  const seen = new Set<string>();
  for (const raw of codes) {
    const info = countryInfo(raw);
    if (!info) {
      throw new AppError('invalid_parameter', `the sample catalog does not cover country ${raw}`, { details: { country: raw } });
    }
    if (seen.has(info.code)) continue;
    seen.add(info.code);
    countries.push(info);
  }
  const startDay = epochDayOf(startDate);
  const plan = catalogPlan(options.titles === undefined ? { seed, startDay } : { seed, startDay, titles: options.titles });
  return { seed, day, startDate, startDay, countries, plan };
}

/** Whether a show's visible episodes or last air date (`now`, on `today`) differ from the day before. */
function seasonsChanged(seed: number, t: TitleSeed, today: number, now: Seasons): boolean {
  if (t.show === null || !t.show.inProduction) return false;
  const before = seasonsOn(seed, t, today - 1);
  if (now.lastAirDate !== before.lastAirDate) return true;
  const count = (s: Seasons) => s.seasons.reduce((n, x) => n + x.episodes.length, 0);
  return count(now) !== count(before);
}

/**
 * The observations of one crawl, streamed: nothing is held but small per-country state and the
 * bounded candidate lists of collections and featured.
 */
export function* generateCrawl(options: CrawlOptions = {}): Generator<Observation> {
  const { seed, day, startDate, startDay, countries, plan } = resolve(options);
  const today = startDay + day;
  const dayStart = Date.parse(observedAtFor(day, startDate));
  const prefix = `crawl-${seed}${plan.tag === '' ? '' : `-${plan.tag}`}-d${day}`;
  let seq = 0;
  // Each record is a millisecond after the previous one, so records of one stream (details,
  // translations, seasons of a title) are never older than the one before them.
  const timestamp = isoTimestamps();
  const at = () => timestamp(dayStart + seq++);
  const countryCodes = countries.map((c) => c.code);
  const countryIdx = countries.map((c) => countryIndex(c.code));

  if (day === 0) {
    yield { type: 'GenresObserved', observationId: `${prefix}-genres`, observedAt: at(), data: { genres: GENRES.map((g) => ({ ...g })) } };
  }
  for (const c of countries) {
    yield {
      type: 'ProvidersObserved',
      observationId: `${prefix}-providers-${c.code}`,
      observedAt: at(),
      data: { country: c.code, providers: providersOnDay(c.code, day) },
    };
  }

  const curator = new Curator();
  // Availability answers for collection/featured candidates, so each is computed once.
  const availableMemo = new Map<string, boolean>();
  const available = (t: TitleSeed, country: string): boolean => {
    const k = `${t.key}|${country}`;
    const hit = availableMemo.get(k);
    if (hit !== undefined) return hit;
    const info = countryInfo(country) as CountryInfo;
    const ci = countryIndex(country);
    // Offers listed ahead of their first day do not make a title available yet.
    const value = isListed(seed, t, info, ci) && listingOnDay(seed, t, info, ci, day, startDay).present.some((o) => o.from === null || o.from <= today);
    availableMemo.set(k, value);
    return value;
  };

  const count = plan.countOn(day);
  for (let index = 0; index < count; index++) {
    const t = plan.titleAt(index);
    const mediaId = mediaIdOf(t.kind, t.sourceId);
    const isNew = t.introDay === day;
    // Today's seasons of a show that may have changed, computed once for the check, its
    // details' last air date and its SeasonsObserved.
    const seasons = t.show !== null && (isNew || t.show.inProduction) ? seasonsOn(seed, t, today) : null;
    const episodesChanged = !isNew && seasons !== null && seasonsChanged(seed, t, today, seasons);
    const recrawlMedia = isNew || episodesChanged || unitOf(seed, SALT.recrawlMedia, t.key, day) < MEDIA_RECRAWL_SHARE;
    // Computed once, for its details and (a new title's details are always crawled: isNew
    // implies recrawlMedia) its translations.
    const details = recrawlMedia ? staticMedia(seed, t) : null;
    if (details !== null) {
      yield { type: 'MediaObserved', observationId: `${prefix}-media-${mediaId}`, observedAt: at(), data: mediaOn(seed, t, day, today, details, seasons) };
    }
    if (isNew && details !== null) {
      for (const tr of translationsOf(seed, t, details)) {
        yield { type: 'MediaTranslationObserved', observationId: `${prefix}-translation-${mediaId}-${tr.language}`, observedAt: at(), data: tr };
      }
    }
    if (seasons !== null && (isNew || episodesChanged)) {
      yield {
        type: 'SeasonsObserved',
        observationId: `${prefix}-seasons-${mediaId}`,
        observedAt: at(),
        data: { sourceId: t.sourceId, seasons: seasons.seasons },
      };
    }
    for (let c = 0; c < countries.length; c++) {
      const info = countries[c] as CountryInfo;
      const ci = countryIdx[c] as number;
      if (!isListed(seed, t, info, ci)) continue;
      const anyway = !isNew && recrawledAnyway(seed, t, ci, day);
      const state = listingOnDay(seed, t, info, ci, day, startDay);
      // A title's first crawl reports listings that have offers; later crawls report the
      // listings that changed today and a sample of unchanged ones.
      const emit = isNew ? state.present.length > 0 : state.changedToday || anyway;
      if (!emit) continue;
      yield {
        type: 'AvailabilityObserved',
        observationId: `${prefix}-avail-${mediaId}-${info.code}`,
        observedAt: at(),
        data: { contentType: t.kind, sourceId: t.sourceId, country: info.code, offers: renderOffers(seed, t, info, ci, state, startDay) },
      };
    }
    curator.observe(t, popularityOn(seed, t, day));
  }

  for (const data of curator.collections(seed, day, countryCodes, available)) {
    yield { type: 'CollectionObserved', observationId: `${prefix}-collection-${data.slug}`, observedAt: at(), data };
  }
  for (const data of curator.featured(seed, day, countryCodes, available)) {
    yield { type: 'FeaturedObserved', observationId: `${prefix}-featured-${data.country}-${data.period}`, observedAt: at(), data };
  }
}

export interface CrawlSummary {
  counts: Record<ObservationType, number>;
  total: number;
  /** Offers across all AvailabilityObserved. */
  offers: number;
  /** Wall time of generating the crawl, ms. */
  elapsedMs: number;
}

export function emptyCounts(): Record<ObservationType, number> {
  return Object.fromEntries(OBSERVATION_TYPES.map((t) => [t, 0])) as Record<ObservationType, number>;
}

/** Counts what a crawl would publish, by generating (and dropping) it. */
export function crawlSummary(options: CrawlOptions = {}): CrawlSummary {
  const started = performance.now();
  const counts = emptyCounts();
  let total = 0;
  let offers = 0;
  for (const o of generateCrawl(options)) {
    counts[o.type]++;
    total++;
    if (o.type === 'AvailabilityObserved') offers += o.data.offers.length;
  }
  return { counts, total, offers, elapsedMs: Math.round(performance.now() - started) };
}

/** The calendar date of a crawl day. */
export function crawlDate(day: number, startDate: string = DEFAULT_START_DATE): string {
  return dateOfEpochDay(epochDayOf(startDate) + day);
}
