import assert from 'node:assert/strict';
import type { Offer, OfferKey } from '../../contracts/domain.ts';
import type { RecordedEvent } from '../../contracts/events.ts';
import { availabilityHistoryProjection, stateEndedAt } from '../../projections/availabilityHistory.ts';
import { CHANGE_BLOCK, changeBlockKey, changeDocOf, changeKey, changeOf, changesProjection, positionOfChangeKey } from '../../projections/changes.ts';
import type { ChangeBlockDoc, ChangeEntry } from '../../contracts/changeModels.ts';
import { arrivalsProjection, departuresProjection, startDay, upcomingProjection } from '../../projections/dayIndexes.ts';
import { foldStream } from '../../projections/fold.ts';
import { linksProjection } from '../../projections/links.ts';
import { dateOf } from '../../projections/time.ts';
import { kindOfMediaId } from '../../contracts/ids.ts';
import { offer, recorded } from './projectionEvents.ts';

const key = { mediaId: 'tv00000042', country: 'US' };
const keyOf = (o: Offer): OfferKey => ({
  providerId: o.providerId, addonProviderId: o.addonProviderId, seasonNumber: o.seasonNumber, episodeNumber: o.episodeNumber, webUrl: o.webUrl,
});
const at = (observed: string, position: number) => ({ metadata: { observedAt: observed }, position });

describe('changes projection', () => {
  const a = offer({ providerId: 'netflix', webUrl: 'ua' });
  const a2 = offer({ providerId: 'netflix', webUrl: 'ua', formats: ['uhd'], availableTo: '2026-12-01' });

  it('keys each offer event by the block of its country and position, so key order is position order', () => {
    const event = recorded('OfferAdded', { ...key, offer: a }, at('2026-03-01T06:00:00Z', 42));
    assert.equal(changesProjection.documentId(event), 'US:0000000000000000');
    const later = recorded('OfferAdded', { ...key, offer: a }, at('2026-03-01T06:00:00Z', 2 * CHANGE_BLOCK + 7));
    assert.equal(changesProjection.documentId(later), changeKey('US', 2 * CHANGE_BLOCK));
    assert.equal(changeBlockKey('US', CHANGE_BLOCK - 1), changeKey('US', 0));
    assert.equal(changeBlockKey('US', CHANGE_BLOCK), changeKey('US', CHANGE_BLOCK));
    assert.ok(changeKey('US', 9) < changeKey('US', 10));
    assert.deepEqual(positionOfChangeKey('US:0000000000000042'), { country: 'US', position: 42 });
    assert.equal(positionOfChangeKey('US:42'), null);
  });

  it('describes new, updated and removed offers with the after state and the changed fields', () => {
    const added = changeOf(recorded('OfferAdded', { ...key, offer: a }, at('2026-03-01T06:00:00Z', 1)));
    assert.deepEqual(added, { position: 1, at: '2026-03-01T06:00:00Z', mediaId: 'tv00000042', type: 'new', offer: a, changed: [] });
    assert.deepEqual(changeDocOf('US', added as ChangeEntry), {
      position: 1, type: 'new', at: '2026-03-01T06:00:00Z', country: 'US', mediaId: 'tv00000042', kind: 'tv_show',
      offer: keyOf(a), after: a, changed: [],
    });
    const changed = changeDocOf('US', changeOf(recorded('OfferChanged', { ...key, offer: a2, changedFields: ['formats', 'availableTo'] }, at('2026-03-02T06:00:00Z', 2))) as ChangeEntry);
    assert.equal(changed.type, 'updated');
    assert.deepEqual(changed.after, a2);
    assert.deepEqual(changed.offer, keyOf(a2));
    assert.deepEqual(changed.changed, ['formats', 'availableTo']);
    // A removal stores the offer's key alone.
    const gone = changeOf(recorded('OfferRemoved', { ...key, offer: keyOf(a) }, at('2026-03-03T06:00:00Z', 3)));
    assert.deepEqual(gone?.offer, keyOf(a));
    const removed = changeDocOf('US', gone as ChangeEntry);
    assert.equal(removed.type, 'removed');
    assert.equal(removed.after, null);
    assert.deepEqual(removed.offer, keyOf(a));
  });

  it('appends a block\'s changes in position order, one event at a time or a batch at once', () => {
    const events = [1, 2, 3].map((p) => recorded('OfferChanged', { ...key, offer: a2, changedFields: ['formats'] }, at('2026-03-02T06:00:00Z', p)));
    const one = events.reduce<ChangeBlockDoc | null>((doc, e) => changesProjection.evolve(doc, e), null);
    const all = changesProjection.evolveAll?.(changesProjection.evolve(null, events[0] as RecordedEvent), events.slice(1));
    assert.deepEqual(one?.changes.map((c) => c.position), [1, 2, 3]);
    assert.deepEqual(all, one);
  });

  it('ignores events that are not offer events', () => {
    const event = recorded('GenreDefined', { genre: { id: 1, slug: 'x', name: 'X' } });
    assert.equal(changesProjection.documentId(event), null);
  });
});

