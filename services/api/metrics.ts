/**
 * Prometheus metrics: request counts and durations by route template and status, plus the
 * default process metrics, in a registry of this app (several apps in one process stay apart).
 */
import type Koa from 'koa';
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';

export interface ApiMetrics {
  registry: Registry;
  middleware: Koa.Middleware;
}

export function createMetrics(): ApiMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const requests = new Counter({
    name: 'marquee_http_requests_total',
    help: 'HTTP requests by route template, method and status.',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'marquee_http_request_duration_seconds',
    help: 'HTTP request duration by route template and status.',
    labelNames: ['route', 'method', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  const middleware: Koa.Middleware = async (ctx, next) => {
    const start = process.hrtime.bigint();
    try {
      await next();
    } finally {
      // The route template, never the raw path: ids in paths would explode the label set.
      const route = (ctx as unknown as { _matchedRoute?: string })._matchedRoute ?? (ctx.state.route as string | undefined) ?? 'unmatched';
      const labels = { route: String(route), method: ctx.method, status: String(ctx.status) };
      requests.inc(labels);
      duration.observe(labels, Number(process.hrtime.bigint() - start) / 1e9);
    }
  };
  return { registry, middleware };
}
