/**
 * One query word's lookup in a MiniSearch engine, scored exactly as `engine.search` scores it,
 * into reused columns instead of an object, an array and a match record per title.
 *
 * Why: a query word the index has not seen since its last write is looked up in the engine
 * (inProcessSearch.ts, wordHits), and a common word or short prefix finds thousands of titles.
 * Through `engine.search`, each of them costs a result object with its term list and match map
 * at every level of the query (term, sub-query, OR of sub-queries), then a final object, then a
 * sort of the objects: about two thirds of the CPU of a query whose words are new. Here a
 * title's scores add up in typed arrays indexed by the engine's short document ids.
 *
 * Exactness: the answers must be the engine's to the last bit, since MiniSearch's scores order
 * the titles. So this follows MiniSearch 7.2's `executeQuery`, `executeQuerySpec` and
 * `termResults` step for step (pinned by the lock file): the same BM25+ arithmetic in the same
 * order, the per-term sums folded into the sub-query's and those into the query's in the same
 * order (floating-point sums depend on it), titles listed in the order the engine's maps would
 * list them (not sorted: see finish), and the same lazy clean-up of postings of discarded
 * documents (`removeTerm`, which also lowers the count of matching documents for the titles
 * after it). test/unit/wordScores.unit.test.ts compares every answer with `engine.search`'s,
 * scores and order, across discards and re-adds.
 */
import type MiniSearch from 'minisearch';
import { Stamps } from './stamps.ts';

/** One sub-query of a word's lookup: its terms, each looked up exactly, within `fuzzy` typos (0: none) and as a prefix. */
export interface WordPart {
  terms: readonly string[];
  fuzzy: number;
  prefix: boolean;
  /** MiniSearch's `boostTerm`, the same for every term of the part. */
  boost: number;
}

/** A word's titles, in the order of the engine's result map (search() sorts them by score; see finish). */
export interface ScoredTitles {
  /** How many titles; the columns below are reused and may be longer. */
  n: number;
  /** The titles' short ids in the engine (never reused; `engineIdOf` gives the id). */
  docs: Int32Array;
  /** MiniSearch's final score (`score` of a search result). */
  score: Float64Array;
  /** The query terms each title matched (`queryTerms`): the first, and the whole list when more than one. */
  firstTerm: string[];
  terms: Uint8Array;
  moreTerms: Map<number, string[]>;
}

type FieldFreqs = Map<number, number>;
type TermData = Map<number, FieldFreqs>;

/** The parts of a MiniSearch 7.2 engine read here (private members, pinned by the lock file). */
interface EngineInternals {
  _options: {
    fields: string[];
    searchOptions: { boost?: Record<string, number>; weights?: { fuzzy?: number; prefix?: number }; bm25: { k: number; b: number; d: number } };
  };
  _index: {
    get(term: string): TermData | undefined;
    atPrefix(prefix: string): Iterable<[string, TermData]>;
    fuzzyGet(term: string, maxDistance: number): Map<string, [TermData, number]>;
  };
  _documentIds: Map<number, string>;
  _fieldIds: Record<string, number>;
  _fieldLength: Map<number, number[]>;
  _avgFieldLength: number[];
  _documentCount: number;
  _nextId: number;
  removeTerm(fieldId: number, documentId: number, term: string): void;
}

/** MiniSearch's defaults for weights it was not given (defaultSearchOptions.weights). */
const DEFAULT_FUZZY_WEIGHT = 0.45;
const DEFAULT_PREFIX_WEIGHT = 0.375;

/**
 * Per-title sums of one level of the query (a term, a sub-query, the whole query), in arrays
 * indexed by short id and reused from lookup to lookup; a title counts for the current pass only
 * when its stamp is the pass's. `order` lists the titles as a Map would: first entry first.
 */
class Level {
  readonly stamps = new Stamps();
  score = new Float64Array(0);
  order: number[] = [];

  begin(size: number): void {
    if (this.stamps.begin(size)) this.score = new Float64Array(this.stamps.marks.length);
    this.order.length = 0;
  }

  /** `score += value` for the title, or its first entry (`results.set`). */
  add(doc: number, value: number): void {
    if (this.stamps.has(doc)) this.score[doc] = (this.score[doc] as number) + value;
    else {
      this.stamps.mark(doc);
      this.score[doc] = value;
      this.order.push(doc);
    }
  }

