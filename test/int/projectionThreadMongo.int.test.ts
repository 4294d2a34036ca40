/**
 * The sample load's projection worker on the MongoDB read store (FerretDB 1.24 in CI). A day of
 * the load waits only for the read models the ranking reads (`RANKING_READS`): the worker folds
 * them up to that wait in a lane of their own, while the other read models hold the events back
 * until a full batch or a wait for every read model, so that on MongoDB a document changed on
 * several days is written once per batch instead of once a day. This test fails if a wait for
 * the ranking's inputs folds the other read models too (the coalescing is lost), or if it does
 * not fold the ranking's inputs (the ranking would read a stale day).
 *
 * Needs MONGODB_URL (`bash infra/local/servers.sh up ferretdb`); see test/ports/requireServer.ts.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { streams } from '../../contracts/ids.ts';
import { lmdbEventStore } from '../../infra/lmdb/eventStore.ts';
import { mongoReadStore } from '../../infra/mongo/readStore.ts';
import { ALL_PROJECTIONS } from '../../projections/index.ts';
import { defaultCollectionName } from '../../projections/collections.ts';
import { mediaProjection } from '../../projections/media.ts';
import { rankingInputsProjection, rankingOffersPrefix } from '../../projections/rankingInputs.ts';
import { startProjectionThread } from '../../services/cli/projectionThread.ts';
import { RANKING_READS } from '../../services/ranking/job.ts';
import { loadConfig } from '../../services/shared/config.ts';
import { describeWithServer } from '../ports/requireServer.ts';
import { dropDatabaseAfterAll } from '../ports/support.ts';
import { details, offer, provider } from '../unit/projectionEvents.ts';

const TITLES = 40;
const idOf = (i: number) => `mv${String(i).padStart(8, '0')}`;

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
      await eventStore.append(streams.providers('US'), [{ type: 'ProviderAdded', data: { country: 'US', provider: provider('netflix', 100) }, metadata: {} }], 'no_stream');
      for (let i = 0; i < TITLES; i += 1) {
        const mediaId = idOf(i);
        await eventStore.append(
          streams.media(mediaId),
          [{ type: 'MediaRegistered', data: { mediaId, kind: 'movie', sourceId: i, slug: mediaId, details: details() }, metadata: {} }],
          'no_stream',
        );
        await eventStore.append(
          streams.availability(mediaId, 'US'),
          [{ type: 'OfferAdded', data: { mediaId, country: 'US', offer: offer({ providerId: 'netflix', webUrl: `https://n/${mediaId}` }) }, metadata: {} }],
          'no_stream',
        );
      }
      const head = await eventStore.headPosition();
      assert.equal(head, 1 + 2 * TITLES);
      const checkpoints = () => readStore.getCheckpoints(ALL_PROJECTIONS.map(defaultCollectionName));
      const isRankingRead = ALL_PROJECTIONS.map((p) => RANKING_READS.includes(p));

      await thread.waitFor(head, undefined, undefined, RANKING_READS);
      const ahead = await checkpoints();
      ALL_PROJECTIONS.forEach((projection, i) => {
        if (isRankingRead[i]) assert.ok((ahead[i] as number) >= head, `${projection.name} at ${ahead[i]}, not ${head}`);
        // Far below a full batch (60,000 events on MongoDB): held back for a wait that names them.
        else assert.equal(ahead[i], 0, `${projection.name} folded before a wait asked for it`);
      });
      const inputs = await readStore.scan(defaultCollectionName(rankingInputsProjection), { prefix: rankingOffersPrefix('US') });
      assert.ok(inputs.length > 0, 'no ranking offers block for US');
      assert.equal(await readStore.count(defaultCollectionName(mediaProjection)), 0);

      await thread.waitFor(head);
      const all = await checkpoints();
      ALL_PROJECTIONS.forEach((projection, i) => assert.ok((all[i] as number) >= head, `${projection.name} at ${all[i]}, not ${head}`));
      assert.equal(await readStore.count(defaultCollectionName(mediaProjection)), TITLES);
    } finally {
      await thread.stop();
      await Promise.allSettled([eventStore.close(), readStore.close()]);
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
