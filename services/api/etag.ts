/**
 * ETag for every JSON 200 of /v1: a strong hash of the serialized body, so an unchanged answer
 * costs a client only a 304 when it sends the tag back in `If-None-Match`. The body is gzipped
 * here when the client takes it (compression.ts), with the gzip representation's own tag.
 */
import type Koa from 'koa';
import { compressible, encodedBody, gzipTag, wantsGzip } from './compression.ts';
import { renderJson, type RenderedBody } from './responseCache.ts';

/**
 * Weak comparison of If-None-Match (RFC 9110 13.1.2). Not koa's `ctx.fresh`: it treats a request
 * `Cache-Control: no-cache` as stale, which is a rule for caches, not for the origin, and
 * fetch() adds that header to every conditional request.
 */
function matches(ifNoneMatch: string, tag: string): boolean {
  if (ifNoneMatch === '') return false;
  if (ifNoneMatch.trim() === '*') return true;
  // Either representation's tag: the content they encode is the same.
  const gzip = gzipTag(tag);
  return ifNoneMatch.split(',').some((t) => {
    const candidate = t.trim().replace(/^W\//, '');
    return candidate === tag || candidate === gzip;
  });
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
    const varies = compressible(rendered);
    const gzip = varies && wantsGzip(ctx.req);
    if (varies) ctx.vary('Accept-Encoding');
    ctx.type = 'application/json';
    if ((ctx.method === 'GET' || ctx.method === 'HEAD') && matches(ctx.get('If-None-Match'), rendered.tag)) {
      // The tag of the representation a 200 would have sent; nothing to compress for a 304.
      ctx.set('ETag', gzip ? gzipTag(rendered.tag) : rendered.tag);
      ctx.body = rendered.bytes;
      ctx.status = 304;
      return;
    }
    const encoded = encodedBody(rendered, gzip);
    ctx.set('ETag', encoded.tag);
    if (encoded.encoding !== undefined) ctx.set('Content-Encoding', encoded.encoding);
    ctx.body = encoded.bytes;
  };
}
