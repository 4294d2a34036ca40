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
 *
 * A lean endpoint (Endpoint.lean: search) with no answer kept for the URL is answered here too,
 * as its route would: the query parsed by Koa's own parser and checked by the endpoint's
 * parameter definitions (an invalid one goes to Koa, which counts it and answers the 400), the
 * request counted, the answer made (or found kept under other parameters) and kept, and an
 * error after the count answered as the error middleware answers it (errors.ts errorAnswer),
 * with the RateLimit headers. Most search queries are new: Koa's own work per request (its
 * context, the middleware chain, the router) cost about as much as the engine's.
 */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { keyOfHeaders } from './auth.ts';
import { compressible, encodedBody, wantsGzip } from './compression.ts';
import type { ErrorAnswer } from './errors.ts';
import type { KeyLookup } from './keys.ts';
import type { ApiMetrics } from './metrics.ts';
import { parseParams, type ParamDef, type ParsedParams } from './params.ts';
import type { Counted, MemoryLimiter } from './rateLimit.ts';
import { sendable, type KeptAnswer, type RenderedBody, type ResponseCache } from './responseCache.ts';

/** Koa's own query parser (what `ctx.query` gives the route), so both paths read a query alike. */
const koaQuery = createRequire(import.meta.url)('koa/lib/search-params.js') as {
  parse(query: string): Record<string, string | string[] | undefined>;
};
/** The headers Koa's etag middleware adds to an answer that may be gzipped, as it writes them. */
const VARY = { Vary: 'Accept-Encoding' };
const GZIPPED = { Vary: 'Accept-Encoding', 'Content-Encoding': 'gzip' };
/** Characters after which parseurl (Koa's `ctx.path`) leaves its fast split for url.parse: such URLs go to Koa. */
const UNUSUAL_URL = /[\t\n\f\r #\u00a0\ufeff]/;

/** A lean endpoint, as app.ts prepares it: its route's work once key, limit and readiness are checked. */
export interface LeanRoute {
  /** The route template (the metrics label). */
  route: string;
  params: ParamDef[];
  /** The answer's bytes and ETag (kept for `url`); throws what the route would throw. */
  answer(params: ParsedParams, url: string, started: number): Promise<RenderedBody>;
}

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
  /** Answers served here, counted (tests and the bench tell the paths apart by it); `lean`: those of lean endpoints without a kept answer. */
  stats?: { served: number; lean?: number };
  /** The lean endpoint at a path, if any. */
  lean?: (path: string) => LeanRoute | undefined;
  /** The error middleware's answer to an error (errors.ts errorAnswer); required with `lean`. */
  fail?: (err: unknown, path: string) => ErrorAnswer;
}

/** `fallback` (Koa's listener), preceded by the hot path for kept answers. */
export function withHotPath(options: HotPathOptions, fallback: RequestListener): RequestListener {
  const { responses, stamp, keys, limiter, metrics, ready } = options;
  const total = String(options.max);

  /** Writes JSON bytes with the RateLimit headers (and an ETag, or an error's headers), as Koa's middleware would. */
  function send(res: ServerResponse, status: number, counted: Counted, bytes: Buffer, tag: string | undefined, extra?: Record<string, string>): void {
    const headers: OutgoingHttpHeaders = {
      'RateLimit-Remaining': String(counted.remaining),
      'RateLimit-Reset': String(counted.reset),
      'RateLimit-Limit': total,
    };
    if (tag !== undefined) headers.ETag = tag;
    if (extra !== undefined) Object.assign(headers, extra);
    headers['Content-Type'] = 'application/json; charset=utf-8';
    headers['Content-Length'] = bytes.length;
    res.writeHead(status, headers);
    res.end(bytes);
  }

  /** Writes a 200, as Koa's etag middleware completes it (gzipped when the client takes it). */
  function write(req: IncomingMessage, res: ServerResponse, counted: Counted, body: RenderedBody, route: string, start: number): void {
    if (!compressible(body)) send(res, 200, counted, body.bytes, body.tag);
    else {
      const encoded = encodedBody(body, wantsGzip(req));
      send(res, 200, counted, encoded.bytes, encoded.tag, encoded.encoding === undefined ? VARY : GZIPPED);
    }
    metrics.record(route, 'GET', 200, (performance.now() - start) / 1000);
    if (options.stats) options.stats.served += 1;
  }

  function answer(req: IncomingMessage, res: ServerResponse, kept: KeptAnswer, keyId: string, start: number): boolean {
    const counted = limiter.take(keyId);
    if (!counted.allowed) return false;
    write(req, res, counted, sendable(kept.body, start), kept.route, start);
    return true;
  }

  /** A lean endpoint's request without a kept answer: answered as its route would, or left to Koa. */
  function leanAnswer(req: IncomingMessage, res: ServerResponse, url: string, keyId: string, start: number): void {
    const mark = url.indexOf('?');
    const leanRoute = options.lean?.(mark < 0 ? url : url.slice(0, mark));
    if (leanRoute === undefined || options.fail === undefined || UNUSUAL_URL.test(url)) return fallback(req, res);
    let params: ParsedParams;
    try {
      params = parseParams(leanRoute.params, mark < 0 ? {} : koaQuery.parse(url.slice(mark + 1)), {});
    } catch {
      // Koa counts the request and answers the 400 (or the 429 first), as for any other.
      return fallback(req, res);
    }
    const counted = limiter.take(keyId);
    // At the limit: Koa counts it again (which changes nothing for a refused request) and answers the 429.
    if (!counted.allowed) return fallback(req, res);
    const fail = options.fail;
    leanRoute.answer(params, url, start).then(
      (body) => {
        write(req, res, counted, body, leanRoute.route, start);
        if (options.stats) options.stats.lean = (options.stats.lean ?? 0) + 1;
      },
      (err: unknown) => {
        const failed = fail(err, leanRoute.route);
        send(res, failed.status, counted, Buffer.from(JSON.stringify(failed.body), 'utf8'), undefined, failed.headers);
        metrics.record(leanRoute.route, 'GET', failed.status, (performance.now() - start) / 1000);
      },
    ).catch(() => {
      // Only writing the answer can get here (headers refused, say): the connection is closed
      // rather than the rejection left unhandled, which would end the process.
      res.destroy();
    });
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
    const headers = req.headers;
    if (headers['if-none-match'] !== undefined) return fallback(req, res);
    const known = responses.byUrl(url);
    if (known === undefined && options.lean === undefined) return fallback(req, res);
    const presented = keyOfHeaders(headers.authorization, headers['x-api-key']);
    const key = presented === undefined ? undefined : keys.cached(presented);
    if (!key || !readyNow()) return fallback(req, res);
    const keyId = `key:${key.id}`;
    if (known === undefined) return leanAnswer(req, res, url, keyId, start);
    stamp(known.origin.operationId).then(
      (now) => {
        const kept = responses.get(known.key, now);
        if (kept === undefined) leanAnswer(req, res, url, keyId, start);
        else if (!answer(req, res, kept, keyId, start)) fallback(req, res);
      },
      // An outage: Koa's path answers it (503) as for any other request.
      () => fallback(req, res),
    );
  };
}
