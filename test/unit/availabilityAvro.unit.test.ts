/**
 * The fast AvailabilityObserved writer and reader (contracts/availabilityAvro.ts) write avsc's
 * very bytes and read avsc's very objects, or leave the record to avsc: for every availability
 * record of sample crawls, for strings of every kind and length around the boundaries that
 * change how avsc writes them, for numbers around the boundaries of its arithmetic, for values
 * avsc refuses, and (the reader) for bytes cut or spoiled anywhere.
 */
import assert from 'node:assert/strict';
import { availabilityReader, availabilityWriter } from '../../contracts/availabilityAvro.ts';
import { codec } from '../../contracts/codec.ts';
import type { Observation } from '../../contracts/observations.ts';
import { generateCrawl } from '../../services/crawler/catalog.ts';

const schema = codec.registry.latest('observation', 'AvailabilityObserved');
if (!schema) throw new Error('no AvailabilityObserved schema');
const write = availabilityWriter(schema.avro);

let sample: Observation[] | undefined;
/** The availability records of two sample crawl days (generated once, for the writer and the reader). */
function sampleAvailability(): Observation[] {
  sample ??= [0, 1].flatMap((day) => [...generateCrawl({ day })].filter((o) => o.type === 'AvailabilityObserved'));
  return sample;
}

/** avsc's bytes of a body, or its error. */
const into = Buffer.alloc(1 << 20);
function avscBytes(body: unknown): Buffer | Error {
  try {
    const end = schema!.avro.encode(body, into, 0);
    if (end < 0) throw new Error('the test buffer is too short');
    return Buffer.from(into.subarray(0, end));
  } catch (err) {
    return err as Error;
  }
}

const target = Buffer.alloc(1 << 20);
function fastBytes(body: unknown): Buffer | null {
  // Garbage around the record: the writer must write every byte it claims.
  target.fill(0xa5);
  const end = write!(body, target, 7);
  return end === null ? null : target.subarray(7, end);
}

/** The same bytes, said without a diff of every byte (a diff of megabytes took the test down). */
function assertSame(body: unknown, what: string): void {
  const fast = fastBytes(body);
  const expected = avscBytes(body);
  if (fast !== null && expected instanceof Buffer && fast.equals(expected)) return;
  const at = fast === null || !(expected instanceof Buffer) ? -1 : fast.findIndex((b, i) => b !== expected[i]);
  const theirs = expected instanceof Error ? expected.message : `${expected.length} bytes`;
  assert.fail(`${what}: ${fast === null ? 'left to avsc' : `${fast.length} bytes`} against avsc's ${theirs}, first differing at ${at}`);
}

function offer(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    providerId: 'netflix',
    addonProviderId: null,
    seasonNumber: null,
    episodeNumber: null,
    webUrl: 'https://www.netflix.com/title/80100172',
    priceTypes: ['flatrate'],
    formats: ['hd', 'uhd'],
    audioLanguages: ['en', 'de'],
    subtitleLanguages: ['de', 'en', 'fr'],
    availableFrom: '2026-11-01',
    availableTo: null,
    platforms: ['web', 'android_tv'],
    ...overrides,
  };
}

function observation(data: Record<string, unknown> = {}, top: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    type: 'AvailabilityObserved',
    observationId: 'obs-1',
    observedAt: '2026-11-01T06:00:00.000Z',
    data: { contentType: 'movie', sourceId: 550, country: 'DE', offers: [offer()], ...data },
    ...top,
  };
}

