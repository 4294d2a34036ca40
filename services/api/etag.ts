/**
 * ETag for every JSON 200 of /v1: a strong hash of the serialized body, so an unchanged answer
 * costs a client only a 304 when it sends the tag back in `If-None-Match`.
 */
import { createHash } from 'node:crypto';
import type Koa from 'koa';

export function etagMiddleware(): Koa.Middleware {
  return async (ctx, next) => {
    await next();
    if (ctx.status !== 200 || ctx.body === null || ctx.body === undefined) return;
    const body = ctx.body as unknown;
    if (typeof body !== 'object' || Buffer.isBuffer(body) || typeof (body as { pipe?: unknown }).pipe === 'function') return;
    const json = JSON.stringify(body);
    const tag = `"${createHash('sha256').update(json).digest('base64url').slice(0, 32)}"`;
    ctx.set('ETag', tag);
    ctx.body = json;
    ctx.type = 'application/json';
    // ctx.fresh compares If-None-Match with the ETag just set (and only for GET/HEAD 2xx).
    if (ctx.fresh) ctx.status = 304;
  };
}
