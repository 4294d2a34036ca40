/**
 * The embedded SearchIndex: MiniSearch (BM25+, radix-tree fuzzy and prefix lookup) plus the
 * ranking of ./ranking.ts. Chosen over a hand-rolled index (postings + a Damerau-distance scan
 * of the vocabulary) after measuring both on the sample catalog, 4,000 titles, 250 misspelt
 * queries (bench/searchEngines.ts): the same top-3 hit rate (99.2 %), but MiniSearch answers in
 * 0.10 ms median / 1.2 ms p99 against 1.7 / 6.7 ms, because its radix tree finds fuzzy
 * neighbours without visiting the whole vocabulary. At 250,000 titles (bench/searchScale.ts)
 * the index keeps ~250 MB of heap, builds in 10-16 s, answers in ~3.5 ms median.
 *
 * Locales: one base index holds every title under its base-language title (`titles[baseLang]
 * ?? title`) with `title` and `originalTitle` as alternatives, so English queries work in
 * every locale. Each other language gets an overlay index holding only the titles translated
 * into it (and whose translation differs from the base titles); a query in that language reads
 * the overlay and the base index and keeps each title's better match. Memory therefore grows
 * with the number of translations, not with titles x locales, and no locale needs a lazy build
 * on its first query.
 */
import MiniSearch from 'minisearch';
import type { Query, SearchResult as MiniResult } from 'minisearch';
import { AppError } from '../../contracts/errors.ts';
import { SEARCH_QUERY_MAX_WORDS, type SearchDocument, type SearchIndex, type SearchQuery, type SearchResult } from '../../contracts/ports.ts';
import { MAX_WHOLE_QUERY_CHARS, lookupWords, maxTypos, titleKey, titleTypos, tokenize, transpositions } from './normalize.ts';
import {
  MATCH_ALL_WORDS, MATCH_BEGINS, MATCH_EXACT, MATCH_NEAR_EXACT, MATCH_SOME_WORDS, NO_PHRASE, beginsKey, compareRanked, nearKey, phraseFactor,
  popularityFactor, topK, type RankInput,
} from './ranking.ts';

export interface InProcessSearchOptions {
  /** Language whose titles fill the base index (every title is in it). Default `'en'`. */
  baseLang?: string;
  /** Share of a title's relevance that popularity can add, see ranking.ts. Default 0.2. */
  popularityWeight?: number;
  /** Extra weight of a match on the query language's own title over the base titles. Default 1.1. */
  localeBoost?: number;
  /** Answers kept for repeated queries until the next write (see ResultCache). Default 2000; 0 keeps none. */
  resultCacheSize?: number;
}

/** Longest query text whose answer is kept: longer ones are pasted, not repeated. */
const MAX_CACHED_QUERY_CHARS = 256;

/**
 * Answers to recent queries, least recently used dropped first, all forgotten on any write.
 * Why: searches repeat (the same popular titles, the same first letters typed by many users),
 * and a typo-tolerant lookup costs 0.1-0.5 ms of CPU (fuzzy walks of the vocabulary for every
 * word) where a kept answer costs a Map lookup; at 50 concurrent searches on one core that is
 * the difference between queueing and not. Forgetting everything on a write keeps answers
 * exact (a title written is found by the next query, as before) at the price of a cold cache
 * after each batch of the search feed; a batch is applied in one call, so one batch empties it
 * once, not per title.
 */
class ResultCache {
  private readonly answers = new Map<string, SearchResult>();
  constructor(private readonly size: number) {}

  static keyOf(query: SearchQuery): string | null {
    if (query.q.length > MAX_CACHED_QUERY_CHARS) return null;
    return [query.lang, query.country.toUpperCase(), query.kind ?? '', query.genre ?? '', query.provider ?? '', query.offset, query.limit, query.q].join('\u0000');
  }

  get(key: string): SearchResult | undefined {
    const found = this.answers.get(key);
    if (found === undefined) return undefined;
    // Re-inserted, so Map order is least recently used first.
    this.answers.delete(key);
    this.answers.set(key, found);
    return { total: found.total, ids: found.ids.slice() };
  }

  set(key: string, result: SearchResult): void {
    if (this.size <= 0) return;
    this.answers.set(key, { total: result.total, ids: result.ids.slice() });
    if (this.answers.size > this.size) this.answers.delete(this.answers.keys().next().value as string);
  }

  clear(): void {
    this.answers.clear();
  }
}

/**
 * What the adapter keeps per title besides the engine's postings, packed into strings because
 * at 250,000 titles objects and arrays per title cost more than the postings themselves.
 */
