/**
 * `API_WORKERS=2 marquee start`: the API served by two worker processes over the stores the
 * primary keeps up to date. Each worker fills its own in-process search index, /readyz follows
 * the primary's readiness, and SIGTERM ends the primary and its workers.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { inProcessSearchIndex } from '../../infra/search/inProcessSearch.ts';
import { loadConfig } from '../../services/shared/config.ts';
import { IDS, seedCatalog } from './api.fixture.ts';
import { embeddedEnv, freePort, marquee, spawnMarquee, stop } from './process.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lmdbEventStore } from '../../infra/lmdb/eventStore.ts';
import { lmdbReadStore } from '../../infra/lmdb/readStore.ts';
import { closeLmdb } from '../../infra/lmdb/env.ts';

describe('API_WORKERS (e2e)', function () {
  this.timeout(120_000);

  it('parses API_WORKERS: 1 by default, a count, or auto for every core', () => {
    assert.equal(loadConfig({}).apiWorkers, 1);
    assert.equal(loadConfig({ API_WORKERS: '3' }).apiWorkers, 3);
    assert.ok(loadConfig({ API_WORKERS: 'auto' }).apiWorkers >= 1);
    assert.throws(() => loadConfig({ API_WORKERS: 'many' }), /API_WORKERS/);
  });

  it('serves lookups and search from two worker processes, each with its own index', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'marquee-api-workers-'));
    const eventStore = lmdbEventStore({ dataDir });
    const readStore = lmdbReadStore({ dataDir });
    await seedCatalog(eventStore, readStore, inProcessSearchIndex());
    await readStore.close();
    await eventStore.close();
    await closeLmdb(dataDir);
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const env = embeddedEnv({
      DATA_DIR: dataDir, PORT: String(port), API_WORKERS: '2', RATE_LIMIT_PER_MINUTE: '100000',
      LINK_TOKEN_KEYS: `1:${randomBytes(32).toString('hex')}`, DOWNLOAD_SIGNING_KEY: randomBytes(32).toString('hex'),
    });
    const { child: server, log } = spawnMarquee(['start'], env);
    try {
      const started = Date.now();
      let ready = 0;
      while (Date.now() - started < 90_000 && ready !== 200) {
        assert.equal(server.exitCode, null, log());
        ready = await fetch(`${base}/readyz`).then((r) => r.status, () => 0);
        if (ready !== 200) await new Promise((r) => setTimeout(r, 250));
      }
      assert.equal(ready, 200, log().slice(-2000));
      assert.match(log(), /in 2 worker processes/);
      const created = await marquee(['keys', 'create', '--name', 'workers'], env);
      assert.equal(created.code, 0, created.stderr);
      const auth = { authorization: `Bearer ${created.stdout.trim().split('\n').at(-1) ?? ''}` };
      // Enough requests on fresh connections that both workers answer some.
      for (let i = 0; i < 8; i += 1) {
        const search = await fetch(`${base}/v1/search?q=land%20girls&country=US`, { headers: { ...auth, connection: 'close' } });
        assert.equal(search.status, 200);
        const body = (await search.json()) as { results: Array<{ id: string }> };
        assert.equal(body.results[0]?.id, IDS.landGirls, `request ${i}: every worker's index finds the title`);
        const media = await fetch(`${base}/v1/media/${IDS.landGirls}?country=US`, { headers: { ...auth, connection: 'close' } });
        assert.equal(media.status, 200);
      }
    } finally {
      await stop(server);
      rmSync(dataDir, { recursive: true, force: true });
    }
    assert.doesNotMatch(log(), /API worker .* exited/, 'no worker died');
  });
});
