import assert from 'node:assert/strict';
import { Packr } from 'msgpackr';
import { eventEncoder, type SharedStructures } from '../../infra/lmdb/eventEncoder.ts';

// The event store's encoder: msgpackr records with shared structures (infra/lmdb/eventStore.ts).
function storePackr(): Packr {
  return new Packr({ structures: [], maxSharedStructures: 500 } as ConstructorParameters<typeof Packr>[0]);
}

function encoderOf(packr: Packr) {
  return eventEncoder(() => (packr as unknown as { structures: SharedStructures }).structures);
}

const offer = (over: Record<string, unknown> = {}) => ({
  providerId: 'netflix',
  addonProviderId: null,
  seasonNumber: null,
  episodeNumber: null,
  webUrl: 'https://www.netflix.com/title/80932992',
  priceTypes: ['flatrate'],
  formats: ['hd', 'uhd'],
  audioLanguages: ['en', 'de'],
  subtitleLanguages: null,
  availableFrom: '2020-02-06',
  availableTo: null,
  platforms: ['ios', 'android'],
  ...over,
});

const offerKey = (over: Record<string, unknown> = {}) => ({
  providerId: 'netflix', addonProviderId: null, seasonNumber: null, episodeNumber: null, webUrl: 'https://n.example/1', ...over,
});

function stored(type: string, data: unknown, over: Record<string, unknown> = {}) {
  return {
    type,
    data,
    metadata: { observationId: 'crawl-42-d0-avail-mv00001000-IT', observedAt: '2026-11-14T06:00:00.060Z', producer: 'ingest' },
    streamId: 'availability-mv00001000-IT',
    revision: 0,
    recordedAt: '2026-11-24T02:40:58.263Z',
    ...over,
  };
}

const translated = (translation: Record<string, unknown>, over: Record<string, unknown> = {}) =>
  stored('MediaTranslationChanged', { mediaId: 'mv00001000', language: 'ja', translation }, { streamId: 'media-mv00001000', ...over });

const translation = (over: Record<string, unknown> = {}) => ({
  title: '静かな港', overview: 'Ein Hafen, still und grau: le port silencieux.', tagline: null, poster: '/posters/{size}/a1.jpg', backdrop: null, ...over,
});

const episode = (n: number, over: Record<string, unknown> = {}) => ({
  episodeNumber: n, title: `Episode ${n}`, overview: null, backdrop: '/backdrops/{size}/e.jpg', airDate: '2024-01-02', ...over,
});

const seasonChanged = (season: Record<string, unknown>) => stored('SeasonChanged', { mediaId: 'tv00000042', season }, { streamId: 'media-tv00000042' });

const season = (over: Record<string, unknown> = {}) => ({
  seasonNumber: 1, title: 'Season 1', overview: 'The first one.', poster: null, airDate: '2024-01-01', episodes: [episode(1), episode(2)], ...over,
});

const details = (over: Record<string, unknown> = {}) => ({
  title: 'The Silent Harbor', originalTitle: '静かな港', year: 2024, releaseDate: '2024-03-01', tagline: null,
  overview: 'A harbor, silent and grey, where nothing ever happens until it does.'.repeat(3), classification: 'PG-13',
  poster: '/posters/{size}/p.jpg', backdrop: null, popularity: 12.345, tmdbRating: 7.5, voteCount: 1234, runtime: 118,
  inProduction: null, lastAirDate: null, genreIds: [12, 18, 10752],
  ratings: [{ source: 'imdb', rating: 7.1 }, { source: 'tomato', rating: 88 }],
  externalIds: [{ source: 'imdb', id: 'tt0000042' }], videos: [{ source: 'youtube', id: 'dQw4w9WgXcQ' }],
  contentRatings: [{ country: 'DE', rating: '12' }],
  cast: [{ personId: 'p1', name: 'Ana Ñúñez', role: 'actor', character: 'Harbor master', order: 0 }, { personId: 'p2', name: 'B', role: 'director', character: null, order: 70 }],
  ...over,
});

const registered = (d: unknown) =>
  stored('MediaRegistered', { mediaId: 'mv00001000', kind: 'movie', sourceId: 1000, slug: 'the-silent-harbor-2024', details: d }, { streamId: 'media-mv00001000' });

