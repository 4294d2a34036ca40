/**
 * The genre table of the sample catalog. Ids follow TMDB where TMDB has the genre, so the
 * sample reads like a real crawl; the genres TMDB lacks (black comedy, musical, concert)
 * get ids above 20000.
 */
import type { Genre } from '../../contracts/domain.ts';

export const GENRES: readonly Genre[] = [
  { id: 28, slug: 'action', name: 'Action' },
  { id: 12, slug: 'adventure', name: 'Adventure' },
  { id: 16, slug: 'animation', name: 'Animation' },
  { id: 35, slug: 'comedy', name: 'Comedy' },
  { id: 80, slug: 'crime', name: 'Crime' },
  { id: 99, slug: 'documentary', name: 'Documentary' },
  { id: 18, slug: 'drama', name: 'Drama' },
  { id: 10751, slug: 'family', name: 'Family' },
  { id: 14, slug: 'fantasy', name: 'Fantasy' },
  { id: 36, slug: 'history', name: 'History' },
  { id: 27, slug: 'horror', name: 'Horror' },
  { id: 10402, slug: 'music', name: 'Music' },
  { id: 9648, slug: 'mystery', name: 'Mystery' },
  { id: 10749, slug: 'romance', name: 'Romance' },
  { id: 878, slug: 'science-fiction', name: 'Science Fiction' },
  { id: 53, slug: 'thriller', name: 'Thriller' },
  { id: 10752, slug: 'war', name: 'War' },
  { id: 37, slug: 'western', name: 'Western' },
  { id: 20001, slug: 'black-comedy', name: 'Black Comedy' },
  { id: 20002, slug: 'musical', name: 'Musical' },
  { id: 20003, slug: 'concert', name: 'Concert & Performance' },
  // TV genres
  { id: 10759, slug: 'action-adventure', name: 'Action & Adventure' },
  { id: 10765, slug: 'sci-fi-fantasy', name: 'Sci-Fi & Fantasy' },
  { id: 10762, slug: 'kids', name: 'Kids' },
  { id: 10764, slug: 'reality', name: 'Reality' },
];

const bySlug = new Map(GENRES.map((g) => [g.slug, g]));

export function genreId(slug: string): number {
  const g = bySlug.get(slug);
  if (!g) throw new RangeError(`unknown genre slug ${slug}`);
  return g.id;
}

/** vega-datasets `Major Genre` -> genre slugs. */
export const MAJOR_GENRE_SLUGS: Record<string, readonly string[]> = {
  Action: ['action'],
  Adventure: ['adventure'],
  Comedy: ['comedy'],
  Drama: ['drama'],
  Horror: ['horror'],
  'Thriller/Suspense': ['thriller'],
  'Romantic Comedy': ['romance', 'comedy'],
  Musical: ['musical'],
  Documentary: ['documentary'],
  'Black Comedy': ['black-comedy'],
  Western: ['western'],
  'Concert/Performance': ['concert', 'music'],
};

/** vega-datasets `Creative Type` -> an extra genre slug. */
export const CREATIVE_TYPE_SLUG: Record<string, string> = {
  'Science Fiction': 'science-fiction',
  Fantasy: 'fantasy',
  'Historical Fiction': 'history',
  'Kids Fiction': 'family',
  'Super Hero': 'action',
  Dramatization: 'drama',
};

/** Genres a generated movie draws from (weights: how common they are). */
export const MOVIE_GENRE_POOL: ReadonlyArray<readonly [string, number]> = [
  ['drama', 20], ['comedy', 16], ['action', 12], ['thriller', 10], ['horror', 7], ['romance', 7],
  ['adventure', 6], ['crime', 6], ['science-fiction', 5], ['family', 4], ['fantasy', 4], ['mystery', 4],
  ['animation', 3], ['documentary', 3], ['history', 2], ['war', 2], ['western', 1], ['music', 1],
  ['musical', 1], ['black-comedy', 1],
];

/** Genres a generated TV show draws from. */
export const TV_GENRE_POOL: ReadonlyArray<readonly [string, number]> = [
  ['drama', 20], ['crime', 10], ['comedy', 12], ['action-adventure', 8], ['sci-fi-fantasy', 7], ['mystery', 7],
  ['reality', 5], ['documentary', 5], ['kids', 4], ['animation', 5], ['family', 3], ['romance', 4], ['history', 2],
];
