import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { isDeepStrictEqual } from 'node:util';
import { runInNewContext } from 'node:vm';
import { offerKeyString } from '../../contracts/domain.ts';
import type { Observation } from '../../contracts/observations.ts';
import type { ObservationBus } from '../../contracts/ports.ts';
import { crawlSummary, generateCrawl } from '../../services/crawler/catalog.ts';
import { countryIndex, countryInfo } from '../../services/crawler/countries.ts';
import type { CountryInfo } from '../../services/crawler/countries.ts';
import { crawl } from '../../services/crawler/crawl.ts';
import { epochDayOf } from '../../services/crawler/dates.ts';
import { seasonsOn } from '../../services/crawler/media.ts';
import { isListed, offersOnDay } from '../../services/crawler/offers.ts';
import { catalogPlan } from '../../services/crawler/titles.ts';

const START = epochDayOf('2026-11-14');

function recordingBus(): { bus: ObservationBus; batches: Observation[][] } {
  const batches: Observation[][] = [];
  const refuse = () => Promise.reject(new Error('not used by the crawler'));
  const bus: ObservationBus = {
    publish: async (observations) => {
      batches.push(observations);
    },
    consume: () => {
      throw new Error('not used by the crawler');
    },
    deadLetter: refuse,
    listDeadLetters: refuse,
    countDeadLetters: refuse,
    close: async () => {},
  };
  return { bus, batches };
}

