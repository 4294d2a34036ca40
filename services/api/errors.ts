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

/** A response for an error: its status, JSON body and the headers that status carries. */
export interface ErrorAnswer {
  status: number;
  body: { error: string; code: string; details?: Record<string, unknown> };
  headers: Record<string, string>;
}

/**
 * What the error middleware answers for `err` thrown by a request to `path` (logging what it
 * logs): also the hot path's answer (hotPath.ts) for an error it meets after counting a request.
 */
export function errorAnswer(err: unknown, path: string, logger?: ApiLogger): ErrorAnswer {
  const appError = isAppError(err) ? err : fromHttpError(err) ?? new AppError('internal', 'internal', { cause: err });
  const status = httpStatusOf[appError.code] ?? 500;
  // Write-side codes never reach a client as such: anything 5xx is either unavailable or internal.
  const code = status >= 500 ? (status === 503 ? 'unavailable' : 'internal') : appError.code;
  // An outage (503) is expected and retriable: a warning, without a stack per request;
  // `/readyz` answering "not yet" is its job, not a failure. Anything else 5xx is a bug.
  if (status === 503) {
    if (path !== '/readyz') logger?.warn({ path, code: appError.code, reason: appError.message }, 'request answered 503');
  } else if (status >= 500) {
    logger?.error({ err, path, code: appError.code }, 'request failed');
  }
  const body = status >= 500
    ? { error: GENERIC_5XX[status] ?? GENERIC_5XX[500]!, code }
    : { error: appError.message, code, ...(appError.details ? { details: appError.details } : {}) };
  const headers: Record<string, string> = {};
  if (status === 401) headers['WWW-Authenticate'] = 'Bearer';
  if (status === 405) headers.Allow = 'GET, HEAD';
  if (status === 503) headers['Retry-After'] = '5';
  const retryAfter = appError.details?.retry_after;
  if (status === 429 && typeof retryAfter === 'number') headers['Retry-After'] = String(retryAfter);
  return { status, body, headers };
}

export function errorMiddleware(logger?: ApiLogger): Koa.Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      const answer = errorAnswer(err, ctx.path, logger);
      ctx.status = answer.status;
      ctx.body = answer.body;
      for (const [name, value] of Object.entries(answer.headers)) ctx.set(name, value);
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
