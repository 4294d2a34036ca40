/**
 * The ranking job reads `ranking_inputs` (projections/rankingInputs.ts) instead of every `links`
 * and `media` document: on the sample crawler's catalog, ingested and projected by the pipeline
 * `start` runs, day after day, its entries must be exactly those of the links and media
 * documents (test/fixtures/rankingFromLinks.ts, how the job read them before), and the
 * PositionChanged events it appends exactly those of the charts that way.
 *
 * RANKING_COMPARE_COUNTRIES=all and RANKING_COMPARE_DAYS=7 compare the whole sample week
 * (minutes); the default is 8 countries over 3 days of the full sample catalog.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RankingEntry } from '../../contracts/domain.ts';
import type { PositionChanged, RecordedEvent } from '../../contracts/events.ts';
import type { Clock } from '../../contracts/ports.ts';
import type { ProvidersDoc, RankingOffersBlock } from '../../contracts/readModels.ts';
import { closeLmdb } from '../../infra/lmdb/env.ts';
import { linksProjection, mediaProjection, providersProjection } from '../../projections/index.ts';
import { rankingInputsProjection, rankingOffersPrefix } from '../../projections/rankingInputs.ts';
import { createPipeline } from '../../services/cli/pipeline.ts';
import { crawlDate } from '../../services/crawler/catalog.ts';
import { crawl } from '../../services/crawler/crawl.ts';
import { COUNTRIES } from '../../services/crawler/countries.ts';
import { diffCharts } from '../../services/ranking/diff.ts';
import { rankDay } from '../../services/ranking/job.ts';
import { openAdapters } from '../../services/shared/adapters.ts';
import { loadConfig } from '../../services/shared/config.ts';
import { createLogger } from '../../services/shared/logger.ts';
import { resolveCollection } from '../../services/shared/readModels.ts';
import { entriesFromLinks } from '../fixtures/rankingFromLinks.ts';

const START = '2026-11-17';
const SEED = 42;
const CHART = 200;
const countries = process.env.RANKING_COMPARE_COUNTRIES === 'all'
  ? COUNTRIES.map((c) => c.code)
  : ['US', 'DE', 'GB', 'FR', 'BR', 'JP', 'IN', 'NL'];
const days = Number(process.env.RANKING_COMPARE_DAYS ?? 3);

describe('the ranking job on ranking_inputs, against every links and media document (sample crawl)', () => {
  it(`gives the same entries and position changes in ${countries.length} countries over ${days} days`, async function () {
    this.timeout(1_800_000);
    const dataDir = mkdtempSync(join(tmpdir(), 'marquee-rank-inputs-'));
    const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'warn' });
    const adapters = await openAdapters(config, createLogger({ level: 'warn' }));
    const pipeline = createPipeline(adapters, createLogger({ level: 'warn' }));
    const { readStore, eventStore } = adapters;
    try {
      const previous = new Map<string, RankingEntry[]>();
      let compared = 0;
      let changesCompared = 0;
      for (let day = 0; day < days; day += 1) {
        const date = crawlDate(day, START);
        await crawl({ bus: adapters.bus, seed: SEED, day, startDate: START, countries });
        await pipeline.drain();
        const collections = {
          links: await resolveCollection(readStore, linksProjection),
          media: await resolveCollection(readStore, mediaProjection),
          providers: await resolveCollection(readStore, providersProjection),
        };
        const inputs = await resolveCollection(readStore, rankingInputsProjection);
        const expected = new Map<string, RankingEntry[]>();
        for (const country of countries) expected.set(country, await entriesFromLinks(readStore, collections, country, date));
        // A country is a block per 25 ids (several titles each), not a document per title.
        const us = await readStore.scan<RankingOffersBlock>(inputs, { prefix: rankingOffersPrefix('US') });
        const titles = us.reduce((n, d) => n + d.doc.titles.length, 0);
        assert.equal(titles, await readStore.count(collections.links, { prefix: 'US:' }));
        assert.ok(us.length * 4 < titles, `${us.length} blocks for ${titles} titles`);

        const clock: Clock = { now: () => new Date(`${date}T12:00:00Z`) };
        const ranked = await rankDay({ date, countries, readStore, eventStore, clock, chartSize: CHART });
        assert.deepEqual(ranked.map((r) => r.status), countries.map(() => 'appended'));
        await pipeline.drain();
        for (const country of countries) {
          const want = expected.get(country) ?? [];
          const stream = await eventStore.readStream(`ranking-${country}`);
          const today = stream.filter((e) => (e.data as { date?: string }).date === date);
          const entries = today.flatMap((e) => (e.type === 'RankingComputed' ? e.data.entries : []));
          assert.ok(want.length > 0, `${country} has titles on ${date}`);
          assert.deepEqual(entries, want, `${country} ${date}`);
          const changes = today
            .filter((e): e is RecordedEvent<PositionChanged> => e.type === 'PositionChanged')
            .map(({ data: { mediaId, kind, position, previousPosition } }) => ({ mediaId, kind, position, previousPosition }));
          assert.deepEqual(changes, diffCharts(previous.get(country) ?? null, want, CHART), `${country} ${date} changes`);
          previous.set(country, want);
          compared += want.length;
          changesCompared += changes.length;
        }
        // The providers the job ranked are the crawled countries' (no other country leaks in).
        assert.deepEqual((await readStore.scan<ProvidersDoc>(collections.providers)).map((d) => d.key).sort(), [...countries].sort());
      }
      console.log(`      ${compared} entries and ${changesCompared} position changes identical`);
    } finally {
      await pipeline.stop();
      await adapters.close();
      await closeLmdb(dataDir);
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
