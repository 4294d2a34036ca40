import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { FORMATS, LOCALES, offerKeyString, PLATFORMS, PRICE_TYPES } from '../../contracts/domain.ts';
import { isAppError } from '../../contracts/errors.ts';
import { isIsoDate, mediaIdOf } from '../../contracts/ids.ts';
import type { Observation, ObservationType } from '../../contracts/observations.ts';
import { crawlDate, generateCrawl, observedAtFor } from '../../services/crawler/catalog.ts';
import { COUNTRY_CODES, COUNTRY_LANGUAGE } from '../../services/crawler/countries.ts';
import { GENRES } from '../../services/crawler/genres.ts';
import { allCatalogProviders } from '../../services/crawler/providers.ts';
import { vegaMovies } from '../../services/crawler/titles.ts';
import { validateObservation } from '../../contracts/codec.ts';

const RFC3339_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/;
const IMAGE = /^\/(posters|backdrops)\/\{size\}\/[A-Za-z0-9]{27}\.\{ext\}$/;
const LANGUAGE = /^[a-z]{2}$/;

function hashOf(observations: Iterable<Observation>): { hash: string; count: number } {
  const h = createHash('sha256');
  let count = 0;
  for (const o of observations) {
    h.update(JSON.stringify(o));
    count++;
  }
  return { hash: h.digest('hex'), count };
}

/** Everything the tests need from one pass over the default day-0 crawl. */
interface Day0 {
  counts: Record<string, number>;
  offers: number;
  problems: string[];
  ids: number;
  media: Map<string, { popularity: number | null; title: string; year: number | null }>;
  offerSets: Map<string, string>;
  collectionsPerCountry: Map<string, number>;
  firstObservedAt: string;
  lastObservedAt: string;
  featuredDaily: Map<string, string>;
  imdbIds: Set<string>;
}

