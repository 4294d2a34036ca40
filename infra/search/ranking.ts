/**
 * How a matched title is ordered, as plain functions so the in-process adapter and its
 * benchmark share one definition (and an OpenSearch adapter can mirror it in a rescore).
 *
 * Order, most significant first:
 * 1. match class: MATCH_EXACT = the whole query is the title (normalised, a leading article
 *    ignored on both sides); MATCH_BEGINS = the query begins the title (every word equal but
 *    the last, which may be cut, from 2 characters: "the ma" begins The Matrix and Mad Max);
 *    MATCH_EVERY_WORD = one of the title's names holds every looked-up word as a whole word,
 *    exactly (no typo, no prefix): "nights" names Boogie Nights before Night, which it is one
 *    typo from, and "godfather ii" names Part II before Part III, whose "iii" it only begins,
 *    even where only Part III streams; a word the user typed whole and that a title holds is
 *    what the user means, more likely than a typo of another title;
 *    MATCH_NEAR_EXACT = every looked-up word matched and the whole query is within typos of
 *    the whole title (titleTypos edits: "glry" for Glory, "the twon" for The Town), so a
 *    misspelt one-word title is not buried under the longer titles that contain its word;
 *    MATCH_ALL_WORDS = every looked-up word matched (exactly, by prefix or within the typo
 *    budget); MATCH_SOME_WORDS = some did. OR semantics find partial matches, but a title that
 *    explains the whole query always outranks one that explains part of it.
 *    Titles the query begins are ordered by popularity alone, then id: the user is still
 *    typing a title's name and the text says nothing more about which one, while the more
 *    popular title is the likelier ("The Ma" means The Matrix, even where only its sequels
 *    stream); availability and relevance do not apply to them. This is what took short
 *    prefixes of popular titles from 50 % to 100 % top-3 on the quality set.
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

export const MATCH_EXACT = 6;
export const MATCH_BEGINS = 5;
export const MATCH_EVERY_WORD = 4;
export const MATCH_NEAR_EXACT = 3;
export const MATCH_ALL_WORDS = 2;
export const MATCH_SOME_WORDS = 1;

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

/**
 * Whether `key` (a query's titleKey) begins one of `keys` (titleKeys, `\n`-joined): as a string
 * prefix, which is every word equal but the last, and the last a prefix of the title's word.
 * `needle` (`\n` + key) can be made once by a caller asking for many titles.
 */
export function beginsKey(keys: string, key: string, needle = `\n${key}`): boolean {
  return keys.startsWith(key) || keys.includes(needle);
}

/**
 * Whether `key` is one of `keys` (titleKeys, `\n`-joined), without splitting them: this runs
 * for every candidate of a query, thousands for a short prefix.
 */
export function holdsKey(keys: string, key: string, needle = `\n${key}`): boolean {
  if (key === '' || keys.length < key.length) return false;
  if (keys.startsWith(key) && (keys.length === key.length || keys.charCodeAt(key.length) === 10)) return true;
  // An occurrence may be a longer key that begins with this one: look on from each.
  for (let from = keys.indexOf(needle); from >= 0; from = keys.indexOf(needle, from + 1)) {
    const end = from + 1 + key.length;
    if (end === keys.length || keys.charCodeAt(end) === 10) return true;
  }
  return false;
}

/**
 * Optimal-string-alignment distance of `a` and `b` (an adjacent transposition is one edit, as
 * in OpenSearch's fuzzy queries), or `max + 1` as soon as it exceeds `max`. Code points, not
 * UTF-16 units, like the engines.
 */
export function osaDistance(a: string, b: string, max: number): number {
  const x = [...a];
  const y = [...b];
  if (Math.abs(x.length - y.length) > max) return max + 1;
  const n = y.length;
  let prev2: number[] = new Array<number>(n + 1).fill(0);
  let prev: number[] = Array.from({ length: n + 1 }, (_, j) => j);
  for (let i = 1; i <= x.length; i++) {
    const cur: number[] = new Array<number>(n + 1);
    cur[0] = i;
    let rowMin = i;
    for (let j = 1; j <= n; j++) {
      const cost = x[i - 1] === y[j - 1] ? 0 : 1;
      let v = Math.min((prev[j] as number) + 1, (cur[j - 1] as number) + 1, (prev[j - 1] as number) + cost);
      if (i > 1 && j > 1 && x[i - 1] === y[j - 2] && x[i - 2] === y[j - 1]) v = Math.min(v, (prev2[j - 2] as number) + 1);
      cur[j] = v;
      if (v < rowMin) rowMin = v;
    }
    if (rowMin > max) return max + 1;
    prev2 = prev;
    prev = cur;
  }
  return prev[n] as number;
}