interface Entry {
  kind: SearchDocument['kind'];
  popularity: number;
  /** Genre slugs as `|drama|crime|`. */
  genres: string;
  /** Countries with at least one provider, as `|US:nfx,amz|GB:bbc|`. */
  availability: string;
  /** titleKey of the base-language title, `title` and `originalTitle` (distinct), `\n`-joined. */
  keys: string;
  /** titleKey of the translated titles held in overlay indexes, by language. */
  localKeys: Record<string, string> | null;
}

function packGenres(genres: readonly string[]): string {
  return genres.length === 0 ? '' : `|${genres.join('|')}|`;
}

function packAvailability(availability: Record<string, string[]>): string {
  let out = '';
  for (const [country, providers] of Object.entries(availability)) {
    if (providers.length > 0) out += `|${country.toUpperCase()}:${providers.join(',')}`;
  }
  return out === '' ? '' : `${out}|`;
}

/** The providers of a country in a packed availability, or null when it has none there. */
function providersIn(packed: string, country: string): string | null {
  const at = packed.indexOf(`|${country}:`);
  if (at < 0) return null;
  const start = at + country.length + 2;
  return packed.slice(start, packed.indexOf('|', start));
}

interface IndexedFields {
  id: string;
  title: string;
  alt?: string;
}

/**
 * Query words looked up; the rest of a longer query is ignored. The API refuses queries of
 * more words; the index bounds its own work whoever calls it (and coverage is a 30-bit mask).
 */
const MAX_WORDS = SEARCH_QUERY_MAX_WORDS;

/** Identity: our tokenizer already normalises, and MiniSearch must not lower-case twice. */
const keepTerm = (term: string): string => term;

function newEngine(fields: string[]): MiniSearch<IndexedFields> {
  return new MiniSearch<IndexedFields>({
    fields,
    storeFields: [],
    tokenize,
    processTerm: keepTerm,
    // Base titles weigh a little more than alternatives (original title, untranslated title).
    searchOptions: { boost: { title: 1.5, alt: 1 }, combineWith: 'OR', tokenize, processTerm: keepTerm },
  });
}

