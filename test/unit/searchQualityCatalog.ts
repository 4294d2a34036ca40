/**
 * The sample catalog for search quality tests and benchmarks: the 3,201 real film titles of
 * vega-datasets `movies.json` (mojibake and duplicates included, as shipped) plus generated TV
 * show titles. Everything is deterministic: same input, same documents.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { SearchDocument } from '../../contracts/ports.ts';

interface VegaMovie {
  Title: string | number | null;
  'Release Date': string | null;
  'Major Genre': string | null;
  'IMDB Votes': number | null;
}

/** Deterministic PRNG (mulberry32), so generated titles and subsets never change. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function slug(genre: string): string {
  return genre.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
}

export function loadVegaMovies(): VegaMovie[] {
  // The package exports only its JS entry; the data files sit beside it in the package root.
  const entry = createRequire(import.meta.url).resolve('vega-datasets');
  const path = join(dirname(entry), '..', 'data', 'movies.json');
  return JSON.parse(readFileSync(path, 'utf8')) as VegaMovie[];
}

/**
 * One SearchDocument per vega movie with a title: id `mv` + 8-digit index, popularity = IMDB
 * votes, available in US (on `nfx` or `amz`) for two thirds of them (index % 3 !== 0).
 */
export function movieDocuments(): SearchDocument[] {
  const docs: SearchDocument[] = [];
  loadVegaMovies().forEach((m, i) => {
    if (m.Title === null || String(m.Title).trim() === '') return;
    const yearMatch = /(\d{4})$/.exec(m['Release Date'] ?? '');
    const availability: Record<string, string[]> = {};
    if (i % 3 !== 0) availability.US = [i % 2 === 0 ? 'nfx' : 'amz'];
    if (i % 5 === 0) availability.DE = ['nfx'];
    docs.push({
      id: `mv${String(i).padStart(8, '0')}`,
      kind: 'movie',
      title: String(m.Title),
      originalTitle: null,
      titles: {},
      year: yearMatch ? Number(yearMatch[1]) : null,
      genres: m['Major Genre'] ? [slug(m['Major Genre'])] : [],
      popularity: m['IMDB Votes'] ?? 0,
      availability,
    });
  });
  return docs;
}

const ADJECTIVES = ['Crimson', 'Silent', 'Hidden', 'Broken', 'Golden', 'Midnight', 'Northern', 'Electric', 'Savage', 'Quiet',
  'Wandering', 'Frozen', 'Burning', 'Secret', 'Lonely', 'Wicked', 'Shattered', 'Velvet', 'Iron', 'Distant'];
const NOUNS = ['Harbor', 'Detectives', 'Kingdom', 'Frontier', 'Chronicles', 'Academy', 'Empire', 'Station', 'Orchard', 'Syndicate',
  'Lighthouse', 'Dynasty', 'Paradise', 'Tribunal', 'Wilderness', 'Republic', 'Carnival', 'Brotherhood', 'Valley', 'Precinct'];
const PLACES = ['Boston', 'Tokyo', 'Marseille', 'Glasgow', 'Lagos', 'Havana', 'Oslo', 'Kyoto', 'Lisbon', 'Dakota'];

/** `count` generated show titles ("The Silent Harbor", "Midnight Detectives of Oslo", ...). */
export function showDocuments(count = 800, seed = 7): SearchDocument[] {
  const rnd = prng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T;
  const docs: SearchDocument[] = [];
  for (let i = 0; i < count; i++) {
    const shape = Math.floor(rnd() * 3);
    const title =
      shape === 0 ? `The ${pick(ADJECTIVES)} ${pick(NOUNS)}`
      : shape === 1 ? `${pick(ADJECTIVES)} ${pick(NOUNS)} of ${pick(PLACES)}`
      : `${pick(PLACES)} ${pick(NOUNS)}`;
    docs.push({
      id: `tv${String(i).padStart(8, '0')}`,
      kind: 'tv_show',
      title,
      originalTitle: null,
      titles: i % 4 === 0 ? { de: `${title} (DE)`.replace('The ', 'Die ') } : {},
      year: 2000 + (i % 25),
      genres: [i % 2 === 0 ? 'drama' : 'crime'],
      popularity: Math.floor(rnd() * 1000),
      availability: i % 2 === 0 ? { US: ['nfx'] } : { GB: ['bbc'] },
    });
  }
  return docs;
}
