/**
 * `marquee start`: every role in one process on the configured engines. The API answers at
 * once (`/readyz` 503 while loading).
 *
 * `--sample` (what `npm start` runs) is the development mode: on an empty data directory it
 * loads the sample catalog with a week of simulated daily crawls and rankings, resumes a load
 * cut short, and lets the development keys stand in for unset secrets. Without it the process
 * loads nothing by itself and refuses to start until `LINK_TOKEN_KEYS` and
 * `DOWNLOAD_SIGNING_KEY` are set: the development link key ships in the repository, so a server
 * that accepted it would redirect wherever a stranger's token says.
 */
import { join } from 'node:path';
import { redisClient } from '../../infra/redis/client.ts';
import { fsReleaseStore } from '../../infra/releases/fsReleaseStore.ts';
import { systemClock, type Clock } from '../../contracts/ports.ts';
import { startApi } from '../api/server.ts';
import { AppError } from '../../contracts/errors.ts';
import { createLinkTokens, linkKeysFromEnv } from '../links/linkTokens.ts';
import { createSnapshotRoutes } from '../snapshot/routes.ts';
import { loadSigningKey } from '../snapshot/signing.ts';
import { openAdapters } from '../shared/adapters.ts';
import { missingSecret, unsetSecrets, type Config } from '../shared/config.ts';
import { guarded, watchDependencies, type DependencyCheck } from '../shared/dependencies.ts';
import { Health, publishHealth } from '../shared/health.ts';
import type { Logger } from '../shared/logger.ts';
import { createPipeline, ingestSettings } from './pipeline.ts';
import { loadSample, sampleLoadState } from './sample.ts';
import { createScheduler } from './schedule.ts';

export interface StartOptions {
  /** `--sample`: load (or finish loading) the sample catalog, and allow the development keys. */
  sample: boolean;
}

export async function startCommand(config: Config, logger: Logger, clock: Clock = systemClock, options: StartOptions = { sample: false }): Promise<void> {
  const startedAt = Date.now();
  // Refused before anything is opened or loaded: one line naming what is missing.
  const unset = unsetSecrets(config);
  if (unset.length > 0 && !options.sample) throw missingSecret(...unset);
  if (unset.length > 0) {
    const keys = unset.map((v) => (v === 'LINK_TOKEN_KEYS' ? 'the link-token key shipped in the repository' : `a download-signing key kept in ${config.dataDir}`));
    logger.warn(`development keys in use (--sample): ${keys.join(' and ')}. Never in production: set ${unset.join(' and ')} and start without --sample`);
  }
  const linkTokens = createLinkTokens({ keys: linkKeysFromEnv({ LINK_TOKEN_KEYS: config.linkTokenKeys ?? undefined }, { development: options.sample }) });
  const signingKey = await loadSigningKey(config.downloadSigningKey, config.dataDir, { development: options.sample });
  const adapters = await openAdapters(config, logger);
  const sample = await sampleLoadState(adapters, config.sampleDays);
  if (sample.kind === 'partial' && !options.sample) {
    // Serving it would pass a partial catalog for the whole one; only --sample finishes it.
    await adapters.close();
    throw new AppError('forbidden', `the sample load of ${config.dataDir} stopped at day ${sample.fromDay} of ${sample.days}: finish it with \`marquee start --sample\``);
  }
  logger.info(adapters.engines, 'engines');
  // Every loop and dependency of this process, for /readyz, /metrics and `marquee status`.
  const health = new Health(() => clock.now());
  let ready = false;
  // Several API processes share rate-limit counters through Redis; one process may count in memory.
  const redis = config.redisUrl ? redisClient(config.redisUrl) : undefined;
  // Each server behind a breaker, checked every second: /readyz names the ones that are down.
  const checks: DependencyCheck[] = [...(adapters.dependencies ?? [])];
  if (redis) checks.push({ name: 'redis', critical: false, check: () => redis.ping() });
  const dependencies = watchDependencies(health, checks, logger);
  const releases = fsReleaseStore({ dir: join(config.dataDir, 'releases') });
  const snapshots = createSnapshotRoutes({ releases, signingKey, publicBaseUrl: config.publicBaseUrl, clock });
  const api = await startApi({
    snapshots,
    port: config.port,
    host: config.host,
    // The API's reads go through the breakers (an outage answers 503 within 2 s); the
    // pipeline keeps the bare adapters, whose long batches a request deadline must not cut.
    readStore: guarded(adapters.readStore, dependencies.get('mongodb')),
    search: guarded(adapters.search, dependencies.get('opensearch')),
    eventStore: adapters.eventStore,
    linkTokens,
    clock,
    logger,
    imageBase: config.imageBase,
    rateLimit: {
      perMinute: config.rateLimitPerMinute,
      goPerMinute: config.goRateLimitPerMinute,
      ...(redis ? { redis, redisDependency: dependencies.get('redis') } : {}),
    },
    ready: () => ready,
    health,
  });
  const healthReport = publishHealth(health, adapters.readStore, logger, { ready: () => ready });
  logger.info(`API listening on ${api.url} (GET /readyz answers 503 until the catalog is loaded)`);

  const pipeline = createPipeline(adapters, logger, { health, ...ingestSettings(config, clock) });
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
    await healthReport.stop();
    await api.close();
    await dependencies.stop();
    redis?.disconnect();
    await adapters.close();
  });

  loading = (async () => {
    const load = !options.sample ? null : sample.kind === 'empty' ? 0 : sample.kind === 'partial' ? sample.fromDay : null;
    if (options.sample && sample.kind === 'other') logger.info(`${config.dataDir} holds data of its own: the sample is not loaded`);
    if (load !== null) {
      // The load fills the search index itself once every day is in.
      await loadSample({ adapters, pipeline, logger, config, clock, signal: abort.signal, fromDay: load });
      return;
    }
    if (adapters.searchInProcess) {
      const indexed = await pipeline.refillSearch();
      if (indexed > 0) logger.info(`search index refilled with ${indexed} titles`);
    }
    await pipeline.drain();
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

  consumer = pipeline.superviseIngest(health);
  pipeline.start();
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

