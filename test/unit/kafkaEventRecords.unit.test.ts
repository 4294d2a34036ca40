/**
 * The Kafka event log's records (infra/kafka/eventRecords.ts), without a broker: which events
 * the writer keeps as Avro and which as JSON, that every reader gets each back exactly as it
 * was logged, and that a record that is neither fails with the offset named.
 */
import assert from 'node:assert/strict';
import { codec } from '../../contracts/codec.ts';
import { isAppError } from '../../contracts/errors.ts';
import type { DomainEvent } from '../../contracts/events.ts';
import { decodeLogRecord, logEncoder, messageBytes, RECORDED_AT_HEADER, REVISION_HEADER, type LogMessage } from '../../infra/kafka/eventRecords.ts';

const RECORDED_AT = '2026-12-07T15:00:00.123Z';

function offerAdded(n: number, offer: Record<string, unknown> = {}): DomainEvent {
  return {
    type: 'OfferAdded',
    data: {
      mediaId: `mv${String(n).padStart(8, '0')}`,
      country: 'FR',
      offer: {
        providerId: 'canal', addonProviderId: null, seasonNumber: null, episodeNumber: null, webUrl: `https://canalplus.com/f/${n}`,
        priceTypes: ['flatrate'], formats: ['hd'], audioLanguages: ['fr'], subtitleLanguages: ['en'], availableFrom: '2026-11-01', availableTo: null, platforms: ['web'],
        ...offer,
      },
    },
    metadata: { observationId: `obs-${n}`, observedAt: '2026-11-01T06:00:00.000Z', producer: 'ingest' },
  } as DomainEvent;
}
const genre: DomainEvent = { type: 'GenreDefined', data: { genre: { id: 12, slug: 'adventure', name: 'Aventure é' } }, metadata: { producer: 'ingest' } } as DomainEvent;

/** The message as a consumer reads it back: key, value and headers as Buffers. */
function consumed(message: LogMessage, offset = 7) {
  const value = typeof message.value === 'string' ? Buffer.from(message.value) : Buffer.from(message.value);
  const headers = Object.fromEntries(Object.entries(message.headers ?? {}).map(([k, v]) => [k, Buffer.from(v)]));
  return { offset: String(offset), key: Buffer.from(message.key), value, headers };
}

