/**
 * Prometheus metrics: request counts and durations by route template and status, plus the
 * default process metrics, in a registry of this app (several apps in one process stay apart).
 */
import type Koa from 'koa';
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';

export interface ApiMetrics {
  registry: Registry;
  middleware: Koa.Middleware;
  /** Counts one answered request (what the middleware does; the hot path of app.ts calls it directly). */
  record(route: string, method: string, status: number, seconds: number): void;
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
  // The labelled children of both metrics, per route, method and status: one lookup per
  // request instead of a label object and its validation for each metric. The set is as
  // bounded as the label set of the metrics themselves.
  const children = new Map<string, { inc: () => void; observe: (seconds: number) => void }>();
  function childrenOf(route: string, method: string, status: number) {
    const key = `${route}\n${method}\n${status}`;
    let found = children.get(key);
    if (!found) {
      const values = [route, method, String(status)] as const;
      const counter = requests.labels(...values);
      const histogram = duration.labels(...values);
      found = { inc: () => counter.inc(), observe: (seconds) => histogram.observe(seconds) };
      children.set(key, found);
    }
    return found;
  }
  function record(route: string, method: string, status: number, seconds: number): void {
    const child = childrenOf(route, method, status);
    child.inc();
    child.observe(seconds);
  }
  const middleware: Koa.Middleware = async (ctx, next) => {
    const start = performance.now();
    try {
      await next();
    } finally {
      // The route template, never the raw path: ids in paths would explode the label set.
      const route = (ctx as unknown as { _matchedRoute?: string })._matchedRoute ?? (ctx.state.route as string | undefined) ?? 'unmatched';
      record(String(route), ctx.method, ctx.status, (performance.now() - start) / 1000);
    }
  };
  return { registry, middleware, record };
}