describe('availability_history projection', () => {
  const a = offer({ providerId: 'netflix', webUrl: 'ua' });
  const a2 = offer({ providerId: 'netflix', webUrl: 'ua', formats: ['uhd'] });
  const b = offer({ providerId: 'hulu', webUrl: 'ub' });

  function events(): RecordedEvent[] {
    return [
      recorded('OfferAdded', { ...key, offer: a }, at('2026-03-01T06:00:00Z', 10)),
      recorded('OfferAdded', { ...key, offer: b }, at('2026-03-01T06:00:01Z', 11)),
      recorded('OfferChanged', { ...key, offer: a2, changedFields: ['formats'] }, at('2026-03-03T06:00:00Z', 20)),
      recorded('OfferRemoved', { ...key, offer: keyOf(b) }, at('2026-03-04T06:00:00Z', 30)),
      recorded('OfferAdded', { ...key, offer: b }, at('2026-03-06T06:00:00Z', 40)),
      recorded('OfferRemoved', { ...key, offer: keyOf(a2) }, at('2026-03-07T06:00:00Z', 50)),
    ];
  }

  it('keeps each state of each offer with the events that began and ended it', () => {
    const doc = foldStream(availabilityHistoryProjection, events());
    assert.deepEqual(doc?.intervals.map((i) => [i.offer.webUrl, i.offer.formats, i.fromPosition, i.toPosition, i.offer.firstSeenAt]), [
      ['ua', ['hd'], 10, 20, '2026-03-01'],
      ['ub', ['hd'], 11, 30, '2026-03-01'],
      ['ua', ['uhd'], 20, 50, '2026-03-01'],
      ['ub', ['hd'], 40, null, '2026-03-06'],
    ]);
    assert.equal(doc?.intervals[0]?.to, '2026-03-03T06:00:00Z');
  });

  it('keeps the document when the last offer leaves (history outlives offers)', () => {
    const all = [...events(), recorded('OfferRemoved', { ...key, offer: keyOf(b) }, at('2026-03-08T06:00:00Z', 60))];
    const doc = foldStream(availabilityHistoryProjection, all);
    assert.equal(doc?.intervals.every((i) => i.to !== null), true);
    assert.equal(foldStream(linksProjection, all), null);
  });

  it('has open intervals equal to the links document after every event', () => {
    const list = events();
    for (let n = 1; n <= list.length; n += 1) {
      const history = foldStream(availabilityHistoryProjection, list.slice(0, n));
      const links = foldStream(linksProjection, list.slice(0, n));
      const open = (history?.intervals ?? []).filter((i) => i.to === null).map((i) => i.offer);
      assert.deepEqual([...open].sort((x, y) => x.webUrl.localeCompare(y.webUrl)), [...(links?.offers ?? [])].sort((x, y) => x.webUrl.localeCompare(y.webUrl)), `after ${n} events`);
    }
  });

  it('answers the state a change ended: the before of an update or a removal', () => {
    const doc = foldStream(availabilityHistoryProjection, events());
    assert.deepEqual(stateEndedAt(doc, keyOf(a), 20)?.formats, ['hd']);
    assert.deepEqual(stateEndedAt(doc, keyOf(a), 50)?.formats, ['uhd']);
    assert.equal(stateEndedAt(doc, keyOf(a), 10), null);
    assert.equal(stateEndedAt(doc, keyOf(b), 20), null);
  });
});

