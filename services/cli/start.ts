/**
 * `marquee start [--roles api,ingest,projector,scheduler]`: the roles of this process (default
 * all) on the configured engines, each composed in services/roles/. Any number of processes of
 * each role may share the servers: API processes answer from the shared stores, ingest
 * processes share the observation partitions, one projector at a time holds the projector lease
 * (the others stand by), one scheduler at a time runs each period's job. The API answers at
 * once (`/readyz` 503 while loading).
 *
 * `--sample` (what `npm start` runs) is the development mode: on an empty data directory it
 * loads the sample catalog with a week of simulated daily crawls and rankings, resumes a load
 * cut short, and lets the development keys stand in for unset secrets. Without it the process
 * loads nothing by itself and refuses to start until `LINK_TOKEN_KEYS` and
 * `DOWNLOAD_SIGNING_KEY` are set: the development link key ships in the repository, so a server
 * that accepted it would redirect wherever a stranger's token says.
 */
import { systemClock, type Clock } from '../../contracts/ports.ts';
import { AppError } from '../../contracts/errors.ts';
import { createLinkTokens, linkKeysFromEnv } from '../links/linkTokens.ts';
import { createSnapshotRoutes } from '../snapshot/routes.ts';
import { loadSigningKey } from '../snapshot/signing.ts';
import { moveLegacyApiKeys } from '../api/keys.ts';
import { startOpsServer } from '../api/opsServer.ts';
import { urlHost } from '../api/server.ts';
import { registerIngestMetrics } from '../ingest/metrics.ts';
import { openAdapters, openApiKeyStore, openRateLimitRedis, openReleaseStore } from '../shared/adapters.ts';
import { missingSecret, unsetSecrets, type Config } from '../shared/config.ts';
import { ensureDataDir } from '../shared/dataDir.ts';
import { guarded, watchDependencies, type DependencyCheck } from '../shared/dependencies.ts';
import { LeaseKeeper, SCHEDULER_LEASE } from '../shared/lease.ts';
import { startApiRole, type ApiRole } from '../roles/api.ts';
import { pause, type RoleContext, type RoleHandle } from '../roles/context.ts';
import { projectorLease, registerProjectionMetrics, startProjectorRole } from '../roles/projector.ts';
import { Health, publishHealth } from '../shared/health.ts';
import type { Logger } from '../shared/logger.ts';
import { forkApiWorkers, isApiWorker, runApiWorker } from './apiWorkers.ts';
import { catchUpWhileHeld, createPipeline, ingestSettings } from './pipeline.ts';
import { loadSample, sampleLoadState } from './sample.ts';
import { createScheduler, releaseBuilder } from './schedule.ts';

export interface StartOptions {
  /** `--sample`: load (or finish loading) the sample catalog, and allow the development keys. */
  sample: boolean;
}

/** Renews a lease every quarter of its length until stopped (a long load holds it throughout). */
function keepRenewed(lease: LeaseKeeper): () => void {
  const timer = setInterval(() => void lease.take().catch(() => undefined), lease.ms / 4);
  return () => clearInterval(timer);
}

