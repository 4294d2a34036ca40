/**
 * `OPENSEARCH_URL=http://127.0.0.1:9200 npx tsx infra/opensearch/bench.ts [perCategory]`:
 * bulk indexing rate and query latency of the OpenSearch SearchIndex on the sample catalog
 * (vega's ~3,200 real film titles + 800 generated shows), with the in-process index measured
 * on the same documents and queries as the reference. The queries are the misspelt, cut and
 * re-cased ones of the search quality test (8 categories x perCategory, default 40 = 320),
 * run one at a time; top-3 hit rate is reported for both engines, in all and per category. Uses and then deletes an
 * index of its own. Prints one JSON line. A benchmark, not a test: nothing here gates CI.
 */
import { Client } from '@opensearch-project/opensearch';
import type { SearchIndex } from '../../contracts/ports.ts';
import { inProcessSearchIndex } from '../search/inProcessSearch.ts';
import { movieDocuments, showDocuments } from '../../test/unit/searchQualityCatalog.ts';
import { measureQuality, qualityQueries } from '../../test/unit/searchQualityQueries.ts';
import { openSearchIndex } from './searchIndex.ts';

const url = process.env.OPENSEARCH_URL;
if (!url) {
  console.error('set OPENSEARCH_URL (eval "$(bash infra/local/servers.sh env)")');
  process.exit(2);
}
const perCategory = Number(process.argv[2] ?? 40);

const movies = movieDocuments();
const docs = [...movies, ...showDocuments()];
const queries = qualityQueries(movies, perCategory, 42, docs);

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

async function measureQueries(index: SearchIndex): Promise<Record<string, unknown>> {
  // Warm-up: the first queries pay for JIT and cold caches on both sides.
  for (const q of queries.slice(0, 20)) await index.search({ q: q.q, country: 'US', lang: 'en', limit: 3, offset: 0 });
  const times: number[] = [];
  for (const q of queries) {
    const t = process.hrtime.bigint();
    await index.search({ q: q.q, country: 'US', lang: 'en', limit: 3, offset: 0 });
    times.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  times.sort((a, b) => a - b);
  const round = (x: number): number => Math.round(x * 100) / 100;
  const quality = await measureQuality(index, queries, docs);
  return {
    queries: queries.length,
    p50Ms: round(percentile(times, 50)),
    p99Ms: round(percentile(times, 99)),
    maxMs: round(times[times.length - 1] ?? NaN),
    top3HitRate: round(quality.top3HitRate),
    top3ByCategory: Object.fromEntries(Object.entries(quality.byCategory).map(([c, r]) => [c, r.rate])),
  };
}

const prefix = `marquee-bench-search-${process.pid}`;
const admin = new Client({ node: url });
const os = await openSearchIndex({ url, indexPrefix: prefix, refresh: false });
try {
  let t = performance.now();
  await os.upsert(docs);
  const bulkMs = performance.now() - t;
  t = performance.now();
  await admin.indices.refresh({ index: `${prefix}-titles` });
  const refreshMs = performance.now() - t;
  const count = await os.count();

  // No kept answers: the latency measured is the search's, not a Map lookup's.
  const inProcess = inProcessSearchIndex({ resultCacheSize: 0 });
  t = performance.now();
  await inProcess.upsert(docs);
  const inProcessBuildMs = performance.now() - t;

  console.log(
    JSON.stringify({
      openSearchIndex: {
        docs: docs.length,
        indexed: count,
        bulkMs: Math.round(bulkMs),
        refreshMs: Math.round(refreshMs),
        docsPerSecond: Math.round(docs.length / ((bulkMs + refreshMs) / 1000)),
        ...(await measureQueries(os)),
      },
      reference: { inProcess: { buildMs: Math.round(inProcessBuildMs), ...(await measureQueries(inProcess)) } },
    }),
  );
  await inProcess.close();
} finally {
  await os.close();
  await admin.indices.delete({ index: `${prefix}-titles`, ignore_unavailable: true });
  await admin.close();
}
