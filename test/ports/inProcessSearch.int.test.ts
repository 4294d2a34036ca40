import assert from 'node:assert/strict';
import { inProcessSearchIndex } from '../../infra/search/inProcessSearch.ts';
import type { SearchQuery } from '../../contracts/ports.ts';
import { movieDocuments, showDocuments } from '../unit/searchQualityCatalog.ts';
import { qualityQueries } from '../unit/searchQualityQueries.ts';
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

describe('in-process search index word hits', function () {
  this.timeout(60_000);

  it('answers from kept word hits exactly as from fresh lookups, for words sharing a term and with filters too', async function () {
    const docs = [...movieDocuments(), ...showDocuments()];
    const kept = inProcessSearchIndex({ resultCacheSize: 0 });
    const fresh = inProcessSearchIndex({ resultCacheSize: 0, wordHitsKept: 0 });
    await kept.upsert(docs);
    await fresh.upsert(docs);
    // "goen" swapped is "gone", "wasr" is "wars": a term two words share counts once.
    const texts = [...qualityQueries(docs, 40).map((q) => q.q), 'Goen Baby Gone', 'Star Wasr: The Clone Wars', 'Toar Tora Tora', 'the', 'lo'];
    const variants: Array<Partial<SearchQuery>> = [{}, { country: 'DE', lang: 'de' }, { kind: 'movie', offset: 3, limit: 5 }, { genre: 'drama', limit: 100 }];
    let compared = 0;
    // Twice: the second round answers from the kept hits.
    for (let round = 0; round < 2; round++) {
      for (const q of texts) {
        for (const v of variants) {
          const query: SearchQuery = { q, country: 'US', lang: 'en', limit: 20, offset: 0, ...v };
          assert.deepEqual(await kept.search(query), await fresh.search(query), JSON.stringify(query));
          compared += 1;
        }
      }
    }
    assert.ok(compared > 1000, `${compared} queries compared`);
    await kept.close();
    await fresh.close();
  });
});

describe('in-process search index pages', function () {
  this.timeout(60_000);

  it('gives every page as the same slice of one order, however much of the order a page needs ranked', async function () {
    // A short page ranks only the match classes (and, within one, the available titles) that
    // reach it; a page of everything ranks every candidate. Both must agree, filters included.
    const docs = [...movieDocuments(), ...showDocuments()];
    const index = inProcessSearchIndex({ resultCacheSize: 0 });
    await index.upsert(docs);
    const texts = [...qualityQueries(docs, 25).map((q) => q.q), 'th', 'the lo', 'ma', 'the', 'star wars', 'love', 'lov', 'in cold bood'];
    const variants: Array<Partial<SearchQuery>> = [{}, { country: 'DE', lang: 'de' }, { country: 'ZZ' }, { kind: 'tv_show' }, { genre: 'drama' }];
    let compared = 0;
    for (const q of texts) {
      for (const v of variants) {
        const query: SearchQuery = { q, country: 'US', lang: 'en', limit: 20, offset: 0, ...v };
        const everything = await index.search({ ...query, limit: 100_000 });
        for (const [offset, limit] of [[0, 1], [0, 3], [0, 20], [5, 10], [40, 20]] as const) {
          const page = await index.search({ ...query, offset, limit });
          assert.equal(page.total, everything.total, JSON.stringify({ ...query, offset, limit }));
          assert.deepEqual(page.ids, everything.ids.slice(offset, offset + limit), JSON.stringify({ ...query, offset, limit }));
          compared += 1;
        }
      }
    }
    assert.ok(compared > 1000, `${compared} pages compared`);
    await index.close();
  });

  it('puts the titles available in the country first, past the countries an entry holds as bits too', async function () {
    // 70 countries: the last ones are read from the packed availability, not from bits. The
    // queries are the whole title, a later word and a typo: a query that begins a title ranks by
    // popularity alone.
    const countries = Array.from({ length: 70 }, (_, i) => `C${String(i).padStart(2, '0')}`);
    const index = inProcessSearchIndex({ resultCacheSize: 0 });
    const docs = countries.map((c, i) => searchDoc('Harbour Lights', { popularity: 100 - i, availability: { [c]: ['nfx'] } }));
    await index.upsert(docs);
    for (const [i, country] of countries.entries()) {
      for (const q of ['Harbour Lights', 'lights', 'Harbor Lihgts']) {
        const found = await index.search({ q, country, lang: 'en', limit: 3, offset: 0 });
        assert.equal(found.total, 70, `${q} in ${country}`);
        assert.equal(found.ids[0], docs[i]?.id, `${q} in ${country}: the one title streaming there comes first`);
      }
    }
    await index.close();
  });
});