export async function startCommand(config: Config, logger: Logger, clock: Clock = systemClock, options: StartOptions = { sample: false }): Promise<void> {
  if (isApiWorker(config)) return runApiWorker(config, logger, clock, options);
  const startedAt = Date.now();
  // Refused before anything is opened or loaded: one line naming what is missing.
  const unset = unsetSecrets(config);
  if (unset.length > 0 && !options.sample) throw missingSecret(...unset);
  // Only then is DATA_DIR made: a start refused for its secrets writes nothing.
  ensureDataDir(config.dataDir);
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
  const roles = new Set(config.roles);
  logger.info({ roles: [...roles] }, 'roles');
  // Every loop and dependency of this process, for /readyz, /metrics and `marquee status`.
  const health = new Health(() => clock.now());
  let ready = false;
  // Several API processes share rate-limit counters through Redis; one process may count in memory.
  const rateLimitRedis = roles.has('api') ? await openRateLimitRedis(config) : null;
  const redis = rateLimitRedis?.redis;
  const { releases, engine: releasesEngine, dependency: releasesDependency, close: closeReleases } = await openReleaseStore(config);
  logger.info({ releases: releasesEngine }, 'release store');
  // Each server behind a breaker, checked every second: /readyz names the ones that are down.
  const checks: DependencyCheck[] = [...(adapters.dependencies ?? [])];
  if (releasesDependency) checks.push(releasesDependency);
  if (rateLimitRedis) checks.push(rateLimitRedis.dependency);
  const dependencies = watchDependencies(health, checks, logger);
  const { apiKeys } = await openApiKeyStore(config);
  const movedKeys = await moveLegacyApiKeys(adapters.readStore, apiKeys);
  if (movedKeys > 0) logger.info(`${movedKeys} API keys moved from the read models to the key store`);
  // The start-up catch-up writes read models only while this process holds the projector lease,
  // as the projector role's runner does: two writers of one document can move it backwards on
  // FerretDB, whose position guard is no compare-and-set across writers (lease.ts).
  let projectorLeaseOf: LeaseKeeper | null = null;
  const pipeline = createPipeline(adapters, logger, { health, ...ingestSettings(config, clock), guard: () => projectorLeaseOf?.check() });
  // Ingest's counts and the read models' lag in /metrics, in the processes of those roles (also on the ops port).
  if (roles.has('ingest')) health.exportMetrics((registry) => registerIngestMetrics(registry, () => pipeline.ingest.totals()));
  if (roles.has('projector')) health.exportMetrics((registry) => registerProjectionMetrics(registry, adapters));
  const ctx: RoleContext = { config, logger, clock, adapters, health, pipeline };
  let api: ApiRole | null = null;
  if (roles.has('api') && config.apiWorkers > 1) {
    // API_WORKERS > 1: the API is served by forked workers (apiWorkers.ts), each with its own
    // search feed; this process serves none.
    const workers = forkApiWorkers(config.apiWorkers, health, () => ready, logger);
    api = { api: { url: `http://${urlHost(config.host)}:${config.port}` }, feedSearch: async () => undefined, stop: () => workers.stop() };
  } else if (roles.has('api')) {
    api = await startApiRole(ctx, {
      snapshots: createSnapshotRoutes({ releases: guarded(releases, dependencies.get('s3')), signingKey, publicBaseUrl: config.publicBaseUrl, clock }),
      apiKeys,
      linkTokens,
      dependencies,
      ...(redis ? { redis } : {}),
      ready: () => ready,
    });
  }
  const healthReport = publishHealth(health, adapters.readStore, logger, { ready: () => ready });
  // Probes and metrics of a process that has no API port, answered while it loads too.
  const ops = config.opsPort === null ? null : await startOpsServer({ port: config.opsPort, host: config.host, health, ready: () => ready, logger });
  if (ops) logger.info(`ops server on ${ops.url} (GET /healthz, /readyz, /metrics)`);
  if (api) logger.info(`API listening on ${api.api.url}${config.apiWorkers > 1 ? ` in ${config.apiWorkers} worker processes` : ''} (GET /readyz answers 503 until the catalog is loaded)`);

  projectorLeaseOf = roles.has('projector') ? projectorLease(ctx) : null;
  const abort = new AbortController();
  let consumer: { stop(): Promise<void> } | undefined;
  let projector: RoleHandle | undefined;
  let scheduler: { stop(): Promise<void> } | undefined;
  let loading: Promise<void> = Promise.resolve();
  const closeAll = async () => {
    // Stop producing work first, let the step in flight finish, then close the engines.
    abort.abort();
    await scheduler?.stop();
    await consumer?.stop();
    await projector?.stop();
    await pipeline.stop();
    await loading.catch(() => undefined);
    // Handed over at once (a load cut short holds it too): a standby need not wait for it to expire.
    await projectorLeaseOf?.release().catch((err: unknown) => logger.warn({ err }, 'could not release the projector lease'));
    await healthReport.stop();
    await api?.stop();
    await ops?.close();
    await dependencies.stop();
    redis?.disconnect();
    closeReleases();
    await apiKeys.close();
    await adapters.close();
  };
  const stopping = shutdownOn(logger, closeAll);

  let indexFilled = false;
  loading = (async () => {
    // Only the holder of the projector lease folds at start-up (a load projects too); a process
    // whose lease another projector holds leaves the catching up to it.
    // Waits out the lease of a process killed just before (one lease length): a restart after
    // a crash resumes its own load; a standby beside a live projector stands by after that wait.
    let holds = projectorLeaseOf !== null && (await takeWithin(projectorLeaseOf, projectorLeaseOf.ms + 1000, abort.signal));
    if (projectorLeaseOf !== null && !holds) logger.info('another process holds the projector lease: this one stands by');
    let stopRenewing = holds && projectorLeaseOf ? keepRenewed(projectorLeaseOf) : () => undefined;
    try {
      // A process with these roles loads the sample, once it holds the projector lease.
      const loader = roles.has('ingest') && roles.has('scheduler') && projectorLeaseOf !== null;
      let load = !options.sample ? null : sample.kind === 'empty' ? 0 : sample.kind === 'partial' ? sample.fromDay : null;
      if (options.sample && sample.kind === 'other') logger.info(`${config.dataDir} holds data of its own: the sample is not loaded`);
      if (load !== null && !(loader && holds)) {
        // Another process loads it (the holder of the lease). This one is ready only once the
        // sample is whole, as that one is: ready before, it served a partly loaded catalog as
        // the catalog. If the loader goes (its lease lapses), a process that can load takes over.
        logger.info('the sample is loaded by a process running the ingest, projector and scheduler roles (and holding the projector lease): this one is ready once it is loaded');
        health.note('waiting for the sample, which another process loads');
        load = null;
        for (let waited = 0; !abort.signal.aborted; waited += 1) {
          const state = await sampleLoadState(adapters, config.sampleDays);
          if (state.kind === 'complete' || state.kind === 'other') break;
          if (loader && projectorLeaseOf && (await projectorLeaseOf.take())) {
            holds = true;
            stopRenewing = keepRenewed(projectorLeaseOf);
            load = state.kind === 'empty' ? 0 : state.fromDay;
            logger.info(`the process loading the sample is gone: this one resumes the load at day ${load}`);
            break;
          }
          if (waited > 0 && waited % 30 === 0) {
            const where = state.kind === 'partial' ? `day ${state.fromDay} of ${state.days} loaded` : 'not begun';
            const who = loader
              ? 'the process holding the projector lease loads it, or this one once the lease is free'
              : 'a process started with --sample and the ingest, projector and scheduler roles loads it';
            logger.info(`still waiting for the sample (${where}): ${who}`);
          }
          await pause(1000, abort.signal);
        }
        if (abort.signal.aborted) return;
      }
      if (load !== null) {
        // The load fills the search index itself once every day is in.
        await loadSample({ adapters, pipeline, logger, config, clock, signal: abort.signal, fromDay: load, onDay: (day, days) => health.note(`loading the sample: day ${day} of ${days}`) });
        indexFilled = true;
        return;
      }
      if (roles.has('ingest')) await pipeline.ingestUntilIdle();
      if (holds && projectorLeaseOf && !(await catchUpWhileHeld(pipeline.projections, projectorLeaseOf))) {
        logger.warn('the projector lease was lost during the start-up catch-up: this process stands by');
        return;
      }
      // A shared index is fed by the projector: ready means it has what the read models hold.
      if (holds && !adapters.searchInProcess) await pipeline.searchFeed.catchUp();
    } finally {
      stopRenewing();
    }
  })();
  try {
    await loading;
    if (!abort.signal.aborted) await api?.feedSearch(indexFilled);
    // Loaded before ready, while /readyz still answers 503: the scheduler's first check may
    // build a release at once (see releaseBuilder). Awaited here, before the look at a shutdown
    // below, so nothing is awaited between that look and the loops' start.
    if (roles.has('scheduler') && !abort.signal.aborted) {
      health.note("building this week's release, if it is not published yet");
      await releaseBuilder();
    }
  } catch (err) {
    if (!abort.signal.aborted) {
      // A start that failed (a server that never answered, say) ends: its servers, loops and
      // clients are closed, or a driver retrying its connection keeps the process up, saying nothing more.
      await closeAll().catch((closeErr: unknown) => logger.warn({ err: closeErr }, 'closing after a failed start'));
      throw err;
    }
  }
  if (stopping.requested) {
    await stopping.promise;
    return;
  }

  if (roles.has('ingest')) consumer = pipeline.superviseIngest(health);
  if (projectorLeaseOf) projector = startProjectorRole(ctx, projectorLeaseOf);
  if (roles.has('scheduler')) {
    const lease = new LeaseKeeper(adapters.readStore, SCHEDULER_LEASE, `${health.processName}:${process.hrtime.bigint().toString(36)}`, 15_000);
    scheduler = createScheduler({ adapters, logger, clock, config, releases, linkTokens, lease, health });
  }
  ready = true;
  health.note(null);
  const where = api ? `: ${api.api.url}/v1 (create a key with \`npx marquee keys create --name me\`)` : '';
  logger.info(`ready in ${((Date.now() - startedAt) / 1000).toFixed(1)} s${where}`);
  await stopping.promise;
}

/** Tries to take a lease once a second until `ms` have passed: true once held. */
async function takeWithin(lease: LeaseKeeper, ms: number, signal: AbortSignal): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await lease.take()) return true;
    if (Date.now() >= deadline || signal.aborted) return false;
    await pause(1000, signal);
  }
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

