/**
 * The daily ranking job on the MongoDB read store (FerretDB 1.24 in CI) over a catalog of many
 * pages. The job pages its inputs (`ranking_inputs`, a block of 25 titles a document) by
 * key (`scan({ prefix, start, limit })`); FerretDB pushes no key range and no sort down to
 * PostgreSQL, so a store that scanned by `_id` range read the whole collection for every page and
 * the job's reads grew with the square of the catalog (it stalled on the sample). The read store
 * now reads a page through its key directory (infra/mongo/keys.ts): this test fails if paging
 * costs a full read per page again.
 *
 * Needs MONGODB_URL (`bash infra/local/servers.sh up ferretdb`); see test/ports/requireServer.ts.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RankingComputed, RecordedEvent } from '../../contracts/events.ts';
import type { Clock, ReadStore } from '../../contracts/ports.ts';
import { lmdbEventStore } from '../../infra/lmdb/eventStore.ts';
import { mongoReadStore } from '../../infra/mongo/readStore.ts';
import { defaultCollectionName } from '../../projections/collections.ts';
import { rankingInputsProjection } from '../../projections/rankingInputs.ts';
import { rankDay } from '../../services/ranking/job.ts';
import { describeWithServer } from '../ports/requireServer.ts';
import { dropDatabaseAfterAll } from '../ports/support.ts';
import { foldRankingInputs, offered, registered } from '../fixtures/ranking.ts';
import { details, offer, provider } from '../unit/projectionEvents.ts';

/**
 * Enough that a whole read costs several times a query's fixed cost on FerretDB (~0.1 s): with
 * 3,000 titles a page cost half a whole read, and the time check below could not tell paging
 * from reading everything on a loaded machine (it failed once in CI at 8x).
 */
const TITLES = 12_000;
/** Blocks of inputs per page: 480 blocks of 25 titles, so 40 pages and the empty one after. */
const PAGE = 12;
const INPUTS = defaultCollectionName(rankingInputsProjection);
const clock: Clock = { now: () => new Date('2026-03-02T03:00:00Z') };
const idOf = (i: number) => `mv${String(i).padStart(8, '0')}`;

describeWithServer('rankDay on the MongoDB read store', 'MONGODB_URL', (url) => {
  const database = `marquee_rank_${process.pid}_${Date.now().toString(36)}`;
  dropDatabaseAfterAll(url, database);

  it(`ranks ${TITLES} titles read ${PAGE} at a time, each page costing a page, not the collection`, async function () {
    this.timeout(300_000);
    const dataDir = mkdtempSync(join(tmpdir(), 'marquee-rank-mongo-'));
    const store = await mongoReadStore({ url, database });
    const eventStore = lmdbEventStore({ dataDir, clock });
    try {
      await store.writeBatch('providers_v1', [{ key: 'US', doc: { country: 'US', providers: [provider('netflix', 100)] }, position: 1 }]);
      for (let from = 0; from < TITLES; from += 1000) {
        const ids = Array.from({ length: Math.min(1000, TITLES - from) }, (_, i) => idOf(from + i));
        // Popularity falls with the id, so the chart is the ids in order.
        await foldRankingInputs(store, ids.map((id, i) => registered(id, details({ popularity: TITLES - from - i, tmdbRating: 7, voteCount: 100, releaseDate: '2025-01-01' }))));
        await foldRankingInputs(store, ids.map((id) => offered(id, 'US', offer({ providerId: 'netflix', webUrl: `https://n/${id}` }))));
      }
      // Another country sharing the prefix's first letters must stay out of the US pages.
      await foldRankingInputs(store, [offered('mv99999999', 'USX', offer())]);

      // What reading every US input once costs here: the yardstick of the job's paged reads.
      const once = async () => {
        const started = performance.now();
        assert.equal((await store.scan(INPUTS, { prefix: 'o:US:' })).length, TITLES / 25);
        return performance.now() - started;
      };
      const whole = Math.max(await once(), await once());

      let scans = 0;
      let scanMs = 0;
      const timed: ReadStore = {
        ...store,
        async scan(collection, options) {
          const started = performance.now();
          try {
            return await store.scan(collection, options);
          } finally {
            if (collection === INPUTS) {
              scans += 1;
              scanMs += performance.now() - started;
            }
          }
        },
      };
      const [us] = await rankDay({ date: '2026-03-01', countries: ['US'], readStore: timed, eventStore, clock, chartSize: 10, pageSize: PAGE });
      assert.equal(us?.ranked, TITLES);
      const [computed] = (await eventStore.readStream('ranking-US')) as Array<RecordedEvent<RankingComputed>>;
      assert.deepEqual(computed?.data.entries.slice(0, 3).map((e) => e.mediaId), [idOf(0), idOf(1), idOf(2)]);
      assert.equal(scans, TITLES / 25 / PAGE + 1, 'one scan per page, and the empty one after the last full page');
      // Paging by reading the whole collection each time costs about one whole read per page
      // (41 here); reading only the page costs about one whole read in all, plus each page's
      // way down the directory and a query's fixed cost (about 7 whole reads in all, quiet).
      // Twenty sits between the two, with room for a loaded machine either way.
      console.log(`      ${scans} paged scans ${scanMs.toFixed(0)} ms, one whole read ${whole.toFixed(0)} ms`);
      assert.ok(scanMs < 20 * whole, `${scans} paged scans took ${scanMs.toFixed(0)} ms, one whole read ${whole.toFixed(0)} ms`);
    } finally {
      await eventStore.close();
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
