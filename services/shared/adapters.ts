/**
 * Chooses an adapter per port from the configuration: the embedded default (LMDB, the local
 * inbox, the in-process index) unless a server URL is set. Server adapters are imported only
 * when selected, so an embedded run never loads a driver it does not use.
 */
import { join } from 'node:path';
import type { redisClient } from '../../infra/redis/client.ts';
import type { ApiKeyStore, EventStore, ObservationBus, ReadStore, ReleaseStore, SearchIndex } from '../../contracts/ports.ts';
import { lmdbApiKeyStore } from '../../infra/lmdb/apiKeyStore.ts';
import { lmdbEventStore } from '../../infra/lmdb/eventStore.ts';
import { lmdbInbox, type LmdbInbox } from '../../infra/lmdb/inbox.ts';
import { lmdbReadStore, type LmdbReadStoreOptions } from '../../infra/lmdb/readStore.ts';
import { fsReleaseStore } from '../../infra/releases/fsReleaseStore.ts';
import { ALL_PROJECTIONS } from '../../projections/index.ts';
import { inProcessSearchIndex } from '../../infra/search/inProcessSearch.ts';
import { redactUrl, type Config } from './config.ts';
import type { DependencyCheck } from './dependencies.ts';
import type { Logger } from './logger.ts';
import { searchFeedCheckpoint } from './searchFeed.ts';

export interface Adapters {
  eventStore: EventStore;
  bus: ObservationBus;
  readStore: ReadStore;
  search: SearchIndex;
  /** Whether the search index lives in this process (and must be refilled at start-up). */
  searchInProcess: boolean;
  /** The durable checkpoint of the feed into a shared index (searchFeed.ts); null for an in-process one. */
  searchFeedCheckpoint: string | null;
  /** The bus when it is the local inbox, which takes records already encoded (the sample load's crawl thread). */
  localInbox?: LmdbInbox;
  /** Consumer group of the ingest role. Default `ingest`. */
  ingestGroup?: string;
  /** Projections a runner folds at once (see projectionParallelism). Default 1. */
  projectionParallelism?: number;
  /** Events a projection runner folds per batch (see projectionBatchSize). Default 5000. */
  projectionBatchSize?: number;
  /** One line per port naming the engine, for the start-up log and `marquee status`. */
  engines: Record<'events' | 'observations' | 'readModels' | 'search', string>;
  /** The servers in use, each with a cheap check, for `watchDependencies`. Default none (all embedded). */
  dependencies?: DependencyCheck[];
  close(): Promise<void>;
}

/** The event store the configuration selects (a projection worker needs only the two stores). */
export async function openEventStore(config: Config): Promise<{ eventStore: EventStore; engine: string }> {
  if (config.eventStore === 'eventstoredb' && config.eventStoreUrl) {
    const { eventStoreDbEventStore } = await import('../../infra/eventstoredb/eventStore.ts');
    return { eventStore: eventStoreDbEventStore({ connectionString: config.eventStoreUrl }), engine: `EventStoreDB ${redactUrl(config.eventStoreUrl)}` };
  }
  if (config.eventStore === 'kafka' && config.kafkaBrokers) {
    const { kafkaEventStore } = await import('../../infra/kafka/eventStore.ts');
    const eventStore = kafkaEventStore({ brokers: config.kafkaBrokers, topicPrefix: config.kafkaTopicPrefix });
    return { eventStore, engine: `Kafka ${config.kafkaBrokers.join(',')} topic ${eventStore.topic}` };
  }
  return { eventStore: lmdbEventStore({ dataDir: config.dataDir }), engine: `LMDB ${config.dataDir}` };
}

/**
 * Projections a runner folds at once (ProjectionGroup `parallel`): on MongoDB (FerretDB) every
 * read and write is a round trip, and several projections in flight overlap them. On LMDB every
 * projection of a batch at once: their writes queue in the same event turn, which lmdb-js
 * commits as one transaction, one fsync instead of fifteen (the waits for the commits were most
 * of a sample load's projection time: 45 of 56 s over three days, one projection after another).
 */
export function projectionParallelism(config: Pick<Config, 'mongodbUrl'>): number {
  return config.mongodbUrl ? 4 : ALL_PROJECTIONS.length;
}

/**
 * Events a projection runner folds per batch. On MongoDB (FerretDB) a document touched in two
 * batches is read and written twice, a round trip each (the `ranking_inputs` blocks of 25 titles,
 * the search document of a title), and every batch adds its own checkpoint writes and parked
 * lookups per projection; on LMDB a larger batch only holds more in memory. At 20,000 the
 * sample's day 1 (251,722 events, 13 batches) replaced 7,626 `search` documents of 4,031 and
 * 7,434 `ranking_inputs` blocks, and read 9,600 `links` keys one by one; 60,000 makes it 5
 * batches (a few hundred MB of events and documents in memory at once).
 */
export function projectionBatchSize(config: Pick<Config, 'mongodbUrl'>): number {
  return config.mongodbUrl ? 60_000 : 5000;
}

/** The read store the configuration selects (`lmdb`: options of the LMDB adapter, ignored on MongoDB). */
export async function openReadStore(config: Config, lmdb: Omit<LmdbReadStoreOptions, 'dataDir'> = {}): Promise<{ readStore: ReadStore; engine: string }> {
  if (config.mongodbUrl) {
    const { mongoReadStore } = await import('../../infra/mongo/readStore.ts');
    return {
      readStore: await mongoReadStore({ url: config.mongodbUrl, database: config.mongodbDb }),
      engine: `MongoDB ${redactUrl(config.mongodbUrl)}/${config.mongodbDb}`,
    };
  }
  return { readStore: lmdbReadStore({ ...lmdb, dataDir: config.dataDir }), engine: `LMDB ${config.dataDir}` };
}

