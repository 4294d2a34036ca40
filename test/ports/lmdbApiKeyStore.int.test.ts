/** The ApiKeyStore behaviour suite on LMDB (the embedded default). */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
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

describe('lmdbApiKeyStore across processes', function () {
  this.timeout(60_000);

  // lmdb-js keeps a read snapshot until its next timer turn, so a server whose event loop was
  // busy answered a key created by the CLI a moment before with 401 (seen in start.e2e).
  it('finds a key another process created after this process last read, in the same event turn', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'marquee-keys-'));
    const store = lmdbApiKeyStore({ dataDir });
    try {
      const hash = 'ab'.repeat(32);
      assert.equal(await store.findByHash(hash), null, 'not there yet; this read opens the snapshot');
      const module = fileURLToPath(new URL('../../infra/lmdb/apiKeyStore.ts', import.meta.url));
      const script = `import { lmdbApiKeyStore } from ${JSON.stringify(module)};
        const s = lmdbApiKeyStore({ dataDir: ${JSON.stringify(dataDir)} });
        await s.create({ id: 'key_abababababab', name: 'cli', hash: '${hash}', prefix: 'mk_live_abab', createdAt: '2026-11-24T10:00:00Z', revokedAt: null, lastUsedAt: null });
        await s.close();`;
      // Synchronous, so no timer turn of this process passes between the two reads.
      const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
      assert.equal(child.status, 0, child.stderr);
      assert.equal((await store.findByHash(hash))?.name, 'cli');
    } finally {
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
