/**
 * The Koa application of the read-only API: /v1 (auth, rate limit, ETag, the endpoints of
 * endpoints.ts), the link redirect /go, probes and metrics. Every error goes through the one
 * error middleware; every parameter through the one definition per endpoint.
 */
import Router from '@koa/router';
import Koa from 'koa';
import { AppError } from '../../contracts/errors.ts';
import { ALL_PROJECTIONS } from '../../projections/index.ts';
import { authenticate, requireKey } from './auth.ts';
import { createCatalog, trackingCatalog, type ModelName } from './catalog.ts';
import { endpoints } from './endpoints.ts';
import { errorAnswer, errorMiddleware, methodGuard, notFoundFallback } from './errors.ts';
import { etagMiddleware } from './etag.ts';
import { createKeyLookup } from './keys.ts';
import { cachedLinkTokens } from './linkTokenCache.ts';
import { createMetrics } from './metrics.ts';
import { buildOpenApi } from './openapi.ts';
import { parseParams, type ParsedParams } from './params.ts';
import { isReady, probeRoutes } from './probes.ts';
import { withHotPath, type LeanRoute } from './hotPath.ts';
import { ExpiringMap, MemoryLimiter, rateLimiter } from './rateLimit.ts';
import { renderJson, renderTimed, ResponseCache, sendable, type KeptBody } from './responseCache.ts';
import type { ApiDeps, Endpoint } from './types.ts';

export type { ApiDeps } from './types.ts';

/** Runs middleware in order, like koa-compose (not a direct dependency of ours). */
function chain(middleware: Koa.Middleware[]): Koa.Middleware {
  return (ctx, next) => {
    const run = (i: number): Promise<void> => {
      const m = middleware[i];
      return m ? Promise.resolve(m(ctx, () => run(i + 1))) : Promise.resolve(next());
    };
    return run(0);
  };
}

export const DEFAULT_IMAGE_BASE = 'https://images.marquee.example';

export interface ApiApp extends Koa {
  /** The rate limiter's in-memory store (absent with Redis); exposed for tests and metrics. */
  rateLimitStore?: ExpiringMap;
  /** The OpenAPI document this app serves. */
  openapi: Record<string, unknown>;
  /** Rendered answers kept per read-model state; absent when turned off. */
  responseCache?: ResponseCache;
  /** Answers the hot path served (hotPath.ts); absent when it is off (no cache, or Redis counters). */
  hotPath?: { served: number; lean?: number };
}