/**
 * Whether one of `keys` (titleKeys, `\n`-joined) holds every one of `words` as a whole word
 * (MATCH_EVERY_WORD): within one key, so that words of a title and of its original title do
 * not add up. A word may also be one of that name's extra words (`runs`: space-separated per
 * key, `\n`-joined in the order of `keys`; normalize.ts extraWords): "xmen" is a whole word of
 * X-Men, and "2" of Rocky II, as OpenSearch indexes them. Without splitting
 * the keys: this runs for every candidate that matched every word, thousands for a common word.
 */
export function holdsEveryWord(keys: string, words: readonly string[], runs?: string): boolean {
  if (words.length === 0) return false;
  let runStart = 0;
  for (let start = 0; start <= keys.length; ) {
    const newline = keys.indexOf('\n', start);
    const end = newline < 0 ? keys.length : newline;
    // The same name's joined runs, when the title has any: the segment at the same place.
    let runEnd = -1;
    if (runs !== undefined && runStart <= runs.length) {
      const next = runs.indexOf('\n', runStart);
      runEnd = next < 0 ? runs.length : next;
    }
    const from = runStart;
    if (words.every((word) => holdsWordWithin(keys, word, start, end) || (runEnd >= 0 && holdsWordWithin(runs as string, word, from, runEnd)))) return true;
    start = end + 1;
    runStart = runEnd + 1;
  }
  return false;
}

/** Whether `word` is a whole word of `keys` between `start` and `end`. */
function holdsWordWithin(keys: string, word: string, start: number, end: number): boolean {
  if (word === '') return false;
  for (let at = keys.indexOf(word, start); at >= 0 && at + word.length <= end; at = keys.indexOf(word, at + 1)) {
    if ((at === start || keys.charCodeAt(at - 1) === 32) && (at + word.length === end || keys.charCodeAt(at + word.length) === 32)) return true;
  }
  return false;
}

/** Whether the query key is within `typos` edits of one of the title keys (MATCH_NEAR_EXACT). */
export function nearKey(queryKey: string, titleKeys: readonly string[], typos: number): boolean {
  if (typos === 0) return false;
  for (const key of titleKeys) if (osaDistance(queryKey, key, typos) <= typos) return true;
  return false;
}

/** phraseFactor's factor for a title that is the query. */
export const EXACT_PHRASE = 2;

/** phraseFactor's answer for a title that cannot hold the query. */
export const NO_PHRASE: Readonly<{ exact: boolean; factor: number }> = { exact: false, factor: 1 };

/**
 * Whether `key` is a run of whole words of one of `keys` (titleKeys, `\n`-joined): what
 * phraseFactor calls a phrase, without splitting the keys or making a string per key.
 */
export function holdsPhrase(keys: string, key: string): boolean {
  if (key === '') return false;
  const boundary = (at: number): boolean => at < 0 || at >= keys.length || keys.charCodeAt(at) === 32 || keys.charCodeAt(at) === 10;
  for (let at = keys.indexOf(key); at >= 0; at = keys.indexOf(key, at + 1)) {
    if (boundary(at - 1) && boundary(at + key.length)) return true;
  }
  return false;
}

/** phraseFactor's factor for a title holding the query as a phrase, not the whole title. */
export const PHRASE_FACTOR = 1.5;

/** Factor applied to the engine score for whole-title and phrase matches. */
export function phraseFactor(queryKey: string, titleKeys: readonly string[]): { exact: boolean; factor: number } {
  if (queryKey.length === 0) return { exact: false, factor: 1 };
  let phrase = false;
  for (const key of titleKeys) {
    if (key === queryKey) return { exact: true, factor: EXACT_PHRASE };
    if (!phrase && (' ' + key + ' ').includes(' ' + queryKey + ' ')) phrase = true;
  }
  return { exact: false, factor: phrase ? PHRASE_FACTOR : 1 };
}

/** 1 + weight * (log1p(popularity) / log1p(maxPopularity)), 1 when nothing is popular. */
export function popularityFactor(popularity: number, maxPopularity: number, weight: number): number {
  return popularityFactorOfLogs(Math.log1p(popularity), Math.log1p(maxPopularity), weight);
}

/** popularityFactor from log1p of both popularities, for callers that keep the logarithms. */
export function popularityFactorOfLogs(logPopularity: number, logMaxPopularity: number, weight: number): number {
  // log1p is positive exactly where its argument is: the same "nothing popular" cases.
  if (!(logMaxPopularity > 0) || !(logPopularity > 0)) return 1;
  return 1 + weight * Math.min(1, logPopularity / logMaxPopularity);
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
