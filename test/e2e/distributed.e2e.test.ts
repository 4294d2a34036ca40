/**
 * The same process on the real engines: `marquee start` with KAFKA_BROKERS, MONGODB_URL,
 * OPENSEARCH_URL and REDIS_URL set. Crawls travel through Kafka, read models live in MongoDB
 * (FerretDB here), search runs on OpenSearch and rate-limit counters in Redis; the API answers
 * from them. A small sample (a few hundred titles, two countries) keeps it quick.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@opensearch-project/opensearch';
import { Kafka, logLevel } from 'kafkajs';
import { MongoClient } from 'mongodb';
import { Redis } from 'ioredis';
import { bin, freePort, marquee, root, stop } from './process.ts';

const NEEDED = ['KAFKA_BROKERS', 'MONGODB_URL', 'OPENSEARCH_URL', 'REDIS_URL'] as const;

describe('marquee start on the real engines (e2e)', function () {
  this.timeout(360_000);
  const missing = NEEDED.filter((name) => !process.env[name]);
  const id = `e2e${Date.now().toString(36)}`;
  let dataDir: string;
  let env: NodeJS.ProcessEnv;
  let base: string;

  before(async function () {
    if (missing.length > 0) {
      if (process.env.REQUIRE_SERVERS === '1') {
        throw new Error(`REQUIRE_SERVERS=1 but ${missing.join(', ')} not set: start them with npm run servers:up`);
      }
      this.skip();
    }
    dataDir = mkdtempSync(join(tmpdir(), 'marquee-dist-'));
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
    };
  });

  after(async () => {
    if (missing.length > 0) return;
    rmSync(dataDir, { recursive: true, force: true });
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
    let log = '';
    const server = spawn(process.execPath, [bin, 'start', '--sample'], { env, cwd: root });
    server.stdout?.on('data', (d) => (log += d));
    server.stderr?.on('data', (d) => (log += d));
    try {
      const started = Date.now();
      for (;;) {
        if (server.exitCode !== null) throw new Error(`start exited with ${server.exitCode}:\n${log.slice(-4000)}`);
        const res = await fetch(`${base}/readyz`).catch(() => null);
        if (res?.status === 200) break;
        if (Date.now() - started > 300_000) throw new Error(`not ready after 300 s:\n${log.slice(-4000)}`);
        await new Promise((r) => setTimeout(r, 500));
      }
      console.log(`      ready on the real engines after ${((Date.now() - started) / 1000).toFixed(1)} s`);
      assert.match(log, /Kafka/);
      assert.match(log, /MongoDB/);
      assert.match(log, /OpenSearch/);

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
    } finally {
      assert.equal(await stop(server), 0, `graceful stop:\n${log.slice(-3000)}`);
    }
  });
});
