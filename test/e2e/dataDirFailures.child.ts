/**
 * Child of dataDirFailures.e2e.test.ts, run under a file size limit (`ulimit -f`): writes until a
 * write fails, prints the error it got, and lingers so that any unhandled rejection would end it
 * before it exits 0. `events` (the default) appends to an LMDB event store; `release` writes one
 * file larger than the limit to a release of the file-system release store.
 */
import { isAppError } from '../../contracts/errors.ts';
import { lmdbEventStore } from '../../infra/lmdb/eventStore.ts';
import { fsReleaseStore } from '../../infra/releases/fsReleaseStore.ts';

// With a handler, a write past the limit fails with EFBIG instead of the signal killing the process.
process.on('SIGXFSZ', () => {});
const [dataDir, mode = 'events'] = process.argv.slice(2) as [string, string?];
let failure: unknown = null;
if (mode === 'release') {
  const writer = await fsReleaseStore({ dir: `${dataDir}/releases` }).begin('2026-W47');
  try {
    await writer.write('country=US/links.parquet', new Uint8Array(32 * 1024 * 1024));
  } catch (err) {
    failure = err;
  }
  await writer.abort();
} else {
  const store = lmdbEventStore({ dataDir });
  const filler = 'x'.repeat(2000);
  for (let i = 0; failure === null && i < 100_000; i++) {
    try {
      await store.append(`media-mv${String(i).padStart(8, '0')}`, [{ type: 'MediaRegistered', data: { filler }, metadata: {} } as never], 'no_stream');
    } catch (err) {
      failure = err;
    }
  }
}
console.log(JSON.stringify(isAppError(failure) ? { code: failure.code, retriable: failure.retriable, message: failure.message } : { other: String(failure) }));
await new Promise((resolve) => setTimeout(resolve, 500));
console.log('still running');
