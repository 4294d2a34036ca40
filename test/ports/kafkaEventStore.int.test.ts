/**
 * The EventStore behaviour suite on the real Kafka (KAFKA_BROKERS), plus what only Kafka's
 * transactions give: a writer paused between sending its records and committing them is fenced
 * by the writer that takes the log over, and none of its records ever become visible.
 *
 * Every run uses its own topic prefix, so runs never see each other's events; the tests of one
 * run share one log and keep apart by unique stream names (the suite is written for that).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel, type KafkaMessage } from 'kafkajs';
import { isAppError } from '../../contracts/errors.ts';
import type { DomainEvent } from '../../contracts/events.ts';
import { latestOffsetReader } from '../../infra/kafka/client.ts';
import { kafkaEventStore, type KafkaEventStore } from '../../infra/kafka/eventStore.ts';
import { printed, spawnTs, succeeded } from '../fixtures/child.ts';
import { eventStoreSuite } from './eventStore.suite.ts';
import { describeWithServer } from './requireServer.ts';
import { genreEvent, uniqueName, waitFor } from './support.ts';

describeWithServer('kafkaEventStore', 'KAFKA_BROKERS', (url) => {
  const brokers = url.split(',');
  const topicPrefix = `test-eventlog-${process.pid}-${Date.now().toString(36)}.`;
  const spec = `kafka:${url}#${topicPrefix}`;
  const open = (): KafkaEventStore => kafkaEventStore({ brokers, topicPrefix });

  /** The first `count` committed records of a log topic as a plain kafkajs consumer reads them. */
  async function rawRecords(topic: string, count: number): Promise<KafkaMessage[]> {
    const consumer = new Kafka({ brokers, logLevel: logLevel.NOTHING }).consumer({ groupId: `${topic}-check-${uniqueName('g')}`, readUncommitted: false });
    const records: KafkaMessage[] = [];
    try {
      await consumer.connect();
      await consumer.subscribe({ topic, fromBeginning: true });
      await new Promise<void>((resolve, reject) => {
        consumer.run({
          eachMessage: async ({ message }) => {
            records.push(message);
            if (records.length === count) resolve();
          },
        }).catch(reject);
      });
      return records;
    } finally {
      await consumer.disconnect().catch(() => {});
    }
  }

  after(async function () {
    this.timeout(30_000);
    const store = open();
    try {
      await store.deleteTopic();
    } finally {
      await store.close();
    }
  });

  describe('suite', function () {
    // Each store joins its own reader group and reads the run's log from its start.
    this.timeout(30_000);
    // Positions are offsets + 1: increasing, since every commit marker takes an offset.
    eventStoreSuite('kafkaEventStore', async () => {
      const store = open();
      return { store, spec, cleanup: () => store.close() };
    }, { positions: 'increasing' });
  });

  it('refuses a log topic that would lose events or has no single order', async function () {
    this.timeout(30_000);
    const prefix = `${topicPrefix}bad-`;
    const store = kafkaEventStore({ brokers, topicPrefix: prefix });
    const admin = new Kafka({ brokers, logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    try {
      // Made by hand with the broker's defaults: 7 days of retention.
      await admin.createTopics({ topics: [{ topic: store.topic, numPartitions: 1 }] });
      await assert.rejects(store.append(uniqueName('s'), [genreEvent(1)], 'any'), (err) => isAppError(err, 'internal') && /retention\.ms=-1/.test(err.message));
      await admin.deleteTopics({ topics: [store.topic] });
      await admin.createTopics({ topics: [{ topic: store.topic, numPartitions: 2, configEntries: [{ name: 'retention.ms', value: '-1' }] }] });
      await assert.rejects(store.headPosition(), (err) => isAppError(err, 'internal') && /2 partitions/.test(err.message));
    } finally {
      await store.close();
      await admin.deleteTopics({ topics: [store.topic] }).catch(() => {});
      await admin.disconnect();
    }
  });

  it('reads a log written before records lost their event-type header, and writes records with none', async function () {
    this.timeout(60_000);
    const prefix = `${topicPrefix}old-`;
    const writer = kafkaEventStore({ brokers, topicPrefix: prefix });
    const producer = new Kafka({ brokers, logLevel: logLevel.NOTHING }).producer();
    const oldStream = uniqueName('old');
    const newStream = uniqueName('new');
    let reader: KafkaEventStore | undefined;
    try {
      await writer.append(newStream, [genreEvent(1)], 'no_stream');
      // A record as the writer wrote it before: the same JSON value, with the header.
      const old = { ...genreEvent(2), streamId: oldStream, revision: 0, recordedAt: '2026-01-01T00:00:00.000Z' };
      await producer.connect();
      await producer.send({ topic: writer.topic, acks: -1, messages: [{ key: oldStream, value: JSON.stringify(old), partition: 0, headers: { 'event-type': old.type } }] });
      await writer.close();

      // A fresh process rebuilds its index from the partition, old records and new.
      reader = kafkaEventStore({ brokers, topicPrefix: prefix });
      const [read] = await reader.readStream(oldStream);
      assert.deepEqual({ type: read?.type, data: read?.data, revision: read?.revision, streamId: read?.streamId }, { type: 'GenreDefined', data: genreEvent(2).data, revision: 0, streamId: oldStream });
      assert.equal((await reader.append(oldStream, [genreEvent(3)], 0)).nextExpectedRevision, 1);
      assert.deepEqual((await reader.readStream(oldStream)).map((e) => e.revision), [0, 1]);

      const headers = new Map<string, number>();
      // The new stream's event, the old record, and the event appended after it.
      for (const message of await rawRecords(writer.topic, 3)) {
        const key = message.key?.toString() ?? '';
        headers.set(key, (headers.get(key) ?? 0) + Object.keys(message.headers ?? {}).length);
      }
      assert.deepEqual(Object.fromEntries(headers), { [newStream]: 0, [oldStream]: 1 });
    } finally {
      await producer.disconnect().catch(() => {});
      await writer.close().catch(() => {});
      await reader?.deleteTopic().catch(() => {});
      await reader?.close();
    }
  });

  it("keeps an OfferAdded as the contract's Avro, any other event as JSON, and a process of its own reads both back exactly", async function () {
    this.timeout(60_000);
    const prefix = `${topicPrefix}avro-`;
    const writer = kafkaEventStore({ brokers, topicPrefix: prefix });
    let reader: KafkaEventStore | undefined;
    const offer = { providerId: 'mubi', addonProviderId: null, seasonNumber: null, episodeNumber: null, webUrl: 'https://mubi.com/films/1', priceTypes: ['flatrate'], formats: ['hd'], audioLanguages: ['fr'], subtitleLanguages: null, availableFrom: null, availableTo: null, platforms: ['web'] };
    const offerAdded = (mediaId: string, extra: Record<string, unknown> = {}) =>
      ({ type: 'OfferAdded', data: { mediaId, country: 'FR', offer: { ...offer, ...extra } }, metadata: { observationId: `obs-${mediaId}`, observedAt: '2026-11-01T06:00:00.000Z', producer: 'test' } }) as unknown as DomainEvent;
    const streams = { avro: uniqueName('avro'), genre: uniqueName('genre'), odd: uniqueName('odd') };
    try {
      await writer.appendMany([
        { stream: streams.avro, events: [offerAdded('mv1'), offerAdded('mv2')], expectedRevision: 'no_stream' },
        { stream: streams.genre, events: [genreEvent(7)], expectedRevision: 'no_stream' },
        // A field its schema lacks: Avro would drop it, so it stays JSON.
        { stream: streams.odd, events: [offerAdded('mv3', { price: 3.99 })], expectedRevision: 'no_stream' },
      ]);
      const written = Object.fromEntries(await Promise.all(Object.entries(streams).map(async ([k, s]) => [k, await writer.readStream(s)] as const)));

      const kinds = new Map<string, string[]>();
      for (const message of await rawRecords(writer.topic, 4)) {
        const key = message.key?.toString() ?? '';
        const value = message.value ?? Buffer.alloc(0);
        const kind = value[0] === 0xc3 && value[1] === 0x01 ? `avro rev ${message.headers?.['revision']?.toString()}` : value[0] === 0x7b ? 'json' : 'other';
        kinds.set(key, [...(kinds.get(key) ?? []), kind]);
      }
      assert.deepEqual(Object.fromEntries(kinds), { [streams.avro]: ['avro rev 0', 'avro rev 1'], [streams.genre]: ['json'], [streams.odd]: ['json'] });

      // A fresh process rebuilds its index from the records: the same events, every field.
      reader = kafkaEventStore({ brokers, topicPrefix: prefix });
      for (const [k, s] of Object.entries(streams)) assert.deepEqual(await reader.readStream(s), written[k], k);
      assert.deepEqual((written['avro'] ?? []).map(({ type, data, metadata }) => ({ type, data, metadata })), [offerAdded('mv1'), offerAdded('mv2')]);
      assert.equal(((written['odd']?.[0]?.data as { offer: { price?: number } }).offer.price), 3.99);
    } finally {
      await writer.close().catch(() => {});
      await reader?.deleteTopic().catch(() => {});
      await reader?.close();
    }
  });

  it('fails every read at once with the offset of a record it cannot read, rather than waiting past it', async function () {
    this.timeout(60_000);
    const prefix = `${topicPrefix}bad-record-`;
    const writer = kafkaEventStore({ brokers, topicPrefix: prefix });
    const producer = new Kafka({ brokers, logLevel: logLevel.NOTHING }).producer();
    // Reads would wait this long for a reader stuck before the record; they must not.
    const reader = kafkaEventStore({ brokers, topicPrefix: prefix, syncTimeoutMs: 30_000 });
    try {
      const stream = uniqueName('s');
      await writer.append(stream, [genreEvent(1)], 'no_stream');
      await producer.connect();
      // Neither JSON nor Avro: written by hand, past the writer's checks.
      await producer.send({ topic: writer.topic, acks: -1, messages: [{ key: stream, value: Buffer.from([0x00, 0x01, 0x02]), partition: 0 }] });
      const started = Date.now();
      await assert.rejects(reader.readStream(stream), (err) => isAppError(err, 'internal') && /offset \d+ is unreadable.*neither/.test(err.message));
      assert.ok(Date.now() - started < 15_000, `failed after ${Date.now() - started} ms`);
      // And so does every read after it.
      await assert.rejects(reader.headPosition(), (err) => isAppError(err, 'internal'));
    } finally {
      await producer.disconnect().catch(() => {});
      await writer.deleteTopic().catch(() => {});
      await writer.close().catch(() => {});
      await reader.close();
    }
  });

  it('answers a read after its own commit without waiting for its reader to fetch that transaction back', async function () {
    this.timeout(60_000);
    const prefix = `${topicPrefix}own-`;
    // Reads give up at once unless the index already holds what they must see.
    const store = kafkaEventStore({ brokers, topicPrefix: prefix, syncTimeoutMs: 1 });
    const admin = new Kafka({ brokers, logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    try {
      const stream = uniqueName('big');
      // About 10 MB: the tail consumer reads it back in a dozen fetches.
      const events = Array.from({ length: 50_000 }, (_, i) => genreEvent(i));
      const { position } = await store.append(stream, events, 'no_stream');
      // The commit marker (at `position`) written: the partition's end is past it.
      for (;;) {
        const [partition] = await admin.fetchTopicOffsets(store.topic);
        if (Number(partition?.high) > position) break;
      }
      assert.equal(await store.streamRevision(stream), 49_999);
      assert.equal(await store.headPosition(), position);
    } finally {
      await admin.disconnect();
      await store.deleteTopic().catch(() => {});
      await store.close();
    }
  });

  it('does not fetch its own appends back into the writing process, and still reads what another writer appends after them', async function () {
    this.timeout(60_000);
    const prefix = `${topicPrefix}skip-`;
    // Counts the records each reader group of this log gets from kafkajs, by group.
    const delivered = new Map<string, number>();
    const consumer = Kafka.prototype.consumer;
    Kafka.prototype.consumer = function (this: Kafka, config) {
      const made = consumer.call(this, config);
      if (config?.groupId.startsWith(`${prefix}events-reader-`)) {
        delivered.set(config.groupId, 0);
        made.on(made.events.START_BATCH_PROCESS, (e) => delivered.set(config.groupId, (delivered.get(config.groupId) ?? 0) + e.payload.batchSize));
      }
      return made;
    };
    const writer = kafkaEventStore({ brokers, topicPrefix: prefix });
    let other: KafkaEventStore | undefined;
    try {
      await writer.headPosition();
      const [writersReader] = [...delivered.keys()];
      assert.ok(writersReader);
      const stream = uniqueName('own');
      // About 10 MB, ten fetches of its reader if it read them back.
      const events = Array.from({ length: 50_000 }, (_, i) => genreEvent(i));
      await writer.append(stream, events, 'no_stream');
      // Another process takes the log over and appends after them: the first one's reader
      // must reach that record to answer.
      other = kafkaEventStore({ brokers, topicPrefix: prefix });
      const later = uniqueName('later');
      await other.append(later, [genreEvent(1)], 'no_stream');
      assert.equal(await writer.streamRevision(later), 0);
      assert.equal(await writer.streamRevision(stream), 49_999);
      // At most the one fetch under way when the commit returned.
      assert.ok((delivered.get(writersReader) ?? 0) < 10_000, `the writer's reader got ${delivered.get(writersReader)} records`);
    } finally {
      Kafka.prototype.consumer = consumer;
      await writer.deleteTopic().catch(() => {});
      await Promise.all([writer.close(), other?.close()]);
    }
  });

  it('lets a reader of its own (as another process has) see an append as soon as the append returns', async function () {
    this.timeout(60_000);
    // The coordinator answers a commit before it writes the commit markers, and a reader waits
    // only up to the partition's last stable offset: before the writer waited for its markers,
    // about one read in five made right after an append missed it.
    const writer = open();
    const reader = open();
    try {
      const missed: number[] = [];
      for (let i = 0; i < 50; i += 1) {
        const stream = uniqueName('seen');
        await writer.append(stream, [genreEvent(i)], 'no_stream');
        if ((await reader.streamRevision(stream)) !== 0) missed.push(i);
      }
      assert.deepEqual(missed, []);
    } finally {
      await Promise.all([writer.close(), reader.close()]);
    }
  });

  it('asks Kafka for the log end in one request a lookup and for its transaction coordinator once, however many appends and reads', async function () {
    this.timeout(60_000);
    const prefix = `${topicPrefix}requests-`;
    // Counts the requests of this log's clients made by kafkajs (admin, producer), by API.
    const requests = new Map<string, number>();
    const tally = (e: { payload: { apiName: string } }) => requests.set(e.payload.apiName, (requests.get(e.payload.apiName) ?? 0) + 1);
    const [producer, admin] = [Kafka.prototype.producer, Kafka.prototype.admin];
    Kafka.prototype.producer = function (this: Kafka, config) {
      const made = producer.call(this, config);
      if (config?.transactionalId?.startsWith(prefix)) made.on(made.events.REQUEST, tally);
      return made;
    };
    Kafka.prototype.admin = function (this: Kafka, config) {
      const made = admin.call(this, config);
      made.on(made.events.REQUEST, tally);
      return made;
    };
    const store = kafkaEventStore({ brokers, topicPrefix: prefix });
    const other = kafkaEventStore({ brokers, topicPrefix: prefix });
    try {
      // Both started: each made the topic sure to exist, as kafkajs's admin does it.
      await store.append(uniqueName('first'), [genreEvent(0)], 'no_stream');
      await other.headPosition();
      const before = new Map(requests);
      const streams = Array.from({ length: 10 }, () => uniqueName('req'));
      for (const [i, stream] of streams.entries()) {
        await store.append(stream, [genreEvent(i)], 'no_stream');
        assert.equal(await other.streamRevision(stream), 0);
      }
      const grew = (api: string) => (requests.get(api) ?? 0) - (before.get(api) ?? 0);
      // Stock kafkajs's admin refreshed the metadata and asked for the earliest and latest
      // offsets for every lookup of the end (each append and each read makes one at least): 20
      // and 40 requests at least. Now the admin sends none (the end is read by the store's
      // offset reader, in one ListOffsets of a client of its own, not counted here). The producer
      // still refreshes its own when it retries a send, as after CONCURRENT_TRANSACTIONS (a
      // transaction begun while the last one's markers are being written): at most one such
      // refresh per AddPartitionsToTxn sent again.
      assert.equal(grew('EndTxn'), 10);
      const retried = grew('AddPartitionsToTxn') - 10;
      assert.ok(grew('Metadata') <= retried, `${grew('Metadata')} metadata requests, ${retried} retries`);
      assert.equal(grew('ListOffsets'), 0);
      // Stock kafkajs looked the coordinator up before every AddPartitionsToTxn and EndTxn,
      // retries included; the kept coordinator is looked up once.
      assert.equal(grew('GroupCoordinator'), 0);
      assert.equal(requests.get('GroupCoordinator'), 1);
    } finally {
      Kafka.prototype.producer = producer;
      Kafka.prototype.admin = admin;
      await store.deleteTopic().catch(() => {});
      await Promise.all([store.close(), other.close()]);
    }
  });

  it("reads a partition's end as the admin client does: its last stable offset, before a transaction still open", async function () {
    this.timeout(60_000);
    const kafka = new Kafka({ brokers, logLevel: logLevel.NOTHING });
    const reader = latestOffsetReader(kafka);
    assert.ok(reader, "kafkajs's cluster factory is where this kafkajs version keeps it");
    const topic = `${topicPrefix}lso-${uniqueName('t')}`;
    const admin = kafka.admin();
    const producer = kafka.producer({ transactionalId: `${topic}-writer`, idempotent: true, maxInFlightRequests: 1 });
    await Promise.all([admin.connect(), producer.connect()]);
    const theirs = async () => Number((await admin.fetchTopicOffsets(topic))[0]?.high);
    try {
      await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
      assert.equal(await reader.latest(topic, 0), 0);
      const committed = await producer.transaction();
      await committed.send({ topic, messages: [{ value: 'a' }, { value: 'b' }] });
      await committed.commit();
      // Two records and the commit marker, once the marker is written.
      await waitFor('the commit marker', async () => (await theirs()) === 3);
      assert.equal(await reader.latest(topic, 0), 3);
      const open = await producer.transaction();
      await open.send({ topic, messages: [{ value: 'c' }] });
      assert.equal(await theirs(), 3);
      assert.equal(await reader.latest(topic, 0), 3);
      await open.abort();
      await waitFor('the abort marker', async () => (await theirs()) === 5);
      assert.equal(await reader.latest(topic, 0), 5);
    } finally {
      await producer.disconnect().catch(() => {});
      await admin.deleteTopics({ topics: [topic] }).catch(() => {});
      await Promise.all([admin.disconnect(), reader.disconnect()]);
    }
  });

  describe('fencing', function () {
    this.timeout(90_000);
    let controlDir: string;
    beforeEach(() => {
      controlDir = mkdtempSync(join(tmpdir(), 'marquee-kafka-zombie-'));
    });
    afterEach(() => {
      rmSync(controlDir, { recursive: true, force: true });
    });

    it('aborts the open transaction of a writer paused mid-commit once another process takes the log over', async () => {
      const store = open();
      try {
        const stream = uniqueName('zombie');
        const head = await store.headPosition();
        const zombie = spawnTs('test/fixtures/zombieWorker.ts', [controlDir, spec, stream, 'in-transaction']);
        try {
          await printed(zombie, 'in-transaction', 60_000);
          zombie.process.kill('SIGSTOP');
          // 'any': no revision check can refuse this one; only the epoch decides.
          const taken = await store.append(stream, [genreEvent(200)], 'any');
          assert.equal(taken.nextExpectedRevision, 1);
        } finally {
          zombie.process.kill('SIGCONT');
          writeFileSync(join(controlDir, 'go'), '');
        }
        await succeeded(zombie);
        assert.ok(zombie.lines.includes('result unavailable fenced=true'), `zombie said ${zombie.lines.join(' | ')}`);
        const ids = (e: { data: unknown }) => (e.data as { genre: { id: number } }).genre.id;
        assert.deepEqual((await store.readStream(stream)).map((e) => [e.revision, ids(e)]), [[0, 100], [1, 200]]);
        assert.deepEqual((await store.readAll({ after: head, limit: 100_000 })).filter((e) => e.streamId === stream).map(ids), [100, 200]);
        // A fresh reader of the log agrees: the aborted records are nowhere.
        const peer = open();
        try {
          assert.deepEqual((await peer.readStream(stream)).map(ids), [100, 200]);
        } finally {
          await peer.close();
        }
      } finally {
        await store.close();
      }
    });
  });
});
