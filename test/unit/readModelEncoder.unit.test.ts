import assert from 'node:assert/strict';
import { Packr } from 'msgpackr';
import type { Offer } from '../../contracts/domain.ts';
import type { RecordedEvent } from '../../contracts/events.ts';
import { readModelEncoder } from '../../infra/lmdb/readModelEncoder.ts';
import { isRecord } from '../../infra/lmdb/recordRule.ts';
import type { SharedStructures } from '../../infra/lmdb/recordWriter.ts';
import { availabilityHistoryProjection } from '../../projections/availabilityHistory.ts';
import { changesProjection } from '../../projections/changes.ts';
import { linksProjection } from '../../projections/links.ts';
import { arrivalsProjection, departuresProjection, upcomingProjection } from '../../projections/dayIndexes.ts';
import { rankingInputsProjection } from '../../projections/rankingInputs.ts';
import { layoutRanking } from '../../projections/rankings.ts';
import { mediaProjection } from '../../projections/media.ts';
import { searchProjection } from '../../projections/search.ts';
import { seasonsProjection } from '../../projections/seasons.ts';
import { layoutTrending, trendingProjection } from '../../projections/trending.ts';
import { details, offer, recorded } from './projectionEvents.ts';

// The read store's document encoder: msgpackr records with shared structures and the store's
// record/map rule (infra/lmdb/readStore.ts).
function storePackr(): Packr {
  return new Packr({ structures: [], maxSharedStructures: 500, useRecords: isRecord, mapsAsObjects: true } as ConstructorParameters<typeof Packr>[0]);
}

function encoderOf(packr: Packr) {
  return readModelEncoder(() => (packr as unknown as { structures: SharedStructures }).structures);
}

const at = { metadata: { observedAt: '2026-11-14T06:00:00.060Z' } };
const key = (o: Offer) => ({ providerId: o.providerId, addonProviderId: o.addonProviderId, seasonNumber: o.seasonNumber, episodeNumber: o.episodeNumber, webUrl: o.webUrl });

/** The documents the four projections fold from a title's offers being added, changed, removed and added again. */
function foldedDocuments(offers: Offer[], start: number): unknown[] {
  const events: RecordedEvent[] = [];
  let position = start;
  const event = (type: 'OfferAdded' | 'OfferChanged' | 'OfferRemoved', data: object) =>
    events.push(recorded(type, data as never, { ...at, position: (position += 1) }));
  for (const o of offers) event('OfferAdded', { mediaId: 'mv00001000', country: 'IT', offer: o });
  for (const o of offers.slice(0, 2)) event('OfferChanged', { mediaId: 'mv00001000', country: 'IT', offer: { ...o, formats: ['4k'] }, changedFields: ['formats'] });
  for (const o of offers.slice(1, 3)) event('OfferRemoved', { mediaId: 'mv00001000', country: 'IT', offer: key(o) });
  for (const o of offers.slice(2, 3)) event('OfferAdded', { mediaId: 'mv00001000', country: 'IT', offer: o });
  const docs: unknown[] = [];
  let links = null;
  let history = null;
  let block = null;
  let changes = null;
  for (const e of events) {
    links = linksProjection.evolve(links, e);
    history = availabilityHistoryProjection.evolve(history, e);
    block = rankingInputsProjection.evolve(block, e);
    // A second title in the block, after the first.
    const second = rankingInputsProjection.evolve(block, { ...e, data: { ...(e.data as object), mediaId: 'mv00001001' } } as RecordedEvent);
    changes = changesProjection.evolve(changes, e);
    docs.push(links, history, changesProjection.evolve(null, e), changes, block, second);
  }
  return docs.filter((d) => d !== null);
}

