import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PositionChanged, RankingComputed, RecordedEvent } from '../../contracts/events.ts';
import type { Clock, EventStore, ReadStore } from '../../contracts/ports.ts';
import type { LinksDoc, MediaDoc, ProvidersDoc } from '../../contracts/readModels.ts';
import { lmdbEventStore } from '../../infra/lmdb/eventStore.ts';
import { lmdbReadStore } from '../../infra/lmdb/readStore.ts';
import { foldStream } from '../../projections/fold.ts';
import { rankingsProjection } from '../../projections/rankings.ts';
import { trendingProjection } from '../../projections/trending.ts';
import { rankDay } from '../../services/ranking/job.ts';
import { details, offer, provider } from '../unit/projectionEvents.ts';

const clock: Clock = { now: () => new Date('2026-03-02T03:00:00Z') };

function media(id: string, popularity: number): MediaDoc {
  return {
    id, kind: 'movie', sourceId: Number(id.slice(2)), slug: id, translations: {}, firstSeenAt: '2026-01-01',
    details: details({ popularity, tmdbRating: 7, voteCount: 100, releaseDate: '2025-01-01' }),
  };
}

function links(id: string, country = 'US'): LinksDoc {
  return { mediaId: id, kind: 'movie', country, offers: [{ ...offer({ providerId: 'netflix', webUrl: `https://n/${id}` }), firstSeenAt: '2026-01-01' }] };
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
    for (const [id, p] of Object.entries(popularity)) {
      await put('media_v1', id, media(id, p));
      await put('links_v1', `US:${id}`, links(id));
    }
    // Another country's title must not leak into the US ranking through the prefix scan.
    await put('links_v1', 'USX:mv00000009', links('mv00000009', 'USX'));
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
    await put('media_v1', 'mv00000005', media('mv00000005', 1000));
    await put('links_v1', 'US:mv00000002', null);
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

  it('is a no-op when the day was already ranked for the country', async () => {
    await rankDay({ date: '2026-03-01', countries: ['US'], readStore, eventStore, clock });
    const revision = await eventStore.streamRevision('ranking-US');
    const again = await rankDay({ date: '2026-03-01', countries: ['US'], readStore, eventStore, clock });
    assert.deepEqual(again, [{ country: 'US', date: '2026-03-01', status: 'exists', ranked: 0, positionChanges: 0 }]);
    assert.equal(await eventStore.streamRevision('ranking-US'), revision);
  });

  it('reads the links read model through its alias and defaults the date to the clock', async () => {
    await put('links_v2', 'US:mv00000004', links('mv00000004'));
    await readStore.setAlias('links', 'links_v2');
    const result = await rankDay({ countries: ['US'], readStore, eventStore, clock });
    assert.deepEqual(result, [{ country: 'US', date: '2026-03-02', status: 'appended', ranked: 1, positionChanges: 1 }]);
  });

  it('refuses a date that is not a calendar day', async () => {
    await assert.rejects(
      rankDay({ date: '2026-02-30', readStore, eventStore, clock }),
      (err: unknown) => (err as { code?: string }).code === 'invalid_parameter',
    );
  });
});
