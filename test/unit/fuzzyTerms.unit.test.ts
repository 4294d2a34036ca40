import assert from 'node:assert/strict';
import MiniSearch from 'minisearch';
import { withDeletionIndex } from '../../infra/search/fuzzyTerms.ts';
import { tokenize } from '../../infra/search/normalize.ts';
import { movieDocuments, showDocuments } from './searchQualityCatalog.ts';

interface Doc {
  id: string;
  title: string;
}

/** A fuzzy lookup's answer as comparable data: each term in order, its distance and the documents holding it. */
function answer(engine: MiniSearch<Doc>, term: string, maxDistance: number): Array<[string, number, string]> {
  const index = (engine as unknown as { _index: { fuzzyGet(t: string, d: number): Map<string, [Map<number, Map<number, number>>, number]> } })._index;
  return [...index.fuzzyGet(term, maxDistance)].map(([t, [data, distance]]) => [t, distance, [...data.keys()].join(',')]);
}

function pseudoRandom(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 1103515245 + 12345) % 2147483648) / 2147483648;
}

/** Deletions, substitutions, insertions and swaps, one to three of them. */
function misspell(word: string, rnd: () => number): string {
  let w = word;
  const edits = 1 + Math.floor(rnd() * 3);
  for (let e = 0; e < edits && w.length > 1; e++) {
    const p = Math.floor(rnd() * w.length);
    const c = 'aeinorstxzé'[Math.floor(rnd() * 11)] as string;
    const r = rnd();
    if (r < 0.25) w = w.slice(0, p) + w.slice(p + 1);
    else if (r < 0.5) w = w.slice(0, p) + c + w.slice(p + 1);
    else if (r < 0.75) w = w.slice(0, p) + c + w.slice(p);
    else w = w.slice(0, p) + (w[p + 1] ?? '') + (w[p] as string) + w.slice(p + 2);
  }
  return w;
}

describe('fuzzy term lookups from a deletion index (fuzzyTerms.ts)', function () {
  this.timeout(60_000);
  const options = { fields: ['title'], tokenize, processTerm: (t: string) => t };
  const docs: Doc[] = [...movieDocuments(), ...showDocuments()].map((d) => ({ id: d.id, title: [d.title, d.originalTitle ?? ''].join(' ') }));
  let walked: MiniSearch<Doc>;
  let indexed: MiniSearch<Doc>;
  let vocabulary: string[];

  before(function () {
    walked = new MiniSearch<Doc>(options);
    indexed = withDeletionIndex(new MiniSearch<Doc>(options));
    const first = docs.slice(0, Math.floor(docs.length / 2));
    walked.addAll(first);
    indexed.addAll(first);
    vocabulary = [...new Set(first.flatMap((d) => tokenize(d.title)))];
  });

  function compareAll(words: string[]): number {
    let matches = 0;
    for (const word of words) {
      for (const d of [0, 1, 2, 3]) {
        const expected = answer(walked, word, d);
        assert.deepEqual(answer(indexed, word, d), expected, `"${word}" within ${d}`);
        matches += expected.length;
      }
    }
    return matches;
  }

  it('finds the same terms, distances and order as the tree walk, for real and misspelt words', function () {
    const rnd = pseudoRandom(3);
    const words = [...vocabulary.slice(0, 400), ...vocabulary.map((w) => misspell(w, rnd)).slice(0, 2500), '', 'a', 'zzzzzzzzzz', 'thé', 'ma'];
    const matches = compareAll(words);
    // The comparison is not vacuous: most misspellings are within reach of some term.
    assert.ok(matches > 5000, `only ${matches} matches`);
  });

  it('gives the same search results, scores included, as the tree walk', function () {
    const rnd = pseudoRandom(5);
    for (const title of docs.slice(0, 300).map((d) => d.title)) {
      const q = tokenize(title).map((w) => misspell(w, rnd)).join(' ');
      for (const fuzzy of [1, 2]) {
        assert.deepEqual(indexed.search(q, { fuzzy, prefix: true }), walked.search(q, { fuzzy, prefix: true }), q);
      }
    }
  });

  it('stays the same after titles are removed and new ones (with new terms) are added', async function () {
    const rnd = pseudoRandom(9);
    for (const d of docs.slice(0, 400)) {
      walked.discard(d.id);
      indexed.discard(d.id);
    }
    await walked.vacuum();
    await indexed.vacuum();
    const rest = docs.slice(Math.floor(docs.length / 2));
    walked.addAll(rest);
    indexed.addAll(rest);
    const added = [...new Set(rest.flatMap((d) => tokenize(d.title)))];
    const removed = [...new Set(docs.slice(0, 400).flatMap((d) => tokenize(d.title)))];
    compareAll([...added.slice(0, 500).map((w) => misspell(w, rnd)), ...removed.slice(0, 500), ...removed.slice(0, 500).map((w) => misspell(w, rnd))]);
  });
});
