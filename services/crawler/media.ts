/**
 * What the crawler observes about a title on a given day: details (MediaObserved), the eight
 * translations, and the seasons of a show. Everything is a function of (seed, title, day).
 */
import type { CastMember, ContentRating, Episode, Season } from '../../contracts/domain.ts';
import { slugify } from '../../contracts/ids.ts';
import type { MediaObservedData, MediaTranslationObservedData } from '../../contracts/observations.ts';
import { dateOfEpochDay } from './dates.ts';
import { GENRES, genreId } from './genres.ts';
import { rngOf, SALT, unitOf } from './prng.ts';
import type { Rng } from './prng.ts';
import type { TitleSeed } from './titles.ts';
import { fill, renderTitle } from './translate.ts';
import {
  EPISODE_WORDS,
  FIRST_NAMES,
  GOALS,
  LAST_NAMES,
  LOCALIZED,
  PLACES,
  TAGLINES,
  TRANSLATION_LANGUAGES,
} from './words.ts';
import type { TranslationLanguage } from './words.ts';

const IMDB_SPACE = 8_999_999;
const YOUTUBE_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

export function posterPath(rng: Rng): string {
  return `/posters/{size}/${rng.token(27)}.{ext}`;
}

export function backdropPath(rng: Rng): string {
  return `/backdrops/{size}/${rng.token(27)}.{ext}`;
}

/** Country ratings by age class (0, 6, 12, 16, 18), one rating system per country. */
const RATING_SYSTEMS: Record<string, Record<number, string>> = {
  GB: { 0: 'U', 6: 'PG', 12: '12A', 16: '15', 18: '18' },
  DE: { 0: '0', 6: '6', 12: '12', 16: '16', 18: '18' },
  AT: { 0: '0', 6: '6', 12: '12', 16: '16', 18: '18' },
  FR: { 0: 'TP', 6: 'TP', 12: '12', 16: '16', 18: '18' },
  ES: { 0: 'A', 6: '7', 12: '12', 16: '16', 18: '18' },
  IT: { 0: 'T', 6: 'T', 12: '14+', 16: '14+', 18: '18+' },
  NL: { 0: 'AL', 6: '6', 12: '12', 16: '16', 18: '18' },
  BR: { 0: 'L', 6: '10', 12: '12', 16: '16', 18: '18' },
  JP: { 0: 'G', 6: 'G', 12: 'PG12', 16: 'R15+', 18: 'R18+' },
  KR: { 0: 'ALL', 6: 'ALL', 12: '12', 16: '15', 18: '18' },
  AU: { 0: 'G', 6: 'PG', 12: 'M', 16: 'MA15+', 18: 'R18+' },
  CA: { 0: 'G', 6: 'PG', 12: 'PG', 16: '14A', 18: '18A' },
  SE: { 0: 'Btl', 6: '7', 12: '11', 16: '15', 18: '15' },
  IN: { 0: 'U', 6: 'U', 12: 'UA', 16: 'UA', 18: 'A' },
  MX: { 0: 'AA', 6: 'A', 12: 'B', 16: 'B15', 18: 'C' },
};

const RATING_SYSTEM_ENTRIES = Object.entries(RATING_SYSTEMS);

function contentRatings(t: TitleSeed, rng: Rng): ContentRating[] {
  const out: ContentRating[] = [];
  if (t.usRating !== null) out.push({ country: 'US', rating: t.usRating });
  for (const [country, system] of RATING_SYSTEM_ENTRIES) {
    // Not every country has rated every title (older and smaller ones less often).
    if (!rng.chance(t.real && (t.imdbVotes ?? 0) < 5000 ? 0.55 : 0.85)) continue;
    out.push({ country, rating: system[t.age] ?? system[12] ?? '12' });
  }
  return out;
}

function person(first: string, last: string): { name: string; personId: string } {
  const name = `${first} ${last}`;
  return { name, personId: `pe-${slugify(name)}` };
}

function castOf(t: TitleSeed, rng: Rng): { cast: CastMember[]; lead: string; second: string; third: string; character: string } {
  const cast: CastMember[] = [];
  const actors = rng.int(4, 8);
  const names = new Set<string>();
  let character = '';
  for (let i = 0; cast.length < actors && i < actors * 3; i++) {
    const p = person(rng.pick(FIRST_NAMES), rng.pick(LAST_NAMES));
    if (names.has(p.name) || p.name === t.director) continue;
    names.add(p.name);
    const role = `${rng.pick(FIRST_NAMES)}${rng.chance(0.6) ? ` ${rng.pick(LAST_NAMES)}` : ''}`;
    if (cast.length === 0) character = role;
    cast.push({ personId: p.personId, name: p.name, role: 'actor', character: role, order: cast.length });
  }
  const director = { name: t.director, personId: `pe-${slugify(t.director)}` };
  cast.push({ personId: director.personId, name: director.name, role: 'director', character: null, order: cast.length });
  if (rng.chance(0.5)) {
    const writer = person(rng.pick(FIRST_NAMES), rng.pick(LAST_NAMES));
    cast.push({ personId: writer.personId, name: writer.name, role: 'writer', character: null, order: cast.length });
  }
  return {
    cast,
    lead: cast[0]?.name ?? t.director,
    second: cast[1]?.name ?? t.director,
    third: cast[2]?.name ?? t.director,
    character,
  };
}

