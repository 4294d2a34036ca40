/**
 * The one validation of an observation: its Avro schema (contracts/codec.ts) plus the domain
 * rules the schema cannot say (contracts/observationRules.ts). Deciders never see what fails it.
 */
import assert from 'node:assert/strict';
import { validateDecodedObservation, validateObservation } from '../../contracts/codec.ts';
import { MAX_WEB_URL_BYTES } from '../../contracts/domain.ts';
import { isCollectionSlug, isIsoDate, MAX_SLUG_CHARS } from '../../contracts/ids.ts';
import type { Observation } from '../../contracts/observations.ts';
import { domainRuleViolation, isRfc3339, isRfc3339ByPattern } from '../../contracts/observationRules.ts';
import { Rng } from '../../services/crawler/prng.ts';
import { decideFromHistory, routeObservation } from '../../services/ingest/deciders.ts';
import {
  availabilityObserved,
  collectionObserved,
  featuredObserved,
  genresObserved,
  mediaObserved,
  offer,
  provider,
  providersObserved,
  season,
  seasonsObserved,
  T0,
  translationObserved,
} from './ingestFixtures.ts';
import { refused } from './ingestSpecification.ts';

describe('observation validation: schema and domain rules', () => {
  it('refuses an observedAt that is not RFC 3339', () => {
    refused(mediaObserved('o1', '2025-03-01 10:00'), /^MediaObserved\.observedAt: "2025-03-01 10:00" is not an RFC 3339 timestamp$/);
    refused(mediaObserved('o1', '2025-02-30T10:00:00Z'), /^MediaObserved\.observedAt/);
    refused(mediaObserved('o1', '2025-03-01T25:00:00Z'), /^MediaObserved\.observedAt/);
  });

  it('accepts RFC 3339 timestamps with fractions and offsets', () => {
    assert.equal(isRfc3339('2025-03-01T10:00:00.123456Z'), true);
    assert.equal(isRfc3339('2025-03-01T10:00:00+05:30'), true);
    assert.equal(isRfc3339('2025-03-01T10:00:00'), false);
    assert.equal(isRfc3339('2025-03-01T10:00:00+24:00'), false);
    assert.equal(isRfc3339(1740823200000), false);
  });

  it('says of every timestamp what the regular expression and Date.parse say (the code-unit fast path included)', () => {
    // The crawler's seeded generator: the same cases every run.
    const rng = new Rng(7);
    const random = (n: number) => Math.floor(rng.next() * n);
    const two = (n: number) => String(n).padStart(2, '0');
    const pick = <T>(list: readonly T[]) => rng.pick(list);
    let accepted = 0;
    for (let k = 0; k < 20_000; k += 1) {
      // Near the edges of every field: years with 1-4 digits, days and months past their end,
      // hours 24, seconds 60, fractions of 0-11 digits, zones in either case or out of range.
      const year = pick([0, 1, 999, 1000, 1900, 2000, 2024, 2025, 2100, 9999]);
      const y = random(8) === 0 ? String(year) : String(year).padStart(4, '0');
      const fraction = random(3) === 0 ? '' : `.${'1234567890123'.slice(0, random(12))}`;
      const zone = pick(['Z', 'Z', 'Z', 'z', '', `+${two(random(26))}:${two(random(61))}`, `-${two(random(25))}:${two(random(60))}`, '+0530', '+05:3']);
      // Each field mostly in range, else anywhere up to past its end.
      const field = (valid: number, from: number, past: number) => two(random(6) === 0 ? random(past + 1) : from + random(valid));
      let text = `${y}-${field(12, 1, 13)}-${field(28, 1, 32)}${pick(['T', 'T', 'T', 't', ' '])}${field(24, 0, 25)}:${field(60, 0, 60)}:${field(60, 0, 61)}${fraction}${zone}`;
      // And, now and then, one code unit of it changed, dropped or added (at the end too).
      if (random(4) === 0) {
        const at = random(text.length + 1);
        text = `${text.slice(0, at)}${pick(['0', '9', ':', '-', 'T', 'Z', '.', '+', 'é', ''])}${text.slice(at + random(2))}`;
      }
      // The regular expression and Date.parse are the definition; the fast path must agree.
      const expected = isRfc3339ByPattern(text);
      if (expected) accepted += 1;
      assert.equal(isRfc3339(text), expected, text);
    }
    // Both sides were exercised.
    assert.ok(accepted > 2_000 && accepted < 18_000, `${accepted} of 20,000 accepted`);
  });

  it('refuses a missing or blank observation id', () => {
    refused({ ...mediaObserved('o1', T0), observationId: undefined }, /^MediaObserved\.observationId: missing$/);
    refused(mediaObserved(' ', T0), /^MediaObserved\.observationId: empty$/);
  });

  it('refuses an empty title', () => {
    refused(mediaObserved('o1', T0, { title: '' }), /^MediaObserved\.data\.title: must not be empty$/);
  });

  it('refuses a non-integer runtime (schema) and a negative vote count (rule)', () => {
    refused(mediaObserved('o1', T0, { runtime: 136.5 }), /^MediaObserved\.data\.runtime: 136\.5 is not an int$/);
    refused(mediaObserved('o1', T0, { voteCount: -3 }), /^MediaObserved\.data\.voteCount: must be >= 0, got -3$/);
  });

  it('refuses a number that is not finite', () => {
    refused(mediaObserved('o1', T0, { popularity: Number.NaN }), /^MediaObserved\.data\.popularity: expected a finite number/);
    refused(providersObserved('p1', T0, [provider('joyn', { weight: Number.POSITIVE_INFINITY })], 'DE'), /data\.providers\[0\]\.weight: expected a finite number/);
  });

  it('refuses a release date that is not a real YYYY-MM-DD date', () => {
    refused(mediaObserved('o1', T0, { releaseDate: '1999-02-30' }), /^MediaObserved\.data\.releaseDate: expected a date YYYY-MM-DD/);
  });

  it('refuses a source id out of range', () => {
    refused(mediaObserved('o1', T0, { sourceId: -1 }), /^MediaObserved\.data\.sourceId: source id out of range/);
    refused(mediaObserved('o1', T0, { sourceId: 1e8 }), /^MediaObserved\.data\.sourceId/);
    refused(featuredObserved('f1', T0, 'daily', [{ contentType: 'movie', sourceId: 1e8, position: 1 }]), /data\.items\[0\]\.sourceId/);
  });

  it('refuses an unknown content type (schema)', () => {
    refused(mediaObserved('o1', T0, { contentType: 'short' as never }), /^MediaObserved\.data\.contentType: "short" is not one of movie, tv_show$/);
  });

  it('refuses a content rating whose country is not two letters', () => {
    refused(mediaObserved('o1', T0, { contentRatings: [{ country: 'USA', rating: 'R' }] }), /^MediaObserved\.data\.contentRatings\[0\]\.country/);
  });

  it('refuses a wrong type inside an array (schema)', () => {
    refused(mediaObserved('o1', T0, { genreIds: [28, '878' as never] }), /^MediaObserved\.data\.genreIds\[1\]/);
  });

  it('refuses an empty provider id or web URL of an offer', () => {
    refused(availabilityObserved('a1', T0, [offer('')]), /data\.offers\[0\]\.providerId: must not be empty/);
    refused(availabilityObserved('a1', T0, [offer('hulu', { webUrl: ' ' })]), /data\.offers\[0\]\.webUrl: must not be empty/);
  });

  it('names the failing field of an offer, a cast member or an episode past the first (paths are built only on failure)', () => {
    const ok = offer('hulu');
    refused(availabilityObserved('a1', T0, [ok, offer('hulu', { seasonNumber: -2 })]), /^AvailabilityObserved\.data\.offers\[1\]\.seasonNumber: must be >= 0, got -2$/);
    refused(availabilityObserved('a1', T0, [ok, offer('hulu', { audioLanguages: ['en', ' '] })]), /^AvailabilityObserved\.data\.offers\[1\]\.audioLanguages\[1\]: must not be empty$/);
    refused(availabilityObserved('a1', T0, [ok, offer('hulu', { subtitleLanguages: [''] })]), /^AvailabilityObserved\.data\.offers\[1\]\.subtitleLanguages\[0\]: must not be empty$/);
    refused(availabilityObserved('a1', T0, [offer('hulu', { availableTo: '2025-13-01' })]), /^AvailabilityObserved\.data\.offers\[0\]\.availableTo: expected a date YYYY-MM-DD, got "2025-13-01"$/);
    refused(availabilityObserved('a1', T0, [offer('hulu', { formats: ['hd', '8k' as never] })]), /^AvailabilityObserved\.data\.offers\[0\]\.formats: "8k" is not one of/);
    const cast = [{ personId: 'p1', name: 'A', role: 'actor', character: null, order: 0 }, { personId: 'p2', name: ' ', role: 'actor', character: null, order: 1 }];
    refused(mediaObserved('o1', T0, { cast } as never), /^MediaObserved\.data\.cast\[1\]\.name: must not be empty$/);
    const episodes = [{ episodeNumber: 1, title: 'E1', overview: null, backdrop: null, airDate: '2024-02-29' }, { episodeNumber: 2, title: 'E2', overview: null, backdrop: null, airDate: '2023-02-29' }];
    refused(seasonsObserved('s1', T0, [{ ...season(1), episodes }], 1399), /^SeasonsObserved\.data\.seasons\[0\]\.episodes\[1\]\.airDate: expected a date YYYY-MM-DD, got "2023-02-29"$/);
  });

  it('checks calendar dates as the YYYY-MM-DD pattern with real days did', () => {
    const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
    const reference = (v: string): boolean => {
      const m = DATE.exec(v);
      if (!m) return false;
      const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
      if (month < 1 || month > 12 || day < 1) return false;
      const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
      return day <= (month === 2 && leap ? 29 : [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1] as number);
    };
    const samples = ['2024-02-29', '2023-02-29', '2000-02-29', '1900-02-29', '0000-01-01', '2025-00-10', '2025-12-31', '2025-12-32', '2025-04-31',
      '2025-1-01', '2025-01-1', '20250101', '2025/01/01', '2025-01-01 ', ' 2025-01-01', '2025-0a-01', '２０２５-01-01', '2025-01-00', '', '9999-12-31', '2025-01-01T00'];
    for (const v of samples) assert.equal(isIsoDate(v), reference(v), v);
  });

  it('refuses a web URL whose link token /go would refuse as too long', () => {
    const url = (bytes: number) => `https://a.example/${'x'.repeat(bytes - 'https://a.example/'.length)}`;
    assert.equal(validateObservation(availabilityObserved('a1', T0, [offer('hulu', { webUrl: url(MAX_WEB_URL_BYTES) })])), null);
    refused(availabilityObserved('a1', T0, [offer('hulu', { webUrl: url(MAX_WEB_URL_BYTES + 1) })]), /data\.offers\[0\]\.webUrl: longer than 1024 bytes/);
  });

  it('refuses a collection slug too long to be a stream name or a read-model key', () => {
    const long = 'a'.repeat(2100);
    refused(collectionObserved('c1', T0, { slug: long }), new RegExp(`^CollectionObserved\\.data\\.slug: longer than ${MAX_SLUG_CHARS} characters \\(2100\\)$`));
    refused(collectionObserved('c1', T0, { slug: long, status: 'withdrawn' }), /data\.slug: longer than/);
    assert.equal(isCollectionSlug('a'.repeat(MAX_SLUG_CHARS)), true);
    assert.equal(isCollectionSlug('a'.repeat(MAX_SLUG_CHARS + 1)), false);
  });

  it('checks a withdrawn collection by its slug only', () => {
    assert.equal(validateObservation(collectionObserved('c1', T0, { status: 'withdrawn', name: '' })), null);
  });

  it('refuses duplicate episode numbers within a season', () => {
    const episode = { episodeNumber: 1, title: 'Pilot', overview: null, backdrop: null, airDate: null };
    refused(seasonsObserved('s1', T0, [{ ...season(1), episodes: [episode, episode] }]), /data\.seasons\[0\]\.episodes: duplicate episode number "1"/);
  });

  it('names an unknown observation type', () => {
    assert.equal(validateObservation({ type: 'PriceObserved', observationId: 'x', observedAt: T0, data: {} }), 'type: unknown observation type "PriceObserved"');
  });

  it('names a missing data object', () => {
    assert.equal(validateObservation({ type: 'GenresObserved', observationId: 'x', observedAt: T0 }), 'GenresObserved.data: missing');
  });

  it('accepts every valid fixture, and checks a decoded one by the domain rules only', () => {
    const valid: Observation[] = [
      mediaObserved('o', T0), translationObserved('t', T0), seasonsObserved('s', T0, [season(1), season(2)]),
      availabilityObserved('a', T0, [offer('hulu'), offer('max', { formats: ['4k'] })]), providersObserved('p', T0, [provider('joyn')], 'de'),
      genresObserved('g', T0, [{ id: 18, slug: 'drama', name: 'Drama' }]), collectionObserved('c', T0), featuredObserved('f', T0, 'daily', []),
    ];
    for (const o of valid) {
      assert.equal(validateObservation(o), null, o.type);
      assert.equal(domainRuleViolation(o), null, o.type);
    }
    assert.equal(validateDecodedObservation(availabilityObserved('a', T0, [], 'USA')), 'AvailabilityObserved.data.country: expected a two-letter country code, got "USA"');
  });
});

