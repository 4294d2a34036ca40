/**
 * `API_WORKERS=N` (N > 1): `marquee start` serves the API from N processes (node:cluster, one
 * listening port shared by the workers) over the same stores, so the API uses every core.
 *
 * The primary keeps every other role (ingest, projections, the scheduler, the sample load) and
 * serves no request. Each worker opens the stores itself and serves the API only:
 * - readiness and health: the primary sends its report (ready, every loop and dependency) to
 *   each worker twice a second, and a worker's /readyz and /metrics show it beside the worker's
 *   own breakers (MongoDB, OpenSearch), so /readyz names a failing loop in whichever worker
 *   answers;
 * - search: an in-process index lives in one process's memory, so each worker keeps its own,
 *   refilled from the `search` read model once the primary is ready and then fed by its own
 *   search feed (in-memory checkpoint), as the primary's index is. OpenSearch is shared as is;
 * - rate limits: without REDIS_URL each worker counts in its own memory, so a key gets up to N
 *   times its limit across the workers; set REDIS_URL to share the counters;
 * - response caches: each worker keeps its own; answers are stamped by the read models'
 *   checkpoints (services/api/responseCache.ts), so none can be stale.
 * A worker that dies is forked again after a second.
 */
import cluster, { type Worker } from 'node:cluster';
import type { ApiKeyStore, Clock } from '../../contracts/ports.ts';
import { startApi, type RunningApi } from '../api/server.ts';
import type { LinkTokenCodec, SnapshotRoutes } from '../api/types.ts';
import type { Adapters } from '../shared/adapters.ts';
import type { redisClient } from '../../infra/redis/client.ts';
import { createLinkTokens, linkKeysFromEnv } from '../links/linkTokens.ts';
import { openAdapters, openApiKeyStore, openRateLimitRedis, openReleaseStore } from '../shared/adapters.ts';
import type { Config } from '../shared/config.ts';
import { guarded, watchDependencies } from '../shared/dependencies.ts';
import { Health, type HealthReport } from '../shared/health.ts';
import type { Logger } from '../shared/logger.ts';
import { SearchFeed } from '../shared/searchFeed.ts';
import { createSnapshotRoutes } from '../snapshot/routes.ts';
import { loadSigningKey } from '../snapshot/signing.ts';
import { refillSearch } from './pipeline.ts';

/** Marks a forked API worker (read back as `Config.isApiWorker`). */
const WORKER_ENV = 'MARQUEE_API_WORKER';
const HEALTH_MESSAGE = 'marquee-health';

interface HealthMessage {
  type: typeof HEALTH_MESSAGE;
  report: HealthReport;
}

export interface ServeApiParts {
  adapters: Adapters;
  apiKeys: ApiKeyStore;
  dependencies: ReturnType<typeof watchDependencies>;
  redis: ReturnType<typeof redisClient> | undefined;
  snapshots: SnapshotRoutes;
  linkTokens: LinkTokenCodec;
  clock: Clock;
  logger: Logger;
  health: Health;
  ready: () => boolean;
}

/** The API of `marquee start`, in its own process or in each API worker, on the configured port. */
export function serveApi(config: Config, parts: ServeApiParts): Promise<RunningApi> {
  const { adapters, apiKeys, dependencies, redis } = parts;
  return startApi({
    snapshots: parts.snapshots,
    port: config.port,
    host: config.host,
    // The API's reads go through the breakers (an outage answers 503 within 2 s); the
    // pipeline keeps the bare adapters, whose long batches a request deadline must not cut.
    readStore: guarded(adapters.readStore, dependencies.get('mongodb')),
    apiKeys: guarded(apiKeys, dependencies.get('mongodb')),
    search: guarded(adapters.search, dependencies.get('opensearch')),
    eventStore: adapters.eventStore,
    linkTokens: parts.linkTokens,
    clock: parts.clock,
    logger: parts.logger,
    imageBase: config.imageBase,
    trustedProxies: config.trustedProxies,
    rateLimit: {
      perMinute: config.rateLimitPerMinute,
      goPerMinute: config.goRateLimitPerMinute,
      ...(redis ? { redis, redisDependency: dependencies.get('redis') } : {}),
    },
    ready: parts.ready,
    health: parts.health,
  });
}

/** True in a process forked by `forkApiWorkers`. */
export function isApiWorker(config: Config): boolean {
  return cluster.isWorker && config.isApiWorker;
}