describe('sample crawler: streaming and scale', function () {
  this.timeout(120_000);

  it('streams a synthetic catalog of 20,000 titles with flat memory', () => {
    let media = 0;
    let shows = 0;
    let translations = 0;
    // What the crawl holds, not the garbage between collections: that depended on the heap the
    // tests before had left (in one run of the whole suite it reached 301 MB) and told nothing
    // about the crawl. A collection at each checkpoint leaves what is still referenced.
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    gc();
    const baseline = process.memoryUsage().heapUsed;
    let peak = 0;
    for (const o of generateCrawl({ titles: 20_000, countries: ['US', 'GB'] })) {
      if (o.type === 'MediaObserved') {
        media++;
        if (o.data.contentType === 'tv_show') shows++;
        if (media % 2000 === 0) {
          gc();
          peak = Math.max(peak, process.memoryUsage().heapUsed - baseline);
        }
      } else if (o.type === 'MediaTranslationObserved') {
        translations++;
      }
    }
    assert.equal(media, 20_000);
    assert.equal(translations, 160_000);
    assert.ok(shows > 3000 && shows < 5000, `${shows} shows`);
    // Holding 20,000 titles' observations would take several hundred MB.
    assert.ok(peak < 50_000_000, `the crawl holds ${Math.round(peak / 1e6)} MB`);
  });

  it('starts streaming a 250,000-title catalog at once instead of building it first', () => {
    const started = performance.now();
    let n = 0;
    let lastSourceId = 0;
    for (const o of generateCrawl({ titles: 250_000 })) {
      if (o.type === 'MediaObserved') lastSourceId = o.data.sourceId;
      if (++n === 5000) break;
    }
    assert.equal(n, 5000);
    assert.ok(lastSourceId > 1000 && lastSourceId < 2000, `only the first titles were generated (${lastSourceId})`);
    assert.ok(performance.now() - started < 15_000);
  });

  it('publishes through the bus in batches and returns the counts per type', async () => {
    const { bus, batches } = recordingBus();
    const progress: number[] = [];
    const options = { titles: 300, countries: ['NZ', 'IE'], seed: 5 };
    const counts = await crawl({ bus, ...options, batchSize: 250, onProgress: (n) => progress.push(n) });
    const expected = crawlSummary(options);
    assert.deepEqual(counts, expected.counts);
    const published = batches.flat();
    assert.equal(published.length, expected.total);
    assert.ok(batches.every((b) => b.length > 0 && b.length <= 250));
    assert.deepEqual(progress, batches.map((_, i) => batches.slice(0, i + 1).reduce((n, b) => n + b.length, 0)));
    assert.deepEqual(published.map((o) => o.observationId), [...generateCrawl(options)].map((o) => o.observationId));
  });

  it('withdraws the seasonal collection from day 2 on and refreshes weekly featured every seventh day', () => {
    const kinds = (day: number) => {
      const out = { withdrawn: [] as string[], weekly: 0, daily: 0 };
      for (const o of generateCrawl({ titles: 400, countries: ['US'], day })) {
        if (o.type === 'CollectionObserved' && o.data.status === 'withdrawn') out.withdrawn.push(o.data.slug);
        if (o.type === 'FeaturedObserved') out[o.data.period]++;
      }
      return out;
    };
    assert.deepEqual(kinds(1), { withdrawn: [], weekly: 0, daily: 1 });
    assert.deepEqual(kinds(2), { withdrawn: ['holiday-countdown'], weekly: 0, daily: 1 });
    assert.deepEqual(kinds(7), { withdrawn: ['holiday-countdown'], weekly: 1, daily: 1 });
  });

  it('removes an offer the day after its availableTo date', () => {
    const plan = catalogPlan({ seed: 1, startDay: START });
    const us = countryInfo('US') as CountryInfo;
    const ci = countryIndex('US');
    let checked = 0;
    for (let i = 0; i < plan.baseCount && checked < 5; i++) {
      const t = plan.titleAt(i);
      if (!isListed(1, t, us, ci)) continue;
      for (const offer of offersOnDay(1, t, us, ci, 0, START).offers) {
        if (offer.availableTo === null) continue;
        const lastDay = epochDayOf(offer.availableTo) - START;
        const keyOf = (day: number) => offersOnDay(1, t, us, ci, day, START).offers.map(offerKeyString);
        assert.ok(keyOf(lastDay).includes(offerKeyString(offer)), 'still listed on its last day');
        assert.ok(!keyOf(lastDay + 1).includes(offerKeyString(offer)), 'gone the day after');
        checked++;
      }
    }
    assert.equal(checked, 5);
  });

  it('lists some offers ahead of their first day, as they will be on it', () => {
    const plan = catalogPlan({ seed: 1, startDay: START });
    const us = countryInfo('US') as CountryInfo;
    const ci = countryIndex('US');
    const DAY = 30;
    let checked = 0;
    for (let i = 0; i < plan.baseCount && checked < 5; i++) {
      const t = plan.titleAt(i);
      if (!isListed(1, t, us, ci)) continue;
      for (const offer of offersOnDay(1, t, us, ci, DAY, START).offers) {
        if (offer.availableFrom === null || epochDayOf(offer.availableFrom) <= START + DAY) continue;
        const first = epochDayOf(offer.availableFrom) - START;
        const on = (day: number) => offersOnDay(1, t, us, ci, day, START);
        const same = (day: number) => on(day).offers.find((o) => offerKeyString(o) === offerKeyString(offer));
        // Listed from 3 to 14 days before, unchanged until and on its first day.
        assert.ok(first - DAY <= 14, `listed ${first - DAY} days ahead`);
        assert.deepEqual(same(first - 1), offer);
        assert.deepEqual(same(first), offer, 'the same offer once its day has come');
        let listed = DAY;
        while (listed > 0 && isDeepStrictEqual(same(listed - 1), offer)) listed -= 1;
        assert.ok(first - listed >= 3 && first - listed <= 14, `listed ${first - listed} days ahead`);
        // The crawl reports the listing on the day the announcement appears.
        if (listed > 0) assert.equal(on(listed).changedToday, true);
        checked++;
      }
    }
    assert.equal(checked, 5);
  });

  it('adds the weekly episodes of a show in production as the days pass', () => {
    const plan = catalogPlan({ seed: 1, startDay: START });
    let found = false;
    for (let i = plan.baseCount - 800; i < plan.baseCount && !found; i++) {
      const t = plan.titleAt(i);
      if (!t.show?.inProduction) continue;
      const episodes = (day: number) => seasonsOn(1, t, START + day).seasons.reduce((n, s) => n + s.episodes.length, 0);
      const total = t.show.episodes.reduce((a, b) => a + b, 0);
      if (episodes(0) >= total) continue;
      assert.equal(episodes(7), Math.min(total, episodes(0) + 1));
      found = true;
    }
    assert.ok(found, 'some show is still airing on day 0');
  });
});
