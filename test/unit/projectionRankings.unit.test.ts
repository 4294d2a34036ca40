import assert from 'node:assert/strict';
import type { RankingEntry } from '../../contracts/domain.ts';
import type { TrendingDoc } from '../../contracts/readModels.ts';
import { foldStream } from '../../projections/fold.ts';
import { layoutRanking, rankingRowKey, rankingsProjection } from '../../projections/rankings.ts';
import { changeOf, layoutTrending, trendingHeadKey, trendingProjection, trendingRowKey } from '../../projections/trending.ts';
import { recorded } from './projectionEvents.ts';

function entry(mediaId: string, position: number): RankingEntry {
  return { mediaId, kind: 'movie', position, score: 100 - position, points: 50 - position };
}

function computed(date: string, entries: RankingEntry[]) {
  return recorded('RankingComputed', { country: 'US', date, formulaVersion: 1, entries }, { metadata: { producer: 'ranking' } });
}

describe('rankings projection', () => {
  it('stores the day ranking under the country, entries by position', () => {
    const event = computed('2026-03-02', [entry('b', 2), entry('a', 1)]);
    assert.equal(rankingsProjection.documentId(event), 'US');
    assert.deepEqual(rankingsProjection.evolve(null, event), { country: 'US', date: '2026-03-02', formulaVersion: 1, entries: [entry('a', 1), entry('b', 2)] });
  });

  it('replaces an older day with a newer one and ignores an older day arriving later', () => {
    const newer = rankingsProjection.evolve(null, computed('2026-03-02', [entry('a', 1)]));
    const ignored = rankingsProjection.evolve(newer, computed('2026-03-01', [entry('z', 1)]));
    assert.deepEqual(ignored, newer);
    const next = rankingsProjection.evolve(newer, computed('2026-03-03', [entry('c', 1)]));
    assert.deepEqual(next !== null && 'entries' in next ? next.entries : null, [entry('c', 1)]);
    assert.equal(next?.date, '2026-03-03');
  });

  it('is stored as a header and a row per rank, overall and per kind, so a page is a range read', () => {
    const tv = { ...entry('t', 2), kind: 'tv_show' as const };
    const chart = rankingsProjection.evolve(null, computed('2026-03-02', [entry('a', 1), tv, entry('c', 3)]));
    const laid = layoutRanking('US', chart, null);
    assert.deepEqual(laid.document, { country: 'US', date: '2026-03-02', formulaVersion: 1, total: 3, totals: { movie: 2, tv_show: 1 } });
    assert.deepEqual(laid.rows.map((r) => r.key), ['US:all:0000001', 'US:movie:0000001', 'US:all:0000002', 'US:tv_show:0000001', 'US:all:0000003', 'US:movie:0000002']);
    // Key order is rank order past ten and a hundred.
    assert.ok(rankingRowKey('US', 'all', 9) < rankingRowKey('US', 'all', 10) && rankingRowKey('US', 'all', 99) < rankingRowKey('US', 'all', 100));
  });

  it('deletes the rows a shorter new chart no longer has, and keeps them when an older day is ignored', () => {
    const long = rankingsProjection.evolve(null, computed('2026-03-02', [entry('a', 1), entry('b', 2), entry('c', 3)]));
    const head = layoutRanking('US', long, null).document;
    const short = rankingsProjection.evolve(head, computed('2026-03-03', [entry('z', 1)]));
    const laid = layoutRanking('US', short, head);
    assert.deepEqual(laid.rows.filter((r) => r.doc === null).map((r) => r.key), ['US:all:0000002', 'US:all:0000003', 'US:movie:0000002', 'US:movie:0000003']);
    const ignored = rankingsProjection.evolve(head, computed('2026-03-01', [entry('y', 1)]));
    assert.deepEqual(layoutRanking('US', ignored, head), { document: head, rows: [] });
  });
});

function moved(mediaId: string, position: number | null, previousPosition: number | null, date = '2026-03-02', kind: 'movie' | 'tv_show' = 'movie') {
  return recorded('PositionChanged', { country: 'US', date, mediaId, kind, position, previousPosition });
}

