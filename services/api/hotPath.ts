/**
 * The hot path of a lookup: a GET under /v1 whose URL was answered with a rendered answer still
 * kept (responseCache.ts), from a caller whose key is in the key cache and who is under its
 * limit, answered from the raw request before Koa builds a context. It costs what a lookup
 * must: a map lookup for the URL, the key check, the stamp of what the answer was made from
 * (the freshness guarantee: one read of its read models' checkpoints, and the generation of an
 * in-process search index), the rate-limit counter, a metrics counter and writing the prepared
 * bytes with their ETag (a search answer completed with its processing time).
 *
 * Anything else goes to Koa, untouched, which answers it as always (and would answer this one
 * the same, headers included): another method, no kept answer for the URL or a changed stamp,
 * a conditional request (the 304 is Koa's), no key or a key not cached yet, a caller at its
 * limit (Koa counts it again, which changes nothing for a refused request, and answers the 429),
 * a catalog not ready, a read that fails, Redis counters (shared, asynchronous: Koa's path).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { keyOfHeaders } from './auth.ts';
import type { KeyLookup } from './keys.ts';
import type { ApiMetrics } from './metrics.ts';
import type { MemoryLimiter } from './rateLimit.ts';
import { sendable, type KeptAnswer, type ResponseCache } from './responseCache.ts';

export type RequestListener = (req: IncomingMessage, res: ServerResponse) => void;

export interface HotPathOptions {
  responses: ResponseCache;
  /** The state an endpoint's answers are kept for now (its read models' checkpoints, ...), as the route stamps them. */
  stamp(operationId: string): Promise<string>;
  keys: Pick<KeyLookup, 'cached'>;
  /** The /v1 counters, the very ones Koa's rate limiter counts in. */
  limiter: MemoryLimiter;
  /** RateLimit-Limit. */
  max: number;
  metrics: Pick<ApiMetrics, 'record'>;
  ready?: () => boolean | Promise<boolean>;
  /** Answers served here, counted (tests and the bench tell the paths apart by it). */
  stats?: { served: number };
}

/** `fallback` (Koa's listener), preceded by the hot path for kept answers. */
export function withHotPath(options: HotPathOptions, fallback: RequestListener): RequestListener {
  const { responses, stamp, keys, limiter, metrics, ready } = options;
  const total = String(options.max);

  function answer(res: ServerResponse, kept: KeptAnswer, keyId: string, start: number): boolean {
    const counted = limiter.take(keyId);
    if (!counted.allowed) return false;
    const body = sendable(kept.body, start);
    res.writeHead(200, {
      'RateLimit-Remaining': String(counted.remaining),
      'RateLimit-Reset': String(counted.reset),
      'RateLimit-Limit': total,
      ETag: body.tag,
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': body.bytes.length,
    });
    res.end(body.bytes);
    metrics.record(kept.route, 'GET', 200, (performance.now() - start) / 1000);
    if (options.stats) options.stats.served += 1;
    return true;
  }

  /** Readiness known synchronously; a promise (an asynchronous check) is left to Koa's path. */
  function readyNow(): boolean {
    if (ready === undefined) return true;
    const now = ready();
    if (typeof now === 'object') now.catch(() => {});
    return now === true;
  }

  return (req, res) => {
    const start = performance.now();
    const url = req.url;
    if (req.method !== 'GET' || url === undefined || !url.startsWith('/v1/')) return fallback(req, res);
    const known = responses.byUrl(url);
    const headers = req.headers;
    if (known === undefined || headers['if-none-match'] !== undefined) return fallback(req, res);
    const presented = keyOfHeaders(headers.authorization, headers['x-api-key']);
    const key = presented === undefined ? undefined : keys.cached(presented);
    if (!key || !readyNow()) return fallback(req, res);
    const keyId = `key:${key.id}`;
    stamp(known.origin.operationId).then(
      (now) => {
        const kept = responses.get(known.key, now);
        if (kept === undefined || !answer(res, kept, keyId, start)) fallback(req, res);
      },
      // An outage: Koa's path answers it (503) as for any other request.
      () => fallback(req, res),
    );
  };
}
