/**
 * What the projection worker's lane tests share (projectionThread.int.test.ts on LMDB,
 * projectionThreadMongo.int.test.ts on MongoDB): a small catalog far below a batch, and the
 * checks that a wait naming the ranking's read models folds those alone, and a wait for all
 * folds every one.
 */
import assert from 'node:assert/strict';
import { streams } from '../../contracts/ids.ts';
import type { EventStore, ReadStore } from '../../contracts/ports.ts';
import { ALL_PROJECTIONS } from '../../projections/index.ts';
import { defaultCollectionName } from '../../projections/collections.ts';
import { mediaProjection } from '../../projections/media.ts';
import { rankingInputsProjection, rankingOffersPrefix } from '../../projections/rankingInputs.ts';
import type { ProjectionThread } from '../../services/cli/projectionThread.ts';
import { RANKING_READS } from '../../services/ranking/job.ts';
import { details, offer, provider } from '../unit/projectionEvents.ts';

export const TITLES = 40;
const idOf = (i: number) => `mv${String(i).padStart(8, '0')}`;

/** A provider, then per title its media and its US offer: returns the head, 1 + 2 * TITLES. */
export async function appendLaneCatalog(eventStore: EventStore): Promise<number> {
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
  return head;
}

/**
 * A wait naming RANKING_READS folds them up to `head` and leaves every other read model at 0
 * (far below a full batch: held back for a wait that names them); a wait for all folds them all.
 */
export async function assertRankingReadsFirst(thread: ProjectionThread, readStore: ReadStore, head: number): Promise<void> {
  const checkpoints = () => readStore.getCheckpoints(ALL_PROJECTIONS.map(defaultCollectionName));
  const isRankingRead = ALL_PROJECTIONS.map((p) => RANKING_READS.includes(p));

  await thread.waitFor(head, undefined, undefined, RANKING_READS);
  const ahead = await checkpoints();
  ALL_PROJECTIONS.forEach((projection, i) => {
    if (isRankingRead[i]) assert.ok((ahead[i] as number) >= head, `${projection.name} at ${ahead[i]}, not ${head}`);
    else assert.equal(ahead[i], 0, `${projection.name} folded before a wait asked for it`);
  });
  const inputs = await readStore.scan(defaultCollectionName(rankingInputsProjection), { prefix: rankingOffersPrefix('US') });
  assert.ok(inputs.length > 0, 'no ranking offers block for US');
  assert.equal(await readStore.count(defaultCollectionName(mediaProjection)), 0);

  await thread.waitFor(head);
  const all = await checkpoints();
  ALL_PROJECTIONS.forEach((projection, i) => assert.ok((all[i] as number) >= head, `${projection.name} at ${all[i]}, not ${head}`));
  assert.equal(await readStore.count(defaultCollectionName(mediaProjection)), TITLES);
}
