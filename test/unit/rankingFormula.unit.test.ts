import assert from 'node:assert/strict';
import type { RankingEntry } from '../../contracts/domain.ts';
import { diffCharts } from '../../services/ranking/diff.ts';
import {
  availabilityFactor, bayesianRating, normalisedWeights, pointsOf, popularityFactor, rankTitles, recencyFactor,
  type RankingCandidate,
} from '../../services/ranking/formula.ts';

const DATE = '2026-03-01';
const providers = [{ id: 'netflix', weight: 100 }, { id: 'hulu', weight: 50 }, { id: 'store', weight: 100 }];

function candidate(mediaId: string, overrides: Partial<RankingCandidate> = {}): RankingCandidate {
  return {
    mediaId,
    kind: 'movie',
    offers: [{ providerId: 'netflix', priceTypes: ['flatrate'], availableFrom: null, availableTo: null }],
    tmdbRating: 8,
    voteCount: 500,
    popularity: 50,
    releaseDate: '2022-03-01',
    lastAirDate: null,
    year: 2022,
    ...overrides,
  };
}

describe('ranking formula', () => {
  it('gives the documented 53 points to the worked example of the README', () => {
    const parts = pointsOf(candidate('mv00000001'), normalisedWeights(providers), DATE);
    assert.equal(parts.availability, 0.5);
    assert.equal(parts.rating, 0.725);
    assert.equal(parts.recency, 0.25);
    assert.equal(parts.popularity, 0.5);
    assert.equal(parts.points, 53);
  });

  it('ranks a 9.0 with 3 votes below an 8.0 with 10,000 votes', () => {
    assert.equal(bayesianRating(9, 3).toFixed(4), '6.5149');
    assert.equal(bayesianRating(8, 10_000).toFixed(4), '7.9286');
    assert.equal(bayesianRating(null, null), 6.5);
    assert.equal(bayesianRating(9.5, 0), 6.5);
    const entries = rankTitles([candidate('mv00000001', { tmdbRating: 9, voteCount: 3 }), candidate('mv00000002', { tmdbRating: 8, voteCount: 10_000 })], providers, DATE);
    assert.deepEqual(entries.map((e) => e.mediaId), ['mv00000002', 'mv00000001']);
  });

  it('weighs providers by normalised weight, counting flatrate above rent or buy, once per provider', () => {
    const w = normalisedWeights(providers);
    assert.deepEqual([...w], [['netflix', 1], ['hulu', 0.5], ['store', 1]]);
    const flat = { providerId: 'netflix', priceTypes: ['flatrate' as const], availableFrom: null, availableTo: null };
    const rent = { providerId: 'store', priceTypes: ['rent' as const, 'buy' as const], availableFrom: null, availableTo: null };
    const half = { providerId: 'hulu', priceTypes: ['free' as const], availableFrom: null, availableTo: null };
    assert.equal(availabilityFactor([flat], w), 0.5); // S = 1
    assert.equal(availabilityFactor([rent], w), 1 / 3); // S = 0.5
    assert.equal(availabilityFactor([flat, rent, half], w), 2 / 3); // S = 1 + 0.5 + 0.5
    assert.equal(availabilityFactor([rent, { ...rent, priceTypes: ['flatrate'], providerId: 'store' }], w), 0.5, 'best factor of the provider');
    assert.equal(availabilityFactor([{ ...flat, providerId: 'unknown' }], w), 0);
    assert.equal(availabilityFactor([{ ...flat, priceTypes: null }], w), 1 / 3);
  });

  it('decays recency by half every two years from the newest date, never above 1', () => {
    assert.equal(recencyFactor({ releaseDate: '2024-03-01', lastAirDate: null, year: null }, '2024-03-01'), 1);
    assert.equal(recencyFactor({ releaseDate: '2030-01-01', lastAirDate: null, year: null }, DATE), 1);
    assert.equal(recencyFactor({ releaseDate: '2018-03-01', lastAirDate: '2022-03-01', year: 2018 }, DATE), 0.25);
    assert.equal(recencyFactor({ releaseDate: null, lastAirDate: null, year: 2022 }, '2026-07-01'), 0.25);
    assert.equal(recencyFactor({ releaseDate: null, lastAirDate: null, year: null }, DATE), 0);
  });

  it('saturates popularity at the documented half point', () => {
    assert.equal(popularityFactor(50), 0.5);
    assert.equal(popularityFactor(150), 0.75);
    assert.equal(popularityFactor(null), 0);
    assert.equal(popularityFactor(-3), 0);
  });

  it('sorts by points, ties by media id, scores relative to the top and numbers positions from 1', () => {
    const entries = rankTitles([
      candidate('mv00000003'),
      candidate('mv00000002', { popularity: 150 }), // +3.75 points
      candidate('mv00000001'),
    ], providers, DATE);
    assert.deepEqual(entries, [
      { mediaId: 'mv00000002', kind: 'movie', position: 1, score: 100, points: 56.75 },
      { mediaId: 'mv00000001', kind: 'movie', position: 2, score: 93.39, points: 53 },
      { mediaId: 'mv00000003', kind: 'movie', position: 3, score: 93.39, points: 53 },
    ]);
  });

  it('leaves out titles with no offer valid on the ranking date and ignores expired offers', () => {
    const expired = { providerId: 'netflix', priceTypes: ['flatrate' as const], availableFrom: null, availableTo: '2026-02-28' };
    const upcoming = { providerId: 'netflix', priceTypes: ['flatrate' as const], availableFrom: '2026-03-02', availableTo: null };
    const lastDay = { providerId: 'store', priceTypes: ['buy' as const], availableFrom: '2026-01-01', availableTo: DATE };
    const entries = rankTitles([
      candidate('mv00000001', { offers: [expired, upcoming] }),
      candidate('mv00000002', { offers: [expired, lastDay] }),
    ], providers, DATE);
    assert.deepEqual(entries.map((e) => e.mediaId), ['mv00000002']);
    // Only the buy offer on its last day counts: S = 1 * 0.5, A = 1/3 -> 13.333333 + 21.75 + 3.75 + 7.5.
    assert.equal(entries[0]?.points, 46.333333);
  });

  it('gives an empty ranking for no titles', () => {
    assert.deepEqual(rankTitles([], providers, DATE), []);
  });
});