describe('ingest routing', () => {
  const streamOf = (o: Observation) => {
    const route = routeObservation(o);
    assert.ok(!('reject' in route), `unexpected reject: ${JSON.stringify(route)}`);
    return route.stream;
  };

  it('routes every observation type to its stream', () => {
    assert.equal(streamOf(mediaObserved('o', T0)), 'media-mv00000603');
    assert.equal(streamOf(translationObserved('o', T0, { contentType: 'tv_show', sourceId: 7 })), 'media-tv00000007');
    assert.equal(streamOf(seasonsObserved('o', T0, [season(1)], 1399)), 'media-tv00001399');
    assert.equal(streamOf(availabilityObserved('o', T0, [], 'de')), 'availability-mv00000603-DE');
    assert.equal(streamOf(providersObserved('o', T0, [], 'fr')), 'providers-FR');
    assert.equal(streamOf(genresObserved('o', T0, [])), 'genres');
    assert.equal(streamOf(collectionObserved('o', T0)), 'collection-best-of-90s');
    assert.equal(streamOf(featuredObserved('o', T0, 'daily', [], 'jp')), 'featured-JP');
  });

  it('decides from a stream history for any observation type', () => {
    const first = decideFromHistory([], genresObserved('g1', T0, [{ id: 18, slug: 'drama', name: 'Drama' }]));
    assert.equal(first.kind, 'append');
    assert.deepEqual(first.kind === 'append' ? decideFromHistory(first.events, genresObserved('g2', T0, [{ id: 18, slug: 'drama', name: 'Drama' }])) : null, {
      kind: 'skip', reason: 'unchanged genres',
    });
  });
});
