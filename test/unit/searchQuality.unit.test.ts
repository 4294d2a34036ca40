import assert from 'node:assert/strict';
import type { SearchIndex } from '../../contracts/ports.ts';
import { inProcessSearchIndex } from '../../infra/search/inProcessSearch.ts';
import { movieDocuments, showDocuments } from './searchQualityCatalog.ts';
import { QUERY_CATEGORIES, qualityQueries, qualitySuite } from './searchQualityQueries.ts';

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

  qualitySuite('in-process', () => index, docs, queries);
});
