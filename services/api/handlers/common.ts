/** Helpers shared by the list endpoints: media list items by id, pagination. */
import { AppError } from '../../../contracts/errors.ts';
import type { MediaDoc, MediaItemDoc } from '../../../contracts/readModels.ts';
import { GENRES_KEY } from '../../../projections/genres.ts';
import type { Catalog } from '../catalog.ts';
import { genreIndex, listItem, type GenreIndex, type MediaListItem } from '../present.ts';

export async function loadGenres(catalog: Catalog): Promise<GenreIndex> {
  return genreIndex(await catalog.get('genres', GENRES_KEY));
}

/** List items for the given ids, in a map (ids whose media document is missing are absent). */
export async function listItems(catalog: Catalog, ids: string[]): Promise<Map<string, MediaListItem>> {
  const unique = [...new Set(ids)];
  // The compact `media_items` model: a page decodes dozens of these, not full details.
  const [docs, genres] = await Promise.all([catalog.getMany('media_items', unique), loadGenres(catalog)]);
  const out = new Map<string, MediaListItem>();
  docs.forEach((doc: MediaItemDoc | null) => {
    if (doc) out.set(doc.id, listItem(doc, genres));
  });
  return out;
}

export function page<T>(items: readonly T[], limit: number, offset: number): T[] {
  return limit === 0 ? [] : items.slice(offset, offset + limit);
}

export function notFound(what: string): AppError {
  return new AppError('not_found', what);
}

export async function requireMedia(catalog: Catalog, id: string): Promise<MediaDoc> {
  const doc = await catalog.get('media', id);
  if (!doc) throw notFound(`No media with id '${id}'.`);
  return doc;
}