describe('the Kafka event log records (eventRecords.ts)', () => {
  it('writes an OfferAdded as the contract’s Avro with its revision and time as headers, and reads it back', () => {
    const event = offerAdded(1);
    const message = logEncoder().message('availability-mv00000001-FR', event, 3, RECORDED_AT);
    assert.ok(Buffer.isBuffer(message.value));
    assert.deepEqual(Buffer.from(message.value), codec.encodeEvent(event), 'the bytes encodeEvent gives');
    assert.deepEqual(message.headers, { [REVISION_HEADER]: '3', [RECORDED_AT_HEADER]: RECORDED_AT });
    assert.equal(message.partition, 0);
    assert.deepEqual(decodeLogRecord(consumed(message)), { ...event, streamId: 'availability-mv00000001-FR', revision: 3, recordedAt: RECORDED_AT });
    assert.ok(messageBytes(message) >= message.value.length);
  });

  it('writes any other event, and an OfferAdded that does not match its schema, as JSON with every field, and reads them back', () => {
    const encoder = logEncoder();
    const odd = offerAdded(2, { price: 3.99 });
    for (const [stream, event] of [['genres', genre], ['availability-mv00000002-FR', odd]] as const) {
      const message = encoder.message(stream, event, 0, RECORDED_AT);
      assert.equal(typeof message.value, 'string');
      assert.equal(message.headers, undefined);
      const logged = { ...event, streamId: stream, revision: 0, recordedAt: RECORDED_AT };
      assert.equal(message.value, JSON.stringify(logged), 'the JSON record as it always was');
      assert.deepEqual(decodeLogRecord(consumed(message)), logged);
      assert.equal(messageBytes(message), Buffer.byteLength(message.value as string));
    }
  });

  it('reads a JSON record of an older log, its event-type header ignored', () => {
    const logged = { ...offerAdded(3), streamId: 'availability-mv00000003-FR', revision: 5, recordedAt: RECORDED_AT };
    const record = { offset: '0', key: Buffer.from(logged.streamId), value: Buffer.from(JSON.stringify(logged)), headers: { 'event-type': Buffer.from('OfferAdded') } };
    assert.deepEqual(decodeLogRecord(record), logged);
  });

  it('hands out values from slabs that the next transaction reuses, and each value of one transaction stays its own', () => {
    const encoder = logEncoder();
    const first = Array.from({ length: 6000 }, (_, n) => encoder.message(`s-${n}`, offerAdded(n), n, RECORDED_AT));
    // ~1.5 MB of records: more than one slab, none overlapping another.
    for (const [n, message] of first.entries()) assert.deepEqual(decodeLogRecord(consumed(message, n)).data, offerAdded(n).data);
    encoder.reset();
    const again = encoder.message('s-x', offerAdded(99_999), 0, RECORDED_AT);
    assert.equal((again.value as Buffer).buffer, (first[0]?.value as Buffer).buffer, 'the first slab again');
  });

  it('takes a fresh slab for events of any type in turn without wasting one, and keeps as JSON an OfferAdded longer than the room left', () => {
    const encoder = logEncoder();
    // Events of other types between OfferAdded ones: all of ~6,000 records in the first slabs.
    const messages = Array.from({ length: 6000 }, (_, n) => encoder.message(`s-${n}`, n % 3 === 0 ? genre : offerAdded(n), n, RECORDED_AT));
    const slabs = new Set(messages.flatMap((m) => (Buffer.isBuffer(m.value) ? [m.value.buffer] : [])));
    assert.ok(slabs.size <= 2, `${slabs.size} slabs for ~1 MB of records`);
    for (const [n, m] of messages.entries()) assert.equal(typeof m.value === 'string', n % 3 === 0, `record ${n}`);
    // ~100 KB in a slab with room: Avro; ~1.4 MB, more than a slab holds: JSON with every field.
    const long = offerAdded(4, { subtitleLanguages: Array.from({ length: 15_000 }, (_, i) => `l${i}`) });
    const fits = logEncoder().message('s', long, 0, RECORDED_AT);
    assert.ok(Buffer.isBuffer(fits.value));
    assert.deepEqual(decodeLogRecord(consumed(fits)), { ...long, streamId: 's', revision: 0, recordedAt: RECORDED_AT });
    const longer = offerAdded(5, { subtitleLanguages: Array.from({ length: 200_000 }, (_, i) => `l${i}`) });
    const json = encoder.message('s', longer, 1, RECORDED_AT);
    assert.equal(typeof json.value, 'string');
    assert.deepEqual(decodeLogRecord(consumed(json)), { ...longer, streamId: 's', revision: 1, recordedAt: RECORDED_AT });
  });

  it('fails with the offset named for a record that is neither JSON nor Avro, or an Avro one without its headers', () => {
    const avro = logEncoder().message('s', offerAdded(5), 1, RECORDED_AT);
    const bad = [
      { offset: '41', key: Buffer.from('s'), value: Buffer.from('not an event') },
      { offset: '41', key: Buffer.from('s'), value: Buffer.from('{"type":') },
      { offset: '41', key: Buffer.from('s'), value: Buffer.from([0xc3, 0x01, 1, 2, 3, 4, 5, 6, 7, 8, 0]) },
      { ...consumed(avro, 41), headers: {} },
      { ...consumed(avro, 41), key: null },
      { ...consumed(avro, 41), headers: { [REVISION_HEADER]: Buffer.from('-1'), [RECORDED_AT_HEADER]: Buffer.from(RECORDED_AT) } },
    ];
    for (const record of bad) {
      assert.throws(() => decodeLogRecord(record), (err) => isAppError(err, 'internal') && /offset 41 is unreadable/.test(err.message), record.value.toString('hex').slice(0, 20));
    }
  });
});