/** The blocks of a chart of `count` titles, as the rankings projection lays them out (scores and points of every numeric form). */
function chartBlocks(count: number): unknown[] {
  const entries = Array.from({ length: count }, (_, i) => ({
    mediaId: `${i % 3 === 0 ? 'tv' : 'mv'}${String(i + 1).padStart(8, '0')}`,
    kind: i % 3 === 0 ? ('tv_show' as const) : ('movie' as const),
    position: i + 1,
    score: [100, 99.5, 0, 12.34, 7][i % 5] as number,
    points: [1234.5678, 0, 3, 2 ** 40, -1.5, 0.1 + 0.2][i % 6] as number,
  }));
  const chart = { country: 'IT', date: '2026-11-14', formulaVersion: 1, total: count, totals: { movie: count - Math.ceil(count / 3), tv_show: Math.ceil(count / 3) }, entries };
  return layoutRanking(chart as never, null).rows.map((row) => row.doc).filter((doc) => doc !== null);
}

/** The day indexes' documents of a title's offers on several providers, announced ahead and ending. */
function dayIndexDocuments(providers: string[]): unknown[] {
  const docs: unknown[] = [];
  let doc: unknown = null;
  let ahead: unknown = null;
  let leaving: unknown = null;
  providers.forEach((providerId, i) => {
    const o = offer({ providerId, availableFrom: '2026-12-01', availableTo: '2026-12-31' });
    const e = recorded('OfferAdded', { mediaId: 'mv00001000', country: 'IT', offer: o } as never, { ...at, position: i + 1 });
    doc = arrivalsProjection.evolve(doc as never, e);
    ahead = upcomingProjection.evolve(ahead as never, e);
    leaving = departuresProjection.evolve(leaving as never, e);
    docs.push(doc, ahead, leaving);
  });
  return docs;
}

/**
 * The `search` and `media` documents of a title through its life: offers before it is registered
 * (a stub, its dictionaries empty), its registration with every kind of detail, translations
 * (past 15 languages, one taken back), offers in several countries, one removed.
 */
function titleDocuments(mediaId: string): unknown[] {
  const docs: unknown[] = [];
  let searchDoc: unknown = null;
  let mediaDoc: unknown = null;
  let position = 0;
  const fold = (type: string, data: object) => {
    const e = recorded(type as never, data as never, { ...at, position: (position += 1) });
    searchDoc = searchProjection.evolve(searchDoc as never, e);
    mediaDoc = mediaProjection.evolve(mediaDoc as never, e);
    docs.push(searchDoc, mediaDoc);
  };
  fold('OfferAdded', { mediaId, country: 'US', offer: offer({ providerId: 'netflix' }) });
  fold('MediaRegistered', {
    mediaId, kind: mediaId.startsWith('tv') ? 'tv_show' : 'movie', sourceId: 2 ** 33, slug: 'the-land-girls',
    details: details({
      originalTitle: 'Les Filles', tagline: 'é'.repeat(70), overview: 'x'.repeat(300), popularity: 12.75, tmdbRating: 7.25, voteCount: 70000,
      runtime: 111, inProduction: false, genreIds: [18, 10749], ratings: [{ source: 'imdb', rating: 6.5 }],
      externalIds: [{ source: 'imdb', id: 'tt1' }], videos: [{ source: 'youtube', id: 'v' }], contentRatings: [{ country: 'US', rating: 'PG' }],
      cast: [{ personId: 'p1', name: 'Anna', role: 'actor', character: 'Stella', order: 0 }],
    }),
  });
  const languages = ['de', 'fr', 'it', 'es', 'pt', 'ja', 'ko', 'zh', 'ru', 'pl', 'nl', 'sv', 'da', 'fi', 'no', 'cs', 'hu'];
  for (const [i, language] of languages.entries()) {
    fold('MediaTranslationChanged', { mediaId, language, translation: { title: `${language} ${'€'.repeat(i)}`, overview: null, tagline: null, poster: null, backdrop: null } });
  }
  fold('MediaTranslationChanged', { mediaId, language: 'de', translation: { title: null, overview: null, tagline: null, poster: null, backdrop: null } });
  for (const country of ['DE', 'GB', 'JP']) fold('OfferAdded', { mediaId, country, offer: offer({ providerId: 'amazon' }) });
  fold('OfferAdded', { mediaId, country: 'US', offer: offer({ providerId: 'apple', webUrl: 'u2' }) });
  fold('OfferRemoved', { mediaId, country: 'GB', offer: { providerId: 'amazon', addonProviderId: null, seasonNumber: null, episodeNumber: null, webUrl: offer().webUrl } });
  return docs.filter((d) => d !== null);
}

