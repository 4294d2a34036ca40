/**
 * The SearchIndex behaviour suite on a real OpenSearch (infra/local/servers.sh), plus what is
 * specific to the adapter: errors at the boundary, an index deleted behind its back, and
 * start-up against an existing index.
 *
 * Runs when OPENSEARCH_URL is set (`eval "$(bash infra/local/servers.sh env)"`). Without it the
 * tests are skipped, unless REQUIRE_SERVERS=1 (as in CI): then they fail, naming the variable.
 * Every test uses its own index (a unique prefix), deleted when the test closes the index.
 */
import assert from 'node:assert/strict';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@opensearch-project/opensearch';
import { isAppError } from '../../contracts/errors.ts';
import type { SearchIndex } from '../../contracts/ports.ts';
import { hasLanguageAnalyzers, openSearchIndex, type OpenSearchIndexOptions } from '../../infra/opensearch/searchIndex.ts';
import { searchDoc, searchIndexSuite } from './searchIndex.suite.ts';
import { uniqueName } from './support.ts';

const url = process.env.OPENSEARCH_URL;
const requireServers = process.env.REQUIRE_SERVERS === '1';

if (url) {
  const admin = new Client({ node: url });
  after(() => admin.close());

  /** An index under a fresh prefix whose close() also deletes it. */
  async function freshIndex(over: Partial<OpenSearchIndexOptions> = {}): Promise<{ index: SearchIndex; name: string }> {
    const prefix = uniqueName('marquee-test-search');
    const index = await openSearchIndex({ url: url as string, indexPrefix: prefix, ...over });
    const name = `${prefix}-titles`;
    return {
      name,
      index: {
        ...index,
        async close() {
          await index.close();
          await admin.indices.delete({ index: name, ignore_unavailable: true });
        },
      },
    };
  }

  describe(`OpenSearch SearchIndex at ${url}`, function () {
    // Index creation on a cold 2-core node takes a few hundred ms; a refresh wait up to 1 s.
    this.timeout(30_000);

    // refresh: true keeps the suite fast (no wait for the 1 s periodic refresh); the default
    // 'wait_for' is exercised by the adapter-specific tests below, which read right after writing.
    searchIndexSuite('opensearch', async () => (await freshIndex({ refresh: true })).index);

    describe('adapter specifics', function () {
      it('answers an empty result, not an error, when its index was deleted behind its back', async function () {
        const { index, name } = await freshIndex();
        try {
          await index.upsert([searchDoc('Titanic')]);
          await admin.indices.delete({ index: name });
          assert.deepEqual(await index.search({ q: 'titanic', country: 'US', lang: 'en', limit: 10, offset: 0 }), { total: 0, ids: [] });
          assert.equal(await index.count(), 0);
        } finally {
          await index.close();
        }
      });

      it('reuses an existing index and its documents when opened again under the same prefix', async function () {
        const prefix = uniqueName('marquee-test-search');
        const first = await openSearchIndex({ url: url as string, indexPrefix: prefix });
        const doc = searchDoc('Crimson Harbor');
        try {
          await first.upsert([doc]);
          await first.close();
          const second = await openSearchIndex({ url: url as string, indexPrefix: prefix });
          try {
            assert.equal(await second.count(), 1);
            assert.deepEqual((await second.search({ q: 'crimson', country: 'US', lang: 'en', limit: 10, offset: 0 })).ids, [doc.id]);
          } finally {
            await second.close();
          }
        } finally {
          await admin.indices.delete({ index: `${prefix}-titles`, ignore_unavailable: true });
        }
      });

      it('makes writes visible when the write resolves with refresh: true, and pages beyond the result window', async function () {
        const { index } = await freshIndex({ refresh: true, bulkSize: 7 });
        try {
          const docs = Array.from({ length: 20 }, (_, i) => searchDoc(`Lantern ${i}`));
          // 20 documents in chunks of 7: three bulk requests, the last one refreshing.
          await index.upsert(docs);
          assert.equal(await index.count(), 20);
          assert.deepEqual(await index.search({ q: 'lantern', country: 'US', lang: 'en', limit: 5, offset: 10_000 }), { total: 20, ids: [] });
          await index.remove(docs.slice(0, 15).map((d) => d.id));
          assert.equal(await index.count(), 5);
        } finally {
          await index.close();
        }
      });

      it('throws a retriable AppError unavailable when the cluster cannot be reached', async function () {
        await assert.rejects(
          openSearchIndex({ url: 'http://127.0.0.1:1', indexPrefix: uniqueName('marquee-test-search'), requestTimeoutMs: 2000 }),
          (err: unknown) => isAppError(err, 'unavailable') && err.retriable,
        );
      });

      it('stems with the language analyzers where the cluster has them, and cannot be made to insist where it does not', async function () {
        if (await hasLanguageAnalyzers(admin)) {
          const { index, name } = await freshIndex({ refresh: true });
          try {
            const { body } = await admin.indices.getMapping({ index: name });
            const title = (body[name]?.mappings?.properties as Record<string, { fields?: { stem?: { analyzer?: string } } }>).title;
            assert.equal(title?.fields?.stem?.analyzer, 'english');
            const doc = searchDoc('Running Man');
            await index.upsert([doc]);
            assert.deepEqual((await index.search({ q: 'running man', country: 'US', lang: 'en', limit: 10, offset: 0 })).ids, [doc.id]);
          } finally {
            await index.close();
          }
        } else {
          await assert.rejects(
            openSearchIndex({ url: url as string, indexPrefix: uniqueName('marquee-test-search'), languageAnalyzers: true }),
            (err: unknown) => isAppError(err, 'internal') && /analyzer/.test(err.message),
          );
        }
      });

      it('sends a bulk request again after a 429 or a 503, and not after a 400', async function () {
        // In front of the real cluster, a proxy answers the first `_bulk` requests itself.
        const answers = [429, 503];
        let bulks = 0;
        const proxy = createServer((req, res) => {
          if (req.url?.includes('_bulk')) {
            bulks += 1;
            const status = answers.shift();
            if (status !== undefined) {
              req.resume();
              res.writeHead(status, { 'content-type': 'application/json' });
              res.end(JSON.stringify({ error: { type: status === 429 ? 'es_rejected_execution_exception' : 'unavailable' }, status }));
              return;
            }
          }
          const upstream = httpRequest(new URL(req.url ?? '/', url), { method: req.method, headers: req.headers }, (up) => {
            res.writeHead(up.statusCode ?? 502, up.headers);
            up.pipe(res);
          });
          req.pipe(upstream);
        });
        await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
        const prefix = uniqueName('marquee-test-search');
        const index = await openSearchIndex({ url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`, indexPrefix: prefix, refresh: true, bulkRetryMs: 20 });
        try {
          const doc = searchDoc('Titanic');
          await index.write([{ id: doc.id, doc, version: 3 }]);
          assert.equal(bulks, 3);
          assert.equal(await index.count(), 1);
          answers.push(400);
          await assert.rejects(index.write([{ id: doc.id, doc, version: 4 }]), (err: unknown) => isAppError(err, 'internal') && !err.retriable);
          assert.equal(bulks, 4);
        } finally {
          await index.close();
          await new Promise((resolve) => proxy.close(resolve));
          await admin.indices.delete({ index: `${prefix}-titles`, ignore_unavailable: true });
        }
      });

      it('throws AppError closed once closed', async function () {
        const { index } = await freshIndex();
        await index.close();
        await assert.rejects(index.count(), (err: unknown) => isAppError(err, 'closed'));
      });
    });
  });
} else {
  describe('OpenSearch SearchIndex', function () {
    if (requireServers) {
      it('fails: REQUIRE_SERVERS=1 but OPENSEARCH_URL is not set', function () {
        assert.fail(
          'OPENSEARCH_URL is not set. Start the server with `bash infra/local/servers.sh up opensearch` ' +
            'and export its address with `eval "$(bash infra/local/servers.sh env)"`.',
        );
      });
    } else {
      it('skipped: OPENSEARCH_URL is not set (run infra/local/servers.sh up opensearch, then eval its env)', function () {
        this.skip();
      });
    }
  });
}
