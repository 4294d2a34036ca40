/**
 * The titles of a crawl. The default sample is the 3,201 real movies of vega-datasets plus 800
 * generated TV shows; `titles: N` is a synthetic catalog of N generated titles. Either way a title
 * is computed from its catalog index alone (`titleAt`), so a crawl streams the catalog without
 * holding it, and a few new titles join the catalog on every later day.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { ContentType } from '../../contracts/domain.ts';
import { AppError } from '../../contracts/errors.ts';
import { dateOfEpochDay, epochDayOf, parseVegaDate, yearOfEpochDay } from './dates.ts';
import { CREATIVE_TYPE_SLUG, MAJOR_GENRE_SLUGS, MOVIE_GENRE_POOL, TV_GENRE_POOL } from './genres.ts';
import { hashInts, rngOf, SALT, weightTotal } from './prng.ts';
import type { Rng } from './prng.ts';
import { renderEnglish, renderTitle } from './translate.ts';
import type { TitleParts } from './translate.ts';
import { ADJECTIVES, FIRST_NAMES, LAST_NAMES, NOUNS, PLACES, TRANSLATION_LANGUAGES } from './words.ts';
import type { TranslationLanguage } from './words.ts';

export interface ShowPlan {
  /** Air date of each season's first episode, as epoch days. */
  seasonStarts: number[];
  /** Episode count of each season. */
  episodes: number[];
  inProduction: boolean;
}

export interface TitleSeed {
  /** Position in the catalog; titles at index >= the base count appear on later days. */
  index: number;
  kind: ContentType;
  sourceId: number;
  /** Unique numeric key of the title, for keyed random draws. */
  key: number;
  /** Crawl day on which the title first appears (0 for the initial catalog). */
  introDay: number;
  title: string;
  /** Set for generated titles: lets translations render a localized title. */
  parts: TitleParts | null;
  originalLanguage: string;
  originalTitle: string;
  year: number | null;
  releaseDate: string | null;
  genreSlugs: string[];
  /** US rating (MPAA or TV Parental Guidelines), null when unknown. */
  usRating: string | null;
  /** Age class for other countries' ratings: 0, 6, 12, 16 or 18. */
  age: number;
  runtime: number | null;
  imdbRating: number | null;
  imdbVotes: number | null;
  rtRating: number | null;
  director: string;
  gross: number | null;
  /** Popularity on day 0 before drift. */
  basePopularity: number;
  /** True for vega-datasets movies (real data). */
  real: boolean;
  show: ShowPlan | null;
}

export interface CatalogPlan {
  /** Tag that keeps observation ids of different catalogs apart (`''` for the default sample). */
  tag: string;
  baseCount: number;
  newPerDay: number;
  /** Titles present on `day`: indexes [0, countOn(day)). */
  countOn(day: number): number;
  titleAt(index: number): TitleSeed;
}

interface VegaMovie {
  Title: string | number | null;
  'Worldwide Gross': number | null;
  'US Gross': number | null;
  'Release Date': string | null;
  'MPAA Rating': string | null;
  'Running Time min': number | null;
  'Major Genre': string | null;
  'Creative Type': string | null;
  Director: string | null;
  'Rotten Tomatoes Rating': number | null;
  'IMDB Rating': number | null;
  'IMDB Votes': number | null;
}

let vegaCache: VegaMovie[] | null = null;

/** The vega-datasets movies, read once (the package exports no subpath, so it is read from disk). */
export function vegaMovies(): VegaMovie[] {
  if (vegaCache) return vegaCache;
  const require = createRequire(import.meta.url);
  const entry = require.resolve('vega-datasets');
  // build/index.js -> package root
  const file = join(dirname(dirname(entry)), 'data', 'movies.json');
  const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
  if (!Array.isArray(parsed)) throw new AppError('internal', `${file} is not a JSON array`);
  vegaCache = parsed as VegaMovie[];
  return vegaCache;
}

/**
 * vega-datasets' 20 non-English titles were written as Windows-1252 and read back as Mac Roman:
 * `LÈon`, `DÈj‡ Vu`, `Le Fabuleux destin d'AmÈlie Poulain` (so a search for "amelie" found
 * Amelia first). A title every one of whose non-ASCII characters is a Mac Roman one is turned
 * back into those bytes and read as Windows-1252 (`Léon`, `Déjà Vu`, `Amélie`); one with another
 * character (`Alien³`) is left as it is, and `Ri¢hie Ri¢h` comes out the same.
 */
function repairedTitle(title: string): string {
  if (!/[^\x00-\x7f]/.test(title)) return title;
  const bytes: number[] = [];
  for (const char of title) {
    const code = char.charCodeAt(0);
    const byte = code < 0x80 ? code : macRomanBytes().get(char);
    if (byte === undefined) return title;
    bytes.push(byte);
  }
  return new TextDecoder('windows-1252').decode(Uint8Array.from(bytes));
}

