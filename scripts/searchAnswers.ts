/**
 * `node --import tsx scripts/searchAnswers.ts <DATA_DIR> <out-file>`: every query of a generated
 * set answered by the in-process search index over a catalog's `search` read model, one line per
 * answer (language, query, total, ids of the first page), written to <out-file>.
 *
 * Why: a change meant to make search faster must not change what it finds. Run it on the same
 * DATA_DIR (a stopped `marquee start --sample`, say) before and after the change and compare the
 * two files with `cmp`. The queries are made from every title: the whole title, its prefixes
 * every third character, each word with a typo (a deletion, a substitution or a swap), then two
 * typos and lower case; 30 % of titles are asked in one of their other languages too. Answer
 * caches are off, so each answer is worked out. On the sample catalog: about 105,000 queries.
 */
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { lmdbEventStore } from '../infra/lmdb/eventStore.ts';
import { lmdbInbox } from '../infra/lmdb/inbox.ts';
import { lmdbReadStore } from '../infra/lmdb/readStore.ts';
import { inProcessSearchIndex } from '../infra/search/inProcessSearch.ts';
import { searchProjection } from '../projections/index.ts';
import type { SearchProjectionDoc } from '../projections/search.ts';
import { refillSearch } from '../services/cli/pipeline.ts';
import { Rng } from '../services/crawler/prng.ts';
import { resolveCollection } from '../services/shared/readModels.ts';

const [dataDir, outFile] = process.argv.slice(2);
if (dataDir === undefined || outFile === undefined) {
  console.error('usage: node --import tsx scripts/searchAnswers.ts <DATA_DIR> <out-file>');
  process.exit(2);
}

const readStore = lmdbReadStore({ dataDir });
const search = inProcessSearchIndex({ resultCacheSize: 0, wordHitsKept: 0 });
await refillSearch({
  eventStore: lmdbEventStore({ dataDir }), bus: lmdbInbox({ dataDir }), readStore, search, searchInProcess: true, searchFeedCheckpoint: null,
  engines: { events: 'LMDB', observations: 'LMDB inbox', readModels: 'LMDB', search: 'in-process' },
  close: async () => {},
});
const titles = await readStore.scan<SearchProjectionDoc>(await resolveCollection(readStore, searchProjection), { limit: 10_000_000 });

const rng = new Rng(11);
const typo = (word: string): string => {
  if (word.length < 4) return word;
  const at = rng.int(0, word.length - 1);
  const kind = rng.int(0, 2);
  if (kind === 0) return word.slice(0, at) + word.slice(at + 1);
  if (kind === 1) return word.slice(0, at) + 'aeiouxz'.charAt(rng.int(0, 6)) + word.slice(at + 1);
  return word.slice(0, at) + word.charAt(at + 1) + word.charAt(at) + word.slice(at + 2);
};
const queries: Array<{ q: string; lang: string }> = [];
for (const { doc } of titles) {
  const asked: Array<[string, string]> = [['en', doc.title]];
  for (const [lang, text] of Object.entries(doc.titles ?? {})) if (lang !== 'en' && rng.int(0, 9) < 3) asked.push([lang, text]);
  for (const [lang, text] of asked) {
    queries.push({ q: text, lang });
    for (let n = 2; n < text.length; n += 3) queries.push({ q: text.slice(0, n), lang });
    queries.push({ q: text.split(' ').map(typo).join(' '), lang });
    queries.push({ q: text.split(' ').map(typo).map(typo).join(' ').toLowerCase(), lang });
  }
}

const lines: string[] = [];
const started = performance.now();
for (const { q, lang } of queries) {
  try {
    const found = await search.search({ q, country: 'US', lang, limit: 20, offset: 0 });
    lines.push(`${lang}\t${q}\t${found.total}\t${found.ids.join(',')}`);
  } catch (err) {
    lines.push(`${lang}\t${q}\terror ${(err as Error).message}`);
  }
}
const ms = performance.now() - started;
const text = lines.join('\n');
writeFileSync(outFile, text);
console.log(JSON.stringify({
  queries: queries.length, ms: Math.round(ms), us_per_query: Math.round((ms * 1000) / queries.length),
  sha256: createHash('sha256').update(text).digest('hex'),
}));
process.exit(0);
