/**
 * The sample load's projection worker on the MongoDB read store (FerretDB 1.24 in CI). A day of
 * the load waits only for the read models the ranking reads (`RANKING_READS`): the worker folds
 * them up to that wait in a lane of their own, while the other read models hold the events back
 * until a full batch or a wait for every read model, so that on MongoDB a document changed on
 * several days is written once per batch instead of once a day (a batch is 60,000 events on
 * MongoDB). This test fails if a wait for the ranking's inputs folds the other read models too
 * (the coalescing is lost), or if it does not fold the ranking's inputs (the ranking would read
 * a stale day). The checks are shared with the LMDB test (projectionThread.support.ts).
 *
 * Needs MONGODB_URL (`bash infra/local/servers.sh up ferretdb`); see test/ports/requireServer.ts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lmdbEventStore } from '../../infra/lmdb/eventStore.ts';
import { mongoReadStore } from '../../infra/mongo/readStore.ts';
import { startProjectionThread } from '../../services/cli/projectionThread.ts';
import { loadConfig } from '../../services/shared/config.ts';
import { describeWithServer } from '../ports/requireServer.ts';
import { dropDatabaseAfterAll } from '../ports/support.ts';
import { appendLaneCatalog, assertRankingReadsFirst } from './projectionThread.support.ts';

describeWithServer('the sample load projection worker on MongoDB', 'MONGODB_URL', (url) => {
  const database = `marquee_lanes_${process.pid}_${Date.now().toString(36)}`;
  dropDatabaseAfterAll(url, database);

  it('folds only the ranking inputs for a wait that names them, and every read model for a wait for all', async function () {
    this.timeout(120_000);
    const dataDir = mkdtempSync(join(tmpdir(), 'marquee-lanes-'));
    const eventStore = lmdbEventStore({ dataDir });
    const readStore = await mongoReadStore({ url, database });
    const thread = await startProjectionThread(loadConfig({ DATA_DIR: dataDir, MONGODB_URL: url, MONGODB_DB: database }), readStore);
    try {
      await assertRankingReadsFirst(thread, readStore, await appendLaneCatalog(eventStore));
    } finally {
      await thread.stop();
      await Promise.allSettled([eventStore.close(), readStore.close()]);
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
