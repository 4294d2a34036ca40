import assert from 'node:assert/strict';
import type { SearchIndex } from '../../contracts/ports.ts';
import { inProcessSearchIndex } from '../../infra/search/inProcessSearch.ts';
import { tokenize } from '../../infra/search/normalize.ts';
import { movieDocuments, showDocuments } from './searchQualityCatalog.ts';
import { qualityQueries, type QueryCategory } from './searchQualityQueries.ts';

describe('search quality on the real titles of the sample catalog', function () {
  const movies = movieDocuments();
  const docs = [...movies, ...showDocuments()];
  const keyOf = new Map(docs.map((d) => [d.id, tokenize(d.title).join(' ')]));
  const queries = qualityQueries(movies, 50);
  let index: SearchIndex;

  before(async function () {
    index = inProcessSearchIndex();
    await index.upsert(docs);
  });

  after(async function () {
    await index.close();
  });

  it('builds at least 150 queries from real titles, in every category', function () {
    assert.ok(queries.length >= 150, `only ${queries.length} queries`);
    const categories = new Set(queries.map((q) => q.category));
    assert.deepEqual([...categories].sort(), ['no_article', 'one_typo', 'prefix', 'two_typos', 'wrong_case']);
  });

  it('puts the intended title in the top 3 for at least 95 % of misspelt, cut and re-cased queries in US', async function () {
    const byCategory: Partial<Record<QueryCategory, { hits: number; total: number }>> = {};
    const misses: string[] = [];
    let hits = 0;
    for (const q of queries) {
      const { ids } = await index.search({ q: q.q, country: 'US', lang: 'en', limit: 3, offset: 0 });
      // vega lists some titles twice: any title with the same normalised text is the one meant.
      const hit = ids.some((id) => keyOf.get(id) === q.key);
      const c = (byCategory[q.category] ??= { hits: 0, total: 0 });
      c.total++;
      if (hit) {
        c.hits++;
        hits++;
      } else misses.push(`${q.category}: "${q.q}" for "${q.key}"`);
    }
    const rate = hits / queries.length;
    console.log(JSON.stringify({ searchQuality: { queries: queries.length, top3HitRate: rate, byCategory, misses } }));
    assert.ok(rate >= 0.95, `top-3 hit rate ${rate}`);
  });
});
