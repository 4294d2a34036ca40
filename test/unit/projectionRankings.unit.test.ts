import assert from 'node:assert/strict';
import type { RankingEntry } from '../../contracts/domain.ts';
import type { RecordedEvent } from '../../contracts/events.ts';
import { storedWrites } from '../../contracts/projection.ts';
import type { RankingHeadDoc, TrendingDoc } from '../../contracts/readModels.ts';
import { foldStream } from '../../projections/fold.ts';
import {
  layoutRanking, RANKING_BLOCK, rankingBlockEntries, rankingBlockKey, rankingPageRead, rankingRowPrefix, rankingsProjection, type RankingFold,
} from '../../projections/rankings.ts';
import { changeOf, layoutTrending, TRENDING_BLOCK, trendingBlockKey, trendingHeadKey, trendingProjection } from '../../projections/trending.ts';
import { recorded } from './projectionEvents.ts';

function entry(mediaId: string, position: number): RankingEntry {
  return { mediaId, kind: 'movie', position, score: 100 - position, points: 50 - position };
}

function computed(date: string, entries: RankingEntry[], parts?: { part: number; parts: number }) {
  return recorded('RankingComputed', { country: 'US', date, formulaVersion: 1, ...parts, entries }, { metadata: { producer: 'ranking' } });
}

/** A chart of `n` titles, movies and (every third) TV shows, by position. */
function chart(n: number, prefix = 'm'): RankingEntry[] {
  return Array.from({ length: n }, (_, i) => ({ ...entry(`${prefix}${i + 1}`, i + 1), kind: i % 3 === 2 ? ('tv_show' as const) : ('movie' as const) }));
}

/** The parts of a chart, `size` positions each, as the ranking job appends them. */
function inParts(date: string, entries: RankingEntry[], size: number): RecordedEvent[] {
  const parts = Math.ceil(entries.length / size);
  return Array.from({ length: parts }, (_, i) => computed(date, entries.slice(i * size, (i + 1) * size), { part: i + 1, parts }));
}

/**
 * A read store as the runner keeps it: each batch folds its events onto the stored header,
 * then writes the laid-out header and rows (a null row deletes).
 */
class Stored {
  readonly docs = new Map<string, unknown>();
  apply(...batches: RecordedEvent[][]): this {
    for (const batch of batches) {
      let doc = (this.docs.get('US') ?? null) as RankingFold | null;
      for (const event of batch) doc = rankingsProjection.evolve(doc, event);
      for (const write of storedWrites(rankingsProjection, 'US', doc, null, 1)) {
        if (write.doc === null) this.docs.delete(write.key);
        else this.docs.set(write.key, write.doc);
      }
    }
    return this;
  }
  get head(): RankingHeadDoc {
    return this.docs.get('US') as RankingHeadDoc;
  }
  /** What a reader of the served chart sees: the entries of its blocks of one slice, in key order. */
  served(slice: 'all' | 'movie' | 'tv_show' = 'all'): RankingEntry[] {
    const chart = this.head.chart;
    if (chart === null) return [];
    const prefix = rankingRowPrefix('US', chart.slot, slice);
    return rankingBlockEntries([...this.docs.keys()].filter((k) => k.startsWith(prefix)).sort().map((k) => this.docs.get(k)));
  }
  /** A page as the API reads it: the blocks from its first, then the page's share of them. */
  page(slice: 'all' | 'movie' | 'tv_show', offset: number, count: number): RankingEntry[] {
    const read = rankingPageRead('US', this.head.chart!.slot, slice, offset, count);
    const keys = [...this.docs.keys()].filter((k) => k.startsWith(read.prefix) && k >= read.start).sort().slice(0, read.limit);
    return rankingBlockEntries(keys.map((k) => this.docs.get(k))).slice(read.skip, read.skip + count);
  }
  /** Every key of one slot. */
  slot(slot: 'a' | 'b'): string[] {
    return [...this.docs.keys()].filter((k) => k.startsWith(`US:${slot}:`)).sort();
  }
}