/** The API key store the configuration selects: beside the read models (MongoDB or LMDB), in a port of its own. */
export async function openApiKeyStore(config: Config): Promise<{ apiKeys: ApiKeyStore; engine: string }> {
  if (config.mongodbUrl) {
    const { mongoApiKeyStore } = await import('../../infra/mongo/apiKeyStore.ts');
    return { apiKeys: await mongoApiKeyStore({ url: config.mongodbUrl, database: config.mongodbDb }), engine: `MongoDB ${redactUrl(config.mongodbUrl)}/${config.mongodbDb}` };
  }
  return { apiKeys: lmdbApiKeyStore({ dataDir: config.dataDir }), engine: `LMDB ${config.dataDir}` };
}

/**
 * The Redis client of the rate-limit counters shared by the API processes (`REDIS_URL`) and its
 * health check, or null: each process then counts in memory. Imported only when used: ioredis is
 * a tenth of a second of module loading before the load starts.
 */
export async function openRateLimitRedis(
  config: Config,
): Promise<{ redis: ReturnType<typeof redisClient>; dependency: DependencyCheck } | null> {
  if (config.redisUrl === null) return null;
  const { redisClient: connect, checkRedis } = await import('../../infra/redis/client.ts');
  const redis = connect(config.redisUrl);
  // Not critical: while it is down the counters fail open to memory (services/api/rateLimit.ts).
  return { redis, dependency: { name: 'redis', critical: false, check: () => checkRedis(redis) } };
}

/**
 * The release store the configuration selects: object storage shared by every process
 * (`RELEASES_S3_URL`), or this process's `$DATA_DIR/releases`.
 */
export async function openReleaseStore(
  config: Config,
): Promise<{ releases: ReleaseStore; engine: string; dependency?: DependencyCheck; close(): void }> {
  const s3 = config.releasesS3;
  if (s3 === null) {
    const dir = join(config.dataDir, 'releases');
    return { releases: fsReleaseStore({ dir }), engine: `files ${dir}`, close() {} };
  }
  const { s3ReleaseStore } = await import('../../infra/releases/s3ReleaseStore.ts');
  const store = s3ReleaseStore({
    endpoint: s3.url,
    bucket: s3.bucket,
    prefix: s3.prefix,
    region: s3.region,
    ...(s3.accessKeyId && s3.secretAccessKey ? { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey } : {}),
  });
  // A missing bucket is created (development, CI); a provisioned one costs one HEAD.
  await store.ensureBucket();
  return {
    releases: store,
    engine: `S3 ${redactUrl(s3.url)}/${s3.bucket}/${s3.prefix}`,
    // Not critical: the catalog API answers without it; only snapshot files answer 503.
    dependency: { name: 's3', critical: false, check: () => store.ping() },
    close: () => store.close(),
  };
}

export async function openAdapters(config: Config, logger: Logger): Promise<Adapters> {
  const { dataDir } = config;
  const { eventStore, engine: events } = await openEventStore(config);

  const dependencies: DependencyCheck[] = [];
  let bus: ObservationBus;
  let observations: string;
  let localInbox: LmdbInbox | undefined;
  if (config.kafkaBrokers) {
    const { kafkaObservationBus } = await import('../../infra/kafka/observationBus.ts');
    const kafka = kafkaObservationBus({ brokers: config.kafkaBrokers, topicPrefix: config.kafkaTopicPrefix, logger });
    bus = kafka;
    observations = `Kafka ${config.kafkaBrokers.join(',')}`;
    dependencies.push({ name: 'kafka', critical: true, check: () => kafka.ping() });
  } else {
    localInbox = lmdbInbox({ dataDir, retentionMs: config.inboxRetentionHours * 3_600_000 });
    bus = localInbox;
    observations = `local inbox ${dataDir}`;
  }

  const { readStore, engine: readModels } = await openReadStore(config);
  // One read by key through the adapter: the cheapest round trip the port offers.
  if (config.mongodbUrl) dependencies.push({ name: 'mongodb', critical: true, check: () => readStore.getCheckpoint('_dependency-check') });

  let search: SearchIndex;
  let searchEngine: string;
  const searchInProcess = !config.opensearchUrl;
  if (config.opensearchUrl) {
    const { openSearchIndex } = await import('../../infra/opensearch/searchIndex.ts');
    search = await openSearchIndex({ url: config.opensearchUrl, indexPrefix: config.opensearchIndexPrefix, logger });
    searchEngine = `OpenSearch ${redactUrl(config.opensearchUrl)}`;
    const index = search;
    dependencies.push({ name: 'opensearch', critical: true, check: () => index.count() });
  } else {
    search = inProcessSearchIndex();
    searchEngine = 'in-process index';
  }

  return {
    eventStore,
    bus,
    readStore,
    search,
    searchInProcess,
    searchFeedCheckpoint: searchInProcess ? null : searchFeedCheckpoint(config.opensearchIndexPrefix),
    ...(localInbox ? { localInbox } : {}),
    ingestGroup: config.ingestGroup,
    projectionParallelism: projectionParallelism(config),
    projectionBatchSize: projectionBatchSize(config),
    engines: { events, observations, readModels, search: searchEngine },
    dependencies,
    async close() {
      await Promise.allSettled([bus.close(), search.close()]);
      await Promise.allSettled([eventStore.close(), readStore.close()]);
    },
  };
}
