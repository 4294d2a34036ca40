/** The ReleaseStore behaviour suite on the filesystem adapter (the embedded default). */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fsReleaseStore } from '../../infra/releases/fsReleaseStore.ts';
import { releaseStoreSuite } from './releaseStore.suite.ts';

releaseStoreSuite('fsReleaseStore', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'marquee-releases-'));
  return {
    store: fsReleaseStore({ dir }),
    async cleanup() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
