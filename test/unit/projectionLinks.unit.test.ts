import assert from 'node:assert/strict';
import type { LinksDoc } from '../../contracts/readModels.ts';
import { eventsUntilEndOfDay, foldStream } from '../../projections/fold.ts';
import { availabilityHistoryProjection } from '../../projections/availabilityHistory.ts';
import { linksProjection } from '../../projections/links.ts';
import { offer, observedAt, recorded } from './projectionEvents.ts';

const key = { mediaId: 'tv00000042', country: 'US' };

describe('links projection', () => {
  it('routes offer events to `${country}:${mediaId}`', () => {
    assert.equal(linksProjection.documentId(recorded('OfferAdded', { ...key, offer: offer() })), 'US:tv00000042');
  });

  it('creates the document on the first OfferAdded with firstSeenAt from its observed date', () => {
    const event = recorded('OfferAdded', { ...key, offer: offer() }, observedAt('2026-03-04T05:06:07Z'));
    const expected: LinksDoc = { mediaId: 'tv00000042', kind: 'tv_show', country: 'US', offers: [{ ...offer(), firstSeenAt: '2026-03-04', startedOn: '2026-03-04' }] };
    assert.deepEqual(linksProjection.evolve(null, event), expected);
  });

  it('orders offers by provider, add-on, season, episode, then web URL with nulls first', () => {
    const offers = [
      offer({ providerId: 'netflix', seasonNumber: 1, episodeNumber: 2, webUrl: 'u4' }),
      offer({ providerId: 'netflix', seasonNumber: 1, episodeNumber: 1, webUrl: 'u3' }),
      offer({ providerId: 'amazon', addonProviderId: 'starz', webUrl: 'u2' }),
      offer({ providerId: 'netflix', webUrl: 'u1' }),
      offer({ providerId: 'amazon', webUrl: 'u9' }),
      offer({ providerId: 'amazon', webUrl: 'u0' }),
      offer({ providerId: 'netflix', seasonNumber: 1, episodeNumber: null, webUrl: 'u5' }),
    ];
    const doc = foldStream(linksProjection, offers.map((o) => recorded('OfferAdded', { ...key, offer: o }, observedAt('2026-03-04T00:00:00Z'))));
    assert.deepEqual(doc?.offers.map((o) => o.webUrl), ['u0', 'u9', 'u2', 'u1', 'u5', 'u3', 'u4']);
  });

  it('replaces a changed offer and keeps its firstSeenAt', () => {
    const added = linksProjection.evolve(null, recorded('OfferAdded', { ...key, offer: offer() }, observedAt('2026-03-01T00:00:00Z')));
    const changedOffer = offer({ formats: ['uhd'], priceTypes: ['rent'] });
    const changed = linksProjection.evolve(added, recorded('OfferChanged', { ...key, offer: changedOffer, changedFields: ['formats', 'priceTypes'] }, observedAt('2026-03-09T00:00:00Z')));
    assert.deepEqual(changed?.offers, [{ ...changedOffer, firstSeenAt: '2026-03-01', startedOn: '2026-03-01' }]);
  });

  it('removes an offer and deletes the document when the last one goes', () => {
    const a = offer({ providerId: 'a', webUrl: 'ua' });
    const b = offer({ providerId: 'b', webUrl: 'ub' });
    const doc = foldStream(linksProjection, [
      recorded('OfferAdded', { ...key, offer: a }, observedAt('2026-03-01T00:00:00Z')),
      recorded('OfferAdded', { ...key, offer: b }, observedAt('2026-03-02T00:00:00Z')),
    ]);
    const removeA = recorded('OfferRemoved', { ...key, offer: { providerId: 'a', addonProviderId: null, seasonNumber: null, episodeNumber: null, webUrl: 'ua' } });
    const afterA = linksProjection.evolve(doc, removeA);
    assert.deepEqual(afterA?.offers, [{ ...b, firstSeenAt: '2026-03-02', startedOn: '2026-03-02' }]);
    const removeB = recorded('OfferRemoved', { ...key, offer: { providerId: 'b', addonProviderId: null, seasonNumber: null, episodeNumber: null, webUrl: 'ub' } });
    assert.equal(linksProjection.evolve(afterA, removeB), null);
  });

  it('keeps no document when an offer is removed from a title with none', () => {
    const remove = recorded('OfferRemoved', { ...key, offer: { providerId: 'a', addonProviderId: null, seasonNumber: null, episodeNumber: null, webUrl: 'ua' } });
    assert.equal(linksProjection.evolve(null, remove), null);
  });

  it('gives the same document when an OfferAdded is folded twice', () => {
    const event = recorded('OfferAdded', { ...key, offer: offer() }, observedAt('2026-03-01T00:00:00Z'));
    const once = linksProjection.evolve(null, event);
    assert.deepEqual(linksProjection.evolve(once, event), once);
  });

  it('skips an offer of a malformed media id instead of inventing a kind', () => {
    assert.equal(linksProjection.evolve(null, recorded('OfferAdded', { mediaId: 'bogus', country: 'US', offer: offer() })), null);
  });
});

