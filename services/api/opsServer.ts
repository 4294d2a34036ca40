/**
 * The ops port (`OPS_PORT`): `/healthz`, `/readyz` and `/metrics` of a process, answered as the
 * API answers them (probes.ts), for the processes that serve no API. An ingest, projector or
 * scheduler process otherwise has no address: a container orchestrator could not probe it, and
 * Prometheus could not scrape its loops' states, restarts or ingest's counts. Nothing else is
 * served here: no key, no catalog.
 */
import Router from '@koa/router';
import Koa from 'koa';
import { collectDefaultMetrics, Registry } from 'prom-client';
import type { Health } from '../shared/health.ts';
import type { ApiLogger } from './types.ts';
import { errorMiddleware, methodGuard, notFoundFallback } from './errors.ts';
import { probeRoutes } from './probes.ts';
import { listen, type RunningApi } from './server.ts';

export interface OpsDeps {
  health: Health;
  /** Whether the process has finished starting (its catalog loaded, its loops started). */
  ready: () => boolean;
  logger?: ApiLogger;
}

export function createOpsApp({ health, ready, logger }: OpsDeps): Koa {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  health.registerMetrics(registry);
  const router = new Router();
  probeRoutes(router, { health, ready, registry });
  const app = new Koa();
  app.use(errorMiddleware(logger));
  app.use(notFoundFallback());
  // As on the API's port: a path answered with GET refuses other methods with 405 and `Allow`.
  const guard = methodGuard();
  app.use((ctx, next) => (router.match(ctx.path, 'GET').route ? guard(ctx, next) : next()));
  app.use(router.routes());
  return app;
}

export function startOpsServer(options: OpsDeps & { port: number; host: string }): Promise<RunningApi> {
  const { port, host, ...deps } = options;
  return listen(createOpsApp(deps), port, host);
}