const added = (o: unknown, over: Record<string, unknown> = {}) => stored('OfferAdded', { mediaId: 'mv00001000', country: 'IT', offer: o }, over);

/** Strings of every length around msgpack's header sizes and the 64-character loop limit. */
const lengths = [0, 1, 31, 32, 63, 64, 65, 255, 256, 1000, 65535, 65536];

describe('eventEncoder', () => {
  it('writes the offer events byte for byte as the store encoder does, and leaves the rest to it', () => {
    const packr = storePackr();
    const encoder = encoderOf(packr);
    const events: object[] = [
      added(offer()),
      stored('OfferChanged', { mediaId: 'mv1', country: 'US', offer: offer({ formats: ['sd'] }), changedFields: ['formats'] }),
      stored('OfferRemoved', { mediaId: 'mv1', country: 'US', offer: offerKey() }),
      ...lengths.map((n) => added(offer({ webUrl: 'x'.repeat(n) }))),
      ...lengths.map((n) => added(offer({ providerId: 'p'.repeat(n) }), { streamId: 's'.repeat(n) })),
      // Past ASCII: long strings (utf8Write in both), and short ones (msgpackr's own loop).
      added(offer({ webUrl: `https://ex.example/${'é'.repeat(40)}` })),
      added(offer({ webUrl: `https://ex.example/${'€'.repeat(30)}🎬${'ü'.repeat(90)}` })),
      added(offer({ webUrl: `https://ex.example/${'a'.repeat(70)}\ud800` })),
      added(offer({ providerId: 'canal+ é' })),
      added(offer({ providerId: 'x\ud800' })),
      // Numbers: msgpackr writes integers below 0x40 as one byte when records are on.
      ...[0, 1, 31, 32, 63, 64, 127, 128, 255, 256, 65535, 65536, 2 ** 32 - 1].map((n) =>
        added(offer({ seasonNumber: n, episodeNumber: n }), { revision: n })),
      added(offer({ seasonNumber: -1 })),
      added(offer({ episodeNumber: 1.5 })),
      added(offer(), { revision: 2 ** 40 }),
      // Arrays: empty, 15 and 16 items (the fixarray limit), null, a non-string item.
      added(offer({ priceTypes: [], formats: Array(15).fill('hd'), platforms: Array(16).fill('web'), audioLanguages: null })),
      added(offer({ platforms: ['web', 3] })),
      // Shapes that are not the decider's: an extra, missing or reordered key, a class instance.
      added({ ...offer(), extra: 1 }),
      added((({ platforms: _p, ...rest }) => rest)(offer())),
      added((({ webUrl, ...rest }) => ({ webUrl, ...rest }))(offer())),
      added(Object.assign(new (class Offer {})(), offer())),
      stored('OfferAdded', { country: 'IT', mediaId: 'mv1', offer: offer() }),
      stored('OfferAdded', { mediaId: 'mv1', country: 'IT', offer: offer() }, { metadata: {} }),
      stored('OfferAdded', { mediaId: 'mv1', country: 'IT', offer: offer() }, { metadata: { observationId: 'o', observedAt: 'a', producer: undefined } }),
      stored('OfferRemoved', { mediaId: 'mv1', country: 'US', offer: offer() }),
      // Translations: strings in every script, short (msgpackr's own loop) and long (utf8Write),
      // a lone surrogate in either, a pair, nulls; and shapes that are not the decider's.
      translated(translation()),
      translated(translation({ title: null, overview: null, poster: null })),
      ...lengths.map((n) => translated(translation({ overview: 'ü'.repeat(n), title: '港'.repeat(Math.min(n, 63)) }))),
      ...['é', '€', '港', '🎬', 'x\ud800', '\udc00y', 'a\ud800\ud800', `${'é'.repeat(62)}\ud83c`].map((t) => translated(translation({ title: t, tagline: `${t}${'a'.repeat(20)}` }))),
      translated(translation({ overview: `${'a'.repeat(70)}\ud800` })),
      translated({ ...translation(), extra: 1 }),
      translated((({ title, ...rest }) => ({ ...rest, title }))(translation())),
      translated(translation({ title: 3 })),
      stored('MediaTranslationChanged', { language: 'ja', mediaId: 'mv1', translation: translation() }),
      // Seasons: no episodes, 15 and 16 of them, season and episode numbers past one byte.
      seasonChanged(season()),
      seasonChanged(season({ episodes: [] })),
      seasonChanged(season({ episodes: Array.from({ length: 15 }, (_, i) => episode(i + 1)) })),
      seasonChanged(season({ seasonNumber: 0, episodes: Array.from({ length: 16 }, (_, i) => episode(i + 60)) })),
      seasonChanged(season({ seasonNumber: 2024, title: 'Staffel 2024 – Ära', episodes: [episode(300, { title: 'Épisode' })] })),
      seasonChanged(season({ episodes: [episode(1, { episodeNumber: -1 })] })),
      seasonChanged(season({ episodes: [{ ...episode(1), extra: true }] })),
      seasonChanged(season({ episodes: null })),
      seasonChanged({ ...season(), extra: 1 }),
      // A title's details: numbers of every msgpack size (negative, past 32 bits, fractions), booleans, nulls, empty lists.
      registered(details()),
      ...[0, 63, 64, 255, 65536, 2 ** 32 - 1, 2 ** 32, 2 ** 53, -1, -32, -33, -128, -129, -32768, -32769, -(2 ** 31), -(2 ** 31) - 1, 0.5, -0.1, 1e-300, Number.NaN, Number.POSITIVE_INFINITY].map((n) =>
        registered(details({ popularity: n, year: n, genreIds: [n], ratings: [{ source: 'x', rating: n }], cast: [] }))),
      registered(details({ inProduction: true, tmdbRating: null, voteCount: null, runtime: null, year: null, popularity: null })),
      registered(details({ inProduction: false, genreIds: [], ratings: [], externalIds: [], videos: [], contentRatings: [] })),
      registered(details({ inProduction: 'yes' })),
      registered(details({ genreIds: ['12'] })),
      registered(details({ cast: [{ name: 'x', personId: 'p', role: 'actor', character: null, order: 1 }] })),
      registered({ ...details(), extra: 1 }),
      stored('MediaDetailsChanged', { mediaId: 'mv1', details: details({ runtime: 120 }), changedFields: ['runtime'] }),
      // Other types: always msgpackr's.
      stored('GenreDefined', { genre: { id: 12, slug: 'adventure', name: 'Adventure' } }),
    ];
    let written = 0;
    // Twice: the first pass meets shapes msgpackr has not shared yet, the second finds them.
    for (const pass of [1, 2]) {
      for (const [i, event] of events.entries()) {
        const fast = encoder.encode(event);
        const reference = Buffer.from(packr.pack(event));
        if (fast === null) continue;
        written += 1;
        assert.equal(fast.toString('hex'), reference.toString('hex'), `pass ${pass}, event ${i}`);
        assert.deepEqual(packr.unpack(fast), packr.unpack(reference));
      }
    }
    // What the deciders write is written here (not everything left to msgpackr).
    assert.ok(written >= 140, `only ${written} events written by the event encoder`);
    assert.equal(encoder.encode(added(offer())) !== null, true);
    assert.equal(encoder.encode(added(offer({ platforms: ['web', 3] }))), null);
    assert.equal(encoder.encode(stored('GenreDefined', { genre: { id: 1, slug: 'a', name: 'A' } })), null);
    for (const event of [added(offer({ providerId: 'canal+ é' })), translated(translation()), seasonChanged(season()), registered(details())]) {
      assert.notEqual(encoder.encode(event), null, (event as { type: string }).type);
    }
    assert.equal(encoder.encode(translated({ ...translation(), extra: 1 })), null);
  });

  it('leaves every event to msgpackr until the store has shared the structures', () => {
    const packr = storePackr();
    const encoder = encoderOf(packr);
    assert.equal(encoder.encode(added(offer())), null);
    packr.pack(added(offer()));
    assert.notEqual(encoder.encode(added(offer())), null);
    // OfferRemoved's offer key is a shape of its own, not shared yet.
    assert.equal(encoder.encode(stored('OfferRemoved', { mediaId: 'mv1', country: 'US', offer: offerKey() })), null);
  });
});
