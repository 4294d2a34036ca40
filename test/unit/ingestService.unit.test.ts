import assert from 'node:assert/strict';
import { isAppError } from '../../contracts/errors.ts';
import { AppError } from '../../contracts/errors.ts';
import { createIngest } from '../../services/ingest/ingest.ts';
import { Lru } from '../../services/ingest/lru.ts';
import {
  availabilityObserved,
  genresObserved,
  mediaObserved,
  offer,
  T0,
  T1,
  T2,
  translationObserved,
} from './ingestFixtures.ts';
import { memoryBus, memoryEventStore, records } from './ingestFakes.ts';

describe('ingest service', () => {
  it('appends every stream of a batch in one appendMany call, in observation order within a stream', async () => {
    const eventStore = memoryEventStore();
    const ingest = createIngest({ eventStore, bus: memoryBus() });
    const stats = await ingest.handleBatch(records([
      mediaObserved('o1', T0),
      availabilityObserved('a1', T0, [offer('hulu'), offer('netflix')]),
      translationObserved('t1', T1),
      mediaObserved('o2', T1, { runtime: 137 }),
    ]));
    assert.deepEqual(stats, { observations: 4, appended: 5, skipped: 0, rejected: 0, conflicts: 0, takeovers: 0 });
    assert.equal(eventStore.calls.appendMany, 1);
    assert.deepEqual(
      eventStore.all.map((e) => `${e.streamId}#${e.revision} ${e.type}`),
      [
        'media-mv00000603#0 MediaRegistered',
        'media-mv00000603#1 MediaTranslationChanged',
        'media-mv00000603#2 MediaDetailsChanged',
        'availability-mv00000603-US#0 OfferAdded',
        'availability-mv00000603-US#1 OfferAdded',
      ],
    );
    assert.deepEqual(eventStore.all[0]?.metadata, { observationId: 'o1', observedAt: T0, producer: 'ingest' });
  });

  it('reads a stream once and serves later batches from the cache', async () => {
    const eventStore = memoryEventStore();
    const ingest = createIngest({ eventStore, bus: memoryBus() });
    await ingest.handleBatch(records([mediaObserved('o1', T0)]));
    await ingest.handleBatch(records([mediaObserved('o2', T1, { runtime: 140 })]));
    await ingest.handleBatch(records([mediaObserved('o3', T2, { runtime: 141 })]));
    assert.equal(eventStore.calls.readStream, 1);
    assert.deepEqual(eventStore.all.map((e) => e.type), ['MediaRegistered', 'MediaDetailsChanged', 'MediaDetailsChanged']);
  });

  it('appends nothing when a batch is delivered again', async () => {
    const eventStore = memoryEventStore();
    const batch = records([mediaObserved('o1', T0), genresObserved('g1', T0, [{ id: 18, slug: 'drama', name: 'Drama' }])]);
    await createIngest({ eventStore, bus: memoryBus() }).handleBatch(batch);
    // A fresh instance (no cache), as after a crash before the offset commit.
    const stats = await createIngest({ eventStore, bus: memoryBus() }).handleBatch(batch);
    assert.deepEqual(stats, { observations: 2, appended: 0, skipped: 2, rejected: 0, conflicts: 0, takeovers: 0 });
    assert.equal(eventStore.all.length, 2);
  });

  it('dead-letters what it cannot ingest with the reason, in batch order, and appends the rest', async () => {
    const eventStore = memoryEventStore();
    const bus = memoryBus();
    const clock = { now: () => new Date(T0) };
    const stats = await createIngest({ eventStore, bus, clock }).handleBatch(records([
      mediaObserved('o1', T0, { sourceId: -1 }),
      mediaObserved('o2', T0, { sourceId: 604, title: 'The Matrix Reloaded', year: 2003 }),
      translationObserved('t1', T0, { sourceId: 999 }),
      mediaObserved('o3', '2025-03-02T10:00:01Z', { sourceId: 605 }),
      mediaObserved('o4', '2025-03-02T10:00:00Z', { sourceId: 606 }),
    ]));
    assert.deepEqual(stats, { observations: 5, appended: 2, skipped: 0, rejected: 3, conflicts: 0, takeovers: 0 });
    assert.deepEqual(bus.deadLetters.map((d) => [d.source, d.reason]), [
      ['test:0', 'routing failed: source id -1 does not fit a media id (0..99999999)'],
      ['test:2', 'media not registered: a translation needs a MediaObserved first'],
      ['test:3', 'observedAt: 2025-03-02T10:00:01Z is later than now (2025-03-01T10:00:00.000Z) plus the allowed clock skew of 24 h'],
    ]);
    assert.deepEqual(eventStore.all.map((e) => e.streamId), ['media-mv00000604', 'media-mv00000606']);
  });

  it('takes the allowed clock skew from its options', async () => {
    const bus = memoryBus();
    const clock = { now: () => new Date(T0) };
    const stats = await createIngest({ eventStore: memoryEventStore(), bus, clock, maxFutureSkewMs: 60_000 }).handleBatch(records([
      mediaObserved('o1', '2025-03-01T10:01:00Z'),
      mediaObserved('o2', '2025-03-01T10:01:01Z', { sourceId: 9 }),
    ]));
    assert.deepEqual([stats.appended, stats.rejected], [1, 1]);
    assert.match(bus.deadLetters[0]?.reason ?? '', /^observedAt: 2025-03-01T10:01:01Z is later than now .* skew of 0\.016/);
  });

  it('dead-letters an observation whose decide throws and decides the rest of its stream', async () => {
    const eventStore = memoryEventStore();
    const bus = memoryBus();
    // Never valid on a bus; fed straight in, it makes the media decider throw.
    const stats = await createIngest({ eventStore, bus }).handleBatch(records([
      mediaObserved('o1', T0, { genreIds: null as never }),
      mediaObserved('o2', T1),
    ]));
    assert.deepEqual([stats.appended, stats.rejected], [1, 1]);
    assert.match(bus.deadLetters[0]?.reason ?? '', /^decide failed: .*genreIds/);
    assert.deepEqual(eventStore.all.map((e) => e.metadata.observationId), ['o2']);
  });

  it('re-reads and re-decides a stream another writer appended to, without duplicating events', async () => {
    const eventStore = memoryEventStore();
    const a = createIngest({ eventStore, bus: memoryBus() });
    const b = createIngest({ eventStore, bus: memoryBus() });
    await a.handleBatch(records([mediaObserved('o1', T0)]));
    // b appends behind a's back; a's cached revision is now behind.
    await b.handleBatch(records([mediaObserved('o2', T1, { runtime: 140 })]));
    const stats = await a.handleBatch(records([mediaObserved('o2', T1, { runtime: 140 }), mediaObserved('o3', T2, { runtime: 150 })]));
    assert.deepEqual(stats, { observations: 2, appended: 1, skipped: 1, rejected: 0, conflicts: 1, takeovers: 0 });
    assert.deepEqual(eventStore.all.map((e) => e.metadata.observationId), ['o1', 'o2', 'o3']);
  });

  it('re-checks a cached stream that decided nothing, so another writer\'s change is not missed', async () => {
    const eventStore = memoryEventStore();
    const a = createIngest({ eventStore, bus: memoryBus() });
    const b = createIngest({ eventStore, bus: memoryBus() });
    await a.handleBatch(records([mediaObserved('o1', T0)]));
    await b.handleBatch(records([mediaObserved('o2', T1, { runtime: 140 })]));
    // Equal to a's cached state, but a change back from what b recorded.
    const stats = await a.handleBatch(records([mediaObserved('o3', T2)]));
    assert.deepEqual(stats, { observations: 1, appended: 1, skipped: 0, rejected: 0, conflicts: 1, takeovers: 0 });
    assert.deepEqual(eventStore.all.map((e) => e.type), ['MediaRegistered', 'MediaDetailsChanged', 'MediaDetailsChanged']);
  });

  it('fails the batch, dead-lettering nothing, when a stream keeps conflicting', async () => {
    const eventStore = memoryEventStore();
    eventStore.appendMany = async (requests) => requests.map((r) => new AppError('wrong_expected_revision', `${r.stream} moved`));
    const bus = memoryBus();
    const ingest = createIngest({ eventStore, bus, maxConflictRetries: 2 });
    await assert.rejects(
      ingest.handleBatch(records([mediaObserved('o1', T0), mediaObserved('future', '2999-01-01T00:00:00Z', { sourceId: 7 })])),
      (err: unknown) => isAppError(err, 'wrong_expected_revision') && /after 2 retries/.test(err.message),
    );
    assert.equal(bus.deadLetters.length, 0);
  });

  it('fails the batch, dead-lettering nothing, when the store is out', async () => {
    for (const outage of [new AppError('unavailable', 'disk full'), new AppError('closed', 'the store is closed')]) {
      const eventStore = memoryEventStore();
      eventStore.appendMany = async () => {
        throw outage;
      };
      const bus = memoryBus();
      await assert.rejects(
        createIngest({ eventStore, bus }).handleBatch(records([mediaObserved('o1', T0), translationObserved('t1', T0, { sourceId: 9 })])),
        (err: unknown) => err === outage,
      );
      assert.equal(bus.deadLetters.length, 0);
    }
  });

  it('dead-letters the stream whose append fails for another reason, and appends the others', async () => {
    const eventStore = memoryEventStore();
    const appendMany = eventStore.appendMany.bind(eventStore);
    const calls: string[][] = [];
    eventStore.appendMany = async (requests) => {
      calls.push(requests.map((r) => r.stream));
      if (requests.some((r) => r.stream === 'media-mv00000604')) throw new AppError('internal', 'key too large');
      return appendMany(requests);
    };
    const bus = memoryBus();
    const batch = records([
      mediaObserved('o1', T0),
      mediaObserved('o2', T0, { sourceId: 604 }),
      mediaObserved('o3', T0, { sourceId: 605 }),
    ]);
    const stats = await createIngest({ eventStore, bus }).handleBatch(batch);
    assert.deepEqual(stats, { observations: 3, appended: 2, skipped: 0, rejected: 1, conflicts: 0, takeovers: 0 });
    assert.deepEqual(calls, [
      ['media-mv00000603', 'media-mv00000604', 'media-mv00000605'],
      ['media-mv00000603'], ['media-mv00000604'], ['media-mv00000605'],
    ]);
    assert.deepEqual(bus.deadLetters.map((d) => [d.source, d.reason]), [['test:1', 'append to media-mv00000604 failed: key too large']]);
    assert.deepEqual(eventStore.all.map((e) => e.streamId), ['media-mv00000603', 'media-mv00000605']);
    // Redelivered (a crash before the commit): what was appended is not appended again.
    const again = await createIngest({ eventStore, bus: memoryBus() }).handleBatch(batch);
    assert.deepEqual([again.appended, again.skipped, again.rejected], [0, 2, 1]);
    assert.equal(eventStore.all.length, 2);
  });

  it('appends the observations of a failing stream one at a time, dead-lettering only the one at fault', async () => {
    const eventStore = memoryEventStore();
    const appendMany = eventStore.appendMany.bind(eventStore);
    eventStore.appendMany = async (requests) => {
      const poisoned = requests.some((r) => r.events.some((e) => e.metadata.observationId === 'o2'));
      return poisoned ? requests.map(() => new AppError('invalid_schema', 'cannot store this event')) : appendMany(requests);
    };
    const bus = memoryBus();
    const stats = await createIngest({ eventStore, bus }).handleBatch(records([
      mediaObserved('o1', T0),
      mediaObserved('o2', T1, { runtime: 140 }),
      mediaObserved('o3', T2, { runtime: 150 }),
    ]));
    assert.deepEqual(stats, { observations: 3, appended: 2, skipped: 0, rejected: 1, conflicts: 0, takeovers: 0 });
    assert.deepEqual(bus.deadLetters.map((d) => [d.source, d.reason]), [['test:1', 'append to media-mv00000603 failed: cannot store this event']]);
    assert.deepEqual(eventStore.all.map((e) => `${e.metadata.observationId} ${e.type}`), ['o1 MediaRegistered', 'o3 MediaDetailsChanged']);
  });

  it('consumes the bus until idle and keeps running totals', async () => {
    const eventStore = memoryEventStore();
    const bus = memoryBus();
    await bus.publish([mediaObserved('o1', T0), mediaObserved('o1', T0), availabilityObserved('a1', T0, [offer('hulu')], 'XYZ')]);
    const ingest = createIngest({ eventStore, bus });
    await ingest.run({ batchSize: 2, untilIdle: true }).done;
    // The bus refused the invalid one: ingest never saw it.
    assert.deepEqual(ingest.totals(), { observations: 2, appended: 1, skipped: 1, rejected: 0, conflicts: 0, takeovers: 0 });
    assert.equal(bus.deadLetters[0]?.reason, 'AvailabilityObserved.data.country: expected a two-letter country code, got "XYZ"');
  });
});