describe('rankings projection', () => {
  it('stores an unsplit chart (an event from before the split) as the served chart, entries by position', () => {
    const event = computed('2026-03-02', [entry('b', 2), entry('a', 1)]);
    assert.equal(rankingsProjection.documentId(event), 'US');
    const store = new Stored().apply([event]);
    assert.deepEqual(store.head, {
      country: 'US',
      chart: { date: '2026-03-02', formulaVersion: 1, slot: 'a', total: 2, totals: { movie: 2, tv_show: 0 } },
      pending: null,
      stored: { a: { all: 2, movie: 2, tv_show: 0 }, b: { all: 0, movie: 0, tv_show: 0 } },
    });
    assert.deepEqual(store.served(), [entry('a', 1), entry('b', 2)]);
  });

  it('replaces an older day with a newer one, in the other slot, and ignores an older day or the same day arriving later', () => {
    const store = new Stored().apply([computed('2026-03-02', [entry('a', 1)])]);
    const before = new Map(store.docs);
    store.apply([computed('2026-03-01', [entry('z', 1)])], [computed('2026-03-02', [entry('y', 1)])]);
    assert.deepEqual(store.docs, before);
    store.apply([computed('2026-03-03', [entry('c', 1)])]);
    assert.equal(store.head.chart?.date, '2026-03-03');
    assert.equal(store.head.chart?.slot, 'b');
    assert.deepEqual(store.served(), [entry('c', 1)]);
  });

  it('is stored as a header and blocks of ranks, overall and per kind, so a page is a range read of a block or two', () => {
    const tv = { ...entry('t', 2), kind: 'tv_show' as const };
    const laid = layoutRanking({ country: 'US', date: '2026-03-02', formulaVersion: 1, entries: [entry('a', 1), tv, entry('c', 3)] }, null);
    assert.deepEqual((laid.document as RankingHeadDoc).chart, { date: '2026-03-02', formulaVersion: 1, slot: 'a', total: 3, totals: { movie: 2, tv_show: 1 } });
    assert.deepEqual(laid.rows, [
      { key: 'US:a:all:0000000', doc: { entries: [entry('a', 1), tv, entry('c', 3)] } },
      { key: 'US:a:movie:0000000', doc: { entries: [entry('a', 1), entry('c', 3)] } },
      { key: 'US:a:tv_show:0000000', doc: { entries: [tv] } },
    ]);
    // 2.5 blocks: two full ones and the rest, per slice; a chart of 125 titles is 3 + 2 + 1 documents.
    const long = layoutRanking({ country: 'US', date: '2026-03-02', formulaVersion: 1, entries: chart(2.5 * RANKING_BLOCK) }, null);
    assert.deepEqual(long.rows.map((r) => [r.key, (r.doc as { entries: unknown[] }).entries.length]).sort(), [
      ['US:a:all:0000000', 50], ['US:a:all:0000001', 50], ['US:a:all:0000002', 25],
      ['US:a:movie:0000000', 50], ['US:a:movie:0000001', 34],
      ['US:a:tv_show:0000000', 41],
    ]);
    // Key order is rank order past ten and a hundred blocks.
    assert.ok(rankingBlockKey('US', 'a', 'all', 9) < rankingBlockKey('US', 'a', 'all', 10) && rankingBlockKey('US', 'a', 'all', 99) < rankingBlockKey('US', 'a', 'all', 100));
  });

  it('answers a page from the blocks that hold it, at any offset and length', () => {
    const day = chart(3 * RANKING_BLOCK + 7);
    const store = new Stored().apply([computed('2026-03-02', day)]);
    for (const [offset, count] of [[0, 50], [0, 1], [49, 2], [50, 50], [25, 50], [10, 140], [150, 7], [156, 1]] as const) {
      assert.deepEqual(store.page('all', offset, count), day.slice(offset, offset + count), `all ${offset}+${count}`);
    }
    const tv = day.filter((e) => e.kind === 'tv_show');
    assert.deepEqual(store.page('tv_show', 45, 10), tv.slice(45, 55));
    assert.deepEqual(rankingPageRead('US', 'a', 'all', 50, 50), { prefix: 'US:a:all:', start: 'US:a:all:0000001', limit: 1, skip: 0 });
    assert.deepEqual(rankingPageRead('US', 'a', 'all', 75, 50), { prefix: 'US:a:all:', start: 'US:a:all:0000001', limit: 2, skip: 25 });
  });

  it('deletes the rows a shorter chart no longer has in its slot', () => {
    const store = new Stored().apply(
      [computed('2026-03-01', [entry('a', 1), entry('b', 2), entry('c', 3)])],
      [computed('2026-03-02', [entry('x', 1), entry('y', 2)])],
    );
    // Day 3 reuses day 1's slot: its rows beyond the one title of day 3 go in the same write.
    store.apply([computed('2026-03-03', [entry('z', 1)])]);
    assert.equal(store.head.chart?.slot, 'a');
    assert.deepEqual(store.slot('a'), ['US:a:all:0000000', 'US:a:movie:0000000']);
    assert.deepEqual(store.served(), [entry('z', 1)]);
    assert.deepEqual(store.head.stored.a, { all: 1, movie: 1, tv_show: 0 });
  });

  it('deletes the blocks past a shorter chart, keeping the one it ends in', () => {
    const store = new Stored().apply([computed('2026-03-01', chart(4 * RANKING_BLOCK))], [computed('2026-03-02', chart(2))]);
    store.apply([computed('2026-03-03', chart(RANKING_BLOCK + 1, 'z'))]);
    assert.deepEqual(store.slot('a'), ['US:a:all:0000000', 'US:a:all:0000001', 'US:a:movie:0000000', 'US:a:tv_show:0000000']);
    assert.deepEqual(store.served(), chart(RANKING_BLOCK + 1, 'z'));
    assert.deepEqual(store.served('movie'), chart(RANKING_BLOCK + 1, 'z').filter((e) => e.kind === 'movie'));
  });

  it('serves a chart in parts only once its last part is in, the same as the chart in one event, however batches cut it', () => {
    const day1 = chart(7, 'old');
    const day2 = chart(10);
    const whole = new Stored().apply([computed('2026-03-01', day1)], [computed('2026-03-02', day2)]);
    const parts = inParts('2026-03-02', day2, 3);
    assert.deepEqual(parts.map((e) => (e.data as { part: number }).part), [1, 2, 3, 4]);
    // One batch per part: until the last, the served chart is day 1, whole.
    const split = new Stored().apply([computed('2026-03-01', day1)]);
    for (const part of parts.slice(0, 3)) {
      split.apply([part]);
      assert.equal(split.head.chart?.date, '2026-03-01');
      assert.deepEqual(split.served(), day1);
      assert.equal(split.head.pending?.received, (part.data as { part: number }).part);
    }
    split.apply([parts[3] as RecordedEvent]);
    assert.deepEqual(split.docs, whole.docs);
    assert.deepEqual(split.served('tv_show'), day2.filter((e) => e.kind === 'tv_show'));
    // All parts in one batch, or cut anywhere, store the same.
    assert.deepEqual(new Stored().apply([computed('2026-03-01', day1)], parts).docs, whole.docs);
    assert.deepEqual(new Stored().apply([computed('2026-03-01', day1), ...parts.slice(0, 2)], parts.slice(2)).docs, whole.docs);
  });

  it('completes a block across parts that end inside it, however batches cut them', () => {
    const day1 = chart(3 * RANKING_BLOCK + 11, 'old');
    const day2 = chart(5 * RANKING_BLOCK + 3);
    const whole = new Stored().apply([computed('2026-03-01', day1)], [computed('2026-03-02', day2)]);
    for (const size of [1, 17, RANKING_BLOCK, RANKING_BLOCK + 1, 3 * RANKING_BLOCK]) {
      const parts = inParts('2026-03-02', day2, size);
      const split = new Stored().apply([computed('2026-03-01', day1)]);
      for (const part of parts.slice(0, -1)) {
        split.apply([part]);
        assert.deepEqual(split.served(), day1);
      }
      split.apply(parts.slice(-1));
      assert.deepEqual(split.docs, whole.docs, `parts of ${size}`);
      const cut = Math.floor(parts.length / 2);
      assert.deepEqual(new Stored().apply([computed('2026-03-01', day1), ...parts.slice(0, cut)], parts.slice(cut)).docs, whole.docs);
    }
    assert.deepEqual(whole.served('tv_show'), day2.filter((e) => e.kind === 'tv_show'));
  });

  it('starts a chart over at a first part (a day run again after a crash) and deletes what the unfinished one left', () => {
    // The unfinished chart wrote full blocks (120 of its 160 titles) that the rerun must delete.
    const crashed = inParts('2026-03-02', chart(3 * RANKING_BLOCK + 10, 'x'), 40).slice(0, 3);
    const rerun = inParts('2026-03-02', chart(4), 2);
    const store = new Stored().apply([computed('2026-03-01', [entry('a', 1)])], crashed, rerun);
    assert.deepEqual(store.docs, new Stored().apply([computed('2026-03-01', [entry('a', 1)])], rerun).docs);
    assert.deepEqual(store.served(), chart(4));
  });

  it('ignores a part whose earlier parts were not folded', () => {
    const [first, second, third] = inParts('2026-03-02', chart(6), 2);
    const store = new Stored().apply([first as RecordedEvent]);
    const before = new Map(store.docs);
    store.apply([third as RecordedEvent]);
    assert.deepEqual(store.docs, before);
    store.apply([second as RecordedEvent, third as RecordedEvent]);
    assert.deepEqual(store.served(), chart(6));
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

  it('is laid out as the day, a head and blocks of served ranks, overall and per kind, titles that left excluded', () => {
    const day = foldStream(trendingProjection, [moved('up', 1, 4), moved('left', null, 2), moved('new', 2, null, '2026-03-02', 'tv_show'), moved('down', 4, 3)]);
    const laid = layoutTrending('US:2026-03-02', day, null);
    // The day itself stays whole under its key: the next fold and the weekly release read it.
    assert.deepEqual(laid.document, day);
    const byKey = new Map(laid.rows.map((r) => [r.key, r.doc]));
    assert.deepEqual(byKey.get(trendingHeadKey('US', '2026-03-02')), { country: 'US', date: '2026-03-02', total: 3, totals: { movie: 2, tv_show: 1 } });
    const ids = (slice: 'all' | 'movie' | 'tv_show') => (byKey.get(trendingBlockKey('US', '2026-03-02', slice, 0)) as { entries: Array<{ mediaId: string }> }).entries.map((e) => e.mediaId);
    assert.deepEqual(ids('all'), ['up', 'new', 'down']);
    assert.deepEqual(ids('movie'), ['up', 'down']);
    assert.deepEqual(ids('tv_show'), ['new']);
    assert.equal(laid.rows.length, 4, 'a block per slice and the head');
    assert.deepEqual((byKey.get(trendingBlockKey('US', '2026-03-02', 'all', 0)) as { entries: unknown[] }).entries[1], { mediaId: 'new', kind: 'tv_show', position: 2, previousPosition: null });
    // Heads sort by day under the country, blocks by rank past ten.
    assert.ok(trendingHeadKey('US', '2026-03-01') < trendingHeadKey('US', '2026-03-02'));
    assert.ok(trendingBlockKey('US', 'd', 'all', 9) < trendingBlockKey('US', 'd', 'all', 10));
  });

  it('writes only the blocks in which a rank changed hands, and deletes the blocks past the new end', () => {
    // 2 * TRENDING_BLOCK + 1 climbers: three blocks overall.
    const n = 2 * TRENDING_BLOCK + 1;
    const climbers = Array.from({ length: n }, (_, i) => moved(`t${String(i).padStart(4, '0')}`, i + 1, i + 1 + 2 * n));
    const before = foldStream(trendingProjection, climbers);
    // The last title leaves: the third block goes, the first two are unchanged.
    const last = `t${String(n - 1).padStart(4, '0')}`;
    const leaves = trendingProjection.evolve(before, moved(last, null, 3 * n));
    assert.deepEqual(layoutTrending('US:2026-03-02', leaves, before).rows.map((r) => [r.key, r.doc === null ? null : 'entries' in (r.doc as object) ? 'block' : 'head']), [
      [trendingBlockKey('US', '2026-03-02', 'all', 2), null],
      [trendingBlockKey('US', '2026-03-02', 'movie', 2), null],
      [trendingHeadKey('US', '2026-03-02'), 'head'],
    ]);
    // Two titles of the second block swap ranks: only that block is written, whole.
    const id = (i: number) => `t${String(i).padStart(4, '0')}`;
    const swapped = trendingProjection.evolve(before, moved(id(TRENDING_BLOCK + 1), TRENDING_BLOCK + 3, TRENDING_BLOCK + 3 + 2 * n));
    const moves = trendingProjection.evolve(swapped, moved(id(TRENDING_BLOCK + 2), TRENDING_BLOCK + 2, TRENDING_BLOCK + 2 + 2 * n));
    const laid = layoutTrending('US:2026-03-02', moves, before);
    assert.deepEqual(laid.rows.map((r) => r.key), [trendingBlockKey('US', '2026-03-02', 'all', 1), trendingBlockKey('US', '2026-03-02', 'movie', 1), trendingHeadKey('US', '2026-03-02')]);
    assert.equal((laid.rows[0]?.doc as { entries: unknown[] }).entries.length, TRENDING_BLOCK);
  });
});
