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
import { AppError } from '../../contracts/errors.ts';
import { mayHoldTerm, warmDeletionIndex, withDeletionIndex } from './fuzzyTerms.ts';
import { Stamps } from './stamps.ts';
import { engineIdOf, scoreWord, shortIdBound, type WordPart } from './wordScores.ts';
import { SEARCH_QUERY_MAX_WORDS, type SearchDocument, type SearchIndex, type SearchQuery, type SearchResult } from '../../contracts/ports.ts';
import { MAX_WHOLE_QUERY_CHARS, extraWords, indexTerms, lookupWords, maxTypos, titleKey, titleKeysOf, titleTypos, tokenize, transpositions } from './normalize.ts';
import {
  MATCH_ALL_WORDS, MATCH_BEGINS, MATCH_EVERY_WORD, MATCH_EXACT, MATCH_NEAR_EXACT, MATCH_SOME_WORDS, EXACT_PHRASE, NO_PHRASE, PHRASE_FACTOR, beginsKey, compareRanked, holdsEveryWord, holdsKey, holdsPhrase, nearKey,
  popularityFactorOfLogs, topK, type RankInput,
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
  /**
   * Titles kept, in all, in the hits of recent query words until the next write. Why: a query
   * that was never asked is mostly made of words that were ("the matrix rel" after "the
   * matrix"), and a word's lookup (fuzzy walks of the vocabulary for it and its one-swap
   * variants, BM25 of each match) is most of a query's cost; a kept word costs a pass over its
   * hits. About 25 bytes per title held. Default 500,000; 0 keeps none.
   */
  wordHitsKept?: number;
}

/**
 * The titles a query found, in the order the engine met them, as columns indexed alike: each
 * title's slot (Entry.slot), engine score and the bit mask of the query words it explains.
 * Columns, not an object per title: a common word ("the") finds thousands of titles per query.
 */
interface HitList {
  slots: Int32Array;
  score: Float64Array;
  covered: Int32Array;
}

/** A candidate of a query, classed but not yet ranked (runSearch): a title and its score. */
interface Candidate {
  id: string;
  score: number;
  entry: Entry;
  /** titleKey of its title in the query's language, when an overlay holds one. */
  local: string | undefined;
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

