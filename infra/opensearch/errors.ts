/**
 * OpenSearch client errors as AppError, at the adapter boundary: an unreachable, slow,
 * overloaded or failing cluster is `unavailable` (retriable); a request the cluster rejects
 * as malformed is a bug of ours, `internal`.
 */
import { AppError, isAppError } from '../../contracts/errors.ts';

interface ClientErrorShape {
  name?: unknown;
  statusCode?: unknown;
  meta?: { statusCode?: unknown; body?: unknown };
}

/** HTTP status of a ResponseError, undefined for transport errors. */
export function statusOf(err: unknown): number | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const e = err as ClientErrorShape;
  if (typeof e.statusCode === 'number') return e.statusCode;
  if (typeof e.meta?.statusCode === 'number') return e.meta.statusCode;
  return undefined;
}

/** The `error.type` of an OpenSearch error body (`index_not_found_exception`, ...). */
export function errorTypeOf(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const body = (err as ClientErrorShape).meta?.body as { error?: { type?: unknown } } | undefined;
  const type = body?.error?.type;
  return typeof type === 'string' ? type : undefined;
}

export function isIndexNotFound(err: unknown): boolean {
  return statusOf(err) === 404 && errorTypeOf(err) === 'index_not_found_exception';
}

export function toAppError(err: unknown, what: string): AppError {
  if (isAppError(err)) return err;
  const status = statusOf(err);
  const name = typeof err === 'object' && err !== null ? (err as ClientErrorShape).name : undefined;
  // 429 (rejected execution: queues full) and 5xx are the cluster's state, not the request's.
  if (status === undefined || status === 429 || status >= 500) {
    const detail = err instanceof Error ? err.message : String(err);
    return new AppError('unavailable', `OpenSearch is unavailable (${what}): ${String(name ?? 'error')}: ${detail}`, {
      cause: err,
      retriable: true,
    });
  }
  const detail = err instanceof Error ? err.message : String(err);
  return new AppError('internal', `OpenSearch rejected ${what} (HTTP ${status}): ${detail}`, { cause: err, retriable: false });
}
