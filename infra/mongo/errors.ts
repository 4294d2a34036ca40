/** Converts what the MongoDB driver throws into the one error type, at the adapter boundary. */
import {
  BSON,
  MongoAPIError,
  MongoClientClosedError,
  MongoServerError,
  MongoTopologyClosedError,
} from 'mongodb';
import { AppError, asUnavailable, isAppError } from '../../contracts/errors.ts';

/**
 * Server error codes that no retry can fix: the request itself is wrong (a bad collection name,
 * a document too large, a value of the wrong type). Everything else from the server (a primary
 * stepping down, an interrupted operation, a write conflict) may succeed later.
 */
const NOT_RETRIABLE_CODES = new Set<number>([
  2, // BadValue
  9, // FailedToParse
  14, // TypeMismatch
  73, // InvalidNamespace
  10334, // BSONObjectTooLarge
  17280, // KeyTooLong
]);

/**
 * - an AppError passes through;
 * - a closed client is `closed` (the caller closed the store; retrying cannot help);
 * - a value the driver cannot encode, a misuse of the driver API, or a server error from
 *   NOT_RETRIABLE_CODES is `internal`, not retriable, so no loop retries it forever;
 * - anything else (server selection timeouts, network errors, other server errors) is
 *   `unavailable` and retriable: the server is down, far away or busy.
 */
export function mongoError(err: unknown, what: string): AppError {
  if (isAppError(err)) return err;
  if (err instanceof MongoClientClosedError || err instanceof MongoTopologyClosedError) {
    return new AppError('closed', `${what}: the MongoDB client is closed`, { cause: err, retriable: false });
  }
  if (
    err instanceof BSON.BSONError ||
    err instanceof MongoAPIError ||
    (err instanceof MongoServerError && typeof err.code === 'number' && NOT_RETRIABLE_CODES.has(err.code))
  ) {
    const message = err instanceof Error ? err.message : String(err);
    return new AppError('internal', `${what} failed: ${message}`, { cause: err, retriable: false });
  }
  return asUnavailable(err, what);
}

/** E11000: an insert met a document with the same `_id` (a concurrent writer created it first). */
export function isDuplicateKey(code: unknown): boolean {
  return code === 11000 || code === 11001;
}