  /** MiniSearch's OR of this level's map into `into`'s: sums added, new titles appended in this order. */
  foldInto(into: Level): void {
    const { order, score } = this;
    for (let k = 0; k < order.length; k++) {
      const doc = order[k] as number;
      into.add(doc, score[doc] as number);
    }
  }
}

/** The scorer of one engine: its reused levels and columns. */
class WordScorer {
  private readonly term = new Level();
  private readonly part = new Level();
  private readonly query = new Level();
  /** Per title of the query: the index in `termsOf` of its first query term, or -1, and how many. */
  private firstTermOf = new Int32Array(0);
  private termCount = new Uint8Array(0);
  private moreTermsOf = new Map<number, string[]>();
  private termsOf: string[] = [];
  /** Titles given a query term in this query. */
  private readonly seen = new Stamps();
  private readonly out: ScoredTitles = { n: 0, docs: new Int32Array(1024), score: new Float64Array(1024), firstTerm: [], terms: new Uint8Array(1024), moreTerms: new Map() };
  private readonly fields: Array<{ id: number; boost: number }>;
  private readonly fuzzyWeight: number;
  private readonly prefixWeight: number;
  private readonly k: number;
  private readonly b: number;
  private readonly d: number;

  constructor(private readonly engine: EngineInternals) {
    const { fields, searchOptions } = engine._options;
    // executeQuerySpec's boosts: the engine's fields, in order, each with its boost or 1.
    this.fields = fields.map((field) => ({ id: engine._fieldIds[field] as number, boost: (Object.hasOwn(searchOptions.boost ?? {}, field) ? searchOptions.boost?.[field] : undefined) || 1 }));
    this.fuzzyWeight = searchOptions.weights?.fuzzy ?? DEFAULT_FUZZY_WEIGHT;
    this.prefixWeight = searchOptions.weights?.prefix ?? DEFAULT_PREFIX_WEIGHT;
    ({ k: this.k, b: this.b, d: this.d } = searchOptions.bm25);
  }

  score(parts: readonly WordPart[]): ScoredTitles {
    const size = this.engine._nextId;
    this.query.begin(size);
    if (this.seen.begin(size)) {
      this.firstTermOf = new Int32Array(this.seen.marks.length);
      this.termCount = new Uint8Array(this.seen.marks.length);
    }
    this.moreTermsOf.clear();
    this.termsOf.length = 0;
    for (const part of parts) {
      // A sub-query of one term is that term's map; of several, their OR, then OR'ed into the query.
      const terms = part.terms.filter((t) => t !== '');
      if (terms.length === 1) {
        this.scoreTerm(terms[0] as string, part);
        this.term.foldInto(this.query);
      } else if (terms.length > 1) {
        this.part.begin(size);
        for (const term of terms) {
          this.scoreTerm(term, part);
          this.term.foldInto(this.part);
        }
        this.part.foldInto(this.query);
      }
    }
    return this.finish();
  }

  /** executeQuerySpec: the term itself, then its prefix matches, then its typo matches, into `this.term`. */
  private scoreTerm(term: string, part: WordPart): void {
    const index = this.engine._index;
    this.term.begin(this.engine._nextId);
    this.termResults(term, 1, part.boost, index.get(term));
    const prefixMatches = part.prefix ? index.atPrefix(term) : undefined;
    const fuzzyMatches = part.fuzzy > 0 ? index.fuzzyGet(term, part.fuzzy) : undefined;
    if (prefixMatches !== undefined) {
      for (const [derived, data] of prefixMatches) {
        const distance = derived.length - term.length;
        if (distance === 0) continue;
        // A prefix match is scored as one, never again as a typo match.
        fuzzyMatches?.delete(derived);
        this.termResults(derived, (this.prefixWeight * derived.length) / (derived.length + 0.3 * distance), part.boost, data);
      }
    }
    if (fuzzyMatches !== undefined) {
      for (const [derived, [data, distance]] of fuzzyMatches) {
        if (distance === 0) continue;
        this.termResults(derived, (this.fuzzyWeight * derived.length) / (derived.length + distance), part.boost, data);
      }
    }
    this.noteTerm(term);
  }