export function createApp(deps: ApiDeps): ApiApp {
  const app = new Koa() as ApiApp;
  // Koa reads the leftmost X-Forwarded-For entry, which the client writes, unless maxIpsCount
  // keeps only the entries the trusted proxies appended.
  app.proxy = (deps.trustedProxies ?? 0) > 0;
  app.maxIpsCount = deps.trustedProxies ?? 0;
  const imageBase = deps.imageBase ?? DEFAULT_IMAGE_BASE;
  const versions: Partial<Record<ModelName, number>> = {};
  for (const p of ALL_PROJECTIONS) versions[p.name as ModelName] = p.version;
  const catalog = createCatalog(deps.readStore, { versions: { ...versions, ...deps.modelVersions } });
  const metrics = createMetrics();
  deps.health?.registerMetrics(metrics.registry);
  // Handlers see the link-token codec with its (deterministic) tokens remembered per URL.
  const handlerDeps: ApiDeps = { ...deps, linkTokens: cachedLinkTokens(deps.linkTokens) };

  let openapi: Record<string, unknown> = {};
  const list: Endpoint[] = endpoints(() => openapi);
  openapi = buildOpenApi(list, { version: deps.version ?? '0.1.0' });
  app.openapi = openapi;

  const memory = deps.rateLimit?.redis ? undefined : new ExpiringMap();
  if (memory) app.rateLimitStore = memory;
  const keyLookup = createKeyLookup(deps.apiKeys, {
    ttlMs: deps.keyCacheMs ?? 1000,
    clock: deps.clock,
    onTouchError: (err) => deps.logger?.warn({ err }, 'recording the last use of an API key failed'),
  });
  const perMinute = deps.rateLimit?.perMinute ?? 60;
  const v1 = chain([
    authenticate(keyLookup),
    rateLimiter({
      max: perMinute,
      windowMs: deps.rateLimit?.windowMs ?? 60_000,
      redis: deps.rateLimit?.redis,
      redisDependency: deps.rateLimit?.redisDependency,
      memory,
    }),
    methodGuard(),
    etagMiddleware(),
  ]);
  // `/go` needs no key, so it is limited per client address: a cap on what one client can make
  // the server decrypt (or guess at). A bucket of its own, so following links spends no /v1 quota.
  const goLimiter = rateLimiter({
    max: deps.rateLimit?.goPerMinute ?? 120,
    windowMs: deps.rateLimit?.windowMs ?? 60_000,
    redis: deps.rateLimit?.redis,
    redisDependency: deps.rateLimit?.redisDependency,
    namespace: 'marquee-go-ratelimit',
    byAddress: true,
  });

  // Rendered answers per read-model state (responseCache.ts); `responseCache: false` turns it off.
  const responses = deps.responseCache === false ? undefined : new ResponseCache(deps.responseCache);
  if (responses) app.responseCache = responses;
  /** Per endpoint, the read models its answers have read so far: what their stamp covers. */
  const reads = new Map<string, ModelName[]>();
  const readsOf = (operationId: string): readonly ModelName[] => reads.get(operationId) ?? [];
  const learn = (operationId: string, models: ModelName[]): void => {
    const known = reads.get(operationId) ?? [];
    reads.set(operationId, [...known, ...models.filter((m) => !known.includes(m))]);
  };
  const stateOf = new Map(list.flatMap((e) => (e.stateOf ? [[e.operationId, e.stateOf] as const] : [])));
  /** What an endpoint's kept answers are valid for: the stamp of its read models and its other state (Endpoint.stateOf). */
  const stampOf = async (operationId: string, models: readonly ModelName[]): Promise<string> => {
    const stamp = await catalog.stamp(models);
    const other = stateOf.get(operationId)?.(handlerDeps);
    return other === undefined ? stamp : `${stamp}\n${other}`;
  };

  const cacheableFor = (e: Endpoint, params: ParsedParams): boolean =>
    responses !== undefined &&
    (typeof e.cacheable === 'function' ? e.cacheable(params) : e.cacheable === true) &&
    (e.stateOf === undefined || e.stateOf(handlerDeps) !== undefined);
  /**
   * A cacheable endpoint's answer to a checked request: the one kept for the stamp read now, or
   * rendered (and kept when its stamp covered every model it read); `url` then finds it before any
   * parsing (hotPath.ts). Undefined when the handler wrote the response on ctx itself.
   */
  const keptAnswer = async (e: Endpoint, params: ParsedParams, ctx: Koa.Context, url: string, route: string): Promise<KeptBody | undefined> => {
    const cache = responses as ResponseCache;
    // Parameters in their definition order: one key per distinct answer.
    const key = `${e.operationId}\n${JSON.stringify(params)}`;
    // A copy: another request may learn a model while this one's stamp is being read.
    const models = [...readsOf(e.operationId)];
    const stamp = await stampOf(e.operationId, models);
    let kept: KeptBody | undefined = cache.get(key, stamp)?.body;
    if (kept === undefined) {
      const used = new Set<ModelName>();
      const body = await e.handler({ params, deps: handlerDeps, catalog: trackingCatalog(catalog, used), ctx, imageBase });
      if (body === undefined) return undefined;
      kept = e.timeField === undefined ? renderJson(body) : renderTimed(body as Record<string, unknown>, e.timeField);
      const unstamped = [...used].filter((m) => !models.includes(m));
      if (unstamped.length === 0) cache.set(key, stamp, kept, { operationId: e.operationId, route });
      else learn(e.operationId, unstamped);
    }
    cache.alias(url, key);
    return kept;
  };

  const router = new Router();
  for (const e of list) {
    router.get(e.path, async (ctx) => {
      const started = performance.now();
      requireKey(ctx, e.auth);
      if (e.needsCatalog && !(await isReady(deps.ready))) {
        throw new AppError('unavailable', 'The catalog is still being built.');
      }
      const params = parseParams(e.params, ctx.query, ctx.params as Record<string, string | undefined>);
      if (!cacheableFor(e, params)) {
        const body = await e.handler({ params, deps: handlerDeps, catalog, ctx, imageBase });
        if (body !== undefined) {
          ctx.status = 200;
          ctx.body = body;
        }
        return;
      }
      const route = (ctx as unknown as { _matchedRoute?: string })._matchedRoute ?? e.path;
      const kept = await keptAnswer(e, params, ctx, ctx.url, route);
      if (kept === undefined) return;
      const rendered = sendable(kept, started);
      ctx.status = 200;
      ctx.body = rendered.bytes;
      ctx.state.rendered = rendered;
    });
  }
  /**
   * The endpoints the hot path answers without Koa when no answer is kept for the URL (Endpoint.lean):
   * what the route above does once the key, the limit and the readiness are checked.
   */
  const lean = new Map<string, LeanRoute>();
  for (const e of list) {
    if (!e.lean) continue;
    lean.set(e.path, {
      route: e.path,
      params: e.params,
      async answer(params, url, started) {
        // A lean handler never reads ctx (Endpoint.lean): there is none on this path.
        const ctx = undefined as unknown as Koa.Context;
        if (!cacheableFor(e, params)) {
          const body = await e.handler({ params, deps: handlerDeps, catalog, ctx, imageBase });
          if (body === undefined) throw new Error(`${e.operationId} answered no body on the lean path`);
          return renderJson(body);
        }
        const kept = await keptAnswer(e, params, ctx, url, e.path);
        if (kept === undefined) throw new Error(`${e.operationId} answered no body on the lean path`);
        return sendable(kept, started);
      },
    });
  }
  probeRoutes(router, { ...(deps.health ? { health: deps.health } : {}), ...(deps.ready ? { ready: deps.ready } : {}), registry: metrics.registry });

  app.use(metrics.middleware);
  app.use(errorMiddleware(deps.logger));
  app.use(notFoundFallback());
  // Outside /v1 (probes, metrics, /go) a path that a route answers with GET refuses other
  // methods with 405 and `Allow`, as /v1 does; a path nothing answers stays 404. /go is also
  // rate limited per client address.
  const guard = methodGuard();
  app.use((ctx, next) => {
    if (ctx.path === '/v1' || ctx.path.startsWith('/v1/')) return v1(ctx, next);
    if (!router.match(ctx.path, 'GET').route) return next();
    return ctx.path.startsWith('/go/') ? guard(ctx, () => goLimiter(ctx, next)) : guard(ctx, next);
  });
  app.use(router.routes());

  // Kept answers of /v1 are served before Koa builds a context (hotPath.ts), with this process's
  // counters; Redis counters are shared and asynchronous, so with Redis every request is Koa's.
  if (responses && memory) {
    app.hotPath = { served: 0, lean: 0 };
    const hot = {
      responses, stamp: (operationId: string) => stampOf(operationId, readsOf(operationId)), keys: keyLookup, metrics, ready: deps.ready, max: perMinute, stats: app.hotPath,
      limiter: new MemoryLimiter({ max: perMinute, windowMs: deps.rateLimit?.windowMs ?? 60_000, store: memory }),
      lean: (path: string) => lean.get(path), fail: (err: unknown, path: string) => errorAnswer(err, path, deps.logger),
    };
    const koaListener = app.callback.bind(app);
    app.callback = () => withHotPath(hot, koaListener()) as ReturnType<Koa['callback']>;
  }
  return app;
}