describe('trending projection', () => {
  it('routes PositionChanged to `${country}:${date}`', () => {
    assert.equal(trendingProjection.documentId(moved('a', 1, 2)), 'US:2026-03-02');
  });

  it('orders climbers by climb, then new entries by position, then fallers, then titles that left', () => {
    const doc = foldStream(trendingProjection, [
      moved('fell', 9, 3), // change -6
      moved('left', null, 4),
      moved('new5', 5, null),
      moved('up2', 7, 9), // +2
      moved('up10', 1, 11), // +10
      moved('new2', 2, null),
      moved('up2b', 4, 6), // +2, better position than up2
      moved('slip', 8, 7), // -1
      moved('left1', null, 1),
    ]);
    assert.deepEqual(doc?.entries.map((e) => e.mediaId), ['up10', 'up2b', 'up2', 'new2', 'new5', 'slip', 'fell', 'left1', 'left']);
  });

  it('replaces the entry of a title folded twice on one day', () => {
    const first = trendingProjection.evolve(null, moved('a', 3, 5));
    const again = trendingProjection.evolve(first, moved('a', 3, 5));
    const expected: TrendingDoc = { country: 'US', date: '2026-03-02', entries: [{ mediaId: 'a', kind: 'movie', position: 3, previousPosition: 5 }] };
    assert.deepEqual(again, expected);
  });

  it('computes change as previous position minus position, null when entering or leaving', () => {
    assert.equal(changeOf({ position: 3, previousPosition: 8 }), 5);
    assert.equal(changeOf({ position: 8, previousPosition: 3 }), -5);
    assert.equal(changeOf({ position: 3, previousPosition: null }), null);
    assert.equal(changeOf({ position: null, previousPosition: 3 }), null);
  });

  it('is laid out as the day, a head and a row per served rank, overall and per kind, titles that left excluded', () => {
    const day = foldStream(trendingProjection, [moved('up', 1, 4), moved('left', null, 2), moved('new', 2, null, '2026-03-02', 'tv_show'), moved('down', 4, 3)]);
    const laid = layoutTrending('US:2026-03-02', day, null);
    // The day itself stays whole under its key: the next fold and the weekly release read it.
    assert.deepEqual(laid.document, day);
    const byKey = new Map(laid.rows.map((r) => [r.key, r.doc]));
    assert.deepEqual(byKey.get(trendingHeadKey('US', '2026-03-02')), { country: 'US', date: '2026-03-02', total: 3, totals: { movie: 2, tv_show: 1 } });
    const ids = (slice: 'all' | 'movie' | 'tv_show') => laid.rows.filter((r) => r.key.startsWith(`row:US:2026-03-02:${slice}:`)).map((r) => (r.doc as { mediaId: string }).mediaId);
    assert.deepEqual(ids('all'), ['up', 'new', 'down']);
    assert.deepEqual(ids('movie'), ['up', 'down']);
    assert.deepEqual(ids('tv_show'), ['new']);
    assert.deepEqual(byKey.get(trendingRowKey('US', '2026-03-02', 'all', 2)), { mediaId: 'new', kind: 'tv_show', position: 2, previousPosition: null });
    // Heads sort by day under the country, rows by rank past ten.
    assert.ok(trendingHeadKey('US', '2026-03-01') < trendingHeadKey('US', '2026-03-02'));
    assert.ok(trendingRowKey('US', 'd', 'all', 9) < trendingRowKey('US', 'd', 'all', 10));
  });

  it('writes only the rows whose rank changed hands, and deletes the rows past the new end', () => {
    const before = foldStream(trendingProjection, [moved('a', 1, 5), moved('b', 2, 3), moved('c', 3, 2)]);
    // c leaves the chart: a and b keep their ranks, rank 3 is deleted.
    const after = trendingProjection.evolve(before, moved('c', null, 2));
    const laid = layoutTrending('US:2026-03-02', after, before);
    assert.deepEqual(laid.rows.map((r) => [r.key, r.doc === null ? null : 'mediaId' in (r.doc as object) ? (r.doc as { mediaId: string }).mediaId : 'head']), [
      [trendingRowKey('US', '2026-03-02', 'all', 3), null],
      [trendingRowKey('US', '2026-03-02', 'movie', 3), null],
      [trendingHeadKey('US', '2026-03-02'), 'head'],
    ]);
  });
});
