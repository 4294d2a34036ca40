import assert from 'node:assert/strict';
import {
  SINGLE_OBJECT_MAGIC,
  codec,
  decodeEvent,
  decodeObservation,
  encodeEvent,
  encodeObservation,
  encodeObservationInto,
  schemaFingerprint,
  validateEvent,
  validateObservation,
} from '../../contracts/codec.ts';
import { isAppError } from '../../contracts/errors.ts';
import { EVENT_TYPES, type DomainEvent } from '../../contracts/events.ts';
import { OBSERVATION_TYPES, type Observation } from '../../contracts/observations.ts';
import { ALL_EVENT_SAMPLES, ALL_OBSERVATION_SAMPLES, EVENT_SAMPLES, OBSERVATION_SAMPLES } from '../fixtures/avro/samples.ts';

const clone = <T>(v: T): T => structuredClone(v);

describe('contracts codec', () => {
  it('has a sample of every observation and event type', () => {
    assert.deepEqual(ALL_OBSERVATION_SAMPLES.map((o) => o.type).sort(), [...OBSERVATION_TYPES].sort());
    assert.deepEqual(ALL_EVENT_SAMPLES.map((e) => e.type).sort(), [...EVENT_TYPES].sort());
  });

  for (const sample of ALL_OBSERVATION_SAMPLES) {
    it(`round-trips a ${sample.type} observation unchanged`, () => {
      assert.equal(validateObservation(sample), null);
      assert.deepEqual(decodeObservation(encodeObservation(sample)), sample);
    });
  }

  for (const sample of ALL_EVENT_SAMPLES) {
    it(`round-trips a ${sample.type} event unchanged, metadata included`, () => {
      assert.equal(validateEvent(sample), null);
      assert.deepEqual(decodeEvent(encodeEvent(sample)), sample);
    });
  }

  it('writes into a buffer the bytes encodeObservation gives, one record after the other, or says how short the buffer is', () => {
    const expected = ALL_OBSERVATION_SAMPLES.map((o) => encodeObservation(o));
    const total = expected.reduce((n, b) => n + b.length, 0);
    const target = Buffer.alloc(3 + total);
    let at = 3;
    for (const [i, sample] of ALL_OBSERVATION_SAMPLES.entries()) {
      const end = encodeObservationInto(sample, target, at);
      assert.ok(target.subarray(at, end).equals(expected[i] as Buffer), sample.type);
      at = end;
    }
    assert.equal(at, target.length);
    const sample = ALL_OBSERVATION_SAMPLES[0] as Observation;
    const size = (expected[0] as Buffer).length;
    for (const short of [0, 5, 10, size - 1]) assert.ok(encodeObservationInto(sample, Buffer.alloc(short), 0) < 0, `${short} bytes`);
    assert.equal(encodeObservationInto(sample, Buffer.alloc(size), 0), size);
  });

  it('keeps absent metadata fields absent instead of null', () => {
    const event: DomainEvent = { ...EVENT_SAMPLES.PositionChanged, metadata: { producer: 'ranking' } };
    const decoded = decodeEvent(encodeEvent(event));
    assert.deepEqual(decoded.metadata, { producer: 'ranking' });
    assert.equal('observationId' in decoded.metadata, false);
  });

  it('writes the single-object header with the fingerprint of the newest schema', () => {
    const bytes = encodeObservation(OBSERVATION_SAMPLES.GenresObserved);
    assert.deepEqual(bytes.subarray(0, 2), SINGLE_OBJECT_MAGIC);
    assert.equal(bytes.subarray(2, 10).toString('hex'), schemaFingerprint('GenresObserved'));
    assert.match(schemaFingerprint('OfferAdded'), /^[0-9a-f]{16}$/);
    assert.notEqual(schemaFingerprint('OfferAdded'), schemaFingerprint('OfferChanged'));
  });

  it('writes header and Avro body as the schema writes them, into fresh buffers, records larger than its scratch buffer too', () => {
    const { registry } = codec;
    const expected = (o: Observation): Buffer => {
      const schema = registry.latest('observation', o.type);
      assert.ok(schema);
      const { type: _type, ...body } = o;
      return Buffer.concat([SINGLE_OBJECT_MAGIC, schema.fingerprint, schema.avro.toBuffer(body)]);
    };
    const large: Observation = { ...OBSERVATION_SAMPLES.GenresObserved, data: { genres: Array.from({ length: 5000 }, (_, i) => ({ id: i, slug: `genre-${i}`, name: `Genre number ${i}` })) } } as Observation;
    const records = [...ALL_OBSERVATION_SAMPLES, large, OBSERVATION_SAMPLES.GenresObserved].map((o) => ({ o, bytes: encodeObservation(o) }));
    assert.ok((records.at(-2)?.bytes.length ?? 0) > 64 * 1024);
    // Each result is its own copy: a later encode leaves the earlier ones as they were.
    for (const { o, bytes } of records) assert.deepEqual(bytes, expected(o), o.type);
  });

  it('decodes a Uint8Array view of the bytes as well as a Buffer', () => {
    const bytes = encodeObservation(OBSERVATION_SAMPLES.FeaturedObserved);
    const copy = new Uint8Array(bytes.length + 3);
    copy.set(bytes, 3);
    assert.deepEqual(decodeObservation(copy.subarray(3)), OBSERVATION_SAMPLES.FeaturedObserved);
  });

  const garbage: Array<[string, () => Buffer, RegExp]> = [
    ['random bytes', () => Buffer.from('not avro at all, just text'), /C3 01 header/],
    ['an empty buffer', () => Buffer.alloc(0), /C3 01 header/],
    ['an unknown fingerprint', () => Buffer.concat([SINGLE_OBJECT_MAGIC, Buffer.alloc(8, 7), Buffer.from([2])]), /unknown writer schema fingerprint 0707070707070707/],
    ['a truncated body', () => encodeObservation(OBSERVATION_SAMPLES.MediaObserved).subarray(0, 40), /cannot decode the MediaObserved v2 body: /],
    ['trailing bytes', () => Buffer.concat([encodeObservation(OBSERVATION_SAMPLES.GenresObserved), Buffer.from([1, 2, 3])]), /cannot decode the GenresObserved v1 body: trailing data/],
    ['an event record', () => encodeEvent(EVENT_SAMPLES.GenreDefined), /record is the event GenreDefined, not an observation/],
  ];
  for (const [what, bytes, reason] of garbage) {
    it(`refuses to decode ${what} as an observation with invalid_observation`, () => {
      assert.throws(() => decodeObservation(bytes()), (err) => isAppError(err, 'invalid_observation') && reason.test(err.message));
    });
  }

  it('refuses to decode an observation record as an event with invalid_schema', () => {
    assert.throws(
      () => decodeEvent(encodeObservation(OBSERVATION_SAMPLES.GenresObserved)),
      (err) => isAppError(err, 'invalid_schema') && /not an event/.test(err.message),
    );
  });

  describe('validation names the bad field', () => {
    const cases: Array<[string, (o: Observation) => unknown, string]> = [
      ['an enum value out of the union', (o) => {
        const a = clone(OBSERVATION_SAMPLES.AvailabilityObserved);
        (a.data.offers[0]!.priceTypes as string[])[1] = 'rentt';
        return a;
      }, 'AvailabilityObserved.data.offers[0].priceTypes[1]: "rentt" is not one of flatrate, rent, buy, free, cinema, ads, fast, flatrate_and_buy'],
      ['a format out of FORMATS', () => {
        const a = clone(OBSERVATION_SAMPLES.AvailabilityObserved);
        (a.data.offers[1] as { formats: string[] | null }).formats = ['8k'];
        return a;
      }, 'AvailabilityObserved.data.offers[1].formats: "8k" is not one of sd, hd, uhd, 4k'],
      ['a missing required field', () => {
        const m = clone(OBSERVATION_SAMPLES.MediaObserved) as unknown as { data: Record<string, unknown> };
        delete m.data['title'];
        return m;
      }, 'MediaObserved.data.title: missing'],
      ['a string where an int belongs', () => {
        const m = clone(OBSERVATION_SAMPLES.MediaObserved) as unknown as { data: Record<string, unknown> };
        m.data['year'] = '2009';
        return m;
      }, 'MediaObserved.data.year: "2009" is not null or int'],
      ['a fractional int', () => {
        const s = clone(OBSERVATION_SAMPLES.SeasonsObserved);
        s.data.seasons[0]!.episodes[1]!.episodeNumber = 1.5;
        return s;
      }, 'SeasonsObserved.data.seasons[0].episodes[1].episodeNumber: 1.5 is not an int'],
      ['an undeclared field, which would be lost', () => {
        const g = clone(OBSERVATION_SAMPLES.GenresObserved) as unknown as { data: { genres: Array<Record<string, unknown>> } };
        g.data.genres[0]!['colour'] = 'red';
        return g;
      }, 'GenresObserved.data.genres[0]: unknown field colour'],
      ['a timestamp that is not RFC 3339', () => ({ ...OBSERVATION_SAMPLES.GenresObserved, observedAt: '21/11/2026' }),
        'GenresObserved.observedAt: "21/11/2026" is not an RFC 3339 timestamp'],
      ['an empty observation id', () => ({ ...OBSERVATION_SAMPLES.GenresObserved, observationId: '' }), 'GenresObserved.observationId: empty'],
      ['an unknown type', () => ({ ...OBSERVATION_SAMPLES.GenresObserved, type: 'GenreObserved' }), 'type: unknown observation type "GenreObserved"'],
    ];
    for (const [what, make, reason] of cases) {
      it(`reports ${what}`, () => {
        const bad = make(OBSERVATION_SAMPLES.MediaObserved);
        assert.equal(validateObservation(bad), reason);
        assert.throws(() => encodeObservation(bad as Observation), (err) => isAppError(err, 'invalid_observation') && err.message === reason);
      });
    }

    it('accepts an absent nullable field and reads it back as null', () => {
      const m = clone(OBSERVATION_SAMPLES.MediaObserved) as unknown as { data: Record<string, unknown> };
      delete m.data['tagline'];
      assert.equal(validateObservation(m), null);
      const decoded = decodeObservation(encodeObservation(m as unknown as Observation));
      assert.equal((decoded as typeof OBSERVATION_SAMPLES.MediaObserved).data.tagline, null);
    });

    it('reports an event whose metadata carries an undeclared field', () => {
      const bad = { ...EVENT_SAMPLES.GenreDefined, metadata: { producer: 'ingest', traceId: 'x' } };
      assert.equal(validateEvent(bad), 'GenreDefined.metadata: unknown field traceId');
      assert.throws(() => encodeEvent(bad), (err) => isAppError(err, 'invalid_schema'));
    });

    it('reports an event whose data does not match its type', () => {
      const bad = { ...EVENT_SAMPLES.PositionChanged, data: { ...EVENT_SAMPLES.PositionChanged.data, kind: 'series' } };
      assert.equal(validateEvent(bad), 'PositionChanged.data.kind: "series" is not one of movie, tv_show');
    });
  });
});
