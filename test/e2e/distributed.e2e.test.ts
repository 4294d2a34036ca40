/**
 * The same process on the real engines: `marquee start` with KAFKA_BROKERS, MONGODB_URL,
 * OPENSEARCH_URL, REDIS_URL and RELEASES_S3_URL set. Crawls travel through Kafka, read models
 * live in MongoDB (FerretDB here), search runs on OpenSearch, rate-limit counters in Redis and
 * the weekly release in S3 (versitygw here); the API answers from them. A second API process
 * with a data directory of its own serves the release the first built, through the same signed
 * URL. A small sample (a few hundred titles, two countries) keeps it quick.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createHash, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { Client } from '@opensearch-project/opensearch';
import { Kafka, logLevel } from 'kafkajs';
import { MongoClient } from 'mongodb';
import { Redis } from 'ioredis';
import { s3ReleaseStore } from '../../infra/releases/s3ReleaseStore.ts';
import { bin, freePort, marquee, root, stop } from './process.ts';

const NEEDED = ['KAFKA_BROKERS', 'MONGODB_URL', 'OPENSEARCH_URL', 'REDIS_URL', 'RELEASES_S3_URL'] as const;

/** Spawns `marquee start` and waits for /readyz 200; the log is kept for failure messages. */
async function startUntilReady(args: string[], env: NodeJS.ProcessEnv, base: string): Promise<{ server: ChildProcess; log: () => string; seconds: number }> {
  let log = '';
  const server = spawn(process.execPath, [bin, 'start', ...args], { env, cwd: root });
  server.stdout?.on('data', (d) => (log += d));
  server.stderr?.on('data', (d) => (log += d));
  const started = Date.now();
  for (;;) {
    if (server.exitCode !== null) throw new Error(`start exited with ${server.exitCode}:\n${log.slice(-4000)}`);
    const res = await fetch(`${base}/readyz`).catch(() => null);
    if (res?.status === 200) break;
    if (Date.now() - started > 300_000) {
      await stop(server);
      throw new Error(`not ready after 300 s:\n${log.slice(-4000)}`);
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  return { server, log: () => log, seconds: (Date.now() - started) / 1000 };
}

describe('marquee start on the real engines (e2e)', function () {
  this.timeout(360_000);
  const missing = NEEDED.filter((name) => !process.env[name]);
  const id = `e2e${Date.now().toString(36)}`;
  let dataDir: string;
  let secondDataDir: string;
  let env: NodeJS.ProcessEnv;
  let base: string;
  /** The bucket prefix this test's processes write their releases under, read directly. */
  const testReleases = () =>
    s3ReleaseStore({
      endpoint: process.env.RELEASES_S3_URL as string,
      bucket: 'marquee-releases',
      prefix: `${id}/`,
      accessKeyId: process.env.RELEASES_S3_ACCESS_KEY as string,
      secretAccessKey: process.env.RELEASES_S3_SECRET_KEY as string,
    });

  before(async function () {
    if (missing.length > 0) {
      if (process.env.REQUIRE_SERVERS === '1') {
        throw new Error(`REQUIRE_SERVERS=1 but ${missing.join(', ')} not set: start them with npm run servers:up`);
      }
      // Skipped only outside CI, on a machine without this server (a newcomer's `npm test`);
      // .ci/run sets REQUIRE_SERVERS=1, so there the check above fails the run instead.
      this.skip();
    }
    dataDir = mkdtempSync(join(tmpdir(), 'marquee-dist-'));
    secondDataDir = mkdtempSync(join(tmpdir(), 'marquee-dist2-'));
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    env = {
      ...process.env,
      DATA_DIR: dataDir,
      PORT: String(port),
      LOG_FORMAT: 'json',
      MONGODB_DB: `marquee_${id}`,
      OPENSEARCH_INDEX_PREFIX: `marquee-${id}`,
      KAFKA_TOPIC_PREFIX: `marquee.${id}.`,
      INGEST_GROUP: `ingest-${id}`,
      SAMPLE_TITLES: '300',
      SAMPLE_COUNTRIES: 'US,DE',
      SAMPLE_DAYS: '2',
      RATE_LIMIT_PER_MINUTE: '1000',
      // The event store has no server here (no registry offers EventStoreDB): LMDB.
      EVENTSTORE_URL: '',
      RELEASES_S3_PREFIX: `${id}/`,
      // From configuration, the same in every process: a URL signed by one is valid on all.
      DOWNLOAD_SIGNING_KEY: randomBytes(32).toString('hex'),
      LINK_TOKEN_KEYS: `1:${randomBytes(32).toString('hex')}`,
    };
  });

  after(async () => {
    if (missing.length > 0) return;
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(secondDataDir, { recursive: true, force: true });
    const releases = testReleases();
    await releases.prune(0).catch(() => undefined);
    releases.close();
    const mongo = new MongoClient(process.env.MONGODB_URL as string);
    await mongo.db(`marquee_${id}`).dropDatabase().catch(() => undefined);
    await mongo.close();
    const os = new Client({ node: process.env.OPENSEARCH_URL as string });
    await os.indices.delete({ index: `marquee-${id}*` }).catch(() => undefined);
    const admin = new Kafka({ brokers: (process.env.KAFKA_BROKERS as string).split(','), logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    const topics = (await admin.listTopics()).filter((t) => t.startsWith(`marquee.${id}.`));
    if (topics.length > 0) await admin.deleteTopics({ topics }).catch(() => undefined);
    await admin.disconnect();
  });

  it('ingests through Kafka into MongoDB and OpenSearch, and serves the API from them', async () => {
    const first = await startUntilReady(['--sample'], env, base);
    const { server } = first;
    const log = first.log();
    try {
      console.log(`      ready on the real engines after ${first.seconds.toFixed(1)} s`);
      assert.match(log, /Kafka/);
      assert.match(log, /MongoDB/);
      assert.match(log, /OpenSearch/);
      // The index was filled from the whole `search` read model: on MongoDB a sample day waits
      // only for what the ranking reads, so the fill must wait for `search` itself.
      const indexed = Number(/sample catalog loaded: \d+ events, (\d+) titles indexed/.exec(log)?.[1] ?? 0);
      assert.ok(indexed >= 300, `${indexed} titles indexed at the end of the load`);

      const created = await marquee(['keys', 'create', '--name', 'dist'], env);
      assert.equal(created.code, 0, created.stderr);
      const key = created.stdout.trim().split('\n').at(-1) ?? '';
      const auth = { authorization: `Bearer ${key}` };

      const rankings = (await (await fetch(`${base}/v1/rankings?country=US&limit=3`, { headers: auth })).json()) as {
        results: Array<{ id: string; title: string; position: number }>;
      };
      assert.deepEqual(rankings.results.map((r) => r.position), [1, 2, 3]);
      const top = rankings.results[0];
      assert.ok(top);

      // Search answers from OpenSearch: the top title, misspelt by one letter, is found.
      const word = top.title.split(' ').find((w) => w.length >= 6) ?? top.title;
      const typo = word.slice(0, 2) + word.slice(3);
      const search = (await (await fetch(`${base}/v1/search?q=${encodeURIComponent(typo)}&country=US`, { headers: auth })).json()) as {
        results: Array<{ id: string }>;
        total: number;
      };
      assert.ok(search.total > 0, `search for ${typo}`);

      const detail = await fetch(`${base}/v1/media/${top.id}?country=US`, { headers: auth });
      assert.equal(detail.status, 200);
      const links = (await (await fetch(`${base}/v1/media/${top.id}/links?country=US`, { headers: auth })).json()) as unknown[];
      assert.ok(links.length > 0, 'a ranked title is available');

      // The data really lives on the servers.
      const mongo = new MongoClient(process.env.MONGODB_URL as string);
      const names = (await mongo.db(`marquee_${id}`).listCollections().toArray()).map((c) => c.name);
      await mongo.close();
      assert.ok(names.some((n) => n.includes('links')), `collections: ${names.join(', ')}`);
      const os = new Client({ node: process.env.OPENSEARCH_URL as string });
      await os.indices.refresh({ index: `marquee-${id}*` });
      const count = await os.count({ index: `marquee-${id}*` });
      assert.ok(Number(count.body.count) >= 300, `OpenSearch holds ${count.body.count} titles`);
      const admin = new Kafka({ brokers: (process.env.KAFKA_BROKERS as string).split(','), logLevel: logLevel.NOTHING }).admin();
      await admin.connect();
      const topics = (await admin.listTopics()).filter((t) => t.startsWith(`marquee.${id}.`));
      await admin.disconnect();
      assert.ok(topics.length >= 5, `topics: ${topics.join(', ')}`);
      const redis = new Redis(process.env.REDIS_URL as string);
      const counters = await redis.keys('*');
      redis.disconnect();
      assert.ok(counters.length > 0, 'rate-limit counters are kept in Redis');

      await servesTheReleaseFromS3OnTwoProcesses(auth);

      // The key lives in MongoDB's key store, and its use was recorded there by the API process.
      const keys = new MongoClient(process.env.MONGODB_URL as string);
      const stored = await keys.db(`marquee_${id}`).collection('api_keys').findOne({ name: 'dist' });
      await keys.close();
      assert.ok(stored, 'the key is a document of api_keys');
      const listed = await marquee(['keys', 'list'], env);
      assert.equal(listed.code, 0, listed.stderr);
      assert.match(listed.stdout, /dist +created \S+ {2}last used \d{4}-\d\d-\d\dT/);
    } finally {
      assert.equal(await stop(server), 0, `graceful stop:\n${first.log().slice(-3000)}`);
    }
  });

  /** The release the first process built is in S3; a second API process serves it by the same signed URL. */
  async function servesTheReleaseFromS3OnTwoProcesses(auth: Record<string, string>): Promise<void> {
    // The scheduler publishes this week's release right after ready.
    const deadline = Date.now() + 120_000;
    type Listing = { latest: string; files: Array<{ path: string; size_bytes: number; sha256: string }> };
    const listing = await (async (): Promise<Listing> => {
      for (;;) {
        const res = await fetch(`${base}/v1/snapshots`, { headers: auth });
        if (res.status === 200) return (await res.json()) as Listing;
        if (Date.now() > deadline) throw new Error(`no release after 120 s: ${res.status}`);
        await new Promise((r) => setTimeout(r, 500));
      }
    })();
    const file = listing.files.find((f) => f.path.endsWith('links.parquet')) ?? listing.files[0]!;
    const signed = (await (await fetch(`${base}/v1/snapshots/download?path=${encodeURIComponent(file.path)}`, { headers: auth })).json()) as {
      download_url: string;
    };
    const { pathname, search } = new URL(signed.download_url);

    // It lives in the bucket, not in the first process's data directory.
    const releases = testReleases();
    try {
      assert.equal((await releases.latest())?.version, listing.latest);
    } finally {
      releases.close();
    }

    const port2 = await freePort();
    const base2 = `http://127.0.0.1:${port2}`;
    // Not --sample: a production API process, its secrets from configuration.
    const second = await startUntilReady([], { ...env, DATA_DIR: secondDataDir, PORT: String(port2) }, base2);
    try {
      assert.match(second.log(), /S3 http/);
      const ready = (await (await fetch(`${base2}/readyz`)).json()) as { components: Array<{ name: string; state: string }> };
      assert.ok(ready.components.some((c) => c.name === 's3' && c.state === 'running'), JSON.stringify(ready.components));
      const bodies: Buffer[] = [];
      for (const b of [base, base2]) {
        const res = await fetch(`${b}${pathname}${search}`, { headers: auth });
        assert.equal(res.status, 200, `${b}: ${res.status}`);
        assert.equal(res.headers.get('etag'), `"${file.sha256}"`);
        bodies.push(Buffer.from(await res.arrayBuffer()));
      }
      for (const body of bodies) {
        assert.equal(body.length, file.size_bytes);
        assert.equal(createHash('sha256').update(body).digest('hex'), file.sha256);
      }
      const ranged = await fetch(`${base2}${pathname}${search}`, { headers: { ...auth, range: 'bytes=4-99' } });
      assert.equal(ranged.status, 206);
      assert.equal(ranged.headers.get('content-range'), `bytes 4-99/${file.size_bytes}`);
      assert.ok(Buffer.from(await ranged.arrayBuffer()).equals(bodies[0]!.subarray(4, 100)));
      const cached = await fetch(`${base2}${pathname}${search}`, { headers: { ...auth, 'if-none-match': `"${file.sha256}"` } });
      assert.equal(cached.status, 304);
      // A tampered signature is refused on the second process too.
      const tampered = await fetch(`${base2}${pathname}${search.replace(/sig=[^&]/, (m) => (m.endsWith('0') ? 'sig=1' : 'sig=0'))}`, { headers: auth });
      assert.equal(tampered.status, 403);
    } finally {
      assert.equal(await stop(second.server), 0, `graceful stop of the second process:\n${second.log().slice(-3000)}`);
    }
  }
});