describe('the fast AvailabilityObserved writer (availabilityAvro.ts)', () => {
  it('is built for the registry schema, and for no other shape (so is the reader)', () => {
    assert.ok(write, 'a writer for the newest AvailabilityObserved');
    assert.ok(availabilityReader(schema.avro), 'a reader for it');
    const media = codec.registry.latest('observation', 'MediaObserved');
    assert.ok(media);
    assert.equal(availabilityWriter(media.avro), null);
    assert.equal(availabilityReader(media.avro), null);
  });

  it("writes avsc's bytes for every availability record of two sample crawl days", function () {
    this.timeout(60_000);
    const records = sampleAvailability();
    assert.ok(records.length > 50_000, `${records.length} records`);
    for (const o of records) assertSame(o, o.observationId);
  });

  it("writes avsc's bytes for strings of every script and length, lone surrogates included", () => {
    const strings = [
      '',
      'a',
      'x'.repeat(63),
      'x'.repeat(64),
      'x'.repeat(65),
      'x'.repeat(8191),
      'x'.repeat(8192),
      'x'.repeat(20_000),
      'é'.repeat(31),
      'é'.repeat(32),
      'é'.repeat(33),
      `é${'x'.repeat(63)}`,
      `${'x'.repeat(63)}é`,
      `${'x'.repeat(100)}é`,
      'Die fabelhafte Welt der Amélie',
      '千と千尋の神隠し',
      '千'.repeat(30),
      '🎬 emoji 🍿',
      '🍿'.repeat(40),
      'lone \ud800 high',
      'lone \udc00 low',
      '\ud83c',
      `${'x'.repeat(70)}\ud800`,
      // 64 bytes (avsc's own loop: a lone surrogate as its three bytes) and 65 (utf8Write: U+FFFD).
      `${'x'.repeat(61)}\ud800`,
      `${'x'.repeat(62)}\ud800`,
      '\u007f\u0080\u07ff\u0800\uffff',
    ];
    for (const s of strings) {
      const bodies = [
        observation({ country: s }),
        observation({}, { observationId: s }),
        observation({ offers: [offer({ webUrl: s, providerId: s, addonProviderId: s, availableTo: s, formats: [s, s], audioLanguages: [s] })] }),
      ];
      for (const body of bodies) assertSame(body, JSON.stringify(s).slice(0, 40));
    }
  });

  it("writes avsc's bytes for numbers around the boundaries of its arithmetic, nulls, empty and long lists", () => {
    const ids = [0, 1, 63, 64, 8191, 8192, 2 ** 30 - 1, 2 ** 30, 2 ** 31, 2 ** 40 + 3, 2 ** 53 - 2, -(2 ** 53 - 2), -1, -(2 ** 30), -(2 ** 30) - 1, -(2 ** 45)];
    for (const sourceId of ids) assertSame(observation({ sourceId }), String(sourceId));
    for (const n of [0, 1, 63, 64, -1, -64, -65, 2 ** 31 - 1, -(2 ** 31)]) {
      assertSame(observation({ offers: [offer({ seasonNumber: n, episodeNumber: n })] }), String(n));
    }
    const bodies = [
      observation({ offers: [] }),
      observation({ contentType: 'tv_show' }),
      observation({ offers: Array.from({ length: 70 }, (_, i) => offer({ seasonNumber: i })) }),
      observation({
        offers: [offer({ priceTypes: null, formats: null, audioLanguages: null, subtitleLanguages: null, availableFrom: null, platforms: null })],
      }),
      observation({ offers: [offer({ priceTypes: [], formats: [], audioLanguages: [], platforms: [] })] }),
      // avsc writes an absent nullable field as null.
      observation({ offers: [{ providerId: 'p', webUrl: 'u' }] }),
      // Fields no schema declares are not written, by either.
      observation({ extra: 1 }, { producer: 'crawler-x' }),
    ];
    for (const [i, body] of bodies.entries()) assertSame(body, `body ${i}`);
  });

  it('leaves to avsc what avsc refuses, and a buffer too short', () => {
    const refused = [
      observation({ contentType: 'podcast' }),
      observation({ sourceId: 1.5 }),
      observation({ sourceId: '550' }),
      observation({ sourceId: Number.MAX_SAFE_INTEGER }),
      observation({ sourceId: Number.NaN }),
      observation({ offers: [offer({ seasonNumber: 2 ** 31 })] }),
      observation({ offers: [offer({ seasonNumber: 1.5 })] }),
      observation({ offers: [offer({ priceTypes: ['gratis'] })] }),
      observation({ offers: [offer({ platforms: ['toaster'] })] }),
      observation({ offers: [offer({ formats: 'hd' })] }),
      observation({ offers: [offer({ webUrl: undefined })] }),
      observation({ offers: [offer({ formats: [1] })] }),
      observation({ offers: [null] }),
      observation({ offers: 'none' }),
      observation({ country: null }),
      { ...observation(), data: null },
      null,
    ];
    for (const body of refused) {
      assert.equal(fastBytes(body), null, JSON.stringify(body)?.slice(0, 80));
      assert.ok(avscBytes(body) instanceof Error, 'avsc refuses it too');
    }
    // Too short: the codec answers avsc's negative count, so its callers grow the buffer the same.
    const o = observation() as unknown as Observation;
    const short = Buffer.alloc(40);
    const end = codec.encodeObservationInto(o, short, 0);
    assert.ok(end < 0);
    assert.equal(end, schema.avro.encode(o, Buffer.alloc(30), 0));
  });

  it('is what the codec writes, and reads back as the observation', () => {
    const o = observation() as unknown as Observation;
    const target = Buffer.alloc(4096);
    const end = codec.encodeObservationInto(o, target, 3);
    assert.deepEqual(target.subarray(3, end), codec.encodeObservation(o));
    assert.deepEqual(codec.decodeObservation(target.subarray(3, end)), { ...o, data: { ...(o.data as object) } });
  });
});

