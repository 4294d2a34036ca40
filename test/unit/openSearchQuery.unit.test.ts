import assert from 'node:assert/strict';
import { indexBody, toIndexed } from '../../infra/opensearch/mapping.ts';
import { MAX_EXPANSIONS, MAX_WORDS, searchBody, type QueryOptions } from '../../infra/opensearch/query.ts';
import { searchDoc } from '../ports/searchIndex.suite.ts';

const queryOptions: QueryOptions = {
  baseLang: 'en',
  locales: new Set(['en', 'fr', 'pl']),
  popularityWeight: 0.05,
  localeBoost: 1.1,
  maxResultWindow: 10_000,
  languageAnalyzers: false,
};

const base = { q: 'Amélie', country: 'us', lang: 'en', limit: 20, offset: 0 };

describe('OpenSearch index documents and queries', function () {
  it('indexes normalised titles, title keys, non-empty availability and translations that differ from the base titles', function () {
    const doc = searchDoc("The Schindler's Boat", {
      originalTitle: 'Das Boot',
      titles: { en: "The Schindler's Boat", fr: 'Le Bateau', de: 'Das Boot', xx: 'Ignored' },
      availability: { US: ['nfx', 'amz'], gb: ['bbc'], DE: [] },
      popularity: -3,
    });
    const indexed = toIndexed(doc, { baseLang: 'en', locales: ['en', 'fr', 'de'] });
    assert.equal(indexed.title, 'the schindlers boat');
    assert.deepEqual(indexed.alt, ['das boot']);
    assert.deepEqual(indexed.keys, ['schindlers boat', 'boot']);
    // de equals the original title; xx is not a configured locale.
    assert.deepEqual(indexed.loc, { fr: 'le bateau' });
    assert.deepEqual(indexed.lkey, { fr: 'bateau' });
    assert.deepEqual(indexed.avail, ['US', 'US:nfx', 'US:amz', 'GB', 'GB:bbc']);
    assert.equal(indexed.popularity, 0);
  });

  it('adds language-analyzer sub-fields only when the cluster has them, and only for languages that have one', function () {
    const props = (body: Record<string, unknown>): Record<string, { fields?: unknown; properties?: Record<string, { fields?: unknown }> }> =>
      (body.mappings as { properties: Record<string, { fields?: unknown }> }).properties;
    const plain = props(indexBody({ baseLang: 'en', locales: ['en', 'fr', 'pl'], languageAnalyzers: false }));
    assert.equal(plain.title?.fields, undefined);
    assert.equal(plain.loc?.properties?.fr?.fields, undefined);

    const stemmed = props(indexBody({ baseLang: 'en', locales: ['en', 'fr', 'pl'], languageAnalyzers: true }));
    assert.deepEqual(stemmed.title?.fields, { stem: { type: 'text', analyzer: 'english' } });
    assert.deepEqual(stemmed.loc?.properties?.fr?.fields, { stem: { type: 'text', analyzer: 'french' } });
    assert.equal(stemmed.loc?.properties?.pl?.fields, undefined);
    assert.deepEqual(Object.keys(stemmed.loc?.properties ?? {}), ['fr', 'pl']);
  });

  it('builds no request for a query without words, and clamps paging to the result window', function () {
    assert.equal(searchBody({ ...base, q: ' -- !! ' }, queryOptions), null);
    const far = searchBody({ ...base, offset: 9_995, limit: 20 }, queryOptions);
    assert.deepEqual([far?.from, far?.size], [9_995, 5]);
    const beyond = searchBody({ ...base, offset: 12_000, limit: 20 }, queryOptions);
    assert.deepEqual([beyond?.from, beyond?.size], [0, 0]);
  });

  it('bounds the work of any query: at most MAX_WORDS words, no typo past 24 characters, capped expansions', function () {
    const long = 'x'.repeat(4000);
    const words = Array.from({ length: 50 }, (_, i) => `word${String.fromCharCode(97 + (i % 26))}${i}`).join(' ');
    for (const q of [long, `${words} ${long}`]) {
      const body = searchBody({ ...base, q }, queryOptions);
      const top = (body as any).query.bool.must[0];
      const matched = top.dis_max === undefined ? top : top.dis_max.queries[0];
      const wordQueries = matched.bool.must[0].function_score.query.bool.must[0].bool.should as unknown[];
      assert.ok(wordQueries.length <= MAX_WORDS, `${wordQueries.length} word queries`);
      const json = JSON.stringify(body);
      const fuzzy = json.match(/"fuzziness"/g) ?? [];
      const prefix = json.match(/"match_bool_prefix"/g) ?? [];
      assert.equal((json.match(/"max_expansions":50/g) ?? []).length, fuzzy.length + prefix.length);
      // No fuzzy clause searches the 4,000-character word, nor a title key that long.
      assert.ok(!new RegExp(`"query":"${long}","operator":"and","fuzziness"`).test(json));
      assert.ok(!json.includes('"fuzzy":'), 'a fuzzy query on a title key past MAX_WHOLE_QUERY_CHARS');
      assert.ok(!json.includes('"prefix":'), 'a prefix query on a title key past MAX_WHOLE_QUERY_CHARS');
    }
    assert.equal(MAX_EXPANSIONS, 50);
  });

  it('filters provider within the upper-cased query country and searches the query language fields only when configured', function () {
    const json = JSON.stringify(searchBody({ ...base, lang: 'fr', provider: 'nfx', genre: 'drama', kind: 'movie' }, queryOptions));
    assert.ok(json.includes('{"term":{"avail":"US:nfx"}}'));
    assert.ok(json.includes('{"term":{"avail":"US"}}'));
    assert.ok(json.includes('{"term":{"genres":"drama"}}'));
    assert.ok(json.includes('"loc.fr"'));
    assert.ok(json.includes('{"term":{"lkey.fr":"amelie"}}'));
    const unknownLang = JSON.stringify(searchBody({ ...base, lang: 'zz' }, queryOptions));
    assert.ok(!unknownLang.includes('loc.'));
  });
});