describe('ingest state cache', () => {
  it('evicts the least recently used entry', () => {
    const lru = new Lru<string, number>(2);
    lru.set('a', 1);
    lru.set('b', 2);
    assert.equal(lru.get('a'), 1);
    lru.set('c', 3);
    assert.equal(lru.get('b'), undefined);
    assert.equal(lru.get('a'), 1);
    assert.equal(lru.get('c'), 3);
    assert.equal(lru.size, 2);
  });
});

describe('ingest events and the Avro schemas', () => {
  it('appends only events that the event schemas accept, for every observation type', async () => {
    const eventStore = memoryEventStore();
    const f = await import('./ingestFixtures.ts');
    const stats = await createIngest({ eventStore, bus: memoryBus() }).handleBatch(records([
      f.mediaObserved('m1', T0, { contentType: 'tv_show', sourceId: 1399 }),
      f.mediaObserved('m2', T1, { contentType: 'tv_show', sourceId: 1399, runtime: 60 }),
      f.translationObserved('t1', T1, { contentType: 'tv_show', sourceId: 1399 }),
      f.seasonsObserved('s1', T1, [f.season(1)]),
      f.availabilityObserved('a1', T0, [offer('hulu'), offer('max')]),
      f.availabilityObserved('a2', T1, [offer('hulu', { formats: ['4k'] })]),
      f.providersObserved('p1', T0, [f.provider('hulu'), f.provider('max')]),
      f.providersObserved('p2', T1, [f.provider('hulu', { weight: 3 })]),
      f.genresObserved('g1', T0, [{ id: 18, slug: 'drama', name: 'Drama' }]),
      f.genresObserved('g2', T1, [{ id: 18, slug: 'drama', name: 'Dramas' }]),
      f.collectionObserved('c1', T0),
      f.collectionObserved('c2', T1, { description: 'x' }),
      f.collectionObserved('c3', T2, { status: 'withdrawn' }),
      f.featuredObserved('f1', T0, 'daily', [{ contentType: 'movie', sourceId: 603, position: 1 }]),
    ]));
    assert.equal(stats.rejected, 0);
    assert.deepEqual(
      [...new Set(eventStore.all.map((e) => e.type))].sort(),
      [
        'CollectionChanged', 'CollectionPublished', 'CollectionWithdrawn', 'FeaturedSelectionChanged', 'GenreChanged',
        'GenreDefined', 'MediaDetailsChanged', 'MediaRegistered', 'MediaTranslationChanged', 'OfferAdded', 'OfferChanged',
        'OfferRemoved', 'ProviderAdded', 'ProviderChanged', 'ProviderRemoved', 'SeasonChanged',
      ],
    );
    const { validateEvent } = await import('../../contracts/codec.ts');
    for (const e of eventStore.all) {
      const { streamId: _s, revision: _r, position: _p, recordedAt: _a, ...event } = e;
      assert.equal(validateEvent(event), null, `${e.type} ${JSON.stringify(event)}`);
    }
  });
});