const checked = availabilityWriter(schema.avro, true);

/** The checked writer's bytes, or null. */
function checkedBytes(body: unknown): Buffer | null {
  target.fill(0xa5);
  const end = checked!(body, target, 7);
  return end === null ? null : Buffer.from(target.subarray(7, end));
}

/** What avsc's check says of an observation's body (the codec checks it without its `type`). */
function avscAccepts(o: unknown): boolean {
  if (typeof o !== 'object' || o === null) return schema!.avro.isValid(o, { noUndeclaredFields: true });
  const { type: _type, ...body } = o as Record<string, unknown>;
  return schema!.avro.isValid(body, { noUndeclaredFields: true });
}

/** An object whose prototype has an enumerable key: avsc's check (own keys) does not see it. */
function withInherited(o: Record<string, unknown>): Record<string, unknown> {
  return Object.assign(Object.create({ inherited: 1 }) as Record<string, unknown>, o);
}

describe('the checked AvailabilityObserved writer (availabilityAvro.ts, what a publish writes)', () => {
  it("writes avsc's bytes for every availability record of two sample crawl days", function () {
    this.timeout(60_000);
    for (const o of sampleAvailability()) {
      const bytes = checkedBytes(o);
      assert.ok(bytes !== null, `${o.observationId} written`);
      assert.ok(bytes.equals(fastBytes(o)!), o.observationId);
    }
  });

  it("writes nothing avsc's check refuses: unknown keys, absent values, arrays for records, wrong types", () => {
    const bodies: unknown[] = [
      observation({}, { producer: 'crawler-x' }),
      observation({ extra: 1 }),
      observation({ offers: [offer({ extra: true })] }),
      observation({ offers: [{ providerId: 'p', webUrl: 'u' }] }),
      observation({ offers: [offer({ addonProviderId: undefined })] }),
      observation({ offers: [offer({ platforms: undefined })] }),
      observation({}, { observedAt: undefined }),
      observation({ offers: [Object.assign([], offer())] }),
      { ...observation(), data: Object.assign([], (observation() as { data: object }).data) },
      observation({ offers: [offer({ priceTypes: ['constructor'] })] }),
      observation({ contentType: 'toString' }),
      observation({ offers: [withInherited(offer())] }),
      withInherited(observation()),
      observation({ offers: [offer({ formats: [undefined] })] }),
      observation({ offers: [offer({ formats: ['hd', , 'sd'] })] }),
      observation({ sourceId: 2 ** 53 }),
      observation({ offers: [offer({ episodeNumber: -0 })] }),
      observation({ offers: [offer({ seasonNumber: '1' })] }),
      observation({ country: 7 }),
    ];
    let refused = 0;
    for (const [i, body] of bodies.entries()) {
      const bytes = checkedBytes(body);
      if (bytes === null) {
        refused += 1;
        continue;
      }
      // Written: avsc's check accepts it, and the bytes are avsc's.
      assert.ok(avscAccepts(body), `body ${i} written though avsc's check refuses it`);
      assert.ok(bytes.equals(avscBytes(body) as Buffer), `body ${i}: avsc's bytes`);
    }
    // Only -0 (an int to avsc's check too) is written; every other one is left to the full check.
    assert.equal(refused, bodies.length - 1);
  });

  it("agrees with avsc's check on every mutation of a record: never writes one it refuses", () => {
    const values: unknown[] = [null, undefined, '', 'x', 'movie', 'flatrate', 'web', 0, -1, 1.5, 2 ** 31, 2 ** 53, Number.NaN, true, [], ['hd'], [1], {}, [offer()]];
    const paths: Array<(v: unknown) => Record<string, unknown>> = [
      (v) => observation({}, { observationId: v }),
      (v) => observation({}, { observedAt: v }),
      (v) => observation({}, { data: v }),
      (v) => observation({ contentType: v }),
      (v) => observation({ sourceId: v }),
      (v) => observation({ country: v }),
      (v) => observation({ offers: v }),
      (v) => observation({ offers: [v] }),
      ...(Object.keys(offer()) as string[]).map((key) => (v: unknown) => observation({ offers: [offer({ [key]: v })] })),
      ...(['priceTypes', 'formats', 'platforms'] as const).map((key) => (v: unknown) => observation({ offers: [offer({ [key]: [v] })] })),
    ];
    let written = 0;
    for (const make of paths) {
      for (const v of values) {
        const body = make(v);
        const bytes = checkedBytes(body);
        if (bytes === null) continue;
        written += 1;
        assert.ok(avscAccepts(body), `written though avsc's check refuses ${JSON.stringify(body).slice(0, 160)}`);
        assert.ok(bytes.equals(avscBytes(body) as Buffer), `avsc's bytes for ${JSON.stringify(body).slice(0, 160)}`);
      }
    }
    assert.ok(written > 50, `${written} mutations written`);
  });

  it('makes the codec publish the bytes and refuse with the reasons it did before', () => {
    // What encodeObservation answered before the checked writer: the full check, then avsc's bytes.
    const before = (o: unknown): Buffer | string => {
      const reason = codec.validateObservation(o);
      if (reason !== null) return reason;
      const { type: _type, ...body } = o as Record<string, unknown>;
      return Buffer.concat([Buffer.from([0xc3, 0x01]), schema!.fingerprint, avscBytes(body) as Buffer]);
    };
    const now = (o: unknown): Buffer | string => {
      try {
        return codec.encodeObservation(o as Observation);
      } catch (err) {
        return (err as Error).message;
      }
    };
    const cases: unknown[] = [
      observation(),
      observation({ offers: [] }),
      observation({}, { producer: 'crawler-x' }),
      observation({ offers: [offer({ seasonNumber: 1.5 })] }),
      observation({ offers: [offer({ addonProviderId: undefined })] }),
      // Domain rules after a good write: a blank id, a date that is not RFC 3339.
      observation({}, { observationId: '  ' }),
      observation({}, { observedAt: 'yesterday' }),
      observation({ country: 'de' }),
      observation({ offers: [offer({ webUrl: 'x'.repeat(70_000) })] }),
      ...sampleAvailability().slice(0, 200),
    ];
    for (const [i, o] of cases.entries()) {
      const [b, n] = [before(o), now(o)];
      if (typeof b === 'string') assert.equal(n, b, `case ${i}: the same reason`);
      else assert.ok(Buffer.isBuffer(n) && n.equals(b), `case ${i}: the same bytes (${typeof n === 'string' ? n : n.length})`);
    }
  });
});

