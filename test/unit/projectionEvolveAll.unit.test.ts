import assert from 'node:assert/strict';
import type { RecordedEvent } from '../../contracts/events.ts';
import { evolveEach, type Projection } from '../../contracts/projection.ts';
import { availabilityHistoryProjection } from '../../projections/availabilityHistory.ts';
import { linksProjection } from '../../projections/links.ts';
import { offer, observedAt, recorded } from './projectionEvents.ts';

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
function events(seed: number, count: number, mediaId = 'tv00000042'): RecordedEvent[] {
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
    });
    const type = pick(types);
    const data = { mediaId, country: 'US', offer: o, ...(type === 'OfferChanged' ? { changedFields: ['formats'] } : {}) };
    return recorded(type, data as never, { ...observedAt(`2026-03-0${1 + Math.floor(i / (count / 5))}T10:00:00Z`), position: i + 1 });
  });
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

for (const projection of [linksProjection, availabilityHistoryProjection] as Array<Projection<unknown>>) {
  describe(`${projection.name} evolveAll`, () => {
    it('is defined (the runner folds a batch through it)', () => {
      assert.equal(typeof projection.evolveAll, 'function');
    });

    it('equals the event-by-event fold over random batches, from nothing and from a stored document', () => {
      for (let seed = 1; seed <= 200; seed += 1) {
        const list = events(seed, 20 + (seed % 80));
        const random = prng(seed * 7);
        assert.deepEqual(inBatches(projection, list, random), oneByOne(projection, null, list), `seed ${seed}`);
        const cut = Math.floor(list.length / 2);
        const stored = oneByOne(projection, null, list.slice(0, cut));
        assert.deepEqual(evolveEach(projection, stored, list.slice(cut)), oneByOne(projection, stored, list.slice(cut)), `seed ${seed} from stored`);
      }
    });

    it('leaves nothing for a media id that names no kind', () => {
      const list = events(3, 30, 'not-an-id');
      assert.deepEqual(evolveEach(projection, null, list), oneByOne(projection, null, list));
    });
  });
}