  /**
   * By the query's words, not its text: an answer depends on the words alone, so "The Matrix",
   * "the matrix" and "THE MATRIX!" share one.
   */
  static keyOf(query: SearchQuery, words: readonly string[]): string | null {
    if (query.q.length > MAX_CACHED_QUERY_CHARS) return null;
    return [query.lang, query.country.toUpperCase(), query.kind ?? '', query.genre ?? '', query.provider ?? '', query.offset, query.limit, words.join(' ')].join('\u0000');
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
  /** The title's small integer, for arrays indexed by title (found); kept for the life of the index. */
  slot: number;
  kind: SearchDocument['kind'];
  popularity: number;
  /** log1p(popularity), kept: ranking reads it for thousands of candidates. */
  logPopularity: number;
  /**
   * Countries with at least one provider, as bits (COUNTRY_BITS countries by their order of
   * first appearance, see countryBit): a query asks it of every candidate it ranks, and a
   * search through the packed `availability` string of a title streaming in 40 countries cost
   * a tenth of a query's time.
   */
  countriesLow: number;
  countriesHigh: number;
  /** Genre slugs as `|drama|crime|`. */
  genres: string;
  /** Countries with at least one provider, as `|US:nfx,amz|GB:bbc|`. */
  availability: string;
  /**
   * titleKey of the base-language title, `title` and `originalTitle`, then their joinedKeys
   * (normalize.ts titleKeysOf), `\n`-joined.
   */
  keys: string;
  /** titleKey of the translated titles held in overlay indexes, by language. */
  localKeys: Record<string, string> | null;
  /**
   * Per key in `keys` (same order, `\n`-joined), its name's extra words (normalize.ts
   * extraWords: the runs it writes without a space, joined, and its numbers' other forms),
   * space-separated (ranking.ts holdsEveryWord; a joined key has none); absent when no name has
   * any, as most do not.
   */
  runs?: string;
  /** The same for the translated titles, by language. */
  localRuns?: Record<string, string>;
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

/**
 * Whether a packed availability has providers in the country whose `needle` (`|US:`) is given,
 * and, when `provider` (`,nfx,`) is given too, whether it is one of them. Without a provider no
 * string is made: this runs for every candidate of a query, thousands for a common word.
 */
function availableIn(packed: string, needle: string, provider: string | undefined): boolean {
  const at = packed.indexOf(needle);
  if (at < 0) return false;
  if (provider === undefined) return true;
  const start = at + needle.length;
  return `,${packed.slice(start, packed.indexOf('|', start))},`.includes(provider);
}

/** Countries whose availability an entry holds as bits (Entry.countriesLow/High); any further one is read from the packed string. */
const COUNTRY_BITS = 64;

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

/** `terms` gives a field's index terms: normalize.ts indexTerms, or the ones add() made already. */
function newEngine(fields: string[], terms: (text: string) => string[]): MiniSearch<IndexedFields> {
  // Typo-tolerant lookups from a deletion index rather than tree walks: the same answers (fuzzyTerms.ts).
  return withDeletionIndex(new MiniSearch<IndexedFields>({
    fields,
    storeFields: [],
    // Titles are indexed under their joined runs, the other forms of their numbers and the
    // characters of their CJK pairs too ("spiderman", "2" for "II": normalize.ts indexTerms);
    // queries split as always.
    tokenize: terms,
    processTerm: keepTerm,
    // Base titles weigh a little more than alternatives (original title, untranslated title).
    searchOptions: { boost: { title: 1.5, alt: 1 }, combineWith: 'OR', tokenize, processTerm: keepTerm },
  }));
}

export function inProcessSearchIndex(options: InProcessSearchOptions = {}): SearchIndex {
  const baseLang = options.baseLang ?? 'en';
  const popularityWeight = options.popularityWeight ?? 0.2;
  const localeBoost = options.localeBoost ?? 1.1;

  // Title id <-> slot, and the entry of each title held by slot: a removed title keeps its slot
  // (its entry undefined), so kept word hits never name a wrong title.
  const slotOf = new Map<string, number>();
  const slotIds: string[] = [];
  const slotEntries: Array<Entry | undefined> = [];
  let held = 0;
  const scratch = new HitScratch();
  // The version of every title written with one, removed titles included: like OpenSearch's
  // external versions, so a replayed older write of the search feed is refused here too.
  const versions = new Map<string, number>();
  // The index terms of the names add() is adding, made once with their keys and extra words:
  // MiniSearch's tokenizer takes them from here instead of normalising the text again (each
  // text was normalised four times, a third of the time of filling the index on the sample).
  const known = new Map<string, string[]>();
  const termsOf = (text: string): string[] => known.get(text) ?? indexTerms(text);
  const base = newEngine(['title', 'alt'], termsOf);
  const overlays = new Map<string, MiniSearch<IndexedFields>>();
  const slotTables = new Map<MiniSearch<IndexedFields>, Int32Array>();
  // Only grows: a removed blockbuster keeps the scale, which changes factors by a constant.
  let maxPopularity = 0;
  let closed = false;
  const cache = new ResultCache(options.resultCacheSize ?? 2000);
  // Hits of recent query words per engine, least recently used first (wordHitsKept).
  const keptWords = new Map<string, WordHits>();
  const wordHitsMax = options.wordHitsKept ?? 500_000;
  let wordHitsHeld = 0;
  // Moves with every write that may change an answer, as the cache is cleared (SearchIndex.generation).
  let generation = 0;
  // The terms of a write join the typo lookups' index once the write's turn is over (fuzzyTerms.ts).
  let warming: NodeJS.Immediate | undefined;
  function written(count: number): void {
    if (count === 0) return;
    cache.clear();
    keptWords.clear();
    wordHitsHeld = 0;
    generation += 1;
    if (warming === undefined) warming = setImmediate(warm).unref();
  }
  function warm(): void {
    warming = undefined;
    if (closed) return;
    warmDeletionIndex(base);
    for (const overlay of overlays.values()) warmDeletionIndex(overlay);
  }

  // Country -> its bit in Entry.countriesLow/High, in order of first appearance; only grows.
  const countryBits = new Map<string, number>();
  function countryBit(country: string, register: boolean): number | undefined {
    let bit = countryBits.get(country);
    if (bit === undefined && register) {
      bit = countryBits.size;
      countryBits.set(country, bit);
    }
    return bit;
  }

  function ensureOpen(): void {
    if (closed) throw new AppError('closed', 'The search index is closed.');
  }

  function drop(id: string): void {
    const slot = slotOf.get(id);
    const entry = slot === undefined ? undefined : slotEntries[slot];
    if (entry === undefined) return;
    base.discard(id);
    for (const lang of Object.keys(entry.localKeys ?? {})) overlays.get(lang)?.discard(id);
    slotEntries[entry.slot] = undefined;
    held -= 1;
  }

  function add(doc: SearchDocument): void {
    const primary = doc.titles[baseLang] ?? doc.title;
    const alternatives = distinct([doc.title, doc.originalTitle ?? ''].filter((t) => t !== '' && t !== primary));
    const names = [primary, ...alternatives];
    const nameWords = names.map(tokenize);
    const nameKeys = nameWords.map(titleKey);
    const baseKeys = titleKeysOf(names, nameWords);
    // Each name's extra words (joined runs, numbers' other forms, CJK characters), under its key
    // (names with one key share it).
    const runsByKey = new Map<string, string[]>();
    names.forEach((name, i) => {
      const words = nameWords[i] as string[];
      const joined = extraWords(name, words);
      known.set(name, [...words, ...joined]);
      if (joined.length === 0) return;
      const key = nameKeys[i] as string;
      runsByKey.set(key, [...(runsByKey.get(key) ?? []), ...joined]);
    });
    base.add({ id: doc.id, title: primary, alt: alternatives.join(' | ') });
    let localRuns: Record<string, string> | undefined;

    let localKeys: Record<string, string> | null = null;
    for (const [lang, text] of Object.entries(doc.titles)) {
      if (lang === baseLang || text.trim() === '') continue;
      const words = tokenize(text);
      const key = titleKey(words);
      // A translation equal to a base title adds nothing the base index does not find.
      if (key === '' || baseKeys.includes(key)) continue;
      let overlay = overlays.get(lang);
      if (overlay === undefined) {
        overlay = newEngine(['title'], termsOf);
        overlays.set(lang, overlay);
      }
      const joined = extraWords(text, words);
      known.set(text, [...words, ...joined]);
      overlay.add({ id: doc.id, title: text });
      (localKeys ??= {})[lang] = key;
      if (joined.length > 0) (localRuns ??= {})[lang] = joined.join(' ');
    }
    known.clear();
    let countriesLow = 0;
    let countriesHigh = 0;
    for (const [country, providers] of Object.entries(doc.availability)) {
      const bit = providers.length === 0 ? undefined : countryBit(country.toUpperCase(), true);
      if (bit === undefined || bit >= COUNTRY_BITS) continue;
      if (bit < 32) countriesLow |= 1 << bit;
      else countriesHigh |= 1 << (bit - 32);
    }
    let slot = slotOf.get(doc.id);
    if (slot === undefined) {
      slot = slotIds.length;
      slotOf.set(doc.id, slot);
      slotIds.push(doc.id);
    }
    const entry: Entry = {
      slot,
      kind: doc.kind,
      popularity: doc.popularity,
      logPopularity: Math.log1p(doc.popularity),
      countriesLow,
      countriesHigh,
      genres: packGenres(doc.genres),
      availability: packAvailability(doc.availability),
      keys: baseKeys.join('\n'),
      localKeys,
      ...(runsByKey.size === 0 ? {} : { runs: baseKeys.map((k) => (runsByKey.get(k) ?? []).join(' ')).join('\n') }),
      ...(localRuns === undefined ? {} : { localRuns }),
    };
    // add() follows drop() of the same id: the slot holds no entry yet.
    slotEntries[slot] = entry;
    held += 1;
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
      return held;
    },

    generation() {
      return generation;
    },

    async search(query) {
      ensureOpen();
      const words = tokenize(query.q);
      const key = ResultCache.keyOf(query, words);
      const kept = key === null ? undefined : cache.get(key);
      if (kept !== undefined) return kept;
      const result = runSearch(query, words);
      if (key !== null) cache.set(key, result);
      return result;
    },

    async close() {
      closed = true;
      cache.clear();
      keptWords.clear();
      slotEntries.length = 0;
      held = 0;
      versions.clear();
      overlays.clear();
      slotTables.clear();
    },
  };

  /**
   * An engine's short ids to slots, learnt as titles are found: a title keeps its slot for good
   * and the engine never reuses a short id, so an entry never goes stale. Saves two Map lookups
   * per title of a word's lookup.
   */
  function slotsByDoc(engine: MiniSearch<IndexedFields>): Int32Array {
    const size = shortIdBound(engine);
    let table = slotTables.get(engine);
    if (table === undefined || table.length < size) {
      const grown = new Int32Array(Math.max(size, (table?.length ?? 0) * 2, 1024)).fill(-1);
      if (table !== undefined) grown.set(table);
      table = grown;
      slotTables.set(engine, table);
    }
    return table;
  }

  /** The hits of one word in one engine, kept until the next write (see wordHitsKept). */
  function wordHits(engine: MiniSearch<IndexedFields>, engineName: string, word: WordQuery): WordHits {
    const key = `${engineName}\u0000${word.key}`;
    const kept = keptWords.get(key);
    if (kept !== undefined) {
      // Re-inserted, so Map order is least recently used first.
      keptWords.delete(key);
      keptWords.set(key, kept);
      return kept;
    }
    const scored = scoreWord(engine, word.parts(engine));
    const n = scored.n;
    const hits: WordHits = {
      slots: new Int32Array(n), raw: new Float64Array(n), terms: new Uint8Array(n), firstTerm: scored.firstTerm.slice(0, n), moreTerms: new Map(scored.moreTerms),
    };
    const slots = slotsByDoc(engine);
    for (let j = 0; j < n; j++) {
      const matched = scored.terms[j] as number;
      const doc = scored.docs[j] as number;
      let slot = slots[doc] as number;
      if (slot < 0) {
        // Every id the engine holds was given a slot by add().
        slot = slotOf.get(engineIdOf(engine, doc) as string) as number;
        slots[doc] = slot;
      }
      hits.slots[j] = slot;
      hits.raw[j] = (scored.score[j] as number) / (matched || 1);
      hits.terms[j] = matched;
    }
    if (wordHitsMax > 0 && n <= wordHitsMax) {
      keptWords.set(key, hits);
      wordHitsHeld += n;
      for (const [oldest, held] of keptWords) {
        if (wordHitsHeld <= wordHitsMax) break;
        keptWords.delete(oldest);
        wordHitsHeld -= held.slots.length;
      }
    }
    return hits;
  }

  /**
   * Titles matching any of the words, each with MiniSearch's score for the OR of the words'
   * lookups (times `boost`) and the bit mask of the words it matched, in the order the words'
   * hits first name them. Sums are added in the same order as an OR query would, so scores are
   * the engine's to the last bit.
   */
  function found(engine: MiniSearch<IndexedFields>, engineName: string, query: BuiltQuery, boost: number, into: HitBuffer): HitList {
    if (query.words.length === 1) {
      // One word (a short prefix, often, with thousands of titles): its hits name each title
      // once, so nothing needs adding up; the same score as below.
      const { slots, raw, terms } = wordHits(engine, engineName, query.words[0] as WordQuery);
      const out = into.take(slots.length);
      for (let j = 0; j < slots.length; j++) out.score[j] = (raw[j] as number) * ((terms[j] as number) || 1) * boost;
      out.covered.fill(1);
      // The word's own slots: nothing writes to a list once made.
      return { slots, score: out.score, covered: out.covered };
    }
    const acc = scratch.begin(slotIds.length);
    // A term two words share (a swap of "goen" is "gone"): MiniSearch counts it once per title,
    // and a title matching it explains both words.
    const counted = query.shared.size === 0 ? null : new Map<number, Set<string>>();
    query.words.forEach((word, i) => {
      const hits = wordHits(engine, engineName, word);
      const { slots, raw, terms } = hits;
      for (let j = 0; j < slots.length; j++) {
        const slot = slots[j] as number;
        let count = terms[j] as number;
        let covered = 1 << i;
        if (counted !== null) {
          const once = counted.get(slot) ?? new Set<string>();
          counted.set(slot, once);
          for (const term of matchedTerms(hits, j)) {
            const mask = query.shared.get(term);
            if (mask === undefined) continue;
            covered |= mask;
            if (once.has(term)) count -= 1;
            else once.add(term);
          }
        }
        acc.add(slot, raw[j] as number, count, covered);
      }
    });
    return acc.finish(boost, into);
  }

  /** The answer to `query`, whose text tokenizes to `words`. */
  function runSearch(query: SearchQuery, words: string[]): SearchResult {
    if (words.length === 0) return { total: 0, ids: [] };
    const lookup = lookupWords(words);
    const built = buildQuery(lookup.slice(0, MAX_WORDS));
    // The looked-up words as the OpenSearch adapter takes them (distinct, at most MAX_WORDS), for MATCH_EVERY_WORD.
    const lookedUp = [...new Set(lookup)].slice(0, MAX_WORDS);
    const { allWords } = built;

    // Per title: best engine score and a bit mask of the query words it explains.
    const overlay = query.lang === baseLang ? undefined : overlays.get(query.lang);
    let hits = found(base, '', built, 1, scratch.base);
    // A title found through both indexes keeps its better score and the union of its words.
    if (overlay !== undefined) hits = scratch.merge(hits, found(overlay, query.lang, built, localeBoost, scratch.local), slotIds.length);

    const countryNeedle = `|${query.country.toUpperCase()}:`;
    const queryKey = titleKey(words);
    // A query can begin a title only when its last word was looked up as a prefix.
    const beginning = (words[words.length - 1] as string).length >= 2 && [...queryKey].length <= MAX_WHOLE_QUERY_CHARS ? queryKey : null;
    // Titles hold local keys only for languages other than the base one.
    const localLang = query.lang === baseLang ? undefined : query.lang;
    // Made once, not per candidate: the query key as it follows another key in packed keys.
    const keyNeedle = `\n${queryKey}`;
    const genre = query.genre === undefined ? undefined : `|${query.genre}|`;
    const provider = query.provider === undefined ? undefined : `,${query.provider},`;
    const offset = Math.max(0, query.offset);
    const limit = Math.max(0, query.limit);
    const need = offset + limit;
    // Candidates by match class, the first key of the order (ranking.ts): the class costs a few
    // comparisons of short strings, while what orders titles within a class (availability, the
    // phrase and typo checks, popularity) costs much more, and a short prefix ("the lo") finds
    // thousands of titles for a page of 20. So every candidate is counted and classed, and the
    // rest is worked out only for the classes that reach the page, best class first; the page
    // is the same as ranking every candidate.
    const exact: Candidate[] = [];
    const begins: RankInput[] = [];
    const complete: Candidate[] = [];
    const partial: Candidate[] = [];
    const { slots, score, covered } = hits;
    for (let k = 0; k < slots.length; k++) {
      const entry = slotEntries[slots[k] as number];
      if (entry === undefined) continue;
      const id = slotIds[entry.slot] as string;
      if (query.kind !== undefined && entry.kind !== query.kind) continue;
      if (genre !== undefined && !entry.genres.includes(genre)) continue;
      if (provider !== undefined && !availableIn(entry.availability, countryNeedle, provider)) continue;

      const local = localLang === undefined ? undefined : entry.localKeys?.[localLang];
      // Only a title that has every looked-up word can be the query or hold it as a phrase.
      const all = covered[k] === allWords;
      if (all && (local === queryKey || holdsKey(entry.keys, queryKey, keyNeedle))) exact.push({ id, score: score[k] as number, entry, local });
      else if (beginning !== null && (beginsKey(entry.keys, beginning, keyNeedle) || local?.startsWith(beginning) === true)) {
        // The query begins this title: ranked by popularity alone (ranking.ts, MATCH_BEGINS).
        begins.push({ id, matchClass: MATCH_BEGINS, available: false, relevance: 0, popularity: entry.popularity });
      } else (all ? complete : partial).push({ id, score: score[k] as number, entry, local });
    }
    const total = exact.length + begins.length + complete.length + partial.length;

    const keyTypos = titleTypos(queryKey);
    const logMaxPopularity = Math.log1p(maxPopularity);
    // No title has ever streamed in a country without a bit: none is available there.
    const bit = countryBit(query.country.toUpperCase(), false);
    const available = (e: Entry): boolean =>
      bit === undefined ? false
      : bit < 32 ? (e.countriesLow & (1 << bit)) !== 0
      : bit < COUNTRY_BITS ? (e.countriesHigh & (1 << (bit - 32))) !== 0
      : availableIn(e.availability, countryNeedle, undefined);
    const page: RankInput[] = [];
    /**
     * The best of a class onto the page. Within a class, titles available in the country come
     * first: when they alone fill the page, the others are not ranked at all.
     */
    const fill = (candidates: readonly Candidate[], matchClass: number, phrase: (c: Candidate) => number): void => {
      const room = need - page.length;
      if (room <= 0 || candidates.length === 0) return;
      let availableCount = 0;
      const flags = candidates.map((c) => {
        const yes = available(c.entry);
        if (yes) availableCount += 1;
        return yes;
      });
      const inputs: RankInput[] = [];
      candidates.forEach((c, i) => {
        const yes = flags[i] as boolean;
        if (!yes && availableCount >= room) return;
        const relevance = c.score * phrase(c) * popularityFactorOfLogs(c.entry.logPopularity, logMaxPopularity, popularityWeight);
        inputs.push({ id: c.id, matchClass, available: yes, relevance, popularity: c.entry.popularity });
      });
      for (const r of topK(inputs, room, compareRanked)) page.push(r);
    };
    fill(exact, MATCH_EXACT, () => EXACT_PHRASE);
    if (page.length < need) for (const r of topK(begins, need - page.length, compareRanked)) page.push(r);
    if (page.length < need) {
      // Titles that hold every looked-up word whole, then near-exact titles (a whole-title
      // distance), then the other titles that matched every word.
      const every: Candidate[] = [];
      const near: Candidate[] = [];
      const rest: Candidate[] = [];
      for (const c of complete) {
        if (holdsEveryWord(c.entry.keys, lookedUp, c.entry.runs) || (c.local !== undefined && holdsEveryWord(c.local, lookedUp, c.entry.localRuns?.[query.lang]))) {
          every.push(c);
          continue;
        }
        const keys = keyTypos === 0 ? [] : c.local === undefined ? c.entry.keys.split('\n') : [c.local, ...c.entry.keys.split('\n')];
        (nearKey(queryKey, keys, keyTypos) ? near : rest).push(c);
      }
      // phraseFactor's, for a title that is not the query (those are MATCH_EXACT).
      const phrase = (c: Candidate): number =>
        holdsPhrase(c.entry.keys, queryKey) || (c.local !== undefined && holdsPhrase(c.local, queryKey)) ? PHRASE_FACTOR : 1;
      fill(every, MATCH_EVERY_WORD, phrase);
      fill(near, MATCH_NEAR_EXACT, phrase);
      fill(rest, MATCH_ALL_WORDS, phrase);
    }
    fill(partial, MATCH_SOME_WORDS, () => NO_PHRASE.factor);
    return { total, ids: page.slice(offset, need).map((r) => r.id) };
  }
}

/** One query word's engine lookup (made when needed), and the key its hits are kept under (WordHits). */
interface WordQuery {
  key: string;
  parts(engine: MiniSearch<IndexedFields>): WordPart[];
}

/**
 * What one word's lookup found: per title, the engine's score before MiniSearch multiplies it by
 * the number of query terms matched, and that number (so the hits of several words add up to
 * the score MiniSearch gives their OR: the sum of the scores times the sum of the counts).
 * Columns, not objects: a common word holds thousands of titles.
 */
interface WordHits {
  /** The titles' slots (Entry.slot). */
  slots: Int32Array;
  raw: Float64Array;
  terms: Uint8Array;
  /**
   * The query terms each title matched, read only when two words share a term (see found): the
   * first per title, and the whole list for the few titles that matched more than one.
   */
  firstTerm: string[];
  moreTerms: Map<number, string[]>;
}

/** Columns of a HitList, grown as needed and reused: a list of thousands of titles is no new allocation. */
class HitBuffer {
  private slots = new Int32Array(1024);
  private score = new Float64Array(1024);
  private covered = new Int32Array(1024);

