/**
 * `/healthz`, `/readyz` and `/metrics`: the API's (app.ts), and the same three on the ops port of
 * a process that serves no API (opsServer.ts), so an orchestrator probes an ingest, projector or
 * scheduler process as it probes an API one.
 */
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type Router from '@koa/router';
import type { Registry } from 'prom-client';
import { AppError } from '../../contracts/errors.ts';
import type { Health } from '../shared/health.ts';
import { GZIP_LEVEL, GZIP_MIN_BYTES, wantsGzip } from './compression.ts';

const gzipAsync = promisify(gzip);

export interface ProbeDeps {
  health?: Health;
  /** Whether the catalog is loaded (false while a first start loads it); absent = always. */
  ready?: () => boolean | Promise<boolean>;
  registry: Registry;
}

/** Whether `ready` says the catalog is loaded; a `ready` that throws counts as not. */
export async function isReady(ready: ProbeDeps['ready']): Promise<boolean> {
  if (!ready) return true;
  try {
    return (await ready()) === true;
  } catch {
    return false;
  }
}

export function probeRoutes(router: Router, { health, ready, registry }: ProbeDeps): void {
  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  router.get('/readyz', async (ctx) => {
    if (!(await isReady(ready))) throw new AppError('unavailable', 'Not ready: the catalog is still being built.');
    // Every critical loop and dependency of the process must be running; the answer names those that are not.
    const failing = health?.failing() ?? [];
    // An operator's probe, not a client's answer: unlike other 5xx bodies it names what is down.
    if (failing.length > 0) {
      ctx.status = 503;
      ctx.set('Retry-After', '5');
      ctx.body = {
        error: `Not ready: ${failing.map((c) => `${c.name} is ${c.state.replace('_', ' ')}`).join(', ')}.`,
        code: 'unavailable',
        details: { components: failing.map(({ name, state, lastError }) => ({ name, state, last_error: lastError })) },
      };
      return;
    }
    ctx.body = { status: 'ready', components: health?.report(true).components.map(({ name, state }) => ({ name, state })) ?? [] };
  });
  router.get('/metrics', async (ctx) => {
    const text = await registry.metrics();
    ctx.type = registry.contentType;
    // Tens of kilobytes of repetitive text per scrape (38 KB on the sample after a few routes, 4 KB gzipped);
    // Prometheus asks for gzip. The /v1 answers' level, off the event loop: a scrape must not
    // delay a /v1 answer.
    ctx.vary('Accept-Encoding');
    if (Buffer.byteLength(text) >= GZIP_MIN_BYTES && wantsGzip(ctx.req)) {
      ctx.set('Content-Encoding', 'gzip');
      ctx.body = await gzipAsync(text, { level: GZIP_LEVEL });
    } else ctx.body = text;
  });
}
