import assert from 'node:assert/strict';
import { inProcessSearchIndex } from '../../infra/search/inProcessSearch.ts';
import { searchDoc, searchIndexSuite } from './searchIndex.suite.ts';

searchIndexSuite('in-process (MiniSearch)', async () => inProcessSearchIndex());

describe('in-process search index generation', function () {
  it('moves with every kind of write and stays put on searches, so kept answers last until the next write', async function () {
    const index = inProcessSearchIndex();
    const generation = () => index.generation?.();
    const doc = searchDoc('Titanic');
    const seen = [generation()];
    await index.upsert([doc]);
    seen.push(generation());
    await index.search({ q: 'titanic', country: 'US', lang: 'en', limit: 20, offset: 0 });
    assert.equal(generation(), seen[1], 'a search is no write');
    await index.write([{ id: doc.id, doc, version: 3 }]);
    seen.push(generation());
    await index.remove([doc.id]);
    seen.push(generation());
    await index.upsert([]);
    assert.equal(generation(), seen[3], 'an empty write changes nothing');
    assert.equal(new Set(seen).size, 4, `every write moved it: ${seen.join(', ')}`);
    await index.close();
  });
});
