/**
 * ETag for every JSON 200 of /v1: a strong hash of the serialized body, so an unchanged answer
 * costs a client only a 304 when it sends the tag back in `If-None-Match`.
 */
import type Koa from 'koa';
import { renderJson, type RenderedBody } from './responseCache.ts';

/**
 * Weak comparison of If-None-Match (RFC 9110 13.1.2). Not koa's `ctx.fresh`: it treats a request
 * `Cache-Control: no-cache` as stale, which is a rule for caches, not for the origin, and
 * fetch() adds that header to every conditional request.
 */
function matches(ifNoneMatch: string, tag: string): boolean {
  if (ifNoneMatch === '') return false;
  if (ifNoneMatch.trim() === '*') return true;
  return ifNoneMatch.split(',').some((t) => t.trim().replace(/^W\//, '') === tag);
}

export function etagMiddleware(): Koa.Middleware {
  return async (ctx, next) => {
    await next();
    if (ctx.status !== 200 || ctx.body === null || ctx.body === undefined) return;
    // An answer rendered already (the response cache's, or one the route kept for it).
    let rendered = ctx.state.rendered as RenderedBody | undefined;
    if (rendered === undefined) {
      const body = ctx.body as unknown;
      if (typeof body !== 'object' || Buffer.isBuffer(body) || typeof (body as { pipe?: unknown }).pipe === 'function') return;
      rendered = renderJson(body);
    }
    ctx.set('ETag', rendered.tag);
    ctx.body = rendered.bytes;
    ctx.type = 'application/json';
    if ((ctx.method === 'GET' || ctx.method === 'HEAD') && matches(ctx.get('If-None-Match'), rendered.tag)) ctx.status = 304;
  };
}
