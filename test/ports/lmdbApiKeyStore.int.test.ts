/** The ApiKeyStore behaviour suite on LMDB (the embedded default). */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lmdbApiKeyStore } from '../../infra/lmdb/apiKeyStore.ts';
import { apiKeyStoreSuite } from './apiKeyStore.suite.ts';

apiKeyStoreSuite('lmdbApiKeyStore', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'marquee-keys-'));
  const store = lmdbApiKeyStore({ dataDir });
  return {
    store,
    async reopen() {
      return lmdbApiKeyStore({ dataDir });
    },
    async cleanup() {
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
});