let macRoman: Map<string, number> | null = null;
/** Mac Roman's upper half, character to byte. */
function macRomanBytes(): Map<string, number> {
  if (macRoman !== null) return macRoman;
  const decoder = new TextDecoder('macintosh');
  macRoman = new Map(Array.from({ length: 128 }, (_, i) => [decoder.decode(Uint8Array.of(0x80 + i)), 0x80 + i] as const));
  return macRoman;
}

export const DEFAULT_SHOWS = 800;
/** New titles a later day adds to the default sample. */
export const NEW_TITLES_PER_DAY = 5;
const SHOW_SOURCE_BASE = 20_000;
const NEW_SOURCE_BASE = 100_000;
const MAX_SYNTHETIC = 5_000_000;

const AGE_OF_MPAA: Record<string, number> = { G: 0, PG: 6, 'PG-13': 12, R: 16, 'NC-17': 18 };
const TV_RATING_OF_AGE: Record<number, string> = { 0: 'TV-G', 6: 'TV-PG', 12: 'TV-14', 16: 'TV-MA', 18: 'TV-MA' };

function titleKey(kind: ContentType, sourceId: number): number {
  return (kind === 'movie' ? 0 : 100_000_000) + sourceId;
}

/** A genre pool taken apart once, not per title: its slugs, their weights and the weights' total. */
interface SlugPool {
  slugs: string[];
  weights: number[];
  total: number;
}

function slugPool(pool: ReadonlyArray<readonly [string, number]>): SlugPool {
  const weights = pool.map((p) => p[1]);
  return { slugs: pool.map((p) => p[0]), weights, total: weightTotal(weights) };
}

const MOVIE_GENRES = slugPool(MOVIE_GENRE_POOL);
const TV_GENRES = slugPool(TV_GENRE_POOL);

function weightedSlug(rng: Rng, pool: SlugPool): string {
  return pool.slugs[rng.weightedIndex(pool.weights, pool.total)] as string;
}

function personName(rng: Rng): string {
  return `${rng.pick(FIRST_NAMES)} ${rng.pick(LAST_NAMES)}`;
}

function ageFromGenres(slugs: readonly string[]): number {
  if (slugs.includes('horror')) return 16;
  if (slugs.includes('kids')) return 0;
  if (slugs.includes('family') || slugs.includes('animation') || slugs.includes('documentary')) return 6;
  if (slugs.includes('thriller') || slugs.includes('crime') || slugs.includes('war')) return 16;
  return 12;
}

function generatedParts(rng: Rng, allowSuffix: boolean): TitleParts {
  const u = rng.next();
  const suffix = allowSuffix && rng.chance(0.05) ? rng.pick([' 2', ' II', ' 3', ': Reborn', ': The Return']) : '';
  const adj = rng.int(0, ADJECTIVES.length - 1);
  const noun = rng.int(0, NOUNS.length - 1);
  const place = rng.int(0, PLACES.length - 1);
  if (u < 0.38) return { pattern: 'the-adj-noun', adj, noun, suffix };
  if (u < 0.62) return { pattern: 'adj-noun', adj, noun, suffix };
  if (u < 0.76) return { pattern: 'the-noun', noun, suffix };
  if (u < 0.92) return { pattern: 'noun-of-place', noun, place, suffix };
  return { pattern: 'place', place, suffix };
}

function originalLanguageOf(rng: Rng): string {
  const u = rng.next();
  if (u < 0.74) return 'en';
  return rng.pick(['ko', 'ko', 'ja', 'ja', 'es', 'es', 'de', 'fr', 'fr', 'it', 'nl', 'pt']);
}

function originalTitleOf(title: string, parts: TitleParts | null, language: string): string {
  if (parts === null || language === 'en') return title;
  return (TRANSLATION_LANGUAGES as readonly string[]).includes(language) ? renderTitle(parts, language as TranslationLanguage) : title;
}

/** TMDB-like popularity from audience size: ~0.6 for an obscure title, 100+ for a hit. */
function popularityFrom(votes: number, gross: number, rng: Rng): number {
  const p = 0.6 + 3.2 * Math.log1p(votes / 300) + 6 * Math.log1p(gross / 5e7) + rng.next() * 2;
  return Math.round(p * 1000) / 1000;
}