describe('arrivals, departures and upcoming projections', () => {
  it('index a title by the day an offer arrived, once per provider', () => {
    const e1 = recorded('OfferAdded', { ...key, offer: offer({ providerId: 'netflix', webUrl: 'u1' }) }, at('2026-03-01T06:00:00Z', 1));
    const e2 = recorded('OfferAdded', { ...key, offer: offer({ providerId: 'amazon', webUrl: 'u2' }) }, at('2026-03-01T07:00:00Z', 2));
    const e3 = recorded('OfferAdded', { ...key, offer: offer({ providerId: 'netflix', webUrl: 'u3', seasonNumber: 2 }) }, at('2026-03-01T08:00:00Z', 3));
    assert.equal(arrivalsProjection.documentId(e1), 'US:2026-03-01:tv00000042');
    assert.deepEqual(foldStream(arrivalsProjection, [e1, e2, e3]), { country: 'US', date: '2026-03-01', mediaId: 'tv00000042', kind: 'tv_show', providers: ['amazon', 'netflix'] });
  });

  it('index a title by the announced expiry of an offer, and skip offers without one', () => {
    const none = recorded('OfferAdded', { ...key, offer: offer({ availableTo: null }) }, at('2026-03-01T06:00:00Z', 1));
    assert.equal(departuresProjection.documentId(none), null);
    const leaving = recorded('OfferChanged', { ...key, offer: offer({ availableTo: '2026-03-20' }), changedFields: ['availableTo'] }, at('2026-03-02T06:00:00Z', 2));
    assert.equal(departuresProjection.documentId(leaving), 'US:2026-03-20:tv00000042');
    assert.deepEqual(departuresProjection.evolve(null, leaving)?.providers, ['netflix']);
  });

  it('index an offer listed ahead of its start under that start, as upcoming and as its arrival', () => {
    const ahead = recorded('OfferAdded', { ...key, offer: offer({ providerId: 'netflix', availableFrom: '2026-03-10' }) }, at('2026-03-01T06:00:00Z', 1));
    assert.equal(upcomingProjection.documentId(ahead), 'US:2026-03-10:tv00000042');
    assert.deepEqual(upcomingProjection.evolve(null, ahead), { country: 'US', date: '2026-03-10', mediaId: 'tv00000042', kind: 'tv_show', providers: ['netflix'] });
    // It arrives on its start, not on the day it was listed.
    assert.equal(arrivalsProjection.documentId(ahead), 'US:2026-03-10:tv00000042');
    // A start moved later is announced again; a start already passed announces nothing.
    const moved = recorded('OfferChanged', { ...key, offer: offer({ providerId: 'netflix', availableFrom: '2026-03-12' }), changedFields: ['availableFrom'] }, at('2026-03-02T06:00:00Z', 2));
    assert.equal(upcomingProjection.documentId(moved), 'US:2026-03-12:tv00000042');
    assert.equal(arrivalsProjection.documentId(moved), 'US:2026-03-12:tv00000042');
    const live = recorded('OfferAdded', { ...key, offer: offer({ availableFrom: '2026-02-01' }) }, at('2026-03-01T06:00:00Z', 3));
    assert.equal(upcomingProjection.documentId(live), null);
    assert.equal(arrivalsProjection.documentId(live), 'US:2026-03-01:tv00000042');
    const sameDay = recorded('OfferAdded', { ...key, offer: offer({ availableFrom: '2026-03-01' }) }, at('2026-03-01T06:00:00Z', 4));
    assert.equal(upcomingProjection.documentId(sameDay), null);
    const changedLive = recorded('OfferChanged', { ...key, offer: offer({ availableFrom: null, formats: ['uhd'] }), changedFields: ['formats'] }, at('2026-03-05T06:00:00Z', 5));
    assert.equal(upcomingProjection.documentId(changedLive), null);
    assert.equal(arrivalsProjection.documentId(changedLive), null);
    // A start moved to the day it is seen (it came early) arrives that day; another change that day does not.
    const early = recorded('OfferChanged', { ...key, offer: offer({ providerId: 'netflix', availableFrom: '2026-03-04' }), changedFields: ['availableFrom'] }, at('2026-03-04T06:00:00Z', 6));
    assert.equal(arrivalsProjection.documentId(early), 'US:2026-03-04:tv00000042');
    assert.equal(upcomingProjection.documentId(early), null);
    const sameDayChange = recorded('OfferChanged', { ...key, offer: offer({ providerId: 'netflix', availableFrom: '2026-03-04', formats: ['uhd'] }), changedFields: ['formats'] }, at('2026-03-04T06:00:00Z', 7));
    assert.equal(arrivalsProjection.documentId(sameDayChange), null);
    // So does a start cleared, or moved to a day already past: the offer is seen there that day.
    const cleared = recorded('OfferChanged', { ...key, offer: offer({ providerId: 'netflix', availableFrom: null }), changedFields: ['availableFrom'] }, at('2026-03-05T06:00:00Z', 8));
    assert.equal(arrivalsProjection.documentId(cleared), 'US:2026-03-05:tv00000042');
    assert.equal(upcomingProjection.documentId(cleared), null);
    const past = recorded('OfferChanged', { ...key, offer: offer({ providerId: 'netflix', availableFrom: '2026-03-02' }), changedFields: ['availableFrom'] }, at('2026-03-05T06:00:00Z', 9));
    assert.equal(arrivalsProjection.documentId(past), 'US:2026-03-05:tv00000042');
    assert.equal(startDay('2026-03-10', '2026-03-01'), '2026-03-10');
    assert.equal(startDay(null, '2026-03-01'), '2026-03-01');
    assert.equal(startDay('2026-01-01', '2026-03-01'), '2026-03-01');
  });
});

