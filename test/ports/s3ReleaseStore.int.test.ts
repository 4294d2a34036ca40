/**
 * The ReleaseStore behaviour suite on S3-compatible object storage (versitygw in CI), plus
 * what only this adapter has to prove: nothing of a losing or aborted build stays in the bucket.
 *
 * Needs RELEASES_S3_URL, RELEASES_S3_ACCESS_KEY, RELEASES_S3_SECRET_KEY
 * (`bash infra/local/servers.sh up versitygw`); see requireServer.ts.
 */
import assert from 'node:assert/strict';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { s3ReleaseStore } from '../../infra/releases/s3ReleaseStore.ts';
import { releaseStoreSuite } from './releaseStore.suite.ts';
import { describeWithServer } from './requireServer.ts';
import { uniqueName } from './support.ts';

describeWithServer('s3ReleaseStore', 'RELEASES_S3_URL', (endpoint) => {
  // One bucket for the file, a key prefix per test.
  const bucket = `marquee-test-${process.pid}-${Date.now().toString(36)}`;
  const credentials = { accessKeyId: process.env.RELEASES_S3_ACCESS_KEY ?? '', secretAccessKey: process.env.RELEASES_S3_SECRET_KEY ?? '' };
  const open = (prefix: string) => s3ReleaseStore({ endpoint, bucket, prefix, ...credentials });

  before(async () => {
    const store = open('');
    await store.ensureBucket();
    store.close();
  });

  releaseStoreSuite('s3ReleaseStore', async () => {
    const store = open(`${uniqueName('t')}/`);
    return {
      store,
      async cleanup() {
        store.close();
      },
    };
  });

  describe('s3ReleaseStore only', () => {
    async function keysUnder(prefix: string): Promise<string[]> {
      const client = new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials });
      try {
        const out = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }));
        return (out.Contents ?? []).map((o) => o.Key!).sort();
      } finally {
        client.destroy();
      }
    }

    it('keeps only the winner\'s objects after a race, an abort and a prune', async () => {
      const prefix = `${uniqueName('only')}/`;
      const store = open(prefix);
      try {
        const a = await store.begin('2026-W48');
        const b = await store.begin('2026-W48');
        await a.write('metadata.tar.gz', Buffer.from('a'));
        await b.write('metadata.tar.gz', Buffer.from('b'));
        await a.publish({ publishedAt: '2026-11-28T08:00:00Z', countries: [] });
        await assert.rejects(b.publish({ publishedAt: '2026-11-28T08:00:00Z', countries: [] }));
        const aborted = await store.begin('2026-W49');
        await aborted.write('metadata.tar.gz', Buffer.from('c'));
        await aborted.abort();
        let keys = await keysUnder(prefix);
        assert.equal(keys.length, 2, keys.join(', '));
        assert.ok(keys.includes(`${prefix}manifests/2026-W48.json`));
        assert.match(keys.find((k) => k.endsWith('metadata.tar.gz'))!, new RegExp(`^${prefix}files/2026-W48/[^/]+/metadata\\.tar\\.gz$`));
        assert.deepEqual(await store.prune(0), ['2026-W48']);
        keys = await keysUnder(prefix);
        assert.deepEqual(keys, []);
      } finally {
        store.close();
      }
    });

    it('answers unavailable, not a hang, when the server does not answer', async function () {
      this.timeout(20_000);
      const store = s3ReleaseStore({ endpoint: 'http://127.0.0.1:9', bucket, ...credentials });
      try {
        await assert.rejects(store.list(), (err) => (err as { code?: string }).code === 'unavailable');
      } finally {
        store.close();
      }
    });
  });
});
