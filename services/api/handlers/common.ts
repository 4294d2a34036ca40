/** Helpers shared by the list endpoints: media list items by id, pagination. */
import { AppError } from '../../../contracts/errors.ts';
import type { MediaDoc, MediaItemDoc } from '../../../contracts/readModels.ts';
import { GENRES_KEY } from '../../../projections/genres.ts';
import type { Catalog } from '../catalog.ts';
import { DEFAULT_MAX_AGE_MS } from '../responseCache.ts';
import type { ApiDeps, HandlerInput } from '../types.ts';
import { genreIndex, listItem, type GenreIndex, type MediaListItem } from '../present.ts';

export async function loadGenres(catalog: Catalog): Promise<GenreIndex> {
  return genreIndex(await catalog.get('genres', GENRES_KEY));
}

/** The read models a list item is made from. */
const ITEM_MODELS = ['media_items', 'genres'] as const;
/** List items kept per API, at most this many (then all are dropped and kept again as asked). */
const KEPT_ITEMS_MAX = 20_000;

interface KeptItems {
  stamp: string;
  until: number;
  items: Map<string, MediaListItem>;
}
const keptItems = new WeakMap<ApiDeps, KeptItems>();

/**
 * List items for the given ids, in a map (ids whose media document is missing are absent).
 *
 * With the response cache on, items are kept, decoded and presented, while the state of
 * `media_items` and `genres` (their stamp, read first, as for a kept answer: responseCache.ts)
 * is unchanged, and for the cache's age limit at most. Why: a search answered for the first
 * time lists titles that other answers listed already (the same popular titles come back for
 * every prefix of their names), and reading and decoding their documents was a third of what
 * a new query cost besides the index. The items are shared: callers copy, never change them.
 * The stamp read goes through the request's catalog, so an answer made from kept items still
 * depends on those models (trackingCatalog). Without the response cache every request reads.
 */
export async function listItems({ catalog, deps }: Pick<HandlerInput, 'catalog' | 'deps'>, ids: string[]): Promise<Map<string, MediaListItem>> {
  const unique = [...new Set(ids)];
  const out = new Map<string, MediaListItem>();
  if (unique.length === 0) return out;
  let kept: KeptItems | undefined;
  if (deps.responseCache !== false) {
    const stamp = await catalog.stamp(ITEM_MODELS);
    const now = Date.now();
    kept = keptItems.get(deps);
    if (kept === undefined || kept.stamp !== stamp || kept.until <= now || kept.items.size >= KEPT_ITEMS_MAX) {
      kept = { stamp, until: now + (deps.responseCache?.maxAgeMs ?? DEFAULT_MAX_AGE_MS), items: new Map() };
      keptItems.set(deps, kept);
    }
  }
  const missing = kept === undefined ? unique : unique.filter((id) => !kept.items.has(id));
  if (missing.length > 0) {
    // The compact `media_items` model: a page decodes dozens of these, not full details.
    const [docs, genres] = await Promise.all([catalog.getMany('media_items', missing), loadGenres(catalog)]);
    docs.forEach((doc: MediaItemDoc | null) => {
      if (!doc) return;
      // Frozen: kept items are shared by requests, and a frozen one's JSON text is kept (responseCache.ts).
      const item = listItem(doc, genres);
      Object.freeze(item.genres);
      Object.freeze(item);
      kept?.items.set(doc.id, item);
      out.set(doc.id, item);
    });
  }
  if (kept !== undefined) {
    for (const id of unique) {
      const item = kept.items.get(id);
      if (item !== undefined) out.set(id, item);
    }
  }
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
