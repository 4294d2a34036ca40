import assert from 'node:assert/strict';
import { Packr } from 'msgpackr';
import { offerEventEncoder, type SharedStructures } from '../../infra/lmdb/offerEventEncoder.ts';

// The event store's encoder: msgpackr records with shared structures (infra/lmdb/eventStore.ts).
function storePackr(): Packr {
  return new Packr({ structures: [], maxSharedStructures: 500 } as ConstructorParameters<typeof Packr>[0]);
}

function encoderOf(packr: Packr) {
  return offerEventEncoder(() => (packr as unknown as { structures: SharedStructures }).structures);
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

const added = (o: unknown, over: Record<string, unknown> = {}) => stored('OfferAdded', { mediaId: 'mv00001000', country: 'IT', offer: o }, over);

/** Strings of every length around msgpack's header sizes and the 64-character loop limit. */
const lengths = [0, 1, 31, 32, 63, 64, 65, 255, 256, 1000, 65535, 65536];

describe('offerEventEncoder', () => {
  it('writes the offer events byte for byte as the store encoder does, and leaves the rest to it', () => {
    const packr = storePackr();
    const encoder = encoderOf(packr);
    const events: object[] = [
      added(offer()),
      stored('OfferChanged', { mediaId: 'mv1', country: 'US', offer: offer({ formats: ['sd'] }), changedFields: ['formats'] }),
      stored('OfferRemoved', { mediaId: 'mv1', country: 'US', offer: offerKey() }),
      ...lengths.map((n) => added(offer({ webUrl: 'x'.repeat(n) }))),
      ...lengths.map((n) => added(offer({ providerId: 'p'.repeat(n) }), { streamId: 's'.repeat(n) })),
      // Past ASCII: long strings (utf8Write in both), and short ones (left to msgpackr).
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
    // What the decider writes is written here (not everything left to msgpackr).
    assert.ok(written >= 60, `only ${written} events written by the offer encoder`);
    assert.equal(encoder.encode(added(offer())) !== null, true);
    assert.equal(encoder.encode(added(offer({ platforms: ['web', 3] }))), null);
    assert.equal(encoder.encode(stored('GenreDefined', { genre: { id: 1, slug: 'a', name: 'A' } })), null);
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
