/**
 * How a matched title is ordered, as plain functions so the in-process adapter and its
 * benchmark share one definition (and an OpenSearch adapter can mirror it in a rescore).
 *
 * Order, most significant first:
 * 1. match class: 3 = the whole query is the title (normalised, a leading article ignored
 *    on both sides), 2 = every query word matched (exactly, by prefix or within the typo
 *    budget), 1 = some words matched. OR semantics find partial matches, but a title that
 *    explains the whole query always outranks one that explains part of it.
 * 2. availability: within a class, titles with at least one provider in the query's country
 *    come first (spec: "ranked by relevance within the country"). The class goes before it so
 *    that "Alien" still puts the film Alien first in a country where only the sequels stream;
 *    a typo'd or partial query falls back to the country-first order within its class.
 * 3. relevance: the engine's BM25 score (fuzzy and prefix matches weigh less than exact words),
 *    x2 when the query is the whole title, x1.5 when it is a contiguous run of the title's
 *    words, then x(1 + popularityWeight * p) where p in [0, 1] is log(1 + popularity) relative
 *    to the most popular indexed title. With the default weight 0.2, popularity can move a
 *    title by at most 20 % of its relevance: enough to order near-equal matches (remakes,
 *    homonyms), never enough to bury an unpopular title that matches clearly better.
 * 4. popularity, then id, so the order is total and stable across runs.
 */

export interface RankInput {
  id: string;
  matchClass: number;
  available: boolean;
  relevance: number;
  popularity: number;
}

/** Comparator implementing the order above (best first). */
export function compareRanked(a: RankInput, b: RankInput): number {
  return (
    b.matchClass - a.matchClass ||
    Number(b.available) - Number(a.available) ||
    b.relevance - a.relevance ||
    b.popularity - a.popularity ||
    (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
  );
}

/** Factor applied to the engine score for whole-title and phrase matches. */
export function phraseFactor(queryKey: string, titleKeys: readonly string[]): { exact: boolean; factor: number } {
  if (queryKey.length === 0) return { exact: false, factor: 1 };
  let phrase = false;
  for (const key of titleKeys) {
    if (key === queryKey) return { exact: true, factor: 2 };
    if (!phrase && (' ' + key + ' ').includes(' ' + queryKey + ' ')) phrase = true;
  }
  return { exact: false, factor: phrase ? 1.5 : 1 };
}

/** 1 + weight * (log1p(popularity) / log1p(maxPopularity)), 1 when nothing is popular. */
export function popularityFactor(popularity: number, maxPopularity: number, weight: number): number {
  if (!(maxPopularity > 0) || !(popularity > 0)) return 1;
  return 1 + weight * Math.min(1, Math.log1p(popularity) / Math.log1p(maxPopularity));
}

/**
 * The first `k` items in `compare` order, without sorting everything: a query word as common
 * as "love" matches thousands of titles while a page shows 20. Keeps a sorted buffer of the
 * best k and drops anything worse than its last item (one comparison for most items).
 */
export function topK<T>(items: readonly T[], k: number, compare: (a: T, b: T) => number): T[] {
  if (k <= 0) return [];
  if (items.length <= k * 4) return items.slice().sort(compare).slice(0, k);
  const best: T[] = [];
  for (const item of items) {
    if (best.length === k && compare(item, best[k - 1] as T) >= 0) continue;
    let lo = 0;
    let hi = best.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compare(best[mid] as T, item) <= 0) lo = mid + 1;
      else hi = mid;
    }
    best.splice(lo, 0, item);
    if (best.length > k) best.pop();
  }
  return best;
}
