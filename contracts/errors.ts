/**
 * The one error type of Marquee. Adapters convert driver errors into it at the boundary,
 * guards check `code` (never `instanceof`), and exactly one API middleware maps it to the
 * JSON error body of docs/api.md ("Errors").
 */
export type ErrorCode =
  // API-facing codes (docs/api.md "Errors")
  | 'unauthorized'
  | 'invalid_parameter'
  | 'missing_parameter'
  | 'not_found'
  | 'forbidden'
  | 'rate_limited'
  | 'unavailable'
  | 'internal'
  | 'method_not_allowed'
  // write-side codes
  | 'wrong_expected_revision'
  | 'invalid_observation'
  | 'invalid_schema'
  | 'closed';

/** HTTP status for each code; write-side codes never reach a client as such. */
export const httpStatusOf: Record<ErrorCode, number> = {
  unauthorized: 401,
  invalid_parameter: 400,
  missing_parameter: 400,
  not_found: 404,
  forbidden: 403,
  rate_limited: 429,
  unavailable: 503,
  internal: 500,
  method_not_allowed: 405,
  wrong_expected_revision: 409,
  invalid_observation: 400,
  invalid_schema: 500,
  closed: 503,
};

export interface AppErrorOptions {
  /** Whether trying the same call again later may succeed (outages, conflicts). */
  retriable?: boolean;
  cause?: unknown;
  /** Extra machine-readable detail, e.g. `{ parameter: 'limit' }`; exposed for 4xx only. */
  details?: Record<string, unknown>;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly retriable: boolean;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.retriable = options.retriable ?? (code === 'unavailable' || code === 'wrong_expected_revision');
    this.details = options.details;
  }
}

/** Guard by code, so errors that crossed a realm or a worker still match. */
export function isAppError(err: unknown, code?: ErrorCode): err is AppError {
  if (typeof err !== 'object' || err === null) return false;
  const candidate = err as { name?: unknown; code?: unknown };
  if (candidate.name !== 'AppError' || typeof candidate.code !== 'string') return false;
  return code === undefined || candidate.code === code;
}

/** Wraps anything thrown by a dependency as `unavailable`, keeping an AppError as it is. */
export function asUnavailable(err: unknown, what: string): AppError {
  if (isAppError(err)) return err;
  return new AppError('unavailable', `${what} is unavailable`, { cause: err, retriable: true });
}