  /** termResults: BM25+ of `derived`'s postings, weighted, added to `this.term`. */
  private termResults(derived: string, weight: number, boost: number, data: TermData | undefined): void {
    if (data === undefined) return;
    const engine = this.engine;
    const { k, b, d } = this;
    const total = engine._documentCount;
    for (const field of this.fields) {
      const freqs = data.get(field.id);
      if (freqs === undefined) continue;
      let matching = freqs.size;
      const avgFieldLength = engine._avgFieldLength[field.id] as number;
      for (const [doc, termFreq] of freqs) {
        if (!engine._documentIds.has(doc)) {
          // A discarded title's posting: dropped now, as MiniSearch does, and no longer counted.
          engine.removeTerm(field.id, doc, derived);
          matching -= 1;
          continue;
        }
        const fieldLength = (engine._fieldLength.get(doc) as number[])[field.id] as number;
        const invDocFreq = Math.log(1 + (total - matching + 0.5) / (matching + 0.5));
        const raw = invDocFreq * (d + (termFreq * (k + 1)) / (termFreq + k * (1 - b + (b * fieldLength) / avgFieldLength)));
        // The engine multiplies by a document boost of 1 too: exact, so left out.
        this.term.add(doc, weight * boost * field.boost * raw);
      }
    }
  }

  /** The term's titles gain it as a query term (a title's terms: distinct, in first-match order). */
  private noteTerm(term: string): void {
    const { order } = this.term;
    let at = this.termsOf.indexOf(term);
    if (at < 0) {
      at = this.termsOf.length;
      this.termsOf.push(term);
    }
    for (let k = 0; k < order.length; k++) {
      const doc = order[k] as number;
      if (!this.seen.has(doc)) {
        this.seen.mark(doc);
        this.firstTermOf[doc] = at;
        this.termCount[doc] = 1;
        continue;
      }
      const first = this.firstTermOf[doc] as number;
      if (first === at) continue;
      let more = this.moreTermsOf.get(doc);
      if (more === undefined) more = [this.termsOf[first] as string];
      else if (more.includes(term)) continue;
      more.push(term);
      this.moreTermsOf.set(doc, more);
      this.termCount[doc] = more.length;
    }
  }

  /**
   * search()'s final scores: each title's sum times the number of query terms it matched. In
   * the order the engine's result map lists them, not sorted by score as search() returns them:
   * the index ranks candidates with a total order (ranking.ts, compareRanked, ties broken by id),
   * so the order of a word's titles changes no answer, and sorting thousands of titles cost a
   * tenth of a lookup.
   */
  private finish(): ScoredTitles {
    const { order, score } = this.query;
    const n = order.length;
    const out = this.out;
    if (out.score.length < n) {
      out.score = new Float64Array(Math.max(n, out.score.length * 2));
      out.terms = new Uint8Array(out.score.length);
      out.docs = new Int32Array(out.score.length);
    }
    out.n = n;
    out.firstTerm.length = n;
    out.moreTerms.clear();
    for (let j = 0; j < n; j++) {
      const doc = order[j] as number;
      out.docs[j] = doc;
      out.score[j] = (score[doc] as number) * ((this.termCount[doc] as number) || 1);
      out.firstTerm[j] = this.termsOf[this.firstTermOf[doc] as number] as string;
      out.terms[j] = this.termCount[doc] as number;
      const more = this.moreTermsOf.get(doc);
      if (more !== undefined) out.moreTerms.set(j, more);
    }
    return out;
  }
}

const scorers = new WeakMap<object, WordScorer>();

/**
 * The titles `engine.search({ combineWith: 'OR', queries: parts... })` would return for one
 * word, with the same scores and query terms, unsorted. The columns are reused by the next call.
 */
export function scoreWord<T>(engine: MiniSearch<T>, parts: readonly WordPart[]): ScoredTitles {
  let scorer = scorers.get(engine);
  if (scorer === undefined) {
    scorer = new WordScorer(engine as unknown as EngineInternals);
    scorers.set(engine, scorer);
  }
  return scorer.score(parts);
}

/** The id (MiniSearch's `id` field) of the title the engine knows by short id `doc`. */
export function engineIdOf<T>(engine: MiniSearch<T>, doc: number): string | undefined {
  return (engine as unknown as EngineInternals)._documentIds.get(doc);
}

/** One past the largest short id `engine` has given. */
export function shortIdBound<T>(engine: MiniSearch<T>): number {
  return (engine as unknown as EngineInternals)._nextId;
}
