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
    assert.deepEqual(stats, { observations: 4, appended: 5, skipped: 0, rejected: 0, conflicts: 0 });
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
    assert.deepEqual(stats, { observations: 2, appended: 0, skipped: 2, rejected: 0, conflicts: 0 });
    assert.equal(eventStore.all.length, 2);
  });

  it('dead-letters invalid observations with their reason, in batch order, and appends the rest', async () => {
    const eventStore = memoryEventStore();
    const bus = memoryBus();
    const stats = await createIngest({ eventStore, bus }).handleBatch(records([
      mediaObserved('o1', T0, { title: '' }),
      mediaObserved('o2', T0, { sourceId: 604, title: 'The Matrix Reloaded', year: 2003 }),
      translationObserved('t1', T0, { sourceId: 999 }),
    ]));
    assert.deepEqual(stats, { observations: 3, appended: 1, skipped: 0, rejected: 2, conflicts: 0 });
    assert.deepEqual(bus.deadLetters.map((d) => [d.source, d.reason]), [
      ['test:0', 'data.title: must not be empty'],
      ['test:2', 'media not registered: a translation needs a MediaObserved first'],
    ]);
    assert.deepEqual(eventStore.all.map((e) => e.streamId), ['media-mv00000604']);
  });

  it('re-reads and re-decides a stream another writer appended to, without duplicating events', async () => {
    const eventStore = memoryEventStore();
    const a = createIngest({ eventStore, bus: memoryBus() });
    const b = createIngest({ eventStore, bus: memoryBus() });
    await a.handleBatch(records([mediaObserved('o1', T0)]));
    // b appends behind a's back; a's cached revision is now behind.
    await b.handleBatch(records([mediaObserved('o2', T1, { runtime: 140 })]));
    const stats = await a.handleBatch(records([mediaObserved('o2', T1, { runtime: 140 }), mediaObserved('o3', T2, { runtime: 150 })]));
    assert.deepEqual(stats, { observations: 2, appended: 1, skipped: 1, rejected: 0, conflicts: 1 });
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
    assert.deepEqual(stats, { observations: 1, appended: 1, skipped: 0, rejected: 0, conflicts: 1 });
    assert.deepEqual(eventStore.all.map((e) => e.type), ['MediaRegistered', 'MediaDetailsChanged', 'MediaDetailsChanged']);
  });

  it('fails the batch, dead-lettering nothing, when a stream keeps conflicting', async () => {
    const eventStore = memoryEventStore();
    eventStore.appendMany = async (requests) => requests.map((r) => new AppError('wrong_expected_revision', `${r.stream} moved`));
    const bus = memoryBus();
    const ingest = createIngest({ eventStore, bus, maxConflictRetries: 2 });
    await assert.rejects(
      ingest.handleBatch(records([mediaObserved('o1', T0), mediaObserved('bad', 'yesterday')])),
      (err: unknown) => isAppError(err, 'wrong_expected_revision') && /after 2 retries/.test(err.message),
    );
    assert.equal(bus.deadLetters.length, 0);
  });

  it('fails the batch on an append error other than a conflict', async () => {
    const eventStore = memoryEventStore();
    eventStore.appendMany = async (requests) => requests.map(() => new AppError('unavailable', 'disk full'));
    await assert.rejects(
      createIngest({ eventStore, bus: memoryBus() }).handleBatch(records([mediaObserved('o1', T0)])),
      (err: unknown) => isAppError(err, 'unavailable'),
    );
  });

  it('consumes the bus until idle and keeps running totals', async () => {
    const eventStore = memoryEventStore();
    const bus = memoryBus();
    await bus.publish([mediaObserved('o1', T0), mediaObserved('o1', T0), availabilityObserved('a1', T0, [offer('hulu')], 'XYZ')]);
    const ingest = createIngest({ eventStore, bus });
    await ingest.run({ batchSize: 2, untilIdle: true }).done;
    assert.deepEqual(ingest.totals(), { observations: 3, appended: 1, skipped: 1, rejected: 1, conflicts: 0 });
    assert.equal(bus.deadLetters[0]?.reason, 'data.country: expected a two-letter country code, got "XYZ"');
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

describe('ingest schema check', () => {
  it('dead-letters an observation the Avro schema cannot carry, by default', async () => {
    const bus = memoryBus();
    const eventStore = memoryEventStore();
    const stats = await createIngest({ eventStore, bus }).handleBatch(records([
      { ...mediaObserved('o1', T0), extra: true } as never,
    ]));
    assert.equal(stats.rejected, 1);
    assert.match(bus.deadLetters[0]?.reason ?? '', /^MediaObserved\..*unknown field extra/);
    assert.equal(eventStore.all.length, 0);
  });

  it('refuses only the observation whose custom check throws', async () => {
    const bus = memoryBus();
    const validate = (o: { observationId: string }) => {
      if (o.observationId === 'o1') throw new Error('boom');
      return null;
    };
    const stats = await createIngest({ eventStore: memoryEventStore(), bus, validate }).handleBatch(records([
      mediaObserved('o1', T0), mediaObserved('o2', T0, { sourceId: 9 }),
    ]));
    assert.deepEqual([stats.rejected, stats.appended], [1, 1]);
    assert.equal(bus.deadLetters[0]?.reason, 'schema: boom');
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