const read = availabilityReader(schema.avro);
const HEADER = 10;

/** What the codec answered before the fast reader: avsc's object with the type first, or its error. */
function avscRead(record: Buffer): object | Error {
  try {
    return { type: 'AvailabilityObserved', ...(schema!.avro.fromBuffer(record.subarray(HEADER)) as object) };
  } catch (err) {
    return err as Error;
  }
}

/** A long's zigzag varint. */
function longBytes(n: number): Buffer {
  const out: number[] = [];
  let f = n >= 0 ? n * 2 : -n * 2 - 1;
  while (f >= 0x80) {
    out.push((f % 128) | 0x80);
    f = Math.floor(f / 128);
  }
  out.push(f);
  return Buffer.from(out);
}

/** A record as the codec writes it, without the domain rules' checks (the reader reads what avsc reads). */
function recordOf(body: unknown): Buffer {
  const into = Buffer.alloc(1 << 16);
  const end = codec.encodeObservationInto(body as Observation, into, 0);
  assert.ok(end > 0);
  return Buffer.from(into.subarray(0, end));
}

describe('the fast AvailabilityObserved reader (availabilityAvro.ts)', () => {
  it("reads avsc's objects from every availability record of two sample crawl days, through the codec", function () {
    this.timeout(60_000);
    for (const o of sampleAvailability()) {
      const record = codec.encodeObservation(o);
      const fast = codec.decodeObservation(record);
      assert.deepEqual(fast, avscRead(record), o.observationId);
      assert.deepEqual(Object.keys(fast), ['type', 'observationId', 'observedAt', 'data']);
    }
  });

  it("reads avsc's strings: short ones kept, others made, any script, bytes that are not UTF-8", () => {
    const strings = ['', 'de', 'x'.repeat(16), 'x'.repeat(17), 'é', 'ü'.repeat(8), '千と', '🍿', 'a\u0000b', '2026-11-01'];
    for (const s of strings) {
      for (const body of [observation({ country: s }), observation({ offers: [offer({ providerId: s, formats: [s, s, 'hd'], availableTo: s })] })]) {
        const record = recordOf(body);
        const fast = read!(record, HEADER, record.length, 'AvailabilityObserved');
        assert.deepEqual(fast, avscRead(record), JSON.stringify(s));
      }
    }
    // Two strings of one length and slot, asked in turns: each is its own, never the other's.
    for (let i = 0; i < 20_000; i += 1) {
      const s = `c${i}`;
      const record = recordOf(observation({ country: s }));
      const fast = read!(record, HEADER, record.length, 'AvailabilityObserved') as { data: { country: string } };
      assert.equal(fast.data.country, s);
    }
    // Bytes that are not UTF-8, short and long: replaced as avsc's utf8Slice replaces them.
    for (const bytes of [[0xff], [0x61, 0xc3], [0xe2, 0x82], Array.from({ length: 20 }, () => 0xfe)]) {
      const good = recordOf(observation({ country: 'X'.repeat(bytes.length) }));
      const at = good.indexOf(Buffer.from('X'.repeat(bytes.length)));
      const bad = Buffer.from(good);
      Buffer.from(bytes).copy(bad, at);
      assert.deepEqual(read!(bad, HEADER, bad.length, 'AvailabilityObserved'), avscRead(bad), bytes.join(','));
    }
  });

  it('reads arrays written in blocks with sizes (negative counts), as avsc does', () => {
    const offerType = (schema!.avro as unknown as { fields: Array<{ name: string; type: { fields: Array<{ name: string; type: { itemsType: { toBuffer(v: unknown): Buffer } } }> } }> })
      .fields[2]!.type.fields[3]!.type.itemsType;
    const one = offerType.toBuffer(offer());
    const two = offerType.toBuffer(offer({ providerId: 'mubi', seasonNumber: 2 }));
    const head = recordOf(observation({ offers: [] }));
    // Everything but the empty array's closing 0, then: a block of one with its size, a block of one, the end.
    const record = Buffer.concat([head.subarray(0, head.length - 1), longBytes(-1), longBytes(one.length), one, longBytes(1), two, Buffer.from([0])]);
    const fast = read!(record, HEADER, record.length, 'AvailabilityObserved');
    assert.ok(fast !== null);
    assert.deepEqual(fast, avscRead(record));
    assert.equal((fast as { data: { offers: unknown[] } }).data.offers.length, 2);
  });

  it("leaves to avsc, which says what is wrong, a record cut anywhere, spoiled or too long", () => {
    const record = recordOf(observation({ sourceId: 2 ** 40, offers: [offer(), offer({ seasonNumber: 3, addonProviderId: 'x' })] }));
    for (let cut = HEADER; cut < record.length; cut += 1) {
      const short = record.subarray(0, cut);
      assert.equal(read!(short, HEADER, short.length, 'AvailabilityObserved'), null, `cut at ${cut}`);
      assert.throws(() => codec.decodeObservation(short), /invalid_observation|cannot decode/);
    }
    const longer = Buffer.concat([record, Buffer.from([0])]);
    assert.equal(read!(longer, HEADER, longer.length, 'AvailabilityObserved'), null);
    assert.throws(() => codec.decodeObservation(longer), /trailing data/);
    // Every byte of the body set to values that break a branch, an enum, a length or a long.
    for (let at = HEADER; at < record.length; at += 1) {
      for (const value of [0x04, 0x7f, 0xff, 0x81]) {
        const spoiled = Buffer.from(record);
        spoiled[at] = value;
        const fast = read!(spoiled, HEADER, spoiled.length, 'AvailabilityObserved');
        const theirs = avscRead(spoiled);
        if (theirs instanceof Error) assert.equal(fast, null, `${at}=${value}: avsc says ${theirs.message}`);
        else if (fast !== null) assert.deepEqual(fast, theirs, `${at}=${value}`);
      }
    }
    // A long past 2^53: avsc refuses it ("potential precision loss").
    const big = recordOf(observation({ sourceId: 2 ** 53 - 2 }));
    const at = big.indexOf(longBytes(2 ** 53 - 2));
    const past = Buffer.concat([big.subarray(0, at), longBytes(2 ** 53 + 2), big.subarray(at + longBytes(2 ** 53 - 2).length)]);
    assert.equal(read!(past, HEADER, past.length, 'AvailabilityObserved'), null);
    assert.throws(() => codec.decodeObservation(past), /precision loss/);
  });
});