function vegaTitle(seed: number, index: number, latestYear: number): TitleSeed {
  const m = vegaMovies()[index] as VegaMovie;
  const sourceId = 1000 + index;
  const key = titleKey('movie', sourceId);
  const rng = rngOf(seed, SALT.title, key);
  const title = m.Title === null || String(m.Title).trim() === '' ? 'Untitled' : repairedTitle(String(m.Title));
  const releaseDate = parseVegaDate(m['Release Date'], latestYear);
  const slugs = new Set<string>(MAJOR_GENRE_SLUGS[m['Major Genre'] ?? ''] ?? []);
  const creative = CREATIVE_TYPE_SLUG[m['Creative Type'] ?? ''];
  if (creative !== undefined) slugs.add(creative);
  if (slugs.size === 0) slugs.add(rng.pick(['drama', 'comedy', 'thriller']));
  const genreSlugs = [...slugs];
  const mpaa = m['MPAA Rating'];
  const usRating = mpaa === null || mpaa === 'Open' ? null : mpaa === 'Not Rated' ? 'NR' : mpaa;
  const age = AGE_OF_MPAA[mpaa ?? ''] ?? ageFromGenres(genreSlugs);
  const votes = m['IMDB Votes'];
  const gross = m['Worldwide Gross'] ?? m['US Gross'];
  return {
    index,
    kind: 'movie',
    sourceId,
    key,
    introDay: 0,
    title,
    parts: null,
    originalLanguage: 'en',
    originalTitle: title,
    year: releaseDate === null ? null : Number(releaseDate.slice(0, 4)),
    releaseDate,
    genreSlugs,
    usRating,
    age,
    runtime: m['Running Time min'] ?? rng.int(86, 128),
    imdbRating: m['IMDB Rating'],
    imdbVotes: votes,
    rtRating: m['Rotten Tomatoes Rating'],
    director: m.Director ?? personName(rng),
    gross,
    basePopularity: popularityFrom(votes ?? 50, gross ?? 0, rng),
    real: true,
    show: null,
  };
}

function generatedMovie(seed: number, index: number, sourceId: number, introDay: number, startDay: number): TitleSeed {
  const key = titleKey('movie', sourceId);
  const rng = rngOf(seed, SALT.title, key);
  const parts = generatedParts(rng, true);
  const title = renderEnglish(parts);
  const originalLanguage = originalLanguageOf(rng);
  const startYear = yearOfEpochDay(startDay);
  // New arrivals are recent releases; the back catalog skews towards the last two decades.
  const releaseDay = introDay > 0
    ? startDay + introDay - rng.int(0, 120)
    : epochDayOf(`${startYear - Math.floor(Math.pow(rng.next(), 1.8) * 60)}-01-01`) + rng.int(0, 364);
  const releaseDate = dateOfEpochDay(Math.min(releaseDay, startDay + introDay));
  const genres = new Set<string>([weightedSlug(rng, MOVIE_GENRES)]);
  if (rng.chance(0.45)) genres.add(weightedSlug(rng, MOVIE_GENRES));
  const genreSlugs = [...genres];
  const age = rng.chance(0.7) ? ageFromGenres(genreSlugs) : rng.pick([0, 6, 12, 16, 18]);
  const usRating = rng.chance(0.1) ? null : ({ 0: 'G', 6: 'PG', 12: 'PG-13', 16: 'R', 18: 'NC-17' } as Record<number, string>)[age] ?? 'NR';
  const votes = Math.floor(Math.exp(rng.next() * 12));
  const gross = rng.chance(0.6) ? Math.floor(Math.exp(8 + rng.next() * 12)) : null;
  return {
    index,
    kind: 'movie',
    sourceId,
    key,
    introDay,
    title,
    parts,
    originalLanguage,
    originalTitle: originalTitleOf(title, parts, originalLanguage),
    year: Number(releaseDate.slice(0, 4)),
    releaseDate,
    genreSlugs,
    usRating,
    age,
    runtime: rng.int(78, 165),
    imdbRating: Math.round((4 + rng.next() * 4.8) * 10) / 10,
    imdbVotes: votes,
    rtRating: rng.chance(0.4) ? rng.int(5, 100) : null,
    director: personName(rng),
    gross,
    basePopularity: popularityFrom(votes, gross ?? 0, rng) * (introDay > 0 ? 3 : 1),
    real: false,
    show: null,
  };
}