  /** A list of `n` titles over the buffer (its values are the last writer's until written). */
  take(n: number): HitList {
    if (this.slots.length < n) {
      const size = Math.max(n, this.slots.length * 2);
      this.slots = new Int32Array(size);
      this.score = new Float64Array(size);
      this.covered = new Int32Array(size);
    }
    return { slots: this.slots.subarray(0, n), score: this.score.subarray(0, n), covered: this.covered.subarray(0, n) };
  }
}

/**
 * Per-title arrays reused from query to query, to add up the words' hits of one engine (found)
 * and to merge two engines' lists (merge) without a Map entry and an object per title. A title's
 * entry counts for the current pass only when its stamp is the pass's.
 */
class HitScratch {
  /** Where a query's lists are written, reused from query to query (a query is synchronous): base and overlay hits, and their merge. */
  readonly base = new HitBuffer();
  readonly local = new HitBuffer();
  private readonly merged = new HitBuffer();
  private readonly stamps = new Stamps();
  private score = new Float64Array(0);
  private terms = new Int32Array(0);
  private covered = new Int32Array(0);
  private order: number[] = [];

  /** Starts a pass over titles of slots below `slots`. */
  begin(slots: number): this {
    if (this.stamps.begin(slots)) {
      const size = this.stamps.marks.length;
      this.score = new Float64Array(size);
      this.terms = new Int32Array(size);
      this.covered = new Int32Array(size);
    }
    this.order.length = 0;
    return this;
  }

