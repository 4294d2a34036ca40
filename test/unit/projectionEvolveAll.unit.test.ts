import assert from 'node:assert/strict';
import type { RecordedEvent } from '../../contracts/events.ts';
import { evolveEach, type Projection } from '../../contracts/projection.ts';
import { availabilityHistoryProjection } from '../../projections/availabilityHistory.ts';
import { linksProjection } from '../../projections/links.ts';
import { rankingInputsProjection } from '../../projections/rankingInputs.ts';
import { searchProjection } from '../../projections/search.ts';
import { details, offer, observedAt, recorded } from './projectionEvents.ts';

/** Deterministic PRNG (mulberry32), so a failing sequence can be replayed from its seed. */
function prng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Offer events of one document over a few offers, so the same offer is added, changed, removed
 * and added again, the document emptied and refilled, on several days.
 */
type Mode = 'offers' | 'titles' | 'block';

/**
 * `offers`: one title's offers in one country; `titles`: in several countries, with the title's
 * own events between (the search document); `block`: several titles of one ranking block.
 */
function events(seed: number, count: number, mediaId = 'tv00000042', mode: Mode = 'offers'): RecordedEvent[] {
  const titles = mode === 'titles';
  const random = prng(seed);
  const pick = <T>(values: readonly T[]): T => values[Math.floor(random() * values.length)] as T;
  const types = ['OfferAdded', 'OfferChanged', 'OfferRemoved'] as const;
  return Array.from({ length: count }, (_, i) => {
    const o = offer({
      providerId: pick(['netflix', 'amazon', 'hulu']),
      addonProviderId: pick([null, 'starz']),
      seasonNumber: pick([null, 1, 2]),
      episodeNumber: pick([null, 1]),
      webUrl: pick(['u1', 'u2']),
      formats: [pick(['sd', 'hd', '4k'])],
      // Starts ahead, past and cleared: links' startedOn follows them.
      availableFrom: pick([null, null, '2026-03-02', '2026-03-04', '2026-03-09']),
    });
    const options = { ...observedAt(`2026-03-0${1 + Math.floor(i / (count / 5))}T10:00:00Z`), position: i + 1 };
    // With `titles`, a title's own events between its offers (the search document folds both).
    if (titles && random() < 0.08) return recorded('MediaRegistered', { mediaId, kind: 'tv_show', details: details({ title: `t${i}` }) } as never, options);
    const type = pick(types);
    const country = titles ? pick(['US', 'DE', 'GB']) : 'US';
    const id = mode === 'block' ? pick([mediaId, 'tv00000044', 'mv00000047']) : mediaId;
    const data = { mediaId: id, country, offer: o, ...(type === 'OfferChanged' ? { changedFields: [pick(['formats', 'availableFrom'])] } : {}) };
    return recorded(type, data as never, options);
  });
}

/** Equal documents, key order included (a record's field order is part of its stored bytes). */
function sameDocument(actual: unknown, expected: unknown, message: string): void {
  assert.deepEqual(actual, expected, message);
  assert.equal(JSON.stringify(actual), JSON.stringify(expected), `${message}: key order`);
}

/** The sequential fold, one event at a time (what `evolveAll` must equal). */
function oneByOne<D>(projection: Projection<D>, doc: D | null, list: readonly RecordedEvent[]): D | null {
  return list.reduce<D | null>((d, e) => projection.evolve(d, e), doc);
}

/** The fold in batches cut at random points, as the runner meets the log. */
function inBatches<D>(projection: Projection<D>, list: readonly RecordedEvent[], random: () => number): D | null {
  let doc: D | null = null;
  for (let i = 0; i < list.length; ) {
    const end = Math.min(list.length, i + 1 + Math.floor(random() * 40));
    doc = evolveEach(projection, doc, list.slice(i, end));
    i = end;
  }
  return doc;
}

const cases: Array<[Projection<unknown>, Mode]> = [
  [linksProjection as Projection<unknown>, 'offers'],
  [availabilityHistoryProjection as Projection<unknown>, 'offers'],
  // Over several countries, with the title registered in between (or not: a stub comes and goes).
  [searchProjection as Projection<unknown>, 'titles'],
  // Titles of one block leaving it and coming back, the block emptied and filled again.
  [rankingInputsProjection as Projection<unknown>, 'block'],
];
for (const [projection, mode] of cases) {
  describe(`${projection.name} evolveAll`, () => {
    it('is defined (the runner folds a batch through it)', () => {
      assert.equal(typeof projection.evolveAll, 'function');
    });

    it('equals the event-by-event fold over random batches, from nothing and from a stored document', () => {
      for (let seed = 1; seed <= 200; seed += 1) {
        const list = events(seed, 20 + (seed % 80), 'tv00000042', mode);
        const random = prng(seed * 7);
        sameDocument(inBatches(projection, list, random), oneByOne(projection, null, list), `seed ${seed}`);
        const cut = Math.floor(list.length / 2);
        const stored = oneByOne(projection, null, list.slice(0, cut));
        sameDocument(evolveEach(projection, stored, list.slice(cut)), oneByOne(projection, stored, list.slice(cut)), `seed ${seed} from stored`);
      }
    });

    it('leaves nothing for a media id that names no kind', () => {
      const list = events(3, 30, 'not-an-id', mode);
      sameDocument(evolveEach(projection, null, list), oneByOne(projection, null, list), 'no kind');
    });
  });
}

describe('search evolveAll, a stub losing its last offer', () => {
  it('deletes the stub and starts again from nothing, as one event at a time does', () => {
    const mediaId = 'tv00000042';
    const at = (position: number) => ({ ...observedAt('2026-03-01T10:00:00Z'), position });
    const list = [
      recorded('OfferAdded', { mediaId, country: 'US', offer: offer() }, at(1)),
      recorded('OfferRemoved', { mediaId, country: 'US', offer: offer() }, at(2)),
      recorded('OfferRemoved', { mediaId, country: 'DE', offer: offer() }, at(3)),
      recorded('OfferAdded', { mediaId, country: 'DE', offer: offer({ providerId: 'amazon' }) }, at(4)),
      recorded('OfferAdded', { mediaId, country: 'GB', offer: offer() }, at(5)),
      recorded('OfferRemoved', { mediaId, country: 'DE', offer: offer({ providerId: 'amazon' }) }, at(6)),
    ];
    assert.equal(oneByOne(searchProjection, null, list.slice(0, 2)), null, 'the stub is deleted after position 2');
    // Ending with a stub, and ending deleted (its last offer gone).
    const gone = [...list, recorded('OfferRemoved', { mediaId, country: 'GB', offer: offer() }, at(7))];
    assert.equal(oneByOne(searchProjection, null, gone), null);
    for (const events of [list, gone]) {
      const expected = oneByOne(searchProjection, null, events);
      for (let cut = 0; cut <= events.length; cut += 1) {
        sameDocument(evolveEach(searchProjection, evolveEach(searchProjection, null, events.slice(0, cut)), events.slice(cut)), expected, `cut at ${cut}`);
      }
    }
  });
});