export function inProcessSearchIndex(options: InProcessSearchOptions = {}): SearchIndex {
  const baseLang = options.baseLang ?? 'en';
  const popularityWeight = options.popularityWeight ?? 0.2;
  const localeBoost = options.localeBoost ?? 1.1;

  const entries = new Map<string, Entry>();
  // The version of every title written with one, removed titles included: like OpenSearch's
  // external versions, so a replayed older write of the search feed is refused here too.
  const versions = new Map<string, number>();
  const base = newEngine(['title', 'alt']);
  const overlays = new Map<string, MiniSearch<IndexedFields>>();
  // Only grows: a removed blockbuster keeps the scale, which changes factors by a constant.
  let maxPopularity = 0;
  let closed = false;
  const cache = new ResultCache(options.resultCacheSize ?? 2000);
  // Moves with every write that may change an answer, as the cache is cleared (SearchIndex.generation).
  let generation = 0;
  function written(count: number): void {
    if (count === 0) return;
    cache.clear();
    generation += 1;
  }

  function ensureOpen(): void {
    if (closed) throw new AppError('closed', 'The search index is closed.');
  }

  function drop(id: string): void {
    const entry = entries.get(id);
    if (entry === undefined) return;
    base.discard(id);
    for (const lang of Object.keys(entry.localKeys ?? {})) overlays.get(lang)?.discard(id);
    entries.delete(id);
  }

  function add(doc: SearchDocument): void {
    const primary = doc.titles[baseLang] ?? doc.title;
    const alternatives = distinct([doc.title, doc.originalTitle ?? ''].filter((t) => t !== '' && t !== primary));
    const baseKeys = distinct([primary, ...alternatives].map((t) => titleKey(tokenize(t))));
    base.add({ id: doc.id, title: primary, alt: alternatives.join(' | ') });

    let localKeys: Record<string, string> | null = null;
    for (const [lang, text] of Object.entries(doc.titles)) {
      if (lang === baseLang || text.trim() === '') continue;
      const key = titleKey(tokenize(text));
      // A translation equal to a base title adds nothing the base index does not find.
      if (key === '' || baseKeys.includes(key)) continue;
      let overlay = overlays.get(lang);
      if (overlay === undefined) {
        overlay = newEngine(['title']);
        overlays.set(lang, overlay);
      }
      overlay.add({ id: doc.id, title: text });
      (localKeys ??= {})[lang] = key;
    }
    entries.set(doc.id, {
      kind: doc.kind,
      popularity: doc.popularity,
      genres: packGenres(doc.genres),
      availability: packAvailability(doc.availability),
      keys: baseKeys.join('\n'),
      localKeys,
    });
    if (doc.popularity > maxPopularity) maxPopularity = doc.popularity;
  }

  return {
    async upsert(docs) {
      ensureOpen();
      written(docs.length);
      for (const doc of docs) {
        versions.delete(doc.id);
        drop(doc.id);
        add(doc);
      }
    },

    async remove(ids) {
      ensureOpen();
      written(ids.length);
      for (const id of ids) {
        versions.delete(id);
        drop(id);
      }
    },

    async write(writes) {
      ensureOpen();
      written(writes.length);
      for (const w of writes) {
        const held = versions.get(w.id);
        if (held !== undefined && w.version < held) continue;
        versions.set(w.id, w.version);
        drop(w.id);
        if (w.doc !== null) add(w.doc);
      }
    },

    async count() {
      ensureOpen();
      return entries.size;
    },

    generation() {
      return generation;
    },

    async search(query) {
      ensureOpen();
      const key = ResultCache.keyOf(query);
      const kept = key === null ? undefined : cache.get(key);
      if (kept !== undefined) return kept;
      const result = runSearch(query);
      if (key !== null) cache.set(key, result);
      return result;
    },

    async close() {
      closed = true;
      cache.clear();
      entries.clear();
      versions.clear();
      overlays.clear();
    },
  };

  function runSearch(query: SearchQuery): SearchResult {
    const words = tokenize(query.q);
    if (words.length === 0) return { total: 0, ids: [] };
    const { tree, owners, allWords } = buildQuery(lookupWords(words).slice(0, MAX_WORDS));

    // Per title: best engine score and a bit mask of the query words it explains.
    const coverage = (r: MiniResult): number => {
      let covered = 0;
      for (const qt of r.queryTerms) covered |= owners.get(qt) ?? 0;
      return covered;
    };
    const overlay = query.lang === baseLang ? undefined : overlays.get(query.lang);
    let hits: Array<{ id: string; score: number; covered: number }> = base
      .search(tree)
      .map((r) => ({ id: r.id as string, score: r.score, covered: coverage(r) }));
    if (overlay !== undefined) {
      // A title found through both indexes keeps its better score and the union of its words.
      const byId = new Map(hits.map((h) => [h.id, h]));
      for (const r of overlay.search(tree)) {
        const id = r.id as string;
        const score = r.score * localeBoost;
        const seen = byId.get(id);
        if (seen === undefined) byId.set(id, { id, score, covered: coverage(r) });
        else {
          seen.score = Math.max(seen.score, score);
          seen.covered |= coverage(r);
        }
      }
      hits = [...byId.values()];
    }

    const country = query.country.toUpperCase();
    const queryKey = titleKey(words);
    // A query can begin a title only when its last word was looked up as a prefix.
    const beginning = (words[words.length - 1] as string).length >= 2 && [...queryKey].length <= MAX_WHOLE_QUERY_CHARS ? queryKey : null;
    const keyTypos = titleTypos(queryKey);
    const genre = query.genre === undefined ? undefined : `|${query.genre}|`;
    const provider = query.provider === undefined ? undefined : `,${query.provider},`;
    const offset = Math.max(0, query.offset);
    const limit = Math.max(0, query.limit);
    const need = offset + limit;
    // Partial matches rank below every full match (ranking.ts), so they are ranked only when
    // the full matches do not fill the page.
    const full: RankInput[] = [];
    const partial: RankInput[] = [];
    for (const hit of hits) {
      const id = hit.id;
      const entry = entries.get(id);
      if (entry === undefined) continue;
      if (query.kind !== undefined && entry.kind !== query.kind) continue;
      if (genre !== undefined && !entry.genres.includes(genre)) continue;
      const providers = providersIn(entry.availability, country);
      if (provider !== undefined && (providers === null || !`,${providers},`.includes(provider))) continue;

      const local = entry.localKeys?.[query.lang];
      const available = providers !== null;
      const complete = hit.covered === allWords;
      // Only a title that has every looked-up word can be the query or hold it as a phrase.
      const keys = complete ? (local === undefined ? entry.keys.split('\n') : [local, ...entry.keys.split('\n')]) : null;
      const phrase = keys === null ? NO_PHRASE : phraseFactor(queryKey, keys);
      if (!phrase.exact && beginning !== null && (beginsKey(entry.keys, beginning) || local?.startsWith(beginning) === true)) {
        // The query begins this title: ranked by popularity alone (ranking.ts, MATCH_BEGINS).
        full.push({ id, matchClass: MATCH_BEGINS, available: false, relevance: 0, popularity: entry.popularity });
        continue;
      }
      const popularity = popularityFactor(entry.popularity, maxPopularity, popularityWeight);
      const ranked = { id, available, relevance: hit.score * phrase.factor * popularity, popularity: entry.popularity };
      if (keys === null) partial.push({ ...ranked, matchClass: MATCH_SOME_WORDS });
      else if (phrase.exact) full.push({ ...ranked, matchClass: MATCH_EXACT });
      else full.push({ ...ranked, matchClass: nearKey(queryKey, keys, keyTypos) ? MATCH_NEAR_EXACT : MATCH_ALL_WORDS });
    }
    const top = topK(full, need, compareRanked);
    const page = top.length >= need ? top : [...top, ...topK(partial, need - top.length, compareRanked)];
    return { total: full.length + partial.length, ids: page.slice(offset, need).map((r) => r.id) };
  }
}

