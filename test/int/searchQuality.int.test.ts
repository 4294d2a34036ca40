/**
 * The search quality set (test/unit/searchQualityQueries.ts) on a real OpenSearch: the same
 * catalog, queries and threshold as the in-process index (test/unit/searchQuality.unit.test.ts),
 * so both engines are held to one bar, per category. Uses an index of its own, deleted after.
 */
import { Client } from '@opensearch-project/opensearch';
import type { SearchIndex } from '../../contracts/ports.ts';
import { openSearchIndex } from '../../infra/opensearch/searchIndex.ts';
import { describeWithServer } from '../ports/requireServer.ts';
import { uniqueName } from '../ports/support.ts';
import { movieDocuments, showDocuments } from '../unit/searchQualityCatalog.ts';
import { qualityQueries, qualitySuite } from '../unit/searchQualityQueries.ts';

describeWithServer('search quality on the real titles of the sample catalog (OpenSearch)', 'OPENSEARCH_URL', (url) => {
  const movies = movieDocuments();
  const docs = [...movies, ...showDocuments()];
  const queries = qualityQueries(movies, 100, 42, docs);
  const prefix = uniqueName('marquee-test-quality');
  let index: SearchIndex;
  let admin: Client;

  before(async function () {
    this.timeout(120_000);
    admin = new Client({ node: url });
    index = await openSearchIndex({ url, indexPrefix: prefix, refresh: false });
    await index.upsert(docs);
    await admin.indices.refresh({ index: `${prefix}-titles` });
  });

  after(async function () {
    this.timeout(30_000);
    await index?.close();
    await admin?.indices.delete({ index: `${prefix}-titles`, ignore_unavailable: true });
    await admin?.close();
  });

  qualitySuite('opensearch', () => index, docs, queries);
});
