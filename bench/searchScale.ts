/**
 * `node --expose-gc --import tsx bench/run.ts searchScale [docs]`: heap, build time, latency
 * and quality of the in-process SearchIndex at catalog scale (default 250,000 titles). The
 * catalog is vega's real film titles plus generated ones: words drawn from the vega vocabulary
 * (skewed towards common words) mixed with invented words, so the vocabulary grows as a real
 * multilingual catalog does; 10 % have a German and 5 % a French title; each is available in
 * 0-3 of 10 countries. Documents are generated and indexed in batches and then dropped, so the
 * heap figure is what the index itself keeps (postings, ids, and the fields it filters on).
 * Prints one JSON line.
 */
import type { SearchDocument } from '../contracts/ports.ts';
import { inProcessSearchIndex } from '../infra/search/inProcessSearch.ts';
import { tokenize } from '../infra/search/normalize.ts';
import { movieDocuments, prng } from '../test/unit/searchQualityCatalog.ts';
import { qualityQueries } from '../test/unit/searchQualityQueries.ts';

const total = Number(process.argv[2] ?? 250_000);
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) console.error('run with node --expose-gc for a meaningful heap figure');
const heapMb = (): number => {
  gc?.();
  gc?.();
  return process.memoryUsage().heapUsed / 1e6;
};

const movies = movieDocuments();
const vocab = [...new Set(movies.flatMap((m) => tokenize(m.title)))];
const COUNTRIES = ['US', 'GB', 'DE', 'FR', 'ES', 'IT', 'BR', 'JP', 'IN', 'CA'];
const PROVIDERS = ['nfx', 'amz', 'dnp', 'hbo', 'hlu', 'atp', 'pcp', 'mbi'];
const SYLLABLES = ['ka', 'lo', 'mi', 'ra', 'ten', 'vor', 'shi', 'dan', 'el', 'qu', 'ber', 'tos', 'ni', 'gha', 'zu', 'pre', 'ly', 'ong'];
const GENRES = ['drama', 'comedy', 'action', 'thriller', 'horror', 'documentary', 'romance', 'crime'];

function generated(i: number, rnd: () => number): SearchDocument {
  const words: string[] = [];
  const n = 1 + Math.floor(rnd() * 5);
  for (let w = 0; w < n; w++) {
    if (rnd() < 0.7) words.push(vocab[Math.floor(vocab.length * rnd() ** 2)] as string);
    else {
      let word = '';
      const syl = 2 + Math.floor(rnd() * 3);
      for (let s = 0; s < syl; s++) word += SYLLABLES[Math.floor(rnd() * SYLLABLES.length)];
      words.push(word);
    }
  }
  const title = words.map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join(' ');
  const availability: Record<string, string[]> = {};
  const nc = Math.floor(rnd() * 4);
  for (let c = 0; c < nc; c++) {
    const country = COUNTRIES[Math.floor(rnd() * COUNTRIES.length)] as string;
    availability[country] = PROVIDERS.filter(() => rnd() < 0.25);
  }
  const titles: Record<string, string> = {};
  if (rnd() < 0.1) titles.de = `Der ${title} ${SYLLABLES[i % SYLLABLES.length]}e`;
  if (rnd() < 0.05) titles.fr = `Le ${title}`;
  return {
    id: `${i % 3 === 0 ? 'tv' : 'mv'}${String(10_000_000 + i).padStart(8, '0')}`,
    kind: i % 3 === 0 ? 'tv_show' : 'movie',
    title,
    originalTitle: rnd() < 0.2 ? `${title} Original` : null,
    titles,
    year: 1950 + Math.floor(rnd() * 75),
    genres: GENRES.filter(() => rnd() < 0.2),
    popularity: Math.floor(1000 * rnd() ** 4),
    availability,
  };
}

const before = heapMb();
// No kept answers: each round measures the search, not a Map lookup.
const index = inProcessSearchIndex({ resultCacheSize: 0 });
const t0 = performance.now();
await index.upsert(movies);
const rnd = prng(99);
for (let start = movies.length; start < total; start += 1000) {
  const batch: SearchDocument[] = [];
  for (let i = start; i < Math.min(total, start + 1000); i++) batch.push(generated(i, rnd));
  await index.upsert(batch);
}
// The index finishes a write's work on the next turn of the event loop (the typo lookups'
// deletion index, fuzzyTerms.ts): counted in the build time and the heap.
await new Promise((resolve) => setImmediate(resolve));
const buildMs = performance.now() - t0;
const heap = heapMb() - before;

const keyOf = new Map(movies.map((d) => [d.id, tokenize(d.title).join(' ')]));
const queries = qualityQueries(movies, 50);
let hits = 0;
const raw: number[] = [];
const best: number[] = [];
for (const q of queries) {
  let min = Infinity;
  for (let round = 0; round < 3; round++) {
    const t = performance.now();
    const { ids } = await index.search({ q: q.q, country: 'US', lang: round === 2 ? 'de' : 'en', limit: 20, offset: 0 });
    const ms = performance.now() - t;
    raw.push(ms);
    min = Math.min(min, ms);
    if (round === 0 && ids.slice(0, 3).some((id) => keyOf.get(id) === q.key)) hits++;
  }
  best.push(min);
}
raw.sort((a, b) => a - b);
best.sort((a, b) => a - b);
const pct = (xs: number[], p: number): number => Number((xs[Math.min(xs.length - 1, Math.floor(xs.length * p))] as number).toFixed(2));
console.log(JSON.stringify({
  bench: 'searchScale', docs: await index.count(), buildMs: Math.round(buildMs), heapMb: Number(heap.toFixed(1)),
  queries: queries.length, top3HitRate: hits / queries.length,
  p50Ms: pct(best, 0.5), p99Ms: pct(best, 0.99), rawP50Ms: pct(raw, 0.5), rawP99Ms: pct(raw, 0.99),
}));
await index.close();
