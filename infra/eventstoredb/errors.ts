/** Converts what @eventstore/db-client throws into the one error type, at the adapter boundary. */
import { ErrorType, isCommandError } from '@eventstore/db-client';
import { AppError, asUnavailable, isAppError } from '../../contracts/errors.ts';

/**
 * Errors no retry can fix: a request the server refuses as such (bad argument, too large, not
 * allowed, a deleted stream). They are `internal` and not retriable, so no loop spins on them.
 */
const NOT_RETRIABLE = new Set<string>([
  ErrorType.INVALID_ARGUMENT,
  ErrorType.MAXIMUM_APPEND_SIZE_EXCEEDED,
  ErrorType.ACCESS_DENIED,
  ErrorType.STREAM_DELETED,
  ErrorType.UNSUPPORTED,
  ErrorType.MISSING_REQUIRED_METADATA_PROPERTY,
]);

/**
 * - a WrongExpectedVersionError is `wrong_expected_revision` (retriable: re-read, re-decide);
 * - NOT_RETRIABLE command errors are `internal`;
 * - anything else (unavailable, deadline exceeded, not leader, a dropped connection) is
 *   `unavailable` and retriable.
 */
export function eventStoreDbError(err: unknown, what: string): AppError {
  if (isAppError(err)) return err;
  if (err instanceof Error && isCommandError(err)) {
    if (err.type === ErrorType.WRONG_EXPECTED_VERSION) {
      return new AppError('wrong_expected_revision', `${what}: ${err.message}`, { cause: err, retriable: true });
    }
    if (NOT_RETRIABLE.has(err.type)) {
      return new AppError('internal', `${what} failed: ${err.message}`, { cause: err, retriable: false });
    }
  }
  return asUnavailable(err, what);
}

/** Whether a read failed only because the stream does not exist (an empty stream to the port). */
export function isStreamNotFound(err: unknown): boolean {
  return err instanceof Error && isCommandError(err) && err.type === ErrorType.STREAM_NOT_FOUND;
}
