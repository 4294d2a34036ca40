/**
 * The OfferAdded event written and read field by field (contracts/availabilityAvro.ts, through
 * the codec's `encodeEventInto` and `decodeEvent`): the very bytes `encodeEvent` writes with
 * avsc and the very event it reads, for every offer of a sample crawl day made into an event as
 * ingest makes it; and no bytes at all (null: the Kafka event log keeps such an event as JSON)
 * for an event that avsc's check would refuse or that would not read back the same.
 */
import assert from 'node:assert/strict';
import { offerAddedReader, offerAddedWriter } from '../../contracts/availabilityAvro.ts';
import { codec } from '../../contracts/codec.ts';
import { isAppError } from '../../contracts/errors.ts';
import type { DomainEvent } from '../../contracts/events.ts';
import type { AvailabilityObserved } from '../../contracts/observations.ts';
import { generateCrawl } from '../../services/crawler/catalog.ts';

const schema = codec.registry.latest('event', 'OfferAdded');
if (!schema) throw new Error('no OfferAdded schema');

/** Each offer of a crawl day's availability records as the OfferAdded ingest decides for a new offer. */
function sampleEvents(): DomainEvent[] {
  const events: DomainEvent[] = [];
  for (const o of generateCrawl({ day: 0 })) {
    if (o.type !== 'AvailabilityObserved') continue;
    const { data, observationId, observedAt } = o as AvailabilityObserved;
    const mediaId = `${data.contentType === 'movie' ? 'mv' : 'tv'}${String(data.sourceId).padStart(8, '0')}`;
    for (const offer of data.offers) {
      events.push({ type: 'OfferAdded', data: { mediaId, country: data.country, offer }, metadata: { observationId, observedAt, producer: 'ingest' } } as DomainEvent);
    }
  }
  return events;
}

function event(data: Record<string, unknown> = {}, metadata: Record<string, unknown> = { observationId: 'obs-1', observedAt: '2026-11-01T06:00:00.000Z', producer: 'ingest' }, top: Record<string, unknown> = {}): DomainEvent {
  return {
    type: 'OfferAdded',
    data: {
      mediaId: 'mv00000550',
      country: 'DE',
      offer: {
        providerId: 'netflix', addonProviderId: null, seasonNumber: null, episodeNumber: null, webUrl: 'https://www.netflix.com/title/80100172',
        priceTypes: ['flatrate'], formats: ['hd'], audioLanguages: ['en', 'de'], subtitleLanguages: null, availableFrom: '2026-11-01', availableTo: null, platforms: ['web'],
      },
      ...data,
    },
    metadata,
    ...top,
  } as DomainEvent;
}

const target = Buffer.alloc(1 << 20);
/** The record encodeEventInto writes (garbage around it: it must write every byte it claims), or null. */
function written(e: DomainEvent, at = 5): Buffer | null {
  target.fill(0xa5);
  const end = codec.encodeEventInto(e, target, at);
  return end === null ? null : Buffer.from(target.subarray(at, end));
}

describe('the OfferAdded event field by field (availabilityAvro.ts, codec.encodeEventInto)', () => {
  it('is built for the registry schema, and for no other event shape', () => {
    assert.ok(offerAddedWriter(schema.avro, true));
    assert.ok(offerAddedReader(schema.avro));
    const genre = codec.registry.latest('event', 'GenreDefined');
    assert.ok(genre);
    assert.equal(offerAddedWriter(genre.avro), null);
    assert.equal(offerAddedReader(genre.avro), null);
    // Another event type is not written here at all.
    assert.equal(codec.encodeEventInto({ type: 'GenreDefined', data: { genre: { id: 1, slug: 'a', name: 'A' } }, metadata: {} } as DomainEvent, target, 0), null);
  });

  it("writes encodeEvent's bytes and reads the same event back, for every offer of a sample crawl day", function () {
    this.timeout(60_000);
    const events = sampleEvents();
    assert.ok(events.length > 50_000, `${events.length} events`);
    for (const e of events) {
      const bytes = written(e);
      assert.ok(bytes, `${e.metadata.observationId}: left out`);
      if (!bytes.equals(codec.encodeEvent(e))) assert.fail(`${e.metadata.observationId}: bytes differ from avsc's`);
      assert.deepEqual(codec.decodeEvent(bytes), e);
    }
  });

  it('writes an absent metadata field as null, which reads back absent, as encodeEvent does', () => {
    const e = event({}, { producer: 'ingest' });
    const bytes = written(e);
    assert.ok(bytes);
    assert.deepEqual(bytes, codec.encodeEvent(e));
    assert.deepEqual(codec.decodeEvent(bytes), e);
  });

  it('writes nothing for an event avsc would refuse or that would not read back the same', () => {
    const offer = (event().data as unknown as { offer: Record<string, unknown> }).offer;
    const refused: Array<[string, DomainEvent]> = [
      ['a field the offer does not declare', event({ offer: { ...offer, price: 3.99 } })],
      ['a field the data does not declare', event({ extra: 1 })],
      ['a field the event does not declare', event({}, undefined, { streamId: 's' })],
      ['a field the metadata does not declare', event({}, { producer: 'ingest', correlationId: 'c' })],
      ['a null metadata field (it would read back absent)', event({}, { observationId: null, producer: 'ingest' })],
      ['a season that is no int', event({ offer: { ...offer, seasonNumber: 1.5 } })],
      ['a price type the enum lacks', event({ offer: { ...offer, priceTypes: ['lease'] } })],
      ['a number for a string', event({ country: 49 })],
      ['an absent required field', event({ offer: { ...offer, webUrl: undefined } })],
      ['no metadata', { ...event(), metadata: undefined } as unknown as DomainEvent],
    ];
    for (const [what, e] of refused) assert.equal(written(e), null, what);
    // What the codec's check refuses too: never looser than it. (It takes a null metadata
    // field, written as null; only this writer refuses one, since it would read back absent.)
    for (const [what, e] of refused) if (!what.startsWith('a null metadata')) assert.notEqual(codec.validateEvent(e), null, what);
  });

  it('writes nothing into a target too short, and the event fits one a byte longer than its record', () => {
    const e = event();
    const whole = codec.encodeEvent(e);
    assert.equal(codec.encodeEventInto(e, Buffer.alloc(whole.length - 1), 0), null);
    assert.equal(codec.encodeEventInto(e, Buffer.alloc(5), 0), null);
    const exact = Buffer.alloc(whole.length);
    assert.equal(codec.encodeEventInto(e, exact, 0), whole.length);
    assert.deepEqual(exact, whole);
  });

  it('reads no record cut short or with bytes after it: decodeEvent refuses it as avsc does', () => {
    const bytes = codec.encodeEvent(event());
    for (const cut of [11, 20, bytes.length - 1]) {
      assert.throws(() => codec.decodeEvent(bytes.subarray(0, cut)), (err) => isAppError(err, 'invalid_schema'), `cut at ${cut}`);
    }
    assert.throws(() => codec.decodeEvent(Buffer.concat([bytes, Buffer.from([0])])), (err) => isAppError(err, 'invalid_schema'));
  });
});
