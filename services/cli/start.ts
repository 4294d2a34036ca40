/**
 * `marquee start`: every role in one process on the configured engines. The API answers at
 * once (`/readyz` 503 while loading); on an empty data directory the sample catalog is loaded
 * first with a week of simulated daily crawls and rankings.
 */
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { fsReleaseStore } from '../../infra/releases/fsReleaseStore.ts';
import { systemClock, type Clock } from '../../contracts/ports.ts';
import { startApi } from '../api/server.ts';
import { createLinkTokens, linkKeysFromEnv } from '../links/linkTokens.ts';
import { createSnapshotRoutes } from '../snapshot/routes.ts';
import { loadSigningKey } from '../snapshot/signing.ts';
import { openAdapters } from '../shared/adapters.ts';
import type { Config } from '../shared/config.ts';
import type { Logger } from '../shared/logger.ts';
import { createPipeline, refillSearch } from './pipeline.ts';
import { loadSample, sampleDaysToLoad } from './sample.ts';
import { createScheduler } from './schedule.ts';

export async function startCommand(config: Config, logger: Logger, clock: Clock = systemClock): Promise<void> {
  const startedAt = Date.now();
  const adapters = await openAdapters(config, logger);
  logger.info(adapters.engines, 'engines');
  let ready = false;
  // Several API processes share rate-limit counters through Redis; one process may count in memory.
  const redis = config.redisUrl ? new Redis(config.redisUrl, { lazyConnect: false, maxRetriesPerRequest: 2 }) : undefined;
  const linkTokens = createLinkTokens({ keys: linkKeysFromEnv({ LINK_TOKEN_KEYS: config.linkTokenKeys ?? undefined }) });
  const releases = fsReleaseStore({ dir: join(config.dataDir, 'releases') });
  const snapshots = createSnapshotRoutes({
    releases,
    signingKey: await loadSigningKey(config.downloadSigningKey, config.dataDir),
    publicBaseUrl: config.publicBaseUrl,
    clock,
  });
  const api = await startApi({
    snapshots,
    port: config.port,
    readStore: adapters.readStore,
    search: adapters.search,
    eventStore: adapters.eventStore,
    linkTokens,
    clock,
    logger,
    imageBase: config.imageBase,
    rateLimit: { perMinute: config.rateLimitPerMinute, goPerMinute: config.goRateLimitPerMinute, ...(redis ? { redis } : {}) },
    ready: () => ready,
  });
  logger.info(`API listening on ${api.url} (GET /readyz answers 503 until the catalog is loaded)`);

  const pipeline = createPipeline(adapters, logger);
  const abort = new AbortController();
  let consumer: { stop(): Promise<void> } | undefined;
  let scheduler: { stop(): Promise<void> } | undefined;
  let loading: Promise<void> = Promise.resolve();
  const stopping = shutdownOn(logger, async () => {
    // Stop producing work first, let the step in flight finish, then close the engines.
    abort.abort();
    await scheduler?.stop();
    await consumer?.stop();
    await pipeline.stop();
    await loading.catch(() => undefined);
    await api.close();
    redis?.disconnect();
    await adapters.close();
  });

  loading = (async () => {
    if (adapters.searchInProcess) {
      const indexed = await refillSearch(adapters);
      if (indexed > 0) logger.info(`search index refilled with ${indexed} titles`);
    }
    const fromDay = await sampleDaysToLoad(adapters, config.sampleDays);
    if (fromDay !== null) await loadSample({ adapters, pipeline, logger, config, clock, signal: abort.signal, fromDay });
    else await pipeline.drain();
  })();
  try {
    await loading;
  } catch (err) {
    if (!abort.signal.aborted) throw err;
  }
  if (stopping.requested) {
    await stopping.promise;
    return;
  }

  consumer = pipeline.ingest.run({ untilIdle: false, batchSize: 2000, group: adapters.ingestGroup ?? 'ingest' });
  pipeline.projections.start();
  scheduler = createScheduler({ adapters, pipeline, logger, clock, config, releases, linkTokens });
  ready = true;
  logger.info(`ready in ${((Date.now() - startedAt) / 1000).toFixed(1)} s: ${api.url}/v1 (create a key with \`npx marquee keys create --name me\`)`);
  await stopping.promise;
}

function shutdownOn(logger: Logger, close: () => Promise<void>) {
  const state = { requested: false, promise: Promise.resolve() };
  let resolve!: () => void;
  state.promise = new Promise<void>((r) => (resolve = r));
  const onSignal = (signal: string) => {
    if (state.requested) return;
    state.requested = true;
    logger.info(`${signal}: shutting down`);
    close()
      .catch((err) => logger.error({ err }, 'shutdown failed'))
      .finally(() => resolve());
  };
  process.once('SIGINT', () => onSignal('SIGINT'));
  process.once('SIGTERM', () => onSignal('SIGTERM'));
  return state;
}

