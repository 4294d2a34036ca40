import assert from 'node:assert/strict';
import type { Observation } from '../../contracts/observations.ts';
import { decideFromHistory, routeObservation } from '../../services/ingest/deciders.ts';
import { mediaDecider } from '../../services/ingest/media.ts';
import { invalidReason, isRfc3339 } from '../../services/ingest/validate.ts';
import {
  availabilityObserved,
  collectionObserved,
  featuredObserved,
  genresObserved,
  mediaObserved,
  providersObserved,
  season,
  seasonsObserved,
  T0,
  translationObserved,
} from './ingestFixtures.ts';
import { specificationFor } from './ingestSpecification.ts';

const given = specificationFor(mediaDecider);

describe('ingest observation validation', () => {
  it('rejects an observedAt that is not RFC 3339', () => {
    given([]).when(mediaObserved('o1', '2025-03-01 10:00')).thenRejects(/^observedAt: expected an RFC 3339 timestamp/);
    given([]).when(mediaObserved('o1', '2025-02-30T10:00:00Z')).thenRejects(/^observedAt/);
    given([]).when(mediaObserved('o1', '2025-03-01T25:00:00Z')).thenRejects(/^observedAt/);
  });

  it('accepts RFC 3339 timestamps with fractions and offsets', () => {
    assert.equal(isRfc3339('2025-03-01T10:00:00.123456Z'), true);
    assert.equal(isRfc3339('2025-03-01T10:00:00+05:30'), true);
    assert.equal(isRfc3339('2025-03-01T10:00:00'), false);
    assert.equal(isRfc3339(1740823200000), false);
  });

  it('rejects a missing observation id', () => {
    given([]).when({ ...mediaObserved('o1', T0), observationId: undefined }).thenRejects(/^observationId: missing observation id/);
    given([]).when(mediaObserved('', T0)).thenRejects(/^observationId/);
  });

  it('rejects an empty title', () => {
    given([]).when(mediaObserved('o1', T0, { title: '' })).thenRejects(/^data\.title: must not be empty$/);
  });

  it('rejects a non-integer runtime and a negative vote count', () => {
    given([]).when(mediaObserved('o1', T0, { runtime: 136.5 })).thenRejects(/^data\.runtime: expected an integer, got 136.5$/);
    given([]).when(mediaObserved('o1', T0, { voteCount: -3 })).thenRejects(/^data\.voteCount: must be >= 0, got -3$/);
  });

  it('rejects a release date that is not a real YYYY-MM-DD date', () => {
    given([]).when(mediaObserved('o1', T0, { releaseDate: '1999-02-30' })).thenRejects(/^data\.releaseDate: expected a date YYYY-MM-DD/);
  });

  it('rejects a source id out of range', () => {
    given([]).when(mediaObserved('o1', T0, { sourceId: -1 })).thenRejects(/^data\.sourceId: source id out of range/);
    given([]).when(mediaObserved('o1', T0, { sourceId: 1e8 })).thenRejects(/^data\.sourceId/);
  });

  it('rejects an unknown content type', () => {
    given([]).when(mediaObserved('o1', T0, { contentType: 'short' as never })).thenRejects(/^data\.contentType: unknown content type "short"/);
  });

  it('rejects a content rating whose country is not two letters', () => {
    given([]).when(mediaObserved('o1', T0, { contentRatings: [{ country: 'USA', rating: 'R' }] })).thenRejects(/^data\.contentRatings\[0\]\.country/);
  });

  it('rejects a wrong type inside an array', () => {
    given([]).when(mediaObserved('o1', T0, { genreIds: [28, '878' as never] })).thenRejects(/^data\.genreIds\[1\]: expected an integer/);
  });

  it('names an unknown observation type', () => {
    assert.equal(invalidReason({ type: 'PriceObserved', observationId: 'x', observedAt: T0, data: {} }), 'type: unknown observation type "PriceObserved"');
  });

  it('names a missing data object', () => {
    assert.equal(invalidReason({ type: 'GenresObserved', observationId: 'x', observedAt: T0 }), 'data: expected an object, got missing');
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

  it('rejects before routing when a field the route needs is invalid', () => {
    assert.deepEqual(routeObservation(availabilityObserved('o', T0, [], 'U')), {
      reject: 'data.country: expected a two-letter country code, got "U"',
    });
  });

  it('runs an extra check after its own', () => {
    assert.deepEqual(routeObservation(genresObserved('o', T0, []), () => 'schema: no'), { reject: 'schema: no' });
  });

  it('decides from a stream history for any observation type', () => {
    const first = decideFromHistory([], genresObserved('g1', T0, [{ id: 18, slug: 'drama', name: 'Drama' }]));
    assert.equal(first.kind, 'append');
    assert.deepEqual(first.kind === 'append' ? decideFromHistory(first.events, genresObserved('g2', T0, [{ id: 18, slug: 'drama', name: 'Drama' }])) : null, {
      kind: 'skip', reason: 'unchanged genres',
    });
    assert.deepEqual(decideFromHistory([], genresObserved('g3', 'now', [])), {
      kind: 'reject', reason: 'observedAt: expected an RFC 3339 timestamp, got "now"',
    });
  });
});