function generatedShow(seed: number, index: number, sourceId: number, introDay: number, startDay: number): TitleSeed {
  const key = titleKey('tv_show', sourceId);
  const rng = rngOf(seed, SALT.title, key);
  const parts = generatedParts(rng, false);
  const title = renderEnglish(parts);
  const originalLanguage = originalLanguageOf(rng);
  const today = startDay + introDay;
  const startYear = yearOfEpochDay(startDay);
  const inProduction = introDay > 0 || rng.chance(0.35);
  // First season: new shows premiere now; others between 1995 and last year.
  // An ended show started at least two years ago, so all its episodes aired before day 0.
  const firstYear = introDay > 0 ? yearOfEpochDay(today) : startYear - 2 - Math.floor(Math.pow(rng.next(), 1.5) * 29);
  const maxSeasons = Math.max(1, Math.min(8, startYear - firstYear));
  const seasons = introDay > 0 ? 1 : rng.int(1, maxSeasons);
  const episodes: number[] = [];
  const seasonStarts: number[] = [];
  // Seasons roughly yearly; an in-production show's last season is airing around day 0.
  const lastStart = inProduction ? today - rng.int(0, introDay > 0 ? 6 : 70) : 0;
  const firstStart = inProduction
    ? lastStart - (seasons - 1) * 365
    : epochDayOf(`${firstYear}-01-01`) + rng.int(0, 300);
  for (let s = 0; s < seasons; s++) {
    episodes.push(rng.int(6, 12));
    seasonStarts.push(firstStart + s * 365 + (s === seasons - 1 && inProduction ? 0 : rng.int(-40, 40)));
  }
  const genres = new Set<string>([weightedSlug(rng, TV_GENRES)]);
  if (rng.chance(0.5)) genres.add(weightedSlug(rng, TV_GENRES));
  const genreSlugs = [...genres];
  const age = ageFromGenres(genreSlugs);
  const votes = Math.floor(Math.exp(rng.next() * 11));
  const firstAir = dateOfEpochDay(seasonStarts[0] as number);
  return {
    index,
    kind: 'tv_show',
    sourceId,
    key,
    introDay,
    title,
    parts,
    originalLanguage,
    originalTitle: originalTitleOf(title, parts, originalLanguage),
    year: Number(firstAir.slice(0, 4)),
    releaseDate: firstAir,
    genreSlugs,
    usRating: rng.chance(0.1) ? null : genreSlugs.includes('kids') ? 'TV-Y7' : TV_RATING_OF_AGE[age] ?? 'TV-14',
    age,
    runtime: rng.pick([22, 24, 28, 30, 42, 45, 50, 55, 58, 60]),
    imdbRating: Math.round((5 + rng.next() * 4.2) * 10) / 10,
    imdbVotes: votes,
    rtRating: rng.chance(0.3) ? rng.int(30, 100) : null,
    director: personName(rng),
    gross: null,
    basePopularity: Math.round((popularityFrom(votes, 0, rng) * (inProduction ? 2.2 : 1)) * 1000) / 1000,
    real: false,
    show: { seasonStarts, episodes, inProduction },
  };
}

export interface PlanOptions {
  seed: number;
  /** Synthetic catalog size; undefined = the default sample (vega movies + 800 shows). */
  titles?: number;
  /** Epoch day of crawl day 0. */
  startDay: number;
}

export function catalogPlan(options: PlanOptions): CatalogPlan {
  const { seed, startDay } = options;
  const latestYear = yearOfEpochDay(startDay) + 1;
  if (options.titles === undefined) {
    const movies = vegaMovies().length;
    const baseCount = movies + DEFAULT_SHOWS;
    return {
      tag: '',
      baseCount,
      newPerDay: NEW_TITLES_PER_DAY,
      countOn: (day) => baseCount + day * NEW_TITLES_PER_DAY,
      titleAt(index) {
        if (index < movies) return vegaTitle(seed, index, latestYear);
        if (index < baseCount) return generatedShow(seed, index, SHOW_SOURCE_BASE + index - movies, 0, startDay);
        const n = index - baseCount;
        const introDay = Math.floor(n / NEW_TITLES_PER_DAY) + 1;
        return n % NEW_TITLES_PER_DAY === NEW_TITLES_PER_DAY - 1
          ? generatedShow(seed, index, NEW_SOURCE_BASE + n, introDay, startDay)
          : generatedMovie(seed, index, NEW_SOURCE_BASE + n, introDay, startDay);
      },
    };
  }
  const n = options.titles;
  if (!Number.isInteger(n) || n < 1 || n > MAX_SYNTHETIC) {
    throw new AppError('invalid_parameter', `titles must be an integer in 1..${MAX_SYNTHETIC}, got ${n}`, { details: { titles: n } });
  }
  // Synthetic: one title in five is a show; new titles keep the same numbering past N.
  const newPerDay = Math.max(NEW_TITLES_PER_DAY, Math.round(n / 1000));
  return {
    tag: `t${n}`,
    baseCount: n,
    newPerDay,
    countOn: (day) => n + day * newPerDay,
    titleAt(index) {
      const introDay = index < n ? 0 : Math.floor((index - n) / newPerDay) + 1;
      const show = hashInts(seed, index) % 5 === 0;
      return show
        ? generatedShow(seed, index, 1000 + index, introDay, startDay)
        : generatedMovie(seed, index, 1000 + index, introDay, startDay);
    },
  };
}
