/**
 * The sample load's projection worker on the embedded LMDB read store, asked to put the ranking's
 * read models first (`rankingFirst`, as the sample load does). A day of the load waits only for
 * the read models the ranking reads (`RANKING_READS`): the worker folds them up to that wait in a
 * lane of their own, while the other read models hold the events back until a full batch or a
 * wait for every read model (and, folding, let the ranking's lane go first). This test fails if a
 * wait for the ranking's inputs waits for the other read models too (they are folded with it),
 * or if it does not fold the ranking's inputs (the ranking would read a stale day). Without
 * `rankingFirst` (the ingest bench) the worker follows the log live with one group.
 * projectionThreadMongo.int.test.ts is the same on MongoDB, where the lanes are the default.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lmdbEventStore } from '../../infra/lmdb/eventStore.ts';
import { lmdbReadStore } from '../../infra/lmdb/readStore.ts';
import { ALL_PROJECTIONS } from '../../projections/index.ts';
import { defaultCollectionName } from '../../projections/collections.ts';
import { mediaProjection } from '../../projections/media.ts';
import { startProjectionThread } from '../../services/cli/projectionThread.ts';
import { loadConfig } from '../../services/shared/config.ts';
import { appendLaneCatalog, assertRankingReadsFirst, TITLES } from './projectionThread.support.ts';

describe('the sample load projection worker on LMDB', () => {
  let dataDir: string;
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'marquee-lanes-lmdb-'));
  });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it('with rankingFirst, folds only the ranking inputs for a wait that names them, and every read model for a wait for all', async function () {
    this.timeout(60_000);
    const eventStore = lmdbEventStore({ dataDir });
    const readStore = lmdbReadStore({ dataDir });
    const thread = await startProjectionThread(loadConfig({ DATA_DIR: dataDir }), readStore, { rankingFirst: true });
    try {
      await assertRankingReadsFirst(thread, readStore, await appendLaneCatalog(eventStore));
    } finally {
      await thread.stop();
      await Promise.allSettled([eventStore.close(), readStore.close()]);
    }
  });

  it('without rankingFirst, follows the log live: every read model folds what is appended, with no wait asking', async function () {
    this.timeout(60_000);
    const eventStore = lmdbEventStore({ dataDir });
    const readStore = lmdbReadStore({ dataDir });
    const thread = await startProjectionThread(loadConfig({ DATA_DIR: dataDir }), readStore);
    try {
      const head = await appendLaneCatalog(eventStore);
      const collections = ALL_PROJECTIONS.map(defaultCollectionName);
      for (const until = Date.now() + 30_000; Math.min(...(await readStore.getCheckpoints(collections))) < head; ) {
        assert.ok(Date.now() < until, `not every read model folded ${head} events within 30 s: ${await readStore.getCheckpoints(collections)}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.equal(await readStore.count(defaultCollectionName(mediaProjection)), TITLES);
    } finally {
      await thread.stop();
      await Promise.allSettled([eventStore.close(), readStore.close()]);
    }
  });
});
