import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lmdbReadStore } from '../../infra/lmdb/readStore.ts';
import { readStoreSuite } from './readStore.suite.ts';

readStoreSuite('lmdbReadStore', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'marquee-rs-'));
  const store = lmdbReadStore({ dataDir });
  return {
    store,
    async cleanup() {
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
});
