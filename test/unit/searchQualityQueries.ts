/**
 * Deterministic misspelt queries made from real titles, one category at a time, for the search
 * quality test and benchmark. Each query names the title it was made from; the test counts a
 * hit when any title with the same normalised text is in the top 3 (vega has duplicates).
 */
import type { SearchDocument } from '../../contracts/ports.ts';
import { maxTypos, tokenize } from '../../infra/search/normalize.ts';
import { prng } from './searchQualityCatalog.ts';

export type QueryCategory = 'one_typo' | 'two_typos' | 'prefix' | 'wrong_case' | 'no_article';

export interface QualityQuery {
  category: QueryCategory;
  q: string;
  /** The title the query was made from. */
  id: string;
  /** Its normalised title: any document with the same one counts as a hit. */
  key: string;
}

const LETTERS = 'abcdefghijklmnopqrstuvwxyz';

/**
 * One edit of `word`: a substitution, a deletion or an adjacent transposition. The typo budget
 * is counted on the word as typed, so a deletion that would take it below `minLength` (and out
 * of its budget) becomes a substitution.
 */
function typo(word: string, rnd: () => number, minLength: number): string {
  const chars = [...word];
  let kind = Math.floor(rnd() * 3);
  if (kind === 1 && chars.length - 1 < minLength) kind = 0;
  // Keep the first letter: people rarely get it wrong, and it keeps the typo a typo.
  const at = 1 + Math.floor(rnd() * (chars.length - 2));
  if (kind === 0) {
    let c = chars[at] as string;
    while (c === chars[at]) c = LETTERS[Math.floor(rnd() * LETTERS.length)] as string;
    chars[at] = c;
  } else if (kind === 1) {
    chars.splice(at, 1);
  } else {
    const a = chars[at] as string;
    if (a === chars[at + 1]) chars[at] = a === 'x' ? 'y' : 'x';
    else {
      chars[at] = chars[at + 1] as string;
      chars[at + 1] = a;
    }
  }
  return chars.join('');
}

/** Titles whose words are plain ASCII letters and digits, so a typo is what we think it is. */
function plainWords(doc: SearchDocument): string[] | null {
  if (!/^[A-Za-z0-9 ,:.'&!?-]+$/.test(doc.title)) return null;
  const words = tokenize(doc.title);
  return words.length > 0 ? words : null;
}

/** `perCategory` queries of each category, drawn from `docs` with a fixed seed. */
export function qualityQueries(docs: readonly SearchDocument[], perCategory = 40, seed = 42): QualityQuery[] {
  const rnd = prng(seed);
  const order = docs.slice().sort((a, b) => (a.id < b.id ? -1 : 1));
  // Shuffle deterministically so each category samples the whole catalog.
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [order[i], order[j]] = [order[j] as SearchDocument, order[i] as SearchDocument];
  }
  const out: QualityQuery[] = [];
  const make: Record<QueryCategory, (doc: SearchDocument, words: string[]) => string | null> = {
    one_typo(_doc, words) {
      const i = words.findIndex((w) => maxTypos(w) >= 1 && /^[a-z]+$/.test(w));
      if (i < 0) return null;
      return words.map((w, k) => (k === i ? typo(w, rnd, 5) : w)).join(' ');
    },
    two_typos(_doc, words) {
      const long = words.findIndex((w) => maxTypos(w) >= 2 && /^[a-z]+$/.test(w));
      if (long >= 0) return words.map((w, k) => (k === long ? typo(typo(w, rnd, 9), rnd, 9) : w)).join(' ');
      const five = words.map((w, k) => (maxTypos(w) >= 1 && /^[a-z]+$/.test(w) ? k : -1)).filter((k) => k >= 0);
      if (five.length < 2) return null;
      return words.map((w, k) => (k === five[0] || k === five[1] ? typo(w, rnd, 5) : w)).join(' ');
    },
    prefix(_doc, words) {
      const last = words[words.length - 1] as string;
      if (last.length < 4) return null;
      const keep = Math.max(2, Math.ceil(last.length * 0.6));
      return [...words.slice(0, -1), last.slice(0, keep)].join(' ');
    },
    wrong_case(doc) {
      const flipped = [...doc.title].map((c, k) => (k % 2 === 0 ? c.toUpperCase() : c.toLowerCase())).join('');
      return flipped === doc.title ? doc.title.toUpperCase() : flipped;
    },
    no_article(_doc, words) {
      if (words.length < 2 || !['the', 'a', 'an'].includes(words[0] as string)) return null;
      return words.slice(1).join(' ');
    },
  };
  for (const category of Object.keys(make) as QueryCategory[]) {
    let n = 0;
    for (const doc of order) {
      if (n >= perCategory) break;
      const words = plainWords(doc);
      if (words === null) continue;
      const q = make[category](doc, words);
      // A query that is the title itself tests nothing (a typo that recreated the word).
      if (q === null || (category !== 'wrong_case' && q === words.join(' '))) continue;
      out.push({ category, q, id: doc.id, key: words.join(' ') });
      n++;
    }
  }
  return out;
}