describe('event dates and media kinds', () => {
  // dateOf as it was written with two regular expressions: the character checks must agree.
  const byPatterns = (t: string): string => {
    if (/^\d{4}-\d{2}-\d{2}T[^Z]*Z$/.test(t) || /^\d{4}-\d{2}-\d{2}$/.test(t)) return t.slice(0, 10);
    const ms = Date.parse(t);
    return Number.isNaN(ms) ? t.slice(0, 10) : new Date(ms).toISOString().slice(0, 10);
  };

  it('dateOf cuts the date of a UTC timestamp or a plain date, and converts any other, as the patterns it replaced did', () => {
    const samples = [
      '2026-03-01T06:00:00Z', '2026-03-01T06:00:00.123Z', '2026-03-01', '2026-03-01TZ', '2026-03-01T', '2026-03-01Z',
      '2026-03-01T23:30:00-05:00', '2026-03-01T23:30:00+05:00', '2026-03-01T10:00:00ZZ', '2026-03-01T10:00:00Z\n',
      '2026-03-01t10:00:00Z', '2026-3-01T10:00:00Z', '2026/03/01T10:00:00Z', '２０２６-03-01T10:00:00Z', '2026-03-0', '',
      'not a date', '20260-03-01T10:00:00Z', '2026-03-01 10:00:00Z', '2026-13-45T10:00:00Z',
    ];
    for (const t of samples) assert.equal(dateOf(t), byPatterns(t), JSON.stringify(t));
    assert.equal(dateOf('2026-03-01T23:30:00-05:00'), '2026-03-02');
  });

  it('kindOfMediaId names the kind of a well-formed id and nothing else', () => {
    assert.equal(kindOfMediaId('mv00000001'), 'movie');
    assert.equal(kindOfMediaId('tv12345678'), 'tv_show');
    for (const bad of ['mv0000001', 'tv000000001', 'xv00000001', 'MV00000001', 'mv0000000a', '', 'tv']) assert.equal(kindOfMediaId(bad), null, bad);
  });

  it('arrivals keep a day\'s providers sorted, whatever order their offers arrive in', () => {
    const providers = ['netflix', 'amazon', 'zee5', 'apple', 'hbo', 'amazon'];
    const events = providers.map((providerId, i) =>
      recorded('OfferAdded', { ...key, offer: offer({ providerId, webUrl: `u${i}` }) }, at('2026-03-01T06:00:00Z', i + 1)));
    assert.deepEqual(foldStream(arrivalsProjection, events)?.providers, ['amazon', 'apple', 'hbo', 'netflix', 'zee5']);
  });
});