function structuralProblems(o: Observation, providerIds: Map<string, Map<string, string | null>>, day: number): string[] {
  const out: string[] = [];
  const fail = (what: string) => out.push(`${o.observationId}: ${what}`);
  const reason = validateObservation(o);
  if (reason !== null) fail(`ingest refuses it: ${reason}`);
  if (!RFC3339_MS.test(o.observedAt)) fail(`observedAt ${o.observedAt}`);
  const date = (v: string | null, what: string) => {
    if (v !== null && !isIsoDate(v)) fail(`${what} ${v} is not a date`);
  };
  const country = (c: string) => {
    if (!COUNTRY_CODES.includes(c)) fail(`country ${c} is not an upper-case catalog country`);
  };
  switch (o.type) {
    case 'MediaObserved': {
      const d = o.data;
      date(d.releaseDate, 'releaseDate');
      date(d.lastAirDate, 'lastAirDate');
      for (const img of [d.poster, d.backdrop]) if (img !== null && !IMAGE.test(img)) fail(`image path ${img}`);
      for (const g of d.genreIds) if (!GENRES.some((x) => x.id === g)) fail(`genre ${g}`);
      if (d.genreIds.length === 0) fail('no genre');
      for (const r of d.contentRatings) if (!/^[A-Z]{2}$/.test(r.country)) fail(`content rating country ${r.country}`);
      if (!d.cast.some((c) => c.role === 'director')) fail('no director');
      if ((d.contentType === 'movie') !== (d.inProduction === null)) fail('inProduction is for shows only');
      break;
    }
    case 'MediaTranslationObserved':
      if (!(LOCALES as readonly string[]).includes(o.data.language)) fail(`language ${o.data.language}`);
      break;
    case 'SeasonsObserved':
      for (const s of o.data.seasons) {
        date(s.airDate, 'season airDate');
        if (s.episodes.length === 0) fail(`season ${s.seasonNumber} has no episodes`);
        for (const e of s.episodes) date(e.airDate, 'episode airDate');
      }
      break;
    case 'AvailabilityObserved': {
      country(o.data.country);
      const providers = providerIds.get(o.data.country) ?? new Map();
      const keys = new Set<string>();
      for (const offer of o.data.offers) {
        const key = offerKeyString(offer);
        if (keys.has(key)) fail(`duplicate offer ${key}`);
        keys.add(key);
        if (!providers.has(offer.providerId)) fail(`provider ${offer.providerId} not listed in ${o.data.country}`);
        if (offer.addonProviderId !== null && providers.get(offer.addonProviderId) !== offer.providerId) {
          fail(`add-on ${offer.addonProviderId} is not a child of ${offer.providerId}`);
        }
        for (const p of offer.priceTypes ?? []) if (!PRICE_TYPES.includes(p)) fail(`price type ${p}`);
        for (const f of offer.formats ?? []) if (!FORMATS.includes(f)) fail(`format ${f}`);
        for (const p of offer.platforms ?? []) if (!PLATFORMS.includes(p)) fail(`platform ${p}`);
        for (const l of [...(offer.audioLanguages ?? []), ...(offer.subtitleLanguages ?? [])]) if (!LANGUAGE.test(l)) fail(`language ${l}`);
        date(offer.availableFrom, 'availableFrom');
        date(offer.availableTo, 'availableTo');
        // An offer whose end date has passed is no longer listed.
        if (offer.availableTo !== null && offer.availableTo < crawlDate(day)) fail(`expired offer listed (${offer.availableTo})`);
        if (!/^https:\/\/[a-z0-9.-]+\//.test(offer.webUrl)) fail(`web url ${offer.webUrl}`);
        if (o.data.contentType === 'movie' && offer.seasonNumber !== null) fail('season offer on a movie');
      }
      break;
    }
    case 'ProvidersObserved':
      country(o.data.country);
      break;
    case 'CollectionObserved':
      if (o.data.country !== null) country(o.data.country);
      break;
    case 'FeaturedObserved':
      country(o.data.country);
      if (o.data.items.length < 10 || o.data.items.length > 20) fail(`${o.data.items.length} featured items`);
      break;
    case 'GenresObserved':
      break;
  }
  return out;
}

function providerIndex(): Map<string, Map<string, string | null>> {
  const out = new Map<string, Map<string, string | null>>();
  for (const [country, list] of allCatalogProviders()) out.set(country, new Map(list.map((p) => [p.id, p.parentId])));
  return out;
}

function scanDay0(): Day0 {
  const providers = providerIndex();
  const result: Day0 = {
    counts: {},
    offers: 0,
    problems: [],
    ids: 0,
    media: new Map(),
    offerSets: new Map(),
    collectionsPerCountry: new Map(),
    firstObservedAt: '',
    lastObservedAt: '',
    featuredDaily: new Map(),
    imdbIds: new Set(),
  };
  const ids = new Set<string>();
  let previousAt = '';
  for (const o of generateCrawl({ day: 0 })) {
    result.counts[o.type] = (result.counts[o.type] ?? 0) + 1;
    if (ids.has(o.observationId)) result.problems.push(`duplicate observation id ${o.observationId}`);
    ids.add(o.observationId);
    if (o.observedAt < previousAt) result.problems.push(`${o.observationId} observed before the record preceding it`);
    previousAt = o.observedAt;
    if (result.firstObservedAt === '') result.firstObservedAt = o.observedAt;
    result.lastObservedAt = o.observedAt;
    if (result.problems.length < 20) result.problems.push(...structuralProblems(o, providers, 0));
    if (o.type === 'MediaObserved') {
      result.media.set(mediaIdOf(o.data.contentType, o.data.sourceId), { popularity: o.data.popularity, title: o.data.title, year: o.data.year });
      for (const e of o.data.externalIds) if (e.source === 'imdb') result.imdbIds.add(e.id);
    } else if (o.type === 'AvailabilityObserved') {
      result.offers += o.data.offers.length;
      result.offerSets.set(`${mediaIdOf(o.data.contentType, o.data.sourceId)}-${o.data.country}`, JSON.stringify(o.data.offers));
    } else if (o.type === 'CollectionObserved') {
      const key = o.data.country ?? 'global';
      result.collectionsPerCountry.set(key, (result.collectionsPerCountry.get(key) ?? 0) + 1);
      for (const item of o.data.items) {
        if (!result.media.has(mediaIdOf(item.contentType, item.sourceId))) result.problems.push(`${o.data.slug} lists an unknown title`);
      }
    } else if (o.type === 'FeaturedObserved' && o.data.period === 'daily') {
      result.featuredDaily.set(o.data.country, JSON.stringify(o.data.items));
    }
  }
  result.ids = ids.size;
  return result;
}

describe('sample crawler: the default catalog on day 0', function () {
  this.timeout(120_000);
  let day0: Day0;

  before(() => {
    day0 = scanDay0();
  });

  it('emits the expected number of observations of each type', () => {
    const movies = vegaMovies().length;
    assert.equal(movies, 3201);
    assert.equal(day0.counts.GenresObserved, 1);
    assert.equal(day0.counts.ProvidersObserved, 50);
    assert.equal(day0.counts.MediaObserved, movies + 800);
    assert.equal(day0.counts.MediaTranslationObserved, (movies + 800) * 8);
    assert.equal(day0.counts.SeasonsObserved, 800);
    assert.equal(day0.counts.FeaturedObserved, 100, 'daily and weekly for each of 50 countries');
    const availability = day0.counts.AvailabilityObserved ?? 0;
    assert.ok(availability >= 40_000 && availability <= 60_000, `${availability} AvailabilityObserved`);
    assert.ok(day0.offers >= 150_000 && day0.offers <= 250_000, `${day0.offers} offers`);
  });

  it('passes the structural checks of ingest and of the contracts for every observation', () => {
    assert.deepEqual(day0.problems, []);
    assert.equal(day0.ids, Object.values(day0.counts).reduce((a, b) => a + b, 0), 'observation ids are unique');
  });

  it('stamps observations from 06:00Z of the start date, in non-decreasing order', () => {
    assert.equal(day0.firstObservedAt, '2026-11-14T06:00:00.000Z');
    assert.ok(day0.lastObservedAt > day0.firstObservedAt && day0.lastObservedAt < '2026-11-14T08:00:00Z');
  });

  it('keeps every vega-datasets movie, including numeric titles and duplicates, with stable source ids', () => {
    assert.equal(day0.media.get('mv00001000')?.title, 'The Land Girls');
    const titles = [...day0.media.entries()].filter(([id]) => id.startsWith('mv')).map(([, m]) => m.title);
    assert.ok(titles.includes('1776') && titles.includes('300'), 'numeric titles become strings');
    assert.ok(titles.length - new Set(titles).size >= 20, 'duplicate titles keep distinct source ids');
    assert.equal(day0.imdbIds.size, day0.media.size, 'every title has its own IMDb id');
    const gone = [...day0.media.values()].find((m) => m.title === 'Gone with the Wind');
    assert.equal(gone?.year, 1939, 'two-digit years are put back in the right century');
    // The data set's accented titles were Windows-1252 read as Mac Roman (LÈon, DÈj‡ Vu).
    for (const repaired of ['Léon', 'Déjà Vu', "Le Fabuleux destin d'Amélie Poulain", 'Die Fälscher', 'The Naked Gun 2½: The Smell of Fear', 'Alien³', 'Ri¢hie Ri¢h']) {
      assert.ok(titles.includes(repaired), repaired);
    }
    assert.deepEqual(titles.filter((t) => /[ÈÍ˘Ö‰‡ËÛÙÎ]/.test(t)), [], 'no title read in the wrong code page');
  });

  it('publishes 5-20 collections per country plus global ones, all naming catalog titles', () => {
    for (const code of COUNTRY_CODES) {
      const n = day0.collectionsPerCountry.get(code) ?? 0;
      assert.ok(n >= 5 && n <= 20, `${code} has ${n} collections`);
    }
    assert.equal(day0.collectionsPerCountry.get('global'), 3);
  });

  it('changes a bounded share of listings on day 1 and re-crawls some unchanged ones', () => {
    let changed = 0;
    let unchanged = 0;
    let newListings = 0;
    let emptied = 0;
    let popularityMoved = 0;
    let media = 0;
    const counts: Partial<Record<ObservationType, number>> = {};
    const providers = providerIndex();
    const problems: string[] = [];
    let featuredChanged = 0;
    for (const o of generateCrawl({ day: 1 })) {
      counts[o.type] = (counts[o.type] ?? 0) + 1;
      if (problems.length < 20) problems.push(...structuralProblems(o, providers, 1));
      if (o.type === 'AvailabilityObserved') {
        const before = day0.offerSets.get(`${mediaIdOf(o.data.contentType, o.data.sourceId)}-${o.data.country}`);
        if (before === undefined) newListings++;
        else if (before === JSON.stringify(o.data.offers)) unchanged++;
        else changed++;
        if (o.data.offers.length === 0) emptied++;
      } else if (o.type === 'MediaObserved') {
        const before = day0.media.get(mediaIdOf(o.data.contentType, o.data.sourceId));
        if (before !== undefined) {
          media++;
          if (before.popularity !== o.data.popularity) popularityMoved++;
        }
      } else if (o.type === 'FeaturedObserved') {
        assert.equal(o.data.period, 'daily', 'weekly selections only change every seventh day');
        if (day0.featuredDaily.get(o.data.country) !== JSON.stringify(o.data.items)) featuredChanged++;
      }
    }
    assert.deepEqual(problems, []);
    const listings = day0.offerSets.size;
    assert.ok(changed >= listings * 0.01 && changed <= listings * 0.03, `${changed} of ${listings} listings changed`);
    assert.ok(unchanged >= listings * 0.03 && unchanged <= listings * 0.07, `${unchanged} unchanged re-crawls`);
    assert.ok(newListings > 0, 'the new titles of day 1 are listed somewhere');
    assert.ok(emptied < changed, 'only some changes remove the last offer');
    assert.ok(media >= 4001 * 0.15 && media <= 4001 * 0.25, `${media} titles re-crawled`);
    assert.ok(popularityMoved >= media * 0.95, `${popularityMoved} of ${media} re-crawls carry a new popularity`);
    assert.equal(counts.MediaTranslationObserved, 5 * 8, 'translations only for the five new titles');
    assert.equal(counts.GenresObserved, undefined);
    assert.equal(counts.ProvidersObserved, 50);
    assert.equal(featuredChanged, 50, 'every country gets a new daily selection');
  });
});

describe('sample crawler: determinism and options', function () {
  this.timeout(60_000);

  it('gives identical observations for identical options, and different ones for another seed', () => {
    const options = { countries: ['NZ', 'JP'], day: 3 };
    const a = hashOf(generateCrawl(options));
    const b = hashOf(generateCrawl(options));
    assert.deepEqual(a, b);
    assert.ok(a.count > 1000);
    const other = hashOf(generateCrawl({ ...options, seed: 2 }));
    assert.notEqual(other.hash, a.hash);
  });

  it('derives observation ids from seed, day and target', () => {
    const ids = [...generateCrawl({ titles: 50, countries: ['US'], day: 0, seed: 7 })].map((o) => o.observationId);
    assert.equal(ids[0], 'crawl-7-t50-d0-genres');
    assert.equal(ids[1], 'crawl-7-t50-d0-providers-US');
    assert.ok(ids.some((id) => /^crawl-7-t50-d0-avail-(mv|tv)\d{8}-US$/.test(id)));
    assert.ok(ids.includes('crawl-7-t50-d0-featured-US-daily'));
  });

  it('starts each crawl day at 06:00Z of its date', () => {
    assert.equal(observedAtFor(0), '2026-11-14T06:00:00Z');
    assert.equal(observedAtFor(3, '2026-12-30'), '2027-01-02T06:00:00Z');
    assert.equal(crawlDate(20), '2026-12-04');
  });

  it('refuses options outside the catalog with invalid_parameter', () => {
    assert.throws(() => generateCrawl({ countries: ['XX'] }).next(), (err) => isAppError(err, 'invalid_parameter'));
    assert.throws(() => generateCrawl({ titles: 0 }).next(), (err) => isAppError(err, 'invalid_parameter'));
    assert.throws(() => generateCrawl({ day: -1 }).next(), (err) => isAppError(err, 'invalid_parameter'));
    assert.throws(() => generateCrawl({ startDate: '2026-02-30' }).next(), (err) => isAppError(err, 'invalid_parameter'));
  });

  it('maps every catalog country to a primary language that is a search locale', () => {
    assert.equal(COUNTRY_CODES.length, 50);
    for (const code of COUNTRY_CODES) {
      assert.match(code, /^[A-Z]{2}$/);
      assert.ok((LOCALES as readonly string[]).includes(COUNTRY_LANGUAGE[code] ?? ''), `${code} -> ${COUNTRY_LANGUAGE[code]}`);
    }
    assert.equal(COUNTRY_LANGUAGE.DE, 'de');
    assert.equal(COUNTRY_LANGUAGE.BR, 'pt');
  });

  it('lists 50-200 providers per country, add-ons under an existing parent, short ids unique per provider', () => {
    const shortIds = new Map<string, string>();
    for (const [country, list] of allCatalogProviders()) {
      assert.ok(list.length >= 50 && list.length <= 200, `${country} lists ${list.length}`);
      const ids = new Set(list.map((p) => p.id));
      assert.equal(ids.size, list.length, `${country} lists a provider twice`);
      assert.ok(list.some((p) => p.id === 'netflix'), `${country} has netflix`);
      for (const p of list) {
        if (p.parentId !== null) assert.ok(ids.has(p.parentId), `${country}: ${p.id} has no parent ${p.parentId}`);
        assert.match(p.shortId ?? '', /^[a-z0-9]{3}$/);
        assert.equal(p.logo, `/logos/${p.id}.png`);
        assert.ok(p.weight > 0);
        const owner = shortIds.get(p.shortId ?? '');
        assert.ok(owner === undefined || owner === p.id, `short id ${p.shortId} used by ${owner} and ${p.id}`);
        shortIds.set(p.shortId ?? '', p.id);
      }
    }
    const us = allCatalogProviders().get('US') ?? [];
    assert.ok(us.filter((p) => p.parentId === 'amazon-prime-video').length >= 10, 'Amazon channels in the US');
  });
});