function genreWord(t: TitleSeed): string {
  const slug = t.genreSlugs[0] ?? 'drama';
  const name = GENRES.find((g) => g.slug === slug)?.name ?? 'Drama';
  return name.toLowerCase();
}

export interface StaticMedia {
  data: Omit<MediaObservedData, 'popularity' | 'voteCount' | 'lastAirDate'>;
  lead: string;
  second: string;
  character: string;
  place: string;
  baseVotes: number | null;
}

/**
 * The parts of a title's details that never change from day to day. A new title's details and
 * its translations both need them: the crawl computes them once and hands them to both.
 */
export function staticMedia(seed: number, t: TitleSeed): StaticMedia {
  const rng = rngOf(seed, SALT.media, t.key);
  const { cast, lead, second, third, character } = castOf(t, rngOf(seed, SALT.cast, t.key));
  const place = rng.pick(PLACES);
  const goal = rng.pick(GOALS);
  const values = {
    title: t.title, place, goal, char: character, lead, second, third, director: t.director, genre: genreWord(t),
    year: t.year ?? '', seasons: t.show ? `${t.show.episodes.length} season${t.show.episodes.length === 1 ? '' : 's'}` : '',
  };
  const overview = t.kind === 'movie'
    ? fill(rng.pick([
      'In {place}, {char} has one week to {goal}. {lead} and {second} star in this {genre} from director {director}.',
      'When a stranger arrives in {place}, {char} is forced to {goal}. A {genre} starring {lead}, {second} and {third}.',
      '{char} thought {place} was the end of the road. Now there is one chance left to {goal}.',
    ]), values)
    : fill(rng.pick([
      '{char} returns to {place} to {goal}, and finds that nothing stayed buried. {lead} and {second} lead the cast of this {genre} series.',
      'Across {seasons}, the people of {place} try to {goal}. Starring {lead}, {second} and {third}.',
    ]), values);
  // A bijection of the title key (7919 is prime to the modulus), so no two titles share an id.
  const imdbId = `tt${1_000_000 + (((t.key % IMDB_SPACE) * 7919 + (seed % IMDB_SPACE)) % IMDB_SPACE)}`;
  const externalIds = [
    { source: 'imdb', id: imdbId },
    { source: 'tmdb', id: String(t.sourceId) },
  ];
  if (rng.chance(0.6)) externalIds.push({ source: 'wikidata', id: `Q${rng.int(10_000, 99_999_999)}` });
  const videos = Array.from({ length: rng.int(t.real ? 1 : 0, 3) }, () => ({ source: 'youtube', id: rng.token(11, YOUTUBE_ALPHABET) }));
  const tmdbRating = t.imdbRating === null
    ? (rng.chance(0.5) ? Math.round((5 + rng.next() * 3) * 10) / 10 : null)
    : Math.max(0, Math.min(10, Math.round((t.imdbRating + (rng.next() - 0.5) * 0.8) * 10) / 10));
  const baseVotes = t.imdbVotes === null ? (tmdbRating === null ? null : rng.int(3, 60)) : Math.max(1, Math.round(t.imdbVotes * (0.04 + rng.next() * 0.11)));
  const ratings = [];
  if (t.imdbRating !== null) ratings.push({ source: 'imdb', rating: t.imdbRating });
  if (t.rtRating !== null) ratings.push({ source: 'rotten_tomatoes', rating: t.rtRating });
  if (tmdbRating !== null) ratings.push({ source: 'tmdb', rating: tmdbRating });
  return {
    data: {
      contentType: t.kind,
      sourceId: t.sourceId,
      title: t.title,
      originalTitle: t.originalTitle,
      year: t.year,
      releaseDate: t.releaseDate,
      tagline: rng.chance(0.7) ? rng.pick(TAGLINES) : null,
      overview,
      classification: t.usRating,
      poster: rng.chance(0.97) ? posterPath(rng) : null,
      backdrop: rng.chance(0.92) ? backdropPath(rng) : null,
      tmdbRating,
      runtime: t.runtime,
      inProduction: t.show ? t.show.inProduction : null,
      genreIds: t.genreSlugs.map(genreId),
      ratings,
      externalIds,
      videos,
      contentRatings: contentRatings(t, rng),
      cast,
    },
    lead,
    second,
    character,
    place,
    baseVotes,
  };
}

/**
 * Popularity on a crawl day: the base value with a slow per-title trend, a weekly-ish wave and
 * a little daily noise, so most re-crawls see a different number.
 */
