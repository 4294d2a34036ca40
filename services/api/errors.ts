/**
 * The one place errors become responses: AppError codes map to statuses (contracts/errors.ts)
 * and to the JSON body `{"error", "code", "details"?}`. Messages and details are exposed for
 * 4xx only; a 5xx body is generic, and the cause is logged instead.
 */
import type Koa from 'koa';
import { AppError, httpStatusOf, isAppError } from '../../contracts/errors.ts';
import type { ApiLogger } from './types.ts';

const GENERIC_5XX: Record<number, string> = {
  500: 'Something went wrong on our side.',
  503: 'The service is temporarily unavailable; try again shortly.',
};

/** Errors that come from Koa itself (e.g. a malformed URL) carry an HTTP status. */
function fromHttpError(err: unknown): AppError | null {
  const status = (err as { status?: unknown })?.status;
  if (typeof status !== 'number' || status < 400 || status > 599) return null;
  if (status === 404) return new AppError('not_found', 'Not found.');
  if (status < 500) return new AppError('invalid_parameter', (err as Error).message || 'Bad request.');
  return null;
}

export function errorMiddleware(logger?: ApiLogger): Koa.Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      const appError = isAppError(err) ? err : fromHttpError(err) ?? new AppError('internal', 'internal', { cause: err });
      const status = httpStatusOf[appError.code] ?? 500;
      // Write-side codes never reach a client as such: anything 5xx is either unavailable or internal.
      const code = status >= 500 ? (status === 503 ? 'unavailable' : 'internal') : appError.code;
      // An outage (503) is expected and retriable: a warning, without a stack per request;
      // `/readyz` answering "not yet" is its job, not a failure. Anything else 5xx is a bug.
      if (status === 503) {
        if (ctx.path !== '/readyz') logger?.warn({ path: ctx.path, code: appError.code, reason: appError.message }, 'request answered 503');
      } else if (status >= 500) {
        logger?.error({ err, path: ctx.path, code: appError.code }, 'request failed');
      }
      ctx.status = status;
      ctx.body = status >= 500
        ? { error: GENERIC_5XX[status] ?? GENERIC_5XX[500], code }
        : { error: appError.message, code, ...(appError.details ? { details: appError.details } : {}) };
      if (status === 401) ctx.set('WWW-Authenticate', 'Bearer');
      if (status === 405) ctx.set('Allow', 'GET, HEAD');
      if (status === 503) ctx.set('Retry-After', '5');
      const retryAfter = appError.details?.retry_after;
      if (status === 429 && typeof retryAfter === 'number') ctx.set('Retry-After', String(retryAfter));
    }
  };
}

/** Methods other than GET and HEAD (everywhere under /v1, and on the paths the router answers outside it): 405 with `Allow`. */
export function methodGuard(): Koa.Middleware {
  return async (ctx, next) => {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      throw new AppError('method_not_allowed', `Method ${ctx.method} is not allowed; this API answers GET and HEAD only.`);
    }
    await next();
  };
}

/** Reached when no route matched. */
export function notFoundFallback(): Koa.Middleware {
  return async (ctx, next) => {
    await next();
    if (ctx.body === undefined && ctx.status === 404) {
      throw new AppError('not_found', `No resource at ${ctx.path}.`);
    }
  };
}
