/**
 * The search-index feed (services/shared/searchFeed.ts) on LMDB and the in-process index:
 * at least once after the index failed (the bug it replaces: a failed feed was retried with the
 * read-model batch, whose fold skipped what was already folded, so those titles never reached
 * the index), never ahead of the `search` read model, and never holding the projections back.
 * The same behaviour against a real OpenSearch is in test/e2e/hostile.projections.e2e.test.ts.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppError } from '../../contracts/errors.ts';
import type { SearchIndex, SearchWrite } from '../../contracts/ports.ts';
import { searchProjection } from '../../projections/index.ts';
import { createPipeline } from '../../services/cli/pipeline.ts';
import { openAdapters, type Adapters } from '../../services/shared/adapters.ts';
import { loadConfig } from '../../services/shared/config.ts';
import { Health } from '../../services/shared/health.ts';
import { silentLogger } from '../../services/shared/logger.ts';
import { resolveCollection } from '../../services/shared/readModels.ts';
import { LEGACY_SEARCH_FEED_CHECKPOINT, searchFeedCheckpoint, SearchFeed } from '../../services/shared/searchFeed.ts';
import { fixtureStreams, IDS } from '../e2e/api.fixture.ts';
import { waitFor } from '../ports/support.ts';

describe('search-index feed (LMDB, in-process index)', function () {
  this.timeout(30_000);
  let dir: string;
  let adapters: Adapters;
  let failing: boolean;
  let written: SearchWrite[][];

  beforeEach(async function () {
    dir = mkdtempSync(join(tmpdir(), 'marquee-feed-'));
    const opened = await openAdapters(loadConfig({ DATA_DIR: dir }), silentLogger);
    const index = opened.search;
    failing = false;
    written = [];
    // The index as it is, except that it answers 503 while `failing`.
    const search: SearchIndex = {
      ...index,
      write: async (writes) => {
        if (failing) throw new AppError('unavailable', 'the index answered 503', { retriable: true });
        written.push(writes);
        await index.write(writes);
      },
    };
    adapters = { ...opened, search };
  });

  afterEach(async function () {
    await adapters?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const find = (q: string) => adapters.search.search({ q, country: 'US', lang: 'en', limit: 10, offset: 0 });

  it('delivers what the read model folded while the index was failing, once it answers again, without holding the projections', async function () {
    const health = new Health();
    const pipeline = createPipeline(adapters, silentLogger, { health });
    // Start-up of an in-process index: refilled (from an empty read model) before anything runs.
    assert.equal(await pipeline.refillSearch(), 0);
    for (const { stream, events } of fixtureStreams()) await adapters.eventStore.append(stream, events, 'no_stream');

    failing = true;
    await pipeline.projections.catchUp();
    const { readStore, eventStore } = adapters;
    const searchCheckpoint = await readStore.getCheckpoint(await resolveCollection(readStore, searchProjection));
    assert.equal(searchCheckpoint, await eventStore.headPosition(), 'the projections went on without the index');
    await assert.rejects(pipeline.searchFeed.step(), /503/);
    assert.equal(await pipeline.searchFeed.checkpoint(), 0);
    assert.equal(await adapters.search.count(), 0);

    failing = false;
    assert.equal(await pipeline.searchFeed.catchUp(), true);
    assert.equal(await pipeline.searchFeed.checkpoint(), searchCheckpoint);
    assert.equal(await adapters.search.count(), 3);
    assert.deepEqual((await find('land girls')).ids, [IDS.landGirls]);
    // Each title written once, at the position of its read-model document.
    const docs = await readStore.getMany(await resolveCollection(readStore, searchProjection), [IDS.landGirls, IDS.rapidFire, IDS.harbor]);
    assert.deepEqual(
      written.flat().map((w) => [w.id, w.version]).sort(),
      docs.map((d) => [d?.key, d?.position]).sort(),
    );
  });

  it('runs live beside the projections, follows new events, and says in Health when the index fails', async function () {
    const health = new Health();
    const pipeline = createPipeline(adapters, silentLogger, { health });
    await pipeline.refillSearch();
    pipeline.start();
    try {
      failing = true;
      for (const { stream, events } of fixtureStreams()) await adapters.eventStore.append(stream, events, 'no_stream');
      await waitFor('the feed to back off', () => health.get('search-feed')?.state === 'backing_off');
      assert.match(health.get('search-feed')?.lastError ?? '', /503/);
      failing = false;
      await waitFor('the titles in the index', async () => (await adapters.search.count()) === 3);
      await waitFor('the feed to run again', () => health.get('search-feed')?.state === 'running');
      // The projections went on while the index failed.
      assert.equal(health.get('projections')?.state, 'running');
      assert.deepEqual(health.get('projections')?.detail, { parked: {} });
      assert.deepEqual(health.get('search-feed')?.detail?.lag, 0);
    } finally {
      await pipeline.stop();
    }
    assert.equal(health.get('search-feed')?.state, 'stopped');
    assert.equal(health.get('projections')?.state, 'stopped');
  });

  it('feeds an index under a new prefix from the start, and goes on from the one checkpoint of earlier versions for an index that holds titles', async function () {
    for (const { stream, events } of fixtureStreams()) await adapters.eventStore.append(stream, events, 'no_stream');
    const pipeline = createPipeline(adapters, silentLogger);
    await pipeline.projections.catchUp();
    const { readStore, eventStore } = adapters;
    const searchHead = await readStore.getCheckpoint(await resolveCollection(readStore, searchProjection));
    const feed = (prefix: string) => new SearchFeed({
      eventStore, readStore, search: adapters.search, logger: silentLogger, checkpointName: searchFeedCheckpoint(prefix),
    });
    // Where an earlier version's feed was, for every index: at the head.
    await readStore.setCheckpoint(LEGACY_SEARCH_FEED_CHECKPOINT, await eventStore.headPosition());
    assert.equal(await adapters.search.count(), 0);

    // An empty index (a new prefix): fed from position 0, every title written.
    assert.equal(await feed('marquee-search-rebuilt').catchUp(), true);
    assert.deepEqual(written.flat().map((w) => w.id).sort(), [IDS.landGirls, IDS.rapidFire, IDS.harbor].sort());
    assert.equal(await readStore.getCheckpoint(searchFeedCheckpoint('marquee-search-rebuilt')), searchHead);

    // An index holding titles, fed under the old checkpoint: it goes on from there, nothing rewritten.
    written = [];
    assert.equal(await feed('marquee-search').catchUp(), true);
    assert.deepEqual(written, []);
    assert.equal(await readStore.getCheckpoint(searchFeedCheckpoint('marquee-search')), await eventStore.headPosition());
    assert.notEqual(searchFeedCheckpoint('a'), searchFeedCheckpoint('b'));
  });
});
