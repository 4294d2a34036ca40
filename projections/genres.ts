/** `genres` read model: one document, key `all`, genres by id (a small, fixed table). */
import type { RecordedEvent } from '../contracts/events.ts';
import { defineProjection } from '../contracts/projection.ts';
import type { GenresDoc } from '../contracts/readModels.ts';

export const GENRES_KEY = 'all';

export const genresProjection = defineProjection<GenresDoc>({
  name: 'genres',
  version: 1,
  canHandle: ['GenreDefined', 'GenreChanged'],
  documentId(event: RecordedEvent): string | null {
    return event.type === 'GenreDefined' || event.type === 'GenreChanged' ? GENRES_KEY : null;
  },
  evolve(doc: GenresDoc | null, event: RecordedEvent): GenresDoc | null {
    if (event.type !== 'GenreDefined' && event.type !== 'GenreChanged') return doc;
    const { genre } = event.data;
    const others = (doc?.genres ?? []).filter((g) => g.id !== genre.id);
    return { genres: [...others, genre].sort((a, b) => a.id - b.id) };
  },
});