function e(mediaId: string, position: number): RankingEntry {
  return { mediaId, kind: 'movie', position, score: 0, points: 0 };
}

describe('chart diff', () => {
  it('reports every chart title as entered on the first day', () => {
    assert.deepEqual(diffCharts(null, [e('a', 1), e('b', 2), e('c', 3)], 2), [
      { mediaId: 'a', kind: 'movie', position: 1, previousPosition: null },
      { mediaId: 'b', kind: 'movie', position: 2, previousPosition: null },
    ]);
  });

  it('reports moved, entered and left titles exactly and nothing for unchanged ones', () => {
    const previous = [e('a', 1), e('b', 2), e('c', 3), e('d', 4), e('x', 5)];
    const current = [e('b', 1), e('a', 2), e('c', 3), e('x', 4), e('d', 5)];
    assert.deepEqual(diffCharts(previous, current, 4), [
      { mediaId: 'b', kind: 'movie', position: 1, previousPosition: 2 },
      { mediaId: 'a', kind: 'movie', position: 2, previousPosition: 1 },
      { mediaId: 'x', kind: 'movie', position: 4, previousPosition: null },
      { mediaId: 'd', kind: 'movie', position: null, previousPosition: 4 },
    ]);
  });

  it('reports a title that disappeared from the ranking as left', () => {
    assert.deepEqual(diffCharts([e('a', 1), e('b', 2)], [e('b', 1)], 200), [
      { mediaId: 'b', kind: 'movie', position: 1, previousPosition: 2 },
      { mediaId: 'a', kind: 'movie', position: null, previousPosition: 1 },
    ]);
  });

  it('reports nothing when the chart is unchanged', () => {
    assert.deepEqual(diffCharts([e('a', 1), e('b', 2)], [e('a', 1), e('b', 2)], 200), []);
  });
});