export function popularityOn(seed: number, t: TitleSeed, day: number): number {
  const r = rngOf(seed, SALT.popularity, t.key);
  const trend = (r.next() - 0.45) * 0.02;
  const phase = r.next();
  const period = r.int(14, 60);
  const age = Math.max(0, day - t.introDay);
  const wave = 0.15 * Math.sin(2 * Math.PI * (day / period + phase));
  const noise = 1 + 0.06 * (unitOf(seed, SALT.popularity, t.key, day) - 0.5);
  // A new arrival's hype fades over its first weeks.
  const hype = t.introDay > 0 ? 1 + 2 * Math.exp(-age / 10) : 1;
  const value = t.basePopularity * Math.exp(trend * day + wave) * noise * hype;
  return Math.max(0.1, Math.round(value * 1000) / 1000);
}

export interface Seasons {
  seasons: Season[];
  lastAirDate: string | null;
}

/** Episodes that a crawl on `today` (epoch day) lists: aired, or announced for the next week. */
export function seasonsOn(seed: number, t: TitleSeed, today: number): Seasons {
  const plan = t.show;
  if (plan === null) return { seasons: [], lastAirDate: null };
  const seasons: Season[] = [];
  let lastAir: number | null = null;
  plan.seasonStarts.forEach((start, s) => {
    if (start > today + 7) return;
    const seasonNumber = s + 1;
    const sr = rngOf(seed, SALT.seasons, t.key, seasonNumber);
    const episodes: Episode[] = [];
    const count = plan.episodes[s] ?? 0;
    for (let e = 0; e < count; e++) {
      const airDay = start + 7 * e;
      if (airDay > today + 7) break;
      if (airDay <= today && (lastAir === null || airDay > lastAir)) lastAir = airDay;
      const er = rngOf(seed, SALT.seasons, t.key, seasonNumber, e + 1);
      episodes.push({
        episodeNumber: e + 1,
        title: s === 0 && e === 0 ? 'Pilot' : er.pick(EPISODE_WORDS),
        overview: er.chance(0.85) ? `${er.pick(FIRST_NAMES)} tries to ${er.pick(GOALS)}.` : null,
        backdrop: er.chance(0.7) ? backdropPath(er) : null,
        airDate: dateOfEpochDay(airDay),
      });
    }
    seasons.push({
      seasonNumber,
      title: `Season ${seasonNumber}`,
      overview: sr.chance(0.8) ? `Season ${seasonNumber} of ${t.title}.` : null,
      poster: sr.chance(0.85) ? posterPath(sr) : null,
      airDate: dateOfEpochDay(start),
      episodes,
    });
  });
  return { seasons, lastAirDate: lastAir === null ? null : dateOfEpochDay(lastAir) };
}

/**
 * MediaObserved data of a title on a crawl day (`today` is that day's epoch day), from its
 * static details and, for a show, its seasons on that day (`seasons`, or null when the crawl
 * has not computed them).
 */
export function mediaOn(seed: number, t: TitleSeed, day: number, today: number, s: StaticMedia, seasons: Seasons | null): MediaObservedData {
  const voteGrowth = s.baseVotes === null ? 0 : Math.floor(day * Math.max(0.2, s.baseVotes * 0.0008));
  return {
    ...s.data,
    popularity: popularityOn(seed, t, day),
    voteCount: s.baseVotes === null ? null : s.baseVotes + voteGrowth,
    lastAirDate: t.show ? (seasons ?? seasonsOn(seed, t, today)).lastAirDate : null,
  };
}

const SUBTITLE_SEPARATOR: Record<TranslationLanguage, string> = {
  de: ' – ', fr: ' : ', es: ': ', it: ' - ', pt: ': ', nl: ': ', ja: '：', ko: ': ',
};

/** The eight translations of a title, from its static details. */
export function translationsOf(seed: number, t: TitleSeed, s: StaticMedia): MediaTranslationObservedData[] {
  return TRANSLATION_LANGUAGES.map((lang, li) => {
    const rng = rngOf(seed, SALT.translation, t.key, li);
    const local = LOCALIZED[lang];
    let title: string | null;
    if (t.parts !== null) {
      title = renderTitle(t.parts, lang);
    } else {
      // Real titles: most markets keep the English title, some add a local subtitle,
      // and some translations have no title at all.
      const u = rng.next();
      title = u < 0.15 ? `${t.title}${SUBTITLE_SEPARATOR[lang]}${rng.pick(local.subtitles)}` : u < 0.88 ? t.title : null;
    }
    const overview = rng.chance(0.9)
      ? fill(rng.pick(t.kind === 'movie' ? local.movie : local.show), {
        title: title ?? t.title, year: t.year ?? '', lead: s.lead, second: s.second, director: t.director, place: s.place, char: s.character,
      })
      : null;
    return {
      contentType: t.kind,
      sourceId: t.sourceId,
      language: lang,
      title,
      overview,
      tagline: rng.chance(0.5) ? rng.pick(local.taglines) : null,
      poster: rng.chance(0.12) ? posterPath(rng) : null,
      backdrop: null,
    };
  });
}