/**
 * The engine query: an OR of one sub-query per distinct word. Each word is looked up exactly,
 * within its typo budget (maxTypos) and, for the last word only and from 2 characters, as a
 * prefix (the user is still typing it; a 1-letter prefix would match a tenth of the
 * vocabulary); its one-swap variants are looked up with one typo less, so a transposition
 * costs one typo. `owners` maps every engine term to a bit mask of the query words it stands for.
 * The work is a constant per word (a word longer than MAX_TYPO_WORD_CHARS is looked up exactly
 * and by prefix only) times at most MAX_WORDS words: linear in the query.
 */
/**
 * Two-swap variants looked up per query, whatever its words: each is one engine lookup, and
 * they are most of the work of a long query (200 characters of 24-letter words would ask for
 * ~2,000). The sample's misspelt queries need at most 82; a query past the budget keeps its
 * exact, fuzzy and one-swap lookups.
 */
const MAX_DOUBLE_SWAPS = 200;

/**
 * Words of a query forgiven their typos (the first ones); later words must match exactly or as
 * the last word's prefix. A fuzzy lookup walks the vocabulary's tree within its typos (~1 ms
 * for a 10-letter word within 2 on the sample), so 20 typo'd words would cost ~20 ms; titles
 * long enough to need more are pasted, not misspelt word by word.
 */
const MAX_TYPO_WORDS = 10;

function buildQuery(words: string[]): { tree: Query; owners: Map<string, number>; allWords: number } {
  const last = words[words.length - 1] as string;
  const unique = distinct(words);
  const owners = new Map<string, number>();
  const own = (term: string, i: number): void => {
    owners.set(term, (owners.get(term) ?? 0) | (1 << i));
  };
  let doublesLeft = MAX_DOUBLE_SWAPS;
  const queries: Query[] = unique.map((word, i) => {
    own(word, i);
    const typos = i < MAX_TYPO_WORDS ? maxTypos(word) : 0;
    const parts: Query[] = [{ queries: [word], fuzzy: typos === 0 ? false : typos, prefix: word === last && word.length >= 2 }];
    const swaps = typos === 0 ? [] : transpositions(word);
    if (swaps.length > 0) {
      for (const s of swaps) own(s, i);
      // Weighted like a fuzzy match: a swapped word is still a typo, not the word itself.
      parts.push({ queries: [swaps.join(' ')], fuzzy: typos - 1 === 0 ? false : typos - 1, prefix: false, boostTerm: () => 0.45 });
    }
    if (typos >= 2 && doublesLeft > 0) {
      // Two swaps ("negoitatro"): exact lookups of the two-swap variants, a few dozen for a
      // usual word, ~250 for a word at MAX_TYPO_WORD_CHARS; at most MAX_DOUBLE_SWAPS in all.
      // This is what grew with the cube of a word's length before those caps.
      const swapped = new Set(swaps);
      const doubles = distinct(swaps.flatMap(transpositions)).filter((d) => d !== word && !swapped.has(d)).slice(0, doublesLeft);
      doublesLeft -= doubles.length;
      for (const d of doubles) own(d, i);
      if (doubles.length > 0) parts.push({ queries: [doubles.join(' ')], fuzzy: false, prefix: false, boostTerm: () => 0.4 });
    }
    return { combineWith: 'OR', queries: parts };
  });
  return { tree: { combineWith: 'OR', queries }, owners, allWords: 2 ** unique.length - 1 };
}

function distinct<T>(values: T[]): T[] {
  return [...new Set(values)];
}