/** Forks `count` API workers and keeps them told of the primary's health; `stop` ends them. */
export function forkApiWorkers(count: number, health: Health, ready: () => boolean, logger: Logger): { stop(): Promise<void> } {
  let stopping = false;
  const workers = new Set<Worker>();
  const fork = () => {
    const worker = cluster.fork({ [WORKER_ENV]: '1' });
    workers.add(worker);
    worker.once('exit', (code, signal) => {
      workers.delete(worker);
      if (stopping) return;
      logger.error(`API worker ${worker.process.pid} exited (${signal ?? code}); forking another`);
      setTimeout(() => {
        if (!stopping) fork();
      }, 1000).unref();
    });
  };
  for (let i = 0; i < count; i += 1) fork();
  const tell = setInterval(() => {
    const message: HealthMessage = { type: HEALTH_MESSAGE, report: health.report(ready()) };
    for (const worker of workers) if (worker.isConnected()) worker.send(message);
  }, 500);
  return {
    async stop() {
      stopping = true;
      clearInterval(tell);
      await Promise.all([...workers].map((worker) => new Promise<void>((resolve) => {
        if (worker.isDead()) return resolve();
        worker.once('exit', () => resolve());
        worker.process.kill('SIGTERM');
      })));
    },
  };
}

/** The body of a forked API worker: the API over the configured stores until SIGTERM. */
export async function runApiWorker(config: Config, logger: Logger, clock: Clock, options: { sample: boolean }): Promise<void> {
  const linkTokens = createLinkTokens({ keys: linkKeysFromEnv({ LINK_TOKEN_KEYS: config.linkTokenKeys ?? undefined }, { development: options.sample }) });
  const signingKey = await loadSigningKey(config.downloadSigningKey, config.dataDir, { development: options.sample });
  const adapters = await openAdapters(config, logger);
  const health = new Health(() => clock.now());
  // Only the breakers of what this process reads; the primary reports the rest.
  const { releases, dependency: releasesDependency, close: closeReleases } = await openReleaseStore(config);
  const { apiKeys } = await openApiKeyStore(config);
  const checks = (adapters.dependencies ?? []).filter((d) => d.name === 'mongodb' || d.name === 'opensearch');
  if (releasesDependency) checks.push(releasesDependency);
  const rateLimitRedis = await openRateLimitRedis(config);
  const redis = rateLimitRedis?.redis;
  if (rateLimitRedis) checks.push(rateLimitRedis.dependency);
  const dependencies = watchDependencies(health, checks, logger);
  const own = new Set(checks.map((c) => c.name));

  let primaryReady = false;
  let searchReady = !adapters.searchInProcess;
  const feed = adapters.searchInProcess
    ? new SearchFeed({ eventStore: adapters.eventStore, readStore: adapters.readStore, search: adapters.search, logger, checkpointName: null })
    : null;
  let refilling: Promise<void> | null = null;
  const refill = async () => {
    // Read before the scan: every event up to it is in the documents the scan reads.
    const { resolveCollection } = await import('../shared/readModels.ts');
    const { searchProjection } = await import('../../projections/index.ts');
    const covered = await adapters.readStore.getCheckpoint(await resolveCollection(adapters.readStore, searchProjection));
    await refillSearch(adapters);
    await feed?.jumpTo(covered);
    feed?.start();
    searchReady = true;
  };
  process.on('message', (message: HealthMessage) => {
    if (message?.type !== HEALTH_MESSAGE) return;
    primaryReady = message.report.ready;
    for (const c of message.report.components) {
      if (own.has(c.name)) continue;
      if (health.get(c.name) === undefined) health.register(c.name, c.kind, { critical: c.critical });
      health.set(c.name, c.state, c.lastError ?? undefined);
    }
    if (primaryReady && !searchReady && refilling === null) {
      refilling = refill().catch((err) => {
        logger.error({ err }, 'API worker: refilling the search index failed; retrying');
        refilling = null;
      });
    }
  });

  const snapshots = createSnapshotRoutes({ releases: guarded(releases, dependencies.get('s3')), signingKey, publicBaseUrl: config.publicBaseUrl, clock });
  const api = await serveApi(config, {
    adapters, apiKeys, dependencies, redis, snapshots, linkTokens, clock, logger, health, ready: () => primaryReady && searchReady,
  });
  await new Promise<void>((resolve) => process.once('SIGTERM', () => resolve()));
  await api.close();
  await feed?.stop();
  await dependencies.stop();
  redis?.disconnect();
  await apiKeys.close();
  closeReleases();
  await adapters.close();
  process.exit(0);
}