/** A day's trending list as it grows, and the blocks it is served from: titles climbing, falling, new (no previous position) and gone (no position). */
function trendingDocuments(count: number): unknown[] {
  const docs: unknown[] = [];
  let day: unknown = null;
  for (let i = 0; i < count; i += 1) {
    const position = i % 7 === 3 ? null : i + 1;
    const previousPosition = i % 5 === 1 ? null : [i + 3, 70_000 + i, 200][i % 3] as number;
    const e = recorded('PositionChanged', {
      country: 'IT', date: '2026-11-14', mediaId: `${i % 2 ? 'tv' : 'mv'}${String(i + 1).padStart(8, '0')}`, kind: i % 2 ? 'tv_show' : 'movie', position, previousPosition,
    } as never, { ...at, position: i + 1 });
    const previous = day;
    day = trendingProjection.evolve(day as never, e);
    docs.push(day, ...layoutTrending('IT:2026-11-14', day as never, previous as never).rows.map((r) => r.doc).filter((d) => d !== null));
  }
  return docs;
}

/** A show's `seasons` document as seasons come and change: episodes with and without their fields, titles past ASCII. */
function seasonsDocuments(): unknown[] {
  const docs: unknown[] = [];
  let doc: unknown = null;
  const episode = (n: number) => ({ episodeNumber: n, title: n % 2 ? `Épisode ${n}` : null, overview: n === 3 ? 'o'.repeat(300) : null, backdrop: null, airDate: n % 3 ? `2024-01-${String(n).padStart(2, '0')}` : null });
  for (const [n, episodes] of [[1, 8], [2, 0], [1, 10], [3, 300]] as const) {
    const season = { seasonNumber: n, title: `Season ${n}`, overview: null, poster: n === 2 ? null : `/p/${n}.jpg`, airDate: '2024-01-01', episodes: Array.from({ length: episodes }, (_, i) => episode(i + 1)) };
    doc = seasonsProjection.evolve(doc as never, recorded('SeasonChanged', { mediaId: 'tv00000042', season } as never, { ...at, position: n }));
    docs.push(doc);
  }
  return docs;
}

/** Strings of every length around msgpack's header sizes and the writer's 16- and 64-character limits. */
const lengths = [0, 1, 15, 16, 31, 32, 63, 64, 65, 255, 256, 1000, 65535, 65536];

