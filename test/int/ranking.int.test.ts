import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isAppError } from '../../contracts/errors.ts';
import type { PositionChanged, RankingComputed, RecordedEvent } from '../../contracts/events.ts';
import type { Clock, EventStore, ReadStore } from '../../contracts/ports.ts';
import type { ProvidersDoc } from '../../contracts/readModels.ts';
import { lmdbEventStore } from '../../infra/lmdb/eventStore.ts';
import { lmdbReadStore } from '../../infra/lmdb/readStore.ts';
import { defaultCollectionName } from '../../projections/collections.ts';
import { foldStream } from '../../projections/fold.ts';
import { rankingInputsProjection } from '../../projections/rankingInputs.ts';
import { rankingsProjection } from '../../projections/rankings.ts';
import { trendingProjection } from '../../projections/trending.ts';
import { readRankingHistory } from '../../services/ranking/history.ts';
import { rankDay } from '../../services/ranking/job.ts';
import { countingReads, foldRankingInputs, offered, registered, withdrawn } from '../fixtures/ranking.ts';
import { details, offer, provider } from '../unit/projectionEvents.ts';

const clock: Clock = { now: () => new Date('2026-03-02T03:00:00Z') };
/** For the tests that rank the days of March: the job ranks no day after its clock's. */
const endOfMarch: Clock = { now: () => new Date('2026-03-31T03:00:00Z') };

/** The job's inputs of a title: its details as registered, popularity aside. */
function media(id: string, popularity: number) {
  return registered(id, details({ popularity, tmdbRating: 7, voteCount: 100, releaseDate: '2025-01-01' }));
}

/** A title offered on netflix in a country. */
function links(id: string, country = 'US') {
  return offered(id, country, offer({ providerId: 'netflix', webUrl: `https://n/${id}` }));
}

