/**
 * Smoke test of the real servers from infra/local/servers.sh: each one is reachable with
 * the client library the app uses and does one real round trip.
 *
 * A server is tested when its variable is set (`eval "$(bash infra/local/servers.sh env)"`).
 * When it is not set the test is skipped, unless REQUIRE_SERVERS=1 (as in .ci/run): then it
 * fails, naming the missing variable, so CI can never go green without the servers.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Client as OpenSearch } from '@opensearch-project/opensearch';
import { Redis } from 'ioredis';
import { Kafka, logLevel, Partitioners } from 'kafkajs';
import { MongoClient } from 'mongodb';

const requireServers = process.env.REQUIRE_SERVERS === '1';

/** Unique per run, so parallel or repeated runs never share a topic, index or collection. */
const runId = `${Date.now().toString(36)}${randomUUID().slice(0, 8)}`;

/**
 * Defines the suite `define(url)` when `envVar` is set; otherwise one test that fails under
 * REQUIRE_SERVERS=1 and is skipped otherwise, with the reason in its title.
 */
function describeServer(title: string, envVar: string, define: (url: string) => void): void {
  const url = process.env[envVar];
  if (url) {
    describe(`${title} at ${url}`, () => define(url));
    return;
  }
  describe(title, () => {
    if (requireServers) {
      it(`fails: REQUIRE_SERVERS=1 but ${envVar} is not set`, () => {
        assert.fail(
          `${envVar} is not set. Start the servers with \`bash infra/local/servers.sh up\` ` +
            `and export their addresses with \`eval "$(bash infra/local/servers.sh env)"\`.`,
        );
      });
    } else {
      it(`skipped: ${envVar} is not set (run infra/local/servers.sh up, then eval its env)`, function () {
        this.skip();
      });
    }
  });
}

describe('real servers (infra/local)', function () {
  // A cold JVM broker may take a few seconds to elect the group coordinator.
  this.timeout(60_000);

  describeServer('OpenSearch', 'OPENSEARCH_URL', (url) => {
    const client = new OpenSearch({ node: url });
    after(() => client.close());

    it('reports a green or yellow cluster', async () => {
      const { body } = await client.cluster.health();
      assert.match(String(body.status), /^(green|yellow)$/);
    });

    it('indexes a document and gets it back', async () => {
      const index = `marquee-smoke-${runId}`;
      try {
        await client.indices.create({
          index,
          body: { settings: { number_of_shards: 1, number_of_replicas: 0 } },
        });
        const doc = { title: 'The Smoke Test', year: 2024 };
        await client.index({ index, id: 'tt1', body: doc, refresh: true });

        const { body: got } = await client.get({ index, id: 'tt1' });
        assert.equal(got.found, true);
        assert.deepEqual(got._source, doc);

        // The bare integ-test distribution still has the standard analyzer and match queries.
        const { body: found } = await client.search({
          index,
          body: { query: { match: { title: 'smoke' } } },
        });
        assert.deepEqual(
          found.hits.hits.map((h) => h._id),
          ['tt1'],
        );
      } finally {
        await client.indices.delete({ index }, { ignore: [404] });
      }
    });
  });

  describeServer('MongoDB (FerretDB)', 'MONGODB_URL', (url) => {
    const client = new MongoClient(url, { serverSelectionTimeoutMS: 10_000 });
    before(() => client.connect());
    after(() => client.close());

    it('answers ping', async () => {
      const reply = await client.db('admin').command({ ping: 1 });
      assert.equal(reply.ok, 1);
    });

    it('upserts a document twice and reads it back', async () => {
      const coll = client.db('marquee_smoke').collection<{ _id: string; n: number }>(`smoke_${runId}`);
      try {
        const first = await coll.updateOne({ _id: 'a' }, { $set: { n: 1 } }, { upsert: true });
        assert.equal(first.upsertedCount, 1);
        const second = await coll.updateOne({ _id: 'a' }, { $set: { n: 2 } }, { upsert: true });
        assert.equal(second.upsertedCount, 0);
        assert.equal(second.modifiedCount, 1);
        assert.deepEqual(await coll.findOne({ _id: 'a' }), { _id: 'a', n: 2 });
      } finally {
        await coll.drop().catch(() => undefined);
      }
    });
  });

  describeServer('Redis', 'REDIS_URL', (url) => {
    const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
    before(() => redis.connect());
    after(() => redis.quit());

    it('answers PING', async () => {
      assert.equal(await redis.ping(), 'PONG');
    });
  });

  describeServer('Kafka', 'KAFKA_BROKERS', (url) => {
    const kafka = new Kafka({
      clientId: 'marquee-smoke',
      brokers: url.split(','),
      logLevel: logLevel.NOTHING,
      retry: { retries: 5 },
    });

    it('lists topics, creates one, produces a message and consumes it', async () => {
      const topic = `marquee-smoke-${runId}`;
      const admin = kafka.admin();
      await admin.connect();
      try {
        assert.ok(Array.isArray(await admin.listTopics()));
        const created = await admin.createTopics({
          topics: [{ topic, numPartitions: 1, replicationFactor: 1 }],
          waitForLeaders: true,
        });
        assert.equal(created, true);
        assert.ok((await admin.listTopics()).includes(topic));

        const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
        await producer.connect();
        try {
          await producer.send({ topic, messages: [{ key: 'k1', value: 'hello marquee' }] });
        } finally {
          await producer.disconnect();
        }

        const consumer = kafka.consumer({ groupId: `marquee-smoke-${runId}` });
        await consumer.connect();
        try {
          await consumer.subscribe({ topic, fromBeginning: true });
          const received = await new Promise<{ key: string; value: string }>((resolve, reject) => {
            consumer
              .run({
                eachMessage: async ({ message }) => {
                  resolve({ key: String(message.key), value: String(message.value) });
                },
              })
              .catch(reject);
          });
          assert.deepEqual(received, { key: 'k1', value: 'hello marquee' });
        } finally {
          await consumer.disconnect();
        }
      } finally {
        await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
        await admin.disconnect();
      }
    });
  });
});