describe('links projection: the day an offer\'s run began (startedOn)', () => {
  const at = (day: string) => observedAt(`${day}T09:00:00Z`);
  const added = (day: string, availableFrom: string | null = null) => recorded('OfferAdded', { ...key, offer: offer({ availableFrom }) }, at(day));
  const changed = (day: string, fields: Partial<ReturnType<typeof offer>>, changedFields: string[]) =>
    recorded('OfferChanged', { ...key, offer: offer(fields), changedFields } as never, at(day));
  const removed = (day: string) =>
    recorded('OfferRemoved', { ...key, offer: { providerId: 'netflix', addonProviderId: null, seasonNumber: null, episodeNumber: null, webUrl: offer().webUrl } }, at(day));
  /** startedOn after the events, in links and in the open interval of the history (they must agree). */
  function started(...events: ReturnType<typeof added>[]): string | undefined {
    const links = foldStream(linksProjection, events)?.offers[0]?.startedOn;
    const history = foldStream(availabilityHistoryProjection, events)?.intervals.find((i) => i.to === null)?.offer.startedOn;
    assert.equal(history, links, 'the history\'s open interval agrees with links');
    return links;
  }

  it('is the day an offer is first seen, when it has no start or one already past', () => {
    assert.equal(started(added('2026-03-04')), '2026-03-04');
    assert.equal(started(added('2026-03-04', '2026-01-01')), '2026-03-04');
    assert.equal(started(added('2026-03-04', '2026-03-04')), '2026-03-04');
  });

  it('is the announced start of an offer listed ahead, and follows that start while it is ahead', () => {
    assert.equal(started(added('2026-03-04', '2026-03-10')), '2026-03-10');
    assert.equal(started(added('2026-03-04', '2026-03-10'), changed('2026-03-06', { availableFrom: '2026-03-20' }, ['availableFrom'])), '2026-03-20');
    // Another field changing leaves the announced start as it is.
    assert.equal(started(added('2026-03-04', '2026-03-10'), changed('2026-03-06', { availableFrom: '2026-03-10', formats: ['4k'] }, ['formats'])), '2026-03-10');
  });

  it('is the day an offer listed ahead is seen there, when its start is cleared or moved to that day or before', () => {
    assert.equal(started(added('2026-03-04', '2026-03-10'), changed('2026-03-07', { availableFrom: null }, ['availableFrom'])), '2026-03-07');
    assert.equal(started(added('2026-03-04', '2026-03-10'), changed('2026-03-07', { availableFrom: '2026-03-05' }, ['availableFrom'])), '2026-03-07');
    assert.equal(started(added('2026-03-04', '2026-03-10'), changed('2026-03-07', { availableFrom: '2026-03-07' }, ['availableFrom'])), '2026-03-07');
  });

  it('stays the day its run began while the offer is there, whatever later changes say', () => {
    const run = [added('2026-03-04', '2026-03-06'), changed('2026-03-08', { availableFrom: '2026-03-06', formats: ['4k'] }, ['formats'])];
    assert.equal(started(...run), '2026-03-06');
    assert.equal(started(...run, changed('2026-03-09', { availableFrom: null }, ['availableFrom'])), '2026-03-06');
    assert.equal(started(added('2026-03-04'), changed('2026-03-09', { availableFrom: '2026-03-01' }, ['availableFrom'])), '2026-03-04');
  });

  it('begins again when a removed offer comes back', () => {
    assert.equal(started(added('2026-03-04'), removed('2026-03-05'), added('2026-03-08')), '2026-03-08');
  });
});

describe('foldStream and eventsUntilEndOfDay', () => {
  const events = [
    recorded('OfferAdded', { ...key, offer: offer({ webUrl: 'u1' }) }, observedAt('2026-03-01T10:00:00Z')),
    recorded('OfferAdded', { ...key, offer: offer({ webUrl: 'u2' }) }, observedAt('2026-03-02T23:59:59Z')),
    recorded('OfferRemoved', { ...key, offer: { providerId: 'netflix', addonProviderId: null, seasonNumber: null, episodeNumber: null, webUrl: 'u1' } }, observedAt('2026-03-03T00:00:00Z')),
  ];

  it('answers the links as they were at the end of a day', () => {
    const at2 = foldStream(linksProjection, eventsUntilEndOfDay(events, '2026-03-02'));
    assert.deepEqual(at2?.offers.map((o) => o.webUrl), ['u1', 'u2']);
    const at3 = foldStream(linksProjection, eventsUntilEndOfDay(events, '2026-03-03'));
    assert.deepEqual(at3?.offers.map((o) => o.webUrl), ['u2']);
  });

  it('gives null before the first event and skips event types the projection does not handle', () => {
    assert.equal(foldStream(linksProjection, eventsUntilEndOfDay(events, '2026-02-28')), null);
    const withForeign = [recorded('GenreDefined', { genre: { id: 1, slug: 'drama', name: 'Drama' } }), ...events.slice(0, 1)];
    assert.equal(foldStream(linksProjection, withForeign)?.offers.length, 1);
  });

  it('compares observed times with an offset as instants', () => {
    const late = recorded('OfferAdded', { ...key, offer: offer() }, observedAt('2026-03-01T22:00:00-05:00'));
    assert.deepEqual(eventsUntilEndOfDay([late], '2026-03-01'), []);
    assert.equal(eventsUntilEndOfDay([late], '2026-03-02').length, 1);
  });
});
