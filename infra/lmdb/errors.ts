/** Converts what lmdb-js throws into the one error type, at the adapter boundary. */
import { AppError, asUnavailable, isAppError } from '../../contracts/errors.ts';

/** A write's rejection by lmdb-js for a failed commit: its message, and the commit's own error as `commitError`. */
export function isCommitFailure(reason: unknown): reason is Error & { commitError: Promise<unknown> } {
  return reason instanceof Error && reason.message.startsWith('Commit failed') && (reason as { commitError?: unknown }).commitError instanceof Promise;
}

/**
 * A value msgpack cannot encode (a BigInt too large, a cyclic object) or a key longer than LMDB
 * allows (1978 bytes) is a bug or bad data of the caller: `internal`, not retriable, so no loop
 * retries it forever (the projection runner parks such a document at once). Anything else from
 * the engine (map full, I/O, a closed environment) is `unavailable` and retriable.
 */
export function lmdbError(err: unknown, what: string): AppError {
  if (isAppError(err)) return err;
  if (isCommitFailure(err)) {
    // The commit's own error, which lmdb-js prints, rejects a promise only this error points to:
    // handled here, or it would end the process (see env.ts).
    err.commitError.catch(() => {});
    return new AppError('unavailable', `${what}: a commit failed, most likely for a full disk or an I/O error of the data directory (lmdb-js printed the cause above)`, { cause: err, retriable: true });
  }
  // Before the encoding check: lmdb-js may throw its key-size error as a RangeError.
  if (err instanceof Error && KEY_TOO_LARGE.test(err.message)) {
    return new AppError('internal', `${what} refused a key: ${err.message}`, { cause: err, retriable: false });
  }
  if (err instanceof RangeError || err instanceof TypeError) {
    return new AppError('internal', `${what} could not encode a value: ${err.message}`, { cause: err, retriable: false });
  }
  return asUnavailable(err, what);
}

/** lmdb-js: "Key size is larger than the maximum key size (1978)", "Key of size 2121 was too large, max key size is 1978". */
const KEY_TOO_LARGE = /max(imum)? key size/i;
