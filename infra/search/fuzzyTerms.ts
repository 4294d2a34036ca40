/**
 * MiniSearch's typo-tolerant term lookup (`fuzzyGet`) answered from a deletion neighbourhood
 * (the SymSpell method) instead of a walk of its radix tree, with the very same answer: the
 * same terms, distances and order.
 *
 * Why: a search whose words were never asked spent ~40 % of its CPU in those walks. A walk
 * within 2 typos visits much of the tree's top levels for every word and every one-swap variant
 * (bench/api.ts `search_misses`); here a lookup is a few dozen Map reads. On the sample's
 * vocabulary, 17,000 misspelt words took 141 µs each by the tree and 25 µs here.
 *
 * How: every term is stored under itself and every string made by deleting one or two of its
 * characters. Two strings within d edits (Levenshtein) share a string made by at most d
 * deletions from each, so the query's own deletions find every term within d; each candidate
 * is then measured exactly, and kept only if the tree still holds it (MiniSearch drops terms
 * when it vacuums; this index only grows). The deletions are stored as 32-bit hashes in typed
 * arrays (DeletionTable), computed by skipping characters rather than making strings: a hash
 * shared by two strings only adds a candidate, which the exact measure then drops. Its cost:
 * about 8 bytes per deletion; at 250,000 titles the index's heap went from 260 to 279 MB
 * (bench/searchScale.ts), where deletion strings in a Map took 555 MB.
 *
 * Order matters: MiniSearch adds each fuzzy match's score in the order the tree walk found it,
 * and floating-point sums depend on that order, so matches are sorted by their place in the
 * walk (the index of each edge taken, node by node).
 *
 * This reaches into MiniSearch's private term tree (`_index`, version 7.2, pinned by the lock
 * file); test/unit/fuzzyTerms.unit.test.ts compares every answer with the tree walk's, so an
 * upgrade that changes those internals fails there rather than in answers.
 */
import type MiniSearch from 'minisearch';

/** The radix tree's leaf key (MiniSearch's `LEAF`): the value of the term ending at a node. */
const LEAF = '';

/** Deletions stored per term: lookups within more typos use the tree walk. */
const MAX_DISTANCE = 2;

/**
 * Longest query answered from the index; a longer one uses the tree walk, so terms longer than
 * this plus MAX_DISTANCE need no deletions (the query side caps its words at 24 characters).
 */
const MAX_QUERY_CHARS = 32;
const MAX_INDEXED_CHARS = MAX_QUERY_CHARS + MAX_DISTANCE;

type TreeNode = Map<string, unknown>;

/** The part of MiniSearch's SearchableMap used here. */
interface TermTree {
  _tree: TreeNode;
  fetch(term: string, initial: () => unknown): unknown;
  fuzzyGet(term: string, maxDistance: number): Map<string, [unknown, number]>;
}

/** Makes `engine`'s fuzzy term lookups use a deletion index; returns the engine. */
export function withDeletionIndex<T>(engine: MiniSearch<T>): MiniSearch<T> {
  const tree = (engine as unknown as { _index: TermTree })._index;
  const treeFetch = tree.fetch.bind(tree);
  const treeFuzzyGet = tree.fuzzyGet.bind(tree);
  const lookup = new DeletionIndex();
  indexes.set(engine, lookup);
  // Every term MiniSearch indexes goes through fetch (addTerm); new ones are noted here.
  tree.fetch = (term, initial) => {
    lookup.note(term);
    return treeFetch(term, initial);
  };
  tree.fuzzyGet = (term, maxDistance) => {
    if (!(maxDistance >= 0 && maxDistance <= MAX_DISTANCE) || term.length > MAX_QUERY_CHARS) return treeFuzzyGet(term, maxDistance);
    return lookup.find(tree._tree, term, maxDistance);
  };
  return engine;
}

const indexes = new WeakMap<object, DeletionIndex>();

/**
 * False when `engine` (made by withDeletionIndex) has never held `term`: an exact lookup of it
 * would find nothing, so a query need not ask. True for any term it holds now.
 */
export function mayHoldTerm(engine: object, term: string): boolean {
  return indexes.get(engine)?.mayHold(term) ?? true;
}

/**
 * Adds the terms `engine` gained since its last lookup to its deletion index now, so that the
 * first query after a write does not pay for it (~50 ms for the sample's 5,000 base terms).
 */
export function warmDeletionIndex(engine: object): void {
  indexes.get(engine)?.catchUp();
}

