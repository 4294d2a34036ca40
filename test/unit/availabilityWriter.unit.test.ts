/**
 * The fast AvailabilityObserved writer (contracts/availabilityWriter.ts) writes avsc's very
 * bytes, or leaves the record to avsc: for every availability record of sample crawls, for
 * strings of every kind and length around the boundaries that change how avsc writes them, for
 * numbers around the boundaries of its arithmetic, and for values avsc refuses.
 */
import assert from 'node:assert/strict';
import { availabilityWriter } from '../../contracts/availabilityWriter.ts';
import { codec } from '../../contracts/codec.ts';
import type { Observation } from '../../contracts/observations.ts';
import { generateCrawl } from '../../services/crawler/catalog.ts';

const schema = codec.registry.latest('observation', 'AvailabilityObserved');
if (!schema) throw new Error('no AvailabilityObserved schema');
const write = availabilityWriter(schema.avro);

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

describe('the fast AvailabilityObserved writer (availabilityWriter.ts)', () => {
  it('is built for the registry schema, and for no other shape', () => {
    assert.ok(write, 'a writer for the newest AvailabilityObserved');
    const media = codec.registry.latest('observation', 'MediaObserved');
    assert.ok(media);
    assert.equal(availabilityWriter(media.avro), null);
  });

  it("writes avsc's bytes for every availability record of two sample crawl days", function () {
    this.timeout(60_000);
    let checked = 0;
    for (const day of [0, 1]) {
      for (const o of generateCrawl({ day })) {
        if (o.type !== 'AvailabilityObserved') continue;
        assertSame(o, o.observationId);
        checked += 1;
      }
    }
    assert.ok(checked > 50_000, `${checked} records`);
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
