/** Helpers of the tests that run several `marquee start` processes on the real servers. */
import { DeleteObjectsCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { Client } from '@opensearch-project/opensearch';
import { Kafka, logLevel } from 'kafkajs';
import { MongoClient } from 'mongodb';
import { topicNames } from '../../infra/kafka/topics.ts';

/** A process whose output is kept, named for failure messages. */
export interface Proc {
  name: string;
  log: string;
}

/** Polls `probe` every 200 ms until it answers something other than undefined/false; the processes' logs on timeout. */
export async function until<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs: number, procs: Proc[] = []): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not after ${timeoutMs} ms\n${procs.map((p) => `--- ${p.name}\n${p.log.slice(-1500)}`).join('\n')}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * A probe of the consumer group `group`: true once it has committed every observation published
 * so far, i.e. the ingest processes of the group, together, have nothing left to read.
 */
export function ingestGroupProbe(brokers: string[], prefix: string, group: string): { idle(): Promise<boolean>; close(): Promise<void> } {
  const admin = new Kafka({ brokers, logLevel: logLevel.NOTHING }).admin();
  const connected = admin.connect();
  const topics = [...topicNames(prefix).observations];
  return {
    async idle() {
      await connected;
      const existing = new Set(await admin.listTopics());
      const present = topics.filter((t) => existing.has(t));
      const committed = new Map<string, bigint>();
      for (const t of await admin.fetchOffsets({ groupId: group, topics: present })) {
        for (const p of t.partitions) committed.set(`${t.topic}/${p.partition}`, BigInt(p.offset));
      }
      for (const topic of present) {
        for (const p of await admin.fetchTopicOffsets(topic)) {
          if (BigInt(p.high) > BigInt(p.low) && (committed.get(`${topic}/${p.partition}`) ?? -1n) < BigInt(p.high)) return false;
        }
      }
      return true;
    },
    async close() {
      await connected.catch(() => undefined);
      await admin.disconnect();
    },
  };
}

/** Removes what a run on the servers created: its database, index, topics and release objects. */
export async function dropServerData(servers: NodeJS.ProcessEnv): Promise<void> {
  const mongo = new MongoClient(servers.MONGODB_URL as string);
  await mongo.db(servers.MONGODB_DB as string).dropDatabase().catch(() => undefined);
  await mongo.close();
  const os = new Client({ node: servers.OPENSEARCH_URL as string });
  await os.indices.delete({ index: `${servers.OPENSEARCH_INDEX_PREFIX}*` }).catch(() => undefined);
  const admin = new Kafka({ brokers: (servers.KAFKA_BROKERS as string).split(','), logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  const topics = (await admin.listTopics()).filter((t) => t.startsWith(servers.KAFKA_TOPIC_PREFIX as string));
  if (topics.length > 0) await admin.deleteTopics({ topics }).catch(() => undefined);
  await admin.disconnect();
  if (servers.RELEASES_S3_URL && servers.RELEASES_S3_PREFIX) await dropReleaseObjects(servers);
}

async function dropReleaseObjects(servers: NodeJS.ProcessEnv): Promise<void> {
  const s3 = new S3Client({
    endpoint: servers.RELEASES_S3_URL as string,
    region: servers.RELEASES_S3_REGION || 'us-east-1',
    forcePathStyle: true,
    ...(servers.RELEASES_S3_ACCESS_KEY
      ? { credentials: { accessKeyId: servers.RELEASES_S3_ACCESS_KEY, secretAccessKey: servers.RELEASES_S3_SECRET_KEY as string } }
      : {}),
  });
  const Bucket = servers.RELEASES_S3_BUCKET || 'marquee-releases';
  try {
    for (;;) {
      const listed = await s3.send(new ListObjectsV2Command({ Bucket, Prefix: servers.RELEASES_S3_PREFIX }));
      const keys = (listed.Contents ?? []).map((o) => ({ Key: o.Key as string }));
      if (keys.length === 0) break;
      await s3.send(new DeleteObjectsCommand({ Bucket, Delete: { Objects: keys, Quiet: true } }));
    }
  } catch {
    // Best effort: a unique prefix left behind costs a few kilobytes.
  } finally {
    s3.destroy();
  }
}