interface Match {
  term: string;
  data: unknown;
  distance: number;
  order: number[];
}

/**
 * The deletion index of one engine. Methods rather than closures per lookup: a lookup is a hot
 * path, and a closure made per call costs an allocation (and, under tsx, a name) each time.
 */
class DeletionIndex {
  private readonly terms: string[] = [];
  private readonly known = new Set<string>();
  /** Hash of a deletion string -> the ids of the terms it comes from. */
  private readonly deletions = new DeletionTable();
  private indexed = 0;
  /** Per term id, the lookup that last listed it: candidates are distinct without a Set per lookup. */
  private seen = new Uint32Array(1024);
  private stamp = 0;
  private readonly distance = boundedLevenshtein();
  /** The lookup under way: its query, reach, tree and matches so far. */
  private query = '';
  private maxDistance = 0;
  private root: TreeNode = new Map();
  private found: Match[] = [];

  note(term: string): void {
    if (this.known.has(term)) return;
    this.known.add(term);
    this.terms.push(term);
  }

  mayHold(term: string): boolean {
    return this.known.has(term);
  }

  find(root: TreeNode, query: string, maxDistance: number): Map<string, [unknown, number]> {
    this.catchUp();
    this.stamp += 1;
    if (this.stamp === 0xffffffff) {
      this.seen.fill(0);
      this.stamp = 1;
    }
    this.query = query;
    this.maxDistance = maxDistance;
    this.root = root;
    const found: Match[] = (this.found = []);
    const n = query.length;
    this.consider(hashSkipping(query, -1, -1));
    if (maxDistance >= 1) {
      for (let i = 0; i < n; i += 1) {
        this.consider(hashSkipping(query, i, -1));
        if (maxDistance >= 2) for (let j = i + 1; j < n; j += 1) this.consider(hashSkipping(query, i, j));
      }
    }
    if (found.length > 1) found.sort(compareMatches);
    const results = new Map<string, [unknown, number]>();
    for (const f of found) results.set(f.term, [f.data, f.distance]);
    this.found = [];
    return results;
  }

  private consider(hash: number): void {
    const { deletions } = this;
    for (let at = deletions.first(hash); at >= 0; at = deletions.next(at)) this.check(deletions.id(at));
  }

  private check(id: number): void {
    if (this.seen[id] === this.stamp) return;
    this.seen[id] = this.stamp;
    const term = this.terms[id] as string;
    const d = this.distance(this.query, term, this.maxDistance);
    if (d > this.maxDistance) return;
    const place = placeInTree(this.root, term);
    if (place !== undefined) this.found.push({ term, data: place.data, distance: d, order: place.order });
  }

  catchUp(): void {
    const { terms, deletions } = this;
    for (; this.indexed < terms.length; this.indexed += 1) {
      const id = this.indexed;
      const term = terms[id] as string;
      const n = term.length;
      if (n > MAX_INDEXED_CHARS) continue;
      deletions.add(hashSkipping(term, -1, -1), id);
      for (let i = 0; i < n; i += 1) {
        deletions.add(hashSkipping(term, i, -1), id);
        for (let j = i + 1; j < n; j += 1) deletions.add(hashSkipping(term, i, j), id);
      }
    }
    if (this.seen.length < terms.length) {
      const grown = new Uint32Array(Math.max(terms.length, this.seen.length * 2));
      grown.set(this.seen);
      this.seen = grown;
    }
  }
}

/** FNV-1a of `text` without the code units at `skipA` and `skipB` (-1: none), never 0. */
function hashSkipping(text: string, skipA: number, skipB: number): number {
  // As an int32, as the table stores it (the literal alone is above 2^31).
  let h = 0x811c9dc5 | 0;
  for (let k = 0; k < text.length; k += 1) {
    if (k === skipA || k === skipB) continue;
    h = Math.imul(h ^ text.charCodeAt(k), 0x01000193);
  }
  return h === 0 ? 1 : h;
}

/**
 * A multimap from 32-bit hashes to term ids in typed arrays: an open-addressed table of hashes
 * (linear probing), each with a chain of (id, next) entries, newest first. A term's deletions
 * are added together, so a repeated (hash, id) pair is the chain's head and is skipped there.
 */
class DeletionTable {
  private keys = new Int32Array(1 << 12);
  private heads = new Int32Array(1 << 12);
  private used = 0;
  private ids = new Int32Array(1 << 12);
  private nexts = new Int32Array(1 << 12);
  private entries = 0;

