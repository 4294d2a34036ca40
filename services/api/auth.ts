/**
 * API-key authentication. `authenticate` only identifies the caller (so the rate limiter can
 * count per key, and a 401 still carries the RateLimit headers); `requireKey` then refuses a
 * request whose key is missing or invalid, except where the endpoint allows keyless calls.
 */
import type Koa from 'koa';
import { AppError, isAppError } from '../../contracts/errors.ts';
import type { ApiKeyRecord } from '../../contracts/ports.ts';

export interface AuthState {
  /** The key document of a valid key. */
  key: ApiKeyRecord | null;
  /** Why the request is refused when it needs a key; null when a valid key was given. */
  refusal: AppError | null;
  /** Whether a key was presented at all. */
  presented: boolean;
}

const HOW = "Send your API key as 'Authorization: Bearer <key>' or in the 'X-API-Key' header.";

/** The key from an `Authorization: Bearer <key>` or an `X-API-Key` header value, or undefined. */
export function keyOfHeaders(authorization: string | undefined, xApiKey: string | string[] | undefined): string | undefined {
  const bearer = authorization === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  if (bearer) return bearer[1];
  const x = typeof xApiKey === 'string' ? xApiKey.trim() : '';
  return x === '' ? undefined : x;
}

/** The key from `Authorization: Bearer <key>` or `X-API-Key`, or undefined. */
export function presentedKey(ctx: Koa.Context): string | undefined {
  return keyOfHeaders(ctx.get('Authorization'), ctx.get('X-API-Key'));
}

type Lookup = ((key: string) => Promise<ApiKeyRecord | null>) & { cached?: (key: string) => ApiKeyRecord | null | undefined };

export function authenticate(lookup: Lookup): Koa.Middleware {
  return async (ctx, next) => {
    const key = presentedKey(ctx);
    let state: AuthState;
    if (key === undefined) {
      const malformedHeader = ctx.get('Authorization') !== '';
      state = {
        key: null,
        presented: malformedHeader,
        refusal: new AppError('unauthorized', malformedHeader
          ? `The Authorization header is not of the form 'Bearer <key>'. ${HOW}`
          : `An API key is required. ${HOW}`),
      };
    } else {
      let doc: ApiKeyRecord | null | undefined;
      try {
        // A cached answer costs no promise.
        doc = lookup.cached?.(key);
        if (doc === undefined) doc = await lookup(key);
      } catch (err) {
        // Kept for requireKey, so the rate limiter still runs and the 503 carries its headers.
        state = { key: null, presented: true, refusal: isAppError(err) ? err : new AppError('unavailable', 'The key store is unavailable.', { cause: err }) };
        ctx.state.auth = state;
        await next();
        return;
      }
      state = doc
        ? { key: doc, presented: true, refusal: null }
        : { key: null, presented: true, refusal: new AppError('unauthorized', `The API key is not valid or has been revoked. ${HOW}`) };
    }
    ctx.state.auth = state;
    await next();
  };
}

/**
 * Refuses unless a valid key was given. `optional` endpoints (GET /v1/snapshots) also answer
 * without a key, but a key that is presented must still be valid.
 */
export function requireKey(ctx: Koa.Context, mode: 'required' | 'optional' | 'none'): void {
  if (mode === 'none') return;
  const auth = ctx.state.auth as AuthState | undefined;
  if (!auth) throw new AppError('unauthorized', `An API key is required. ${HOW}`);
  if (auth.refusal === null) return;
  if (mode === 'optional' && !auth.presented) return;
  // An outage of the key store is an outage, not a refusal.
  throw auth.refusal;
}