describe('readModelEncoder', () => {
  it('writes links, availability history, changes, ranking-input blocks, chart and trending blocks, day indexes, search, media and seasons documents byte for byte as the store encoder does', () => {
    const packr = storePackr();
    const encoder = encoderOf(packr);
    const many = Array.from({ length: 17 }, (_, i) => offer({ seasonNumber: 1, episodeNumber: i + 1, webUrl: `https://example.com/e/${i}` }));
    const docs: unknown[] = [
      ...foldedDocuments([offer(), offer({ providerId: 'mubi', priceTypes: ['rent', 'buy'] }), offer({ providerId: 'apple', audioLanguages: ['en', 'it'], availableFrom: '2026-01-01', availableTo: '2026-12-31' })], 0),
      ...foldedDocuments(many, 1000),
      ...lengths.flatMap((n) => foldedDocuments([offer({ webUrl: 'x'.repeat(n) }), offer({ providerId: 'p'.repeat(n) })], 2000)),
      // Past ASCII: long strings (utf8Write in both), and short ones (left to msgpackr).
      ...foldedDocuments([offer({ webUrl: `https://ex.example/${'é'.repeat(40)}` }), offer({ providerId: 'canal+ é' })], 3000),
      ...foldedDocuments([offer({ providerId: `provider-${'é'.repeat(10)}` }), offer({ providerId: `provider-of-${'x'.repeat(10)}\ud800` })], 3050),
      ...foldedDocuments([offer({ webUrl: `https://ex.example/${'€'.repeat(30)}🎬${'ü'.repeat(90)}\ud800` })], 3100),
      // Numbers around msgpackr's integer forms (below 0x40 one byte with records on), and beyond 32 bits.
      ...[0, 1, 63, 64, 255, 256, 65535, 65536, 2 ** 32 - 1].flatMap((n) => foldedDocuments([offer({ seasonNumber: n, episodeNumber: n })], n)),
      ...foldedDocuments([offer({ seasonNumber: -1 }), offer({ episodeNumber: 1.5 })], 4000),
      ...foldedDocuments([offer()], 2 ** 32 + 5),
      // Shapes that are not the projections': an extra, missing or reordered key, a class instance.
      { mediaId: 'mv1', kind: 'movie', country: 'IT', offers: [{ ...offer(), firstSeenAt: '2026-11-14', startedOn: '2026-11-14', extra: 1 }] },
      { mediaId: 'mv1', kind: 'movie', country: 'IT', offers: [offer()] },
      { kind: 'movie', mediaId: 'mv1', country: 'IT', offers: [] },
      { mediaId: 'mv1', kind: 'movie', country: 'IT', intervals: [{ offer: { ...offer(), firstSeenAt: '2026-11-14', startedOn: '2026-11-14' }, from: 'a', fromPosition: 1, to: null }] },
      { mediaId: 'mv1', kind: 'movie', country: 'IT', offers: Object.assign(new (class Offers extends Array {})(), []) },
      Object.assign(new (class Doc {})(), { mediaId: 'mv1', kind: 'movie', country: 'IT', offers: [] }),
      // Keys inherited from a prototype other than Object's, which msgpackr leaves out.
      Object.assign(Object.create({ extra: 1 }) as object, { mediaId: 'mv1', kind: 'movie', country: 'IT', offers: [] }),
      { changes: [{ position: 1, at: 'a', mediaId: 'mv1', type: 'new', offer: offer(), changed: [3] }] },
      { changes: [{ position: 1, at: 'a', mediaId: 'mv1', offer: offer(), type: 'new', changed: [] }] },
      // A removal with a whole offer, and an addition with a key alone: not the projection's shapes.
      { changes: [{ position: 1, at: 'a', mediaId: 'mv1', type: 'removed', offer: offer(), changed: [] }] },
      { changes: [{ position: 1, at: 'a', mediaId: 'mv1', type: 'new', offer: key(offer()), changed: [] }] },
      { titles: [{ mediaId: 'mv1', kind: 'movie', offers: [{ key: 'k', providerId: 'p', priceTypes: ['rent'], availableTo: null, availableFrom: null }] }] },
      { titles: [{ mediaId: 'mv1', kind: 'movie', offers: ['\t\trent\t1\tp||||u', 7] }] },
      { titles: [{ mediaId: 'mv1', offers: [], kind: 'movie' }] },
      // Charts of one block, of a block and a bit, and of blocks past 65,535 ranks; day indexes.
      ...chartBlocks(7),
      ...chartBlocks(120),
      ...chartBlocks(66_000).slice(-3),
      ...dayIndexDocuments(['netflix', 'amazon', 'a', 'p'.repeat(40), 'canal+ é', 'x'.repeat(300)]),
      ...titleDocuments('mv00001000'),
      ...titleDocuments('tv00001001'),
      ...trendingDocuments(120),
      ...seasonsDocuments(),
      // Entries of both kinds in one block, a trending day with a field more: msgpackr's.
      { entries: [{ mediaId: 'mv1', kind: 'movie', position: 1, previousPosition: 2 }, { mediaId: 'mv2', kind: 'movie', position: 2, score: 1, points: 2 }] },
      { country: 'IT', date: '2026-11-14', entries: [], total: 0 },
      // Dictionaries that are not the projections': a field name first (a record), a number where a string goes, a class.
      { id: 'mv1', kind: 'movie', title: 't', originalTitle: null, titles: { title: 'x' }, year: null, genreIds: [], popularity: 0, availability: {}, offerCounts: {}, registered: true },
      { id: 'mv1', kind: 'movie', title: 't', originalTitle: null, titles: {}, year: null, genreIds: [], popularity: 0, availability: { US: [1] }, offerCounts: { US: [1] }, registered: true },
      { id: 'mv1', kind: 'movie', title: 't', originalTitle: null, titles: Object.assign(new (class T {})(), { de: 'x' }), year: null, genreIds: [], popularity: 0, availability: {}, offerCounts: {}, registered: true },
      // Entries and day indexes of other shapes: a trending block, a key missing, reordered, a number where a string goes.
      { entries: [{ mediaId: 'mv1', kind: 'movie', position: 1, previousPosition: null, change: null }] },
      { entries: [{ mediaId: 'mv1', kind: 'movie', position: 1, score: 1 }] },
      { entries: [{ kind: 'movie', mediaId: 'mv1', position: 1, score: 1, points: 2 }] },
      { entries: [{ mediaId: 'mv1', kind: 'movie', position: 1.5, score: 1, points: 2 }] },
      { entries: [], total: 0 },
      { country: 'IT', date: '2026-11-14', mediaId: 'mv1', kind: 'movie', providers: [7] },
      { country: 'IT', mediaId: 'mv1', date: '2026-11-14', kind: 'movie', providers: [] },
      // Other documents: always msgpackr's.
      { country: 'IT', providers: [{ id: 'netflix', name: 'Netflix' }] },
      { facts: [{ mediaId: 'mv1', tmdbRating: 7.5, voteCount: 10, popularity: 1.25, releaseDate: null, lastAirDate: null, year: 2020 }] },
      { translations: { de: 'x', it: 'y' } },
      // A change outside a block, as `changes` v1 stored them.
      { position: 1, at: 'a', country: 'IT', mediaId: 'mv1', kind: 'movie', offer: key(offer()), type: 'new', after: offer(), changed: [] },
    ];
    let written = 0;
    // Twice: the first pass meets shapes msgpackr has not shared yet, the second finds them.
    for (const pass of [1, 2]) {
      for (const [i, doc] of docs.entries()) {
        const position = 7 + i * 1000;
        const fast = encoder.encode(doc, position);
        const reference = Buffer.from(packr.pack({ doc, position }));
        if (fast === null) continue;
        written += 1;
        assert.equal(fast.toString('hex'), reference.toString('hex'), `pass ${pass}, document ${i}`);
        assert.deepEqual(packr.unpack(fast), packr.unpack(reference));
      }
    }
    // What the projections write is written here (not everything left to msgpackr).
    assert.ok(written >= docs.length, `only ${written} of ${docs.length * 2} documents written by the read-model encoder`);
    const [links, history, change, changes, block] = foldedDocuments([offer()], 0);
    for (const doc of [links, history, change, changes, block, ...chartBlocks(60), ...dayIndexDocuments(['netflix']), ...titleDocuments('mv00001000'), ...trendingDocuments(60).filter((d) => 'entries' in (d as object)), ...seasonsDocuments()]) {
      assert.notEqual(encoder.encode(doc, 9), null, JSON.stringify(doc).slice(0, 80));
    }
    assert.equal(encoder.encode(links, 2 ** 40), null);
    assert.equal(encoder.encode({ country: 'IT', providers: [] }, 9), null);
  });

  it('leaves every document to msgpackr until the store has shared the structures, or while it must reload them', () => {
    const packr = storePackr();
    const encoder = encoderOf(packr);
    const [links] = foldedDocuments([offer()], 0);
    assert.equal(encoder.encode(links, 1), null);
    packr.pack({ doc: links, position: 1 });
    assert.notEqual(encoder.encode(links, 1), null);
    // A failed save marks them to be reloaded (the read store's forgetUnsavedStructures).
    (packr as unknown as { structures: SharedStructures }).structures.uninitialized = true;
    assert.equal(encoder.encode(links, 1), null);
  });
});