  add(hash: number, id: number): void {
    let slot = this.slotOf(hash);
    if (this.keys[slot] === 0) {
      if ((this.used + 1) * 4 > this.keys.length * 3) {
        this.grow();
        slot = this.slotOf(hash);
      }
      this.keys[slot] = hash;
      this.heads[slot] = -1;
      this.used += 1;
    }
    const head = this.heads[slot] as number;
    if (head >= 0 && this.ids[head] === id) return;
    if (this.entries === this.ids.length) {
      const ids = new Int32Array(this.ids.length * 2);
      ids.set(this.ids);
      this.ids = ids;
      const nexts = new Int32Array(this.nexts.length * 2);
      nexts.set(this.nexts);
      this.nexts = nexts;
    }
    this.ids[this.entries] = id;
    this.nexts[this.entries] = head;
    this.heads[slot] = this.entries;
    this.entries += 1;
  }

  /** The first entry under `hash`, or -1. */
  first(hash: number): number {
    const slot = this.slotOf(hash);
    return this.keys[slot] === 0 ? -1 : (this.heads[slot] as number);
  }

  next(entry: number): number {
    return this.nexts[entry] as number;
  }

  id(entry: number): number {
    return this.ids[entry] as number;
  }

  /** Where `hash` is, or the empty slot where it would go. */
  private slotOf(hash: number): number {
    const mask = this.keys.length - 1;
    let slot = Math.imul(hash, 0x9e3779b1) >>> 0 & mask;
    while (this.keys[slot] !== 0 && this.keys[slot] !== hash) slot = (slot + 1) & mask;
    return slot;
  }

  private grow(): void {
    const { keys, heads } = this;
    this.keys = new Int32Array(keys.length * 2);
    this.heads = new Int32Array(keys.length * 2);
    for (let s = 0; s < keys.length; s += 1) {
      const hash = keys[s] as number;
      if (hash === 0) continue;
      const slot = this.slotOf(hash);
      this.keys[slot] = hash;
      this.heads[slot] = heads[s] as number;
    }
  }
}

function compareMatches(a: Match, b: Match): number {
  return compareOrder(a.order, b.order);
}

/**
 * Where the tree holds `term`: its value and, node by node, the index of the edge taken (and of
 * the leaf last), which orders terms as the tree walk meets them. Undefined when it holds no such term.
 */
function placeInTree(root: TreeNode, term: string): { data: unknown; order: number[] } | undefined {
  const order: number[] = [];
  let node = root;
  let pos = 0;
  for (;;) {
    let i = 0;
    let next: TreeNode | undefined;
    for (const key of node.keys()) {
      if (pos === term.length ? key === LEAF : key !== LEAF && term.startsWith(key, pos)) {
        order.push(i);
        if (pos === term.length) return { data: node.get(LEAF), order };
        next = node.get(key) as TreeNode;
        pos += key.length;
        break;
      }
      i += 1;
    }
    if (next === undefined) return undefined;
    node = next;
  }
}

function compareOrder(a: number[], b: number[]): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i += 1) {
    const d = (a[i] as number) - (b[i] as number);
    if (d !== 0) return d;
  }
  return a.length - b.length;
}

/**
 * Levenshtein distance over UTF-16 code units (as the tree walk compares them), or max + 1 as
 * soon as it must exceed max. Two rows reused from call to call.
 */
function boundedLevenshtein(): (a: string, b: string, max: number) => number {
  let prev = new Int32Array(64);
  let row = new Int32Array(64);
  return (a, b, max) => {
    const n = a.length;
    const m = b.length;
    if (Math.abs(n - m) > max) return max + 1;
    if (prev.length <= m) {
      prev = new Int32Array(m + 1);
      row = new Int32Array(m + 1);
    }
    for (let j = 0; j <= m; j += 1) prev[j] = j;
    for (let i = 1; i <= n; i += 1) {
      row[0] = i;
      let least = i;
      const c = a.charCodeAt(i - 1);
      for (let j = 1; j <= m; j += 1) {
        const replace = (prev[j - 1] as number) + (c === b.charCodeAt(j - 1) ? 0 : 1);
        const remove = (prev[j] as number) + 1;
        const insert = (row[j - 1] as number) + 1;
        const v = replace < remove ? (replace < insert ? replace : insert) : remove < insert ? remove : insert;
        row[j] = v;
        if (v < least) least = v;
      }
      if (least > max) return max + 1;
      const t = prev;
      prev = row;
      row = t;
    }
    return prev[m] as number;
  };
}
