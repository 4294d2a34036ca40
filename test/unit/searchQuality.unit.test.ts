import assert from 'node:assert/strict';
import type { SearchIndex } from '../../contracts/ports.ts';
import { inProcessSearchIndex } from '../../infra/search/inProcessSearch.ts';
import { movieDocuments, showDocuments } from './searchQualityCatalog.ts';
import { QUERY_CATEGORIES, assertQuality, measureQuality, qualityQueries } from './searchQualityQueries.ts';

describe('search quality on the real titles of the sample catalog (in-process index)', function () {
  const movies = movieDocuments();
  const docs = [...movies, ...showDocuments()];
  const queries = qualityQueries(movies, 100, 42, docs);
  let index: SearchIndex;

  before(async function () {
    index = inProcessSearchIndex();
    await index.upsert(docs);
  });

  after(async function () {
    await index.close();
  });

  it('builds 100 queries from real titles in every category, the named misses of the issue included', function () {
    for (const category of QUERY_CATEGORIES) {
      assert.equal(queries.filter((q) => q.category === category).length, 100, category);
    }
    assert.ok(queries.some((q) => q.q === 'The Ma' && q.key === 'the matrix'));
    assert.ok(queries.some((q) => q.q === 'In Cold Bood' && q.key === 'in cold blood'));
  });

  it('puts the intended title in the top 3 for at least 98 % of the queries of every category, in US', async function () {
    this.timeout(60_000);
    const report = await measureQuality(index, queries, docs);
    console.log(JSON.stringify({ searchQuality: { engine: 'in-process', ...report } }));
    assertQuality(report, 0.98);
  });

  it('answers "The Ma" with The Matrix first, though only its sequel streams in US', async function () {
    const { ids } = await index.search({ q: 'The Ma', country: 'US', lang: 'en', limit: 3, offset: 0 });
    assert.equal(docs.find((d) => d.id === ids[0])?.title, 'The Matrix');
  });
});
