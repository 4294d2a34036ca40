/**
 * Child of dataDirFailures.e2e.test.ts, run under a file size limit (`ulimit -f`): appends to
 * an LMDB event store until an append fails, prints the error it got, and lingers so that any
 * unhandled rejection would end it before it exits 0.
 */
import { isAppError } from '../../contracts/errors.ts';
import { lmdbEventStore } from '../../infra/lmdb/eventStore.ts';

// With a handler, a write past the limit fails with EFBIG instead of the signal killing the process.
process.on('SIGXFSZ', () => {});
const dataDir = process.argv[2] as string;
const store = lmdbEventStore({ dataDir });
const filler = 'x'.repeat(2000);
let failure: unknown = null;
for (let i = 0; failure === null && i < 100_000; i++) {
  try {
    await store.append(`media-mv${String(i).padStart(8, '0')}`, [{ type: 'MediaRegistered', data: { filler }, metadata: {} } as never], 'no_stream');
  } catch (err) {
    failure = err;
  }
}
console.log(JSON.stringify(isAppError(failure) ? { code: failure.code, retriable: failure.retriable, message: failure.message } : { other: String(failure) }));
await new Promise((resolve) => setTimeout(resolve, 500));
console.log('still running');