  /** One word's hit on a title: its raw score and terms add up, the words it explains join. */
  add(slot: number, raw: number, terms: number, covered: number): void {
    if (!this.stamps.has(slot)) {
      this.stamps.mark(slot);
      this.score[slot] = raw;
      this.terms[slot] = terms;
      this.covered[slot] = covered;
      this.order.push(slot);
    } else {
      this.score[slot] = (this.score[slot] as number) + raw;
      this.terms[slot] = (this.terms[slot] as number) + terms;
      this.covered[slot] = (this.covered[slot] as number) | covered;
    }
  }

  /** The pass's titles in first-hit order, in `into`; a score is MiniSearch's (sum times terms matched) times `boost`. */
  finish(boost: number, into: HitBuffer): HitList {
    const n = this.order.length;
    const out = into.take(n);
    for (let k = 0; k < n; k++) {
      const slot = this.order[k] as number;
      out.slots[k] = slot;
      out.score[k] = (this.score[slot] as number) * ((this.terms[slot] as number) || 1) * boost;
      out.covered[k] = this.covered[slot] as number;
    }
    return out;
  }

  /**
   * `first`'s titles in order, each with the better score and the union of words of both lists,
   * then `second`'s titles that `first` lacks, in their order.
   */
  merge(first: HitList, second: HitList, slots: number): HitList {
    this.begin(slots);
    // terms holds a title's place in `second`, plus one.
    for (let k = 0; k < second.slots.length; k++) {
      const slot = second.slots[k] as number;
      this.stamps.mark(slot);
      this.terms[slot] = k + 1;
    }
    const n = first.slots.length;
    const merged = this.merged.take(n + second.slots.length);
    let m = 0;
    for (let k = 0; k < n; k++) {
      const slot = first.slots[k] as number;
      let score = first.score[k] as number;
      let covered = first.covered[k] as number;
      if (this.stamps.has(slot)) {
        const other = (this.terms[slot] as number) - 1;
        score = Math.max(score, second.score[other] as number);
        covered |= second.covered[other] as number;
        this.stamps.unmark(slot);
      }
      merged.slots[m] = slot;
      merged.score[m] = score;
      merged.covered[m] = covered;
      m += 1;
    }
    for (let k = 0; k < second.slots.length; k++) {
      const slot = second.slots[k] as number;
      if (!this.stamps.has(slot)) continue;
      merged.slots[m] = slot;
      merged.score[m] = second.score[k] as number;
      merged.covered[m] = second.covered[k] as number;
      m += 1;
    }
    return { slots: merged.slots.subarray(0, m), score: merged.score.subarray(0, m), covered: merged.covered.subarray(0, m) };
  }
}

function matchedTerms(hits: WordHits, j: number): readonly string[] {
  return hits.moreTerms.get(j) ?? [hits.firstTerm[j] as string];
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

/** A query's word lookups, the mask of all its words, and the terms looked up for more than one word with their words' mask. */
interface BuiltQuery {
  words: WordQuery[];
  allWords: number;
  shared: Map<string, number>;
}

/**
 * A word's one-swap variants and, made when a word first needs them, its two-swap variants
 * (all of them: a query's budget takes a prefix of the list), kept per word. Why: making them
 * is most of a query's own work for a long word (~80 µs of the ~100 µs "terminator" costs when
 * its lookups are kept), and the same words come back in query after query ("terminator",
 * "terminator 2", "terminator 3: rise"). They depend on the word alone, never on the index, so
 * no write forgets them; at most VARIANTS_KEPT words are kept, all dropped when full.
 */
interface Variants {
  swaps: string[];
  doubles?: string[];
}
const variantsKept = new Map<string, Variants>();
const VARIANTS_KEPT = 5000;

function variantsOf(word: string): Variants {
  let kept = variantsKept.get(word);
  if (kept === undefined) {
    if (variantsKept.size >= VARIANTS_KEPT) variantsKept.clear();
    kept = { swaps: transpositions(word) };
    variantsKept.set(word, kept);
  }
  return kept;
}

function doublesOf(word: string, variants: Variants): string[] {
  if (variants.doubles === undefined) {
    const swapped = new Set(variants.swaps);
    variants.doubles = distinct(variants.swaps.flatMap(transpositions)).filter((d) => d !== word && !swapped.has(d));
  }
  return variants.doubles;
}

function buildQuery(words: string[]): BuiltQuery {
  const last = words[words.length - 1] as string;
  const unique = distinct(words);
  const owners = new Map<string, number>();
  const own = (terms: readonly string[], i: number): void => {
    for (const term of terms) owners.set(term, (owners.get(term) ?? 0) | (1 << i));
  };
  let doublesLeft = MAX_DOUBLE_SWAPS;
  const queries: WordQuery[] = unique.map((word, i) => {
    const typos = i < MAX_TYPO_WORDS ? maxTypos(word) : 0;
    const prefix = word === last && word.length >= 2;
    const variants = typos === 0 ? undefined : variantsOf(word);
    const swaps = variants?.swaps ?? [];
    own([word], i);
    own(swaps, i);
    let doubles: string[] = [];
    if (variants !== undefined && typos >= 2 && doublesLeft > 0) {
      // Two swaps ("negoitatro"): exact lookups of the two-swap variants, a few dozen for a
      // usual word, ~250 for a word at MAX_TYPO_WORD_CHARS; at most MAX_DOUBLE_SWAPS in all.
      // This is what grew with the cube of a word's length before those caps.
      doubles = doublesOf(word, variants).slice(0, doublesLeft);
      doublesLeft -= doubles.length;
      own(doubles, i);
    }
    // The lookup's parts are made only when the word's hits are not kept; they are scored as
    // the engine's OR of them would be (wordScores.ts). Its words are tokens already, and so
    // are their swaps.
    const parts = (engine: MiniSearch<IndexedFields>): WordPart[] => {
      const list: WordPart[] = [{ terms: [word], fuzzy: typos, prefix, boost: 1 }];
      // Weighted like a fuzzy match: a swapped word is still a typo, not the word itself.
      if (swaps.length > 0) list.push({ terms: swaps, fuzzy: typos - 1, prefix: false, boost: 0.45 });
      // Looked up exactly: one the engine never held would find nothing, so it is not asked.
      const held = doubles.filter((d) => mayHoldTerm(engine, d));
      if (held.length > 0) list.push({ terms: held, fuzzy: 0, prefix: false, boost: 0.4 });
      return list;
    };
    // Everything the lookup depends on: the word, its typo budget, prefix or not, and how many
    // of its two-swap variants the query's budget left it (a prefix of the list, in order).
    return { key: `${typos}${prefix ? 'p' : 'w'}${doubles.length}:${word}`, parts };
  });
  const shared = new Map<string, number>();
  for (const [term, mask] of owners) if ((mask & (mask - 1)) !== 0) shared.set(term, mask);
  return { words: queries, allWords: 2 ** unique.length - 1, shared };
}

function distinct<T>(values: T[]): T[] {
  return [...new Set(values)];
}
