import assert from 'node:assert/strict';
import { offerKeyString, type Offer } from '../../contracts/domain.ts';
import type { OfferAdded, OfferChanged, OfferRemoved } from '../../contracts/events.ts';
import { offerKeyOf } from '../../contracts/domain.ts';
import { availabilityDecider, type AvailabilityState } from '../../services/ingest/availability.ts';
import { fold } from '../../services/ingest/deciders.ts';
import { availabilityObserved, ev, offer, T0, T1, T2 } from './ingestFixtures.ts';
import { refused, specificationFor } from './ingestSpecification.ts';

const given = specificationFor(availabilityDecider);

const added = (o: Offer, id = 'a1', at = T0) =>
  ev<OfferAdded>('OfferAdded', { mediaId: 'mv00000603', country: 'US', offer: o }, id, at);

describe('ingest availability decider', () => {
  it('adds every offer of the first observation, sorted by offer key', () => {
    given([]).when(availabilityObserved('a1', T0, [offer('netflix'), offer('hulu')])).then(
      [added(offer('hulu')), added(offer('netflix'))],
      'availability-mv00000603-US',
    );
  });

  it('accepts a lower-case country and routes to the upper-case stream', () => {
    given([]).when(availabilityObserved('a1', T0, [offer('hulu')], 'us')).then([added(offer('hulu'))], 'availability-mv00000603-US');
  });

  it('appends nothing for an unchanged re-crawl', () => {
    given([added(offer('hulu'))]).when(availabilityObserved('a2', T1, [offer('hulu')])).thenSkips(/unchanged offers/);
  });

  it('appends nothing for an empty offer set of a title never offered', () => {
    given([]).when(availabilityObserved('a1', T0, [])).thenSkips(/unchanged offers/);
  });

  it('removes, changes and adds in that order, each sorted by key', () => {
    const history = [added(offer('amazon')), added(offer('hulu')), added(offer('max')), added(offer('netflix'))];
    const observed = [
      offer('netflix', { formats: ['hd', 'uhd'] }),
      offer('apple', { priceTypes: ['rent', 'buy'] }),
      offer('max', { priceTypes: ['ads'], availableTo: '2025-12-31' }),
      offer('disney'),
    ];
    given(history).when(availabilityObserved('a2', T1, observed)).then([
      ev<OfferRemoved>('OfferRemoved', { mediaId: 'mv00000603', country: 'US', offer: offerKeyOf(offer('amazon')) }, 'a2', T1),
      ev<OfferRemoved>('OfferRemoved', { mediaId: 'mv00000603', country: 'US', offer: offerKeyOf(offer('hulu')) }, 'a2', T1),
      ev<OfferChanged>('OfferChanged', {
        mediaId: 'mv00000603', country: 'US', offer: observed[2] as Offer, changedFields: ['priceTypes', 'availableTo'],
      }, 'a2', T1),
      ev<OfferChanged>('OfferChanged', {
        mediaId: 'mv00000603', country: 'US', offer: observed[0] as Offer, changedFields: ['formats'],
      }, 'a2', T1),
      added(offer('apple', { priceTypes: ['rent', 'buy'] }), 'a2', T1),
      added(offer('disney'), 'a2', T1),
    ]);
  });

  it('carries only the offer key in OfferRemoved', () => {
    given([added(offer('hulu'))]).when(availabilityObserved('a2', T1, [])).then([
      ev<OfferRemoved>('OfferRemoved', {
        mediaId: 'mv00000603', country: 'US',
        offer: { providerId: 'hulu', addonProviderId: null, seasonNumber: null, episodeNumber: null, webUrl: 'https://hulu.example/watch/603' },
      }, 'a2', T1),
    ]);
  });

  it('treats another web URL or episode as another offer', () => {
    const history = [added(offer('hulu'))];
    const episode = offer('hulu', { seasonNumber: 1, episodeNumber: 2 });
    const url = offer('hulu', { webUrl: 'https://hulu.example/watch/603?v=2' });
    given(history).when(availabilityObserved('a2', T1, [offer('hulu'), episode, url])).then([
      added(offer('hulu', { seasonNumber: 1, episodeNumber: 2 }), 'a2', T1),
      added(offer('hulu', { webUrl: 'https://hulu.example/watch/603?v=2' }), 'a2', T1),
    ]);
  });

  it('folds removals so an offer can come back as added', () => {
    const history = [added(offer('hulu')), ev<OfferRemoved>('OfferRemoved', { mediaId: 'mv00000603', country: 'US', offer: offerKeyOf(offer('hulu')) }, 'a2', T1)];
    given(history).when(availabilityObserved('a3', T2, [offer('hulu')])).then([added(offer('hulu'), 'a3', T2)]);
  });

  it('ignores a redelivered observation id', () => {
    given([added(offer('hulu'))]).when(availabilityObserved('a1', T0, [offer('hulu')])).thenSkips(/duplicate observation a1/);
  });

  it('skips an offer set older than the last change as stale', () => {
    given([added(offer('hulu'), 'a2', T1)]).when(availabilityObserved('a1', T0, [])).thenSkips(/stale/);
  });

  it('rejects an observation with the same offer key twice', () => {
    given([]).when(availabilityObserved('a1', T0, [offer('hulu'), offer('hulu', { formats: ['sd'] })]))
      .thenRejects(/data\.offers\[1\]: duplicate offer key/);
  });

  it('rejects an unknown price type, naming the field', () => {
    refused(availabilityObserved('a1', T0, [offer('hulu', { priceTypes: ['lease' as never] })]), /data\.offers\[0\]\.priceTypes\[0\]: "lease" is not one of/);
  });

  it('rejects an unknown format', () => {
    refused(availabilityObserved('a1', T0, [offer('hulu', { formats: ['8k' as never] })]), /data\.offers\[0\]\.formats: "8k" is not one of/);
  });

  it('rejects an unknown platform', () => {
    refused(availabilityObserved('a1', T0, [offer('hulu', { platforms: ['tizen' as never] })]), /data\.offers\[0\]\.platforms\[0\]/);
  });

  it('rejects a date that is not YYYY-MM-DD', () => {
    refused(availabilityObserved('a1', T0, [offer('hulu', { availableTo: '31/12/2025' })]), /data\.offers\[0\]\.availableTo/);
  });

  it('rejects a negative season number', () => {
    refused(availabilityObserved('a1', T0, [offer('hulu', { seasonNumber: -1 })]), /data\.offers\[0\]\.seasonNumber: must be >= 0/);
  });

  it('rejects a country that is not two letters', () => {
    refused(availabilityObserved('a1', T0, [], 'USA'), /data\.country/);
  });

  it('rejects a source id out of range', () => {
    refused(availabilityObserved('a1', T0, [], 'US', 100_000_000), /data\.sourceId: source id out of range/);
  });

  it('folds a stream at once exactly as event by event, never touching the state it started from', () => {
    const removed = (o: Offer, id: string, at: string) =>
      ev<OfferRemoved>('OfferRemoved', { mediaId: 'mv00000603', country: 'US', offer: offerKeyOf(o) }, id, at);
    const changed = (o: Offer, id: string, at: string) =>
      ev<OfferChanged>('OfferChanged', { mediaId: 'mv00000603', country: 'US', offer: o, changedFields: ['formats'] }, id, at);
    const history = [
      added(offer('hulu')), added(offer('netflix')), added(offer('max')),
      removed(offer('hulu'), 'a2', T1), changed(offer('netflix', { formats: ['uhd'] }), 'a2', T1), added(offer('hulu'), 'a2', T1),
      removed(offer('max'), 'a3', T2), added(offer('apple', { seasonNumber: 2, episodeNumber: 3 }), 'a3', T2),
    ];
    const oneByOne = (events: typeof history, from: AvailabilityState) => events.reduce((s, e) => availabilityDecider.evolve(s, e), from);
    for (let split = 0; split <= history.length; split += 1) {
      const start = fold(availabilityDecider, history.slice(0, split));
      const snapshot = structuredClone(start);
      const atOnce = fold(availabilityDecider, history.slice(split), start);
      const expected = oneByOne(history.slice(split), start);
      assert.deepEqual(atOnce, expected);
      // The same offers in the same key order: decide lists them from the state.
      assert.deepEqual([...atOnce.offers.keys()], [...expected.offers.keys()]);
      assert.deepEqual(start, snapshot, 'the state folded from is not mutated');
    }
    assert.deepEqual([...fold(availabilityDecider, history).offers.keys()].sort(), [
      offerKeyString(offer('apple', { seasonNumber: 2, episodeNumber: 3 })), offerKeyString(offer('hulu')), offerKeyString(offer('netflix')),
    ].sort());
  });

  it('keys an offer as its identity fields joined by |, null and absent fields empty', () => {
    assert.equal(offerKeyString(offer('hulu')), 'hulu||||https://hulu.example/watch/603');
    assert.equal(
      offerKeyString({ providerId: 'max', addonProviderId: 'hbo', seasonNumber: 0, episodeNumber: 12, webUrl: 'u' }),
      'max|hbo|0|12|u',
    );
    assert.equal(offerKeyString({ providerId: 'max', webUrl: 'u' } as never), 'max||||u');
  });
});
