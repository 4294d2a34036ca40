/**
 * ETag for every JSON 200 of /v1: a strong hash of the serialized body, so an unchanged answer
 * costs a client only a 304 when it sends the tag back in `If-None-Match`.
 */
import { hash } from 'node:crypto';
import type Koa from 'koa';

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
    const body = ctx.body as unknown;
    if (typeof body !== 'object' || Buffer.isBuffer(body) || typeof (body as { pipe?: unknown }).pipe === 'function') return;
    const json = JSON.stringify(body);
    // The one-shot hash gives the same digest as createHash without a Hash object per response;
    // SHA-256 stays (it is hardware-accelerated, as fast as SHA-1 or MD5 here), so tags are unchanged.
    const tag = `"${hash('sha256', json, 'base64url').slice(0, 32)}"`;
    ctx.set('ETag', tag);
    ctx.body = json;
    ctx.type = 'application/json';
    if ((ctx.method === 'GET' || ctx.method === 'HEAD') && matches(ctx.get('If-None-Match'), tag)) ctx.status = 304;
  };
}