describe('rankDay on the LMDB adapters', () => {
  let dataDir: string;
  let readStore: ReadStore;
  let eventStore: EventStore;
  let position = 0;

  async function put<T>(collection: string, key: string, doc: T | null): Promise<void> {
    position += 1;
    await readStore.writeBatch(collection, [{ key, doc, position }]);
  }

  async function rankingStream(country: string): Promise<RecordedEvent[]> {
    return eventStore.readStream(`ranking-${country}`);
  }

  beforeEach(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'marquee-ranking-'));
    readStore = lmdbReadStore({ dataDir });
    eventStore = lmdbEventStore({ dataDir, clock });
    const providers: ProvidersDoc = { country: 'US', providers: [provider('netflix', 100), provider('store', 50)] };
    await put('providers_v1', 'US', providers);
    await put('providers_v1', 'DE', { country: 'DE', providers: [provider('wow', 10)] });
    const popularity: Record<string, number> = { mv00000001: 400, mv00000002: 300, mv00000003: 200, mv00000004: 100, mv00000005: 10 };
    await foldRankingInputs(readStore, Object.entries(popularity).flatMap(([id, p]) => [media(id, p), links(id)]));
    // Another country's title must not leak into the US ranking through the prefix scan.
    await foldRankingInputs(readStore, [links('mv00000009', 'USX')]);
  });

  afterEach(async () => {
    await eventStore.close();
    await readStore.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('ranks every provider country, appends the day once, and diffs the next day exactly', async () => {
    const day1 = await rankDay({ date: '2026-03-01', readStore, eventStore, clock, chartSize: 3, pageSize: 2 });
    assert.deepEqual(day1, [
      { country: 'DE', date: '2026-03-01', status: 'appended', ranked: 0, positionChanges: 0 },
      { country: 'US', date: '2026-03-01', status: 'appended', ranked: 5, positionChanges: 3 },
    ]);
    const us1 = await rankingStream('US');
    // A chart of one part: the changes, then the part that closes the day.
    assert.deepEqual(us1.map((e) => e.type), ['PositionChanged', 'PositionChanged', 'PositionChanged', 'RankingComputed']);
    assert.deepEqual(us1[3]?.metadata, { producer: 'ranking' });
    const computed1 = us1[3] as RecordedEvent<RankingComputed>;
    assert.deepEqual(computed1.data.entries.map((e) => [e.mediaId, e.position]), [
      ['mv00000001', 1], ['mv00000002', 2], ['mv00000003', 3], ['mv00000004', 4], ['mv00000005', 5],
    ]);
    assert.deepEqual([computed1.data.part, computed1.data.parts, computed1.data.latestDate], [1, 1, '2026-03-01']);
    assert.equal(computed1.data.formulaVersion, 1);
    assert.equal(computed1.data.entries[0]?.score, 100);

    // Day 2: mv5 becomes the most popular, mv2 is no longer available.
    await foldRankingInputs(readStore, [media('mv00000005', 1000), withdrawn('mv00000002', 'US', offer({ providerId: 'netflix', webUrl: 'https://n/mv00000002' }))]);
    const day2 = await rankDay({ date: '2026-03-02', countries: ['us'], readStore, eventStore, clock, chartSize: 3 });
    assert.deepEqual(day2, [{ country: 'US', date: '2026-03-02', status: 'appended', ranked: 4, positionChanges: 3 }]);
    const us2 = (await rankingStream('US')).slice(4);
    const changes = us2.slice(0, -1).map((e) => (e as RecordedEvent<PositionChanged>).data);
    assert.deepEqual(changes, [
      { country: 'US', date: '2026-03-02', mediaId: 'mv00000005', kind: 'movie', position: 1, previousPosition: null },
      { country: 'US', date: '2026-03-02', mediaId: 'mv00000001', kind: 'movie', position: 2, previousPosition: 1 },
      { country: 'US', date: '2026-03-02', mediaId: 'mv00000002', kind: 'movie', position: null, previousPosition: 2 },
    ]);

    // The read models built from the stream: newest ranking, and the day's trending order.
    const all = await rankingStream('US');
    assert.equal(foldStream(rankingsProjection, all)?.chart?.date, '2026-03-02');
    const trending = foldStream(trendingProjection, all.filter((e) => e.type === 'PositionChanged' && e.data.date === '2026-03-02'));
    assert.deepEqual(trending?.entries.map((e) => e.mediaId), ['mv00000005', 'mv00000001', 'mv00000002']);
  });

  /** The events of a store as the log holds them: position, stream, revision, type, data, metadata. */
  async function logOf(store: EventStore): Promise<unknown[]> {
    return (await store.readAll({ limit: 10_000 })).map((e) => [e.position, e.streamId, e.revision, e.type, e.data, e.metadata, e.recordedAt]);
  }

  /** The event store with its appendMany and append calls counted. */
  function countingAppends(store: EventStore): { store: EventStore; calls: { appendMany: number[]; append: number } } {
    const calls = { appendMany: [] as number[], append: 0 };
    return {
      calls,
      store: {
        ...store,
        appendMany: (requests) => (calls.appendMany.push(requests.length), store.appendMany(requests)),
        append: (...args) => ((calls.append += 1), store.append(...args)),
      },
    };
  }

  /** The same day ranked one country per run on a store of its own: the log the job wrote before it batched. */
  async function rankedOneByOne(countries: string[], options: { maxAppendBytes?: number; partSize?: number }): Promise<unknown[]> {
    const otherDir = mkdtempSync(join(tmpdir(), 'marquee-ranking-oracle-'));
    const other = lmdbEventStore({ dataDir: otherDir, clock });
    try {
      for (const country of countries) await rankDay({ date: '2026-03-01', countries: [country], readStore, eventStore: other, clock, chartSize: 3, ...options });
      return await logOf(other);
    } finally {
      await other.close();
      rmSync(otherDir, { recursive: true, force: true });
    }
  }

  it('appends the day of every country in one appendMany: the log the country-by-country appends wrote, position for position', async () => {
    const countries = ['DE', 'US', 'GB'];
    const { store, calls } = countingAppends(eventStore);
    const ranked = await rankDay({ date: '2026-03-01', countries, readStore, eventStore: store, clock, chartSize: 3 });
    assert.deepEqual(ranked.map((r) => [r.country, r.status, r.ranked]), [['DE', 'appended', 0], ['US', 'appended', 5], ['GB', 'appended', 0]]);
    // One durable write for the three countries (on LMDB one fsync instead of three).
    assert.deepEqual(calls, { appendMany: [3], append: 0 });
    const log = await logOf(eventStore);
    assert.equal(log.length, 6);
    assert.deepEqual(log, await rankedOneByOne(countries, {}));
    // Held back entries reaching flushEntries append what is pending there.
    const next = countingAppends(eventStore);
    await rankDay({ date: '2026-03-02', countries, readStore, eventStore: next.store, clock, chartSize: 3, flushEntries: 5 });
    assert.deepEqual(next.calls, { appendMany: [2, 1], append: 0 });
  });

  it('appends a day of several appends alone, after the days pending before it, so every event keeps its position', async () => {
    // One event per append: US (5 titles in 3 parts, 3 changes in a chart of 3) takes 6 appends, DE and GB
    // (no title: one empty part) one each.
    const options = { maxAppendBytes: 1, partSize: 2 };
    const countries = ['DE', 'US', 'GB'];
    const { store, calls } = countingAppends(eventStore);
    await rankDay({ date: '2026-03-01', countries, readStore, eventStore: store, clock, chartSize: 3, ...options });
    assert.deepEqual(calls, { appendMany: [1, 1], append: 6 });
    assert.deepEqual(await logOf(eventStore), await rankedOneByOne(countries, options));
  });

  it('ranks again a country whose stream another run moved while its day was pending, and appends the others', async () => {
    let raced = false;
    const racing: EventStore = {
      ...eventStore,
      async appendMany(requests) {
        // Another run ranks US between this run's read of its stream and its append.
        if (!raced) await rankDay({ date: '2026-03-01', countries: ['US'], readStore, eventStore, clock, chartSize: 3 });
        raced = true;
        return eventStore.appendMany(requests);
      },
    };
    const ranked = await rankDay({ date: '2026-03-01', countries: ['US', 'DE'], readStore, eventStore: racing, clock, chartSize: 3 });
    assert.deepEqual(ranked.map((r) => [r.country, r.status]), [['US', 'exists'], ['DE', 'appended']]);
    // The other run's day alone: 3 changes and the part.
    assert.equal((await rankingStream('US')).length, 4);
    assert.equal((await rankingStream('DE')).length, 1);
  });

  it('is a no-op when the day was already ranked for the country', async () => {
    await rankDay({ date: '2026-03-01', countries: ['US'], readStore, eventStore, clock });
    const revision = await eventStore.streamRevision('ranking-US');
    const again = await rankDay({ date: '2026-03-01', countries: ['US'], readStore, eventStore, clock });
    assert.deepEqual(again, [{ country: 'US', date: '2026-03-01', status: 'exists', ranked: 0, positionChanges: 0 }]);
    assert.equal(await eventStore.streamRevision('ranking-US'), revision);
  });

  it('ranks no further country once its signal is aborted (a shutdown), and lists only those ranked', async () => {
    const abort = new AbortController();
    abort.abort();
    assert.deepEqual(await rankDay({ date: '2026-03-01', countries: ['US', 'DE'], readStore, eventStore, clock, signal: abort.signal }), []);
    assert.equal(await eventStore.streamRevision('ranking-US'), -1);
    // One country at a time, aborted while the first is ranked: the first completes, the second is left.
    const running = new AbortController();
    // Aborted by the first country's first read (its providers).
    const aborting: ReadStore = { ...readStore, get: (collection, key) => (running.abort(), readStore.get(collection, key)) };
    const ranked = await rankDay({ date: '2026-03-01', countries: ['US', 'DE'], readStore: aborting, eventStore, clock, signal: running.signal });
    assert.deepEqual(ranked.map((r) => [r.country, r.status]), [['US', 'appended']]);
    assert.equal(await eventStore.streamRevision('ranking-DE'), -1);
  });

  it('reads its inputs read model through its alias and defaults the date to the clock', async () => {
    // A rebuild's collection, as `marquee replay` names it.
    const rebuilt = `${defaultCollectionName(rankingInputsProjection)}_rtest`;
    await foldRankingInputs(readStore, [links('mv00000004')], rebuilt);
    await readStore.setAlias('ranking_inputs', rebuilt);
    const result = await rankDay({ countries: ['US'], readStore, eventStore, clock });
    assert.deepEqual(result, [{ country: 'US', date: '2026-03-02', status: 'appended', ranked: 1, positionChanges: 1 }]);
  });

  function day(n: number): string {
    return `2026-03-${String(n).padStart(2, '0')}`;
  }

  it('reads the events of one chart for day N, not the N-1 charts before it', async () => {
    const { store, reads } = countingReads(eventStore);
    const perDay: number[] = [];
    for (let n = 1; n <= 12; n += 1) {
      // A chart of 3 parts a day, and titles that move, so each day has changes too.
      await foldRankingInputs(readStore, [media('mv00000005', n % 2 === 0 ? 1000 : 10)]);
      const before = reads.events;
      const [result] = await rankDay({ date: day(n), countries: ['US'], readStore, eventStore: store, clock: endOfMarch, chartSize: 3, partSize: 2 });
      assert.equal(result?.status, 'appended');
      perDay.push(reads.events - before);
    }
    assert.equal(reads.wholeStream, 0);
    const stream = await rankingStream('US');
    assert.equal(stream.filter((e) => e.type === 'RankingComputed').length, 36);
    // Day N reads of day N-1 its last part (the stream's last event), then its parts 1 and 2
    // (positions 1-4, holding the chart of 3): three events at day 12 as at day 2, while the
    // stream grows by a day (3 parts and the PositionChanged) each day.
    assert.deepEqual(perDay, [0, ...Array.from({ length: 11 }, () => 3)]);
    const before12 = stream.filter((e) => (e.data as { date?: string }).date !== day(12)).length;
    console.log(`      events read per day: ${perDay.join(', ')}; the stream held ${before12} events when day 12 ran`);
  });

  it('ranks a day again from its first part after a crash left it unfinished, and serves the old day meanwhile', async () => {
    await rankDay({ date: day(1), countries: ['US'], readStore, eventStore, clock: endOfMarch, chartSize: 3 });
    await foldRankingInputs(readStore, [media('mv00000005', 1000)]);
    // One part per append: the second append fails as a crashed process would leave it.
    let appends = 0;
    const crashing: EventStore = {
      ...eventStore,
      async append(stream, events, expected) {
        appends += 1;
        if (appends === 2) throw new Error('process killed');
        return eventStore.append(stream, events, expected);
      },
    };
    const options = { date: day(2), countries: ['US'], readStore, clock: endOfMarch, chartSize: 3, partSize: 2, maxAppendBytes: 1 };
    await assert.rejects(rankDay({ ...options, eventStore: crashing }), /process killed/);
    const unfinished = await rankingStream('US');
    assert.equal(foldStream(rankingsProjection, unfinished)?.chart?.date, day(1));
    assert.deepEqual(unfinished.slice(-1).map((e) => [e.type, (e.data as { part?: number }).part]), [['RankingComputed', 1]]);

    const [again] = await rankDay({ ...options, eventStore });
    assert.deepEqual(again, { country: 'US', date: day(2), status: 'appended', ranked: 5, positionChanges: 4 });
    const all = await rankingStream('US');
    const folded = foldStream(rankingsProjection, all);
    assert.deepEqual([folded?.chart?.date, folded?.chart?.total], [day(2), 5]);
    const trending = foldStream(trendingProjection, all.filter((e) => e.type === 'PositionChanged' && e.data.date === day(2)));
    assert.deepEqual(trending?.entries.map((e) => [e.mediaId, e.previousPosition, e.position]), [
      ['mv00000005', null, 1], ['mv00000001', 1, 2], ['mv00000002', 2, 3], ['mv00000003', 3, null],
    ]);
    const [third] = await rankDay({ ...options, eventStore });
    assert.equal(third?.status, 'exists');
  });

  it('finds the previous day by date, not by append order, after a backfill, and reads a stream written before parts', async () => {
    // Days 1 and 2 as the job wrote them before charts were split: one whole chart, then the changes.
    const whole = (date: string) => ({
      type: 'RankingComputed' as const,
      data: { country: 'US', date, formulaVersion: 1, entries: [{ mediaId: 'mv00000001', kind: 'movie' as const, position: 1, score: 100, points: 50 }] },
      metadata: { producer: 'ranking' },
    });
    await eventStore.append('ranking-US', [whole(day(1))], 'no_stream');
    await eventStore.append('ranking-US', [whole(day(2))], 0);
    for (const n of [10, 12, 11]) await rankDay({ date: day(n), countries: ['US'], readStore, eventStore, clock: endOfMarch, chartSize: 3, partSize: 2 });
    const history = (date: string) => readRankingHistory(eventStore, 'ranking-US', date, 3);
    // Day 11 came last, yet day 13 follows day 12.
    const d13 = await history(day(13));
    assert.deepEqual([d13.exists, d13.previous?.date, d13.latest], [false, day(12), day(12)]);
    assert.deepEqual(d13.previous?.entries.map((e) => e.position), [1, 2, 3]);
    assert.equal((await history(day(12))).exists, true);
    assert.equal((await history(day(10))).exists, true);
    const d11b = await history('2026-03-11');
    assert.equal(d11b.exists, true);
    // Between the old days and the new ones: the walk reaches the unsplit charts, reading one
    // event per day (each new day's last part says where it starts), of a stream of many more.
    const { store, reads } = countingReads(eventStore);
    const d5 = await readRankingHistory(store, 'ranking-US', day(5), 3);
    assert.deepEqual([d5.exists, d5.previous?.date, d5.previous?.entries.length], [false, day(2), 1]);
    // Days 11, 12 and 10 (their last parts), day 2, day 1: 5 of the stream's 13 events.
    assert.equal(reads.events, 5);
    assert.equal((await rankingStream('US')).length, 13);
    assert.equal((await history(day(1))).exists, true);
    const d0 = await history('2026-02-28');
    assert.deepEqual([d0.exists, d0.previous, d0.revision], [false, null, (await eventStore.streamRevision('ranking-US'))]);
  });

  it('refuses a day after its clock\'s, and appends nothing', async () => {
    await foldRankingInputs(readStore, [links('mv00000004')]);
    await assert.rejects(
      rankDay({ date: '2026-03-03', countries: ['US'], readStore, eventStore, clock }),
      (err: unknown) => isAppError(err, 'invalid_parameter') && /ranking date 2026-03-03 is after today \(2026-03-02, UTC\)/.test(err.message),
    );
    assert.equal(await eventStore.streamRevision('ranking-US'), -1);
    // Today itself is a day that has come (the scheduler ranks it).
    const [today] = await rankDay({ date: '2026-03-02', countries: ['US'], readStore, eventStore, clock });
    assert.equal(today?.status, 'appended');
  });

  it('refuses a date that is not a calendar day', async () => {
    await assert.rejects(
      rankDay({ date: '2026-02-30', readStore, eventStore, clock }),
      (err: unknown) => (err as { code?: string }).code === 'invalid_parameter',
    );
  });
});
