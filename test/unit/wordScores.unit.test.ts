import assert from 'node:assert/strict';
import MiniSearch, { type Query } from 'minisearch';
import { withDeletionIndex } from '../../infra/search/fuzzyTerms.ts';
import { tokenize, transpositions } from '../../infra/search/normalize.ts';
import { engineIdOf, scoreWord, type WordPart } from '../../infra/search/wordScores.ts';
import { movieDocuments, showDocuments } from './searchQualityCatalog.ts';

interface Doc {
  id: string;
  title: string;
  alt: string;
}

/** The engines of inProcessSearch.ts (two fields, boosted), without automatic vacuuming so that two engines given the same writes hold the same postings. */
function engine(): MiniSearch<Doc> {
  return withDeletionIndex(new MiniSearch<Doc>({
    fields: ['title', 'alt'],
    storeFields: [],
    tokenize,
    processTerm: (t) => t,
    autoVacuum: false,
    searchOptions: { boost: { title: 1.5, alt: 1 }, combineWith: 'OR', tokenize, processTerm: (t) => t },
  }));
}

/** The same lookup as the engine's own query (what inProcessSearch.ts asked before wordScores.ts). */
function asQuery(parts: WordPart[]): Query {
  return {
    combineWith: 'OR',
    tokenize: (text: string) => text.split(' '),
    queries: parts.map((p) => ({ queries: [p.terms.join(' ')], fuzzy: p.fuzzy === 0 ? false : p.fuzzy, prefix: p.prefix, ...(p.boost === 1 ? {} : { boostTerm: () => p.boost }) })),
  };
}

type Answer = Array<[string, number, string[]]>;

function byEngine(e: MiniSearch<Doc>, parts: WordPart[]): Answer {
  return e.search(asQuery(parts)).map((r) => [r.id as string, r.score, r.queryTerms]);
}

/** The scorer's titles, sorted as search() sorts its results (stable, best score first). */
function byScorer(e: MiniSearch<Doc>, parts: WordPart[]): Answer {
  const s = scoreWord(e, parts);
  const titles: Answer = Array.from({ length: s.n }, (_, j) => [engineIdOf(e, s.docs[j] as number) as string, s.score[j] as number, s.moreTerms.get(j) ?? [s.firstTerm[j] as string]]);
  return titles.sort((a, b) => b[1] - a[1]);
}

function pseudoRandom(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 1103515245 + 12345) % 2147483648) / 2147483648;
}

describe('a word\'s lookup scored in columns (wordScores.ts)', function () {
  this.timeout(60_000);
  const docs: Doc[] = [...movieDocuments(), ...showDocuments()].map((d) => ({ id: d.id, title: d.title, alt: d.originalTitle ?? '' }));
  const vocabulary = [...new Set(docs.flatMap((d) => tokenize(`${d.title} ${d.alt}`)))].sort();
  const rnd = pseudoRandom(7);
  const pick = (): string => vocabulary[Math.floor(rnd() * vocabulary.length)] as string;

  /** Lookups as inProcessSearch.ts makes them, and harder ones: several terms per part, repeats, a term in two parts. */
  function lookups(count: number): WordPart[][] {
    const out: WordPart[][] = [];
    for (let i = 0; i < count; i++) {
      const word = pick();
      const short = word.slice(0, Math.max(1, Math.floor(rnd() * word.length)));
      const typos = Math.floor(rnd() * 3);
      const base = rnd() < 0.5 ? word : short;
      const parts: WordPart[] = [{ terms: [base], fuzzy: typos, prefix: rnd() < 0.5, boost: 1 }];
      if (typos > 0) parts.push({ terms: transpositions(base), fuzzy: typos - 1, prefix: false, boost: 0.45 });
      if (rnd() < 0.3) parts.push({ terms: [pick(), pick(), base, pick()], fuzzy: 0, prefix: false, boost: 0.4 });
      out.push(parts);
    }
    return out;
  }

  function compare(a: MiniSearch<Doc>, b: MiniSearch<Doc>, all: WordPart[][]): number {
    let titles = 0;
    for (const parts of all) {
      const expected = byEngine(a, parts);
      const got = byScorer(b, parts);
      // Scores to the last bit, the order, and each title's query terms.
      assert.deepEqual(got, expected, JSON.stringify(parts));
      titles += expected.length;
    }
    return titles;
  }

  it('gives the engine\'s titles, scores, query terms and order, before and after discards and re-adds', () => {
    const a = engine();
    const b = engine();
    for (const e of [a, b]) e.addAll(docs);
    const titles = compare(a, b, lookups(1500));
    assert.ok(titles > 20_000, `the lookups found titles (${titles})`);
    // Discarded titles leave postings the engine drops while it scores (and counts fewer
    // matching titles from there on); re-added ones get new short ids.
    const gone = docs.filter(() => rnd() < 0.3);
    for (const e of [a, b]) {
      for (const d of gone) e.discard(d.id);
    }
    compare(a, b, lookups(1500));
    for (const e of [a, b]) e.addAll(gone.slice(0, Math.floor(gone.length / 2)).map((d) => ({ ...d, title: `${d.title} again` })));
    compare(a, b, lookups(1500));
  });

  it('reuses its columns: an answer is read before the next lookup', () => {
    const e = engine();
    e.addAll(docs);
    const first = scoreWord(e, [{ terms: ['the'], fuzzy: 0, prefix: true, boost: 1 }]);
    const n = first.n;
    assert.ok(n > 10);
    const second = scoreWord(e, [{ terms: ['zzzzqx'], fuzzy: 0, prefix: false, boost: 1 }]);
    assert.equal(second.n, 0);
    assert.equal(first, second, 'the same columns');
  });
});
