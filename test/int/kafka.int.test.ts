/**
 * Crawl ingestion through a real Kafka broker: records produced by a non-JavaScript client
 * (kcat), a broker restart in the middle of a stream, a poison record, and two ingest consumers
 * sharing one group. Every run uses its own topics (a unique prefix) and groups.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Kafka, logLevel, type Admin } from 'kafkajs';
import { schemaFingerprint } from '../../contracts/codec.ts';
import { isAppError } from '../../contracts/errors.ts';
import type { Observation } from '../../contracts/observations.ts';
import type { EventStore, ObservationRecord } from '../../contracts/ports.ts';
import { kafkaEventStore } from '../../infra/kafka/eventStore.ts';
import { kafkaObservationBus, type KafkaObservationBus } from '../../infra/kafka/observationBus.ts';
import { parseSource, streamKeyOf } from '../../infra/kafka/topics.ts';
import { lmdbEventStore } from '../../infra/lmdb/eventStore.ts';
import { createIngest } from '../../services/ingest/ingest.ts';
import { KCAT_AVAILABILITY, KCAT_AVAILABILITY_FILE } from '../fixtures/kafka/availability.ts';
import { describeKafka, murmur2Partition, requireServers, uniquePrefix } from '../fixtures/kafka/support.ts';
import { allEvents, crawlDay, referenceSummary, run, servers, summary } from '../fixtures/kafka/workload.ts';
import { genreEvent, waitFor } from '../ports/support.ts';

function kcatInstalled(): boolean {
  try {
    execFileSync('kcat', ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const partitionOf = (source: string) => source.replace(/\/\d+$/, '');

describeKafka('crawl ingestion through Kafka', (brokers) => {
  const broker = brokers[0] as string;
  let prefix: string;
  let dataDir: string;
  let eventStore: EventStore;
  let bus: KafkaObservationBus;
  let admin: Admin;
  const closers: Array<() => Promise<void>> = [];

  const open = (consumeConcurrency?: number): KafkaObservationBus => {
    const b = kafkaObservationBus({ brokers, topicPrefix: prefix, maxWaitMs: 100, idleCheckMs: 100, ...(consumeConcurrency === undefined ? {} : { consumeConcurrency }) });
    closers.push(() => b.close());
    return b;
  };

  before(async () => {
    admin = new Kafka({ brokers, clientId: 'kafka-int-test', logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
  });
  after(async () => {
    await admin.disconnect();
  });
  beforeEach(() => {
    prefix = uniquePrefix();
    dataDir = mkdtempSync(join(tmpdir(), 'marquee-kafka-int-'));
    eventStore = lmdbEventStore({ dataDir });
    bus = open();
  });
  afterEach(async () => {
    await bus.deleteTopics().catch(() => {});
    for (const close of closers.splice(0)) await close();
    await eventStore.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  describe('records produced by kcat', () => {
    if (!kcatInstalled()) {
      if (requireServers) {
        it('fails: REQUIRE_SERVERS=1 but kcat is not installed', () => {
          assert.fail('kcat is not on PATH: install it with `apt-get install -y kafkacat` (infra/local/servers.sh up kafka does).');
        });
      } else {
        it('skipped: kcat is not installed', function () {
          this.skip();
        });
      }
      return;
    }

    it('ingests an Avro record produced by kcat from the checked-in fixture into the expected events', async function () {
      this.timeout(60_000);
      const bytes = readFileSync(KCAT_AVAILABILITY_FILE);
      const fingerprint = schemaFingerprint('AvailabilityObserved');
      assert.equal(bytes.toString('hex', 2, 10), fingerprint, 'the fixture is stale: run test/fixtures/kafka/write.ts');
      await bus.ensureTopics();
      const topic = bus.topics.of('AvailabilityObserved');
      const key = 'availability-mv00000603-GB';
      assert.equal(streamKeyOf(KCAT_AVAILABILITY), key);
      // murmur2, as kafkajs and the Java clients partition, so a stream stays in one partition
      // whoever produces it (librdkafka's default is a CRC32 partitioner).
      await run('kcat', [
        '-P', '-b', broker, '-t', topic, '-k', key, '-X', 'partitioner=murmur2_random',
        '-H', `schema-fingerprint=${fingerprint}`, '-H', 'observation-type=AvailabilityObserved',
        fileURLToPath(KCAT_AVAILABILITY_FILE),
      ]);

      const ingest = createIngest({ eventStore, bus });
      const delivered: ObservationRecord[] = [];
      await bus.consume(async (batch) => {
        delivered.push(...batch);
        await ingest.handleBatch(batch);
      }, { group: `${prefix}ingest`, untilIdle: true }).done;

      assert.equal(delivered.length, 1);
      assert.deepEqual(delivered[0]?.observation, KCAT_AVAILABILITY);
      assert.equal(delivered[0]?.source, `kafka:${topic}/${murmur2Partition(topic, key, 4)}/0`);
      const metadata = { observationId: 'kcat-availability-0001', observedAt: '2026-11-14T06:30:00Z', producer: 'ingest' };
      const [netflix, amazon] = KCAT_AVAILABILITY.data.offers;
      const events = (await allEvents(eventStore)).map((e) => ({ streamId: e.streamId, revision: e.revision, type: e.type, data: e.data, metadata: e.metadata }));
      assert.deepEqual(events, [
        { streamId: key, revision: 0, type: 'OfferAdded', data: { mediaId: 'mv00000603', country: 'GB', offer: amazon }, metadata },
        { streamId: key, revision: 1, type: 'OfferAdded', data: { mediaId: 'mv00000603', country: 'GB', offer: netflix }, metadata },
      ]);
      assert.deepEqual(await bus.listDeadLetters(), []);
    });
  });

  it('dead-letters a poison record with the reason in its headers and ingests the records after it', async function () {
    this.timeout(60_000);
    const before = crawlDay('p0', 3, 1);
    const after = crawlDay('p1', 3, 1).map((o) => ({ ...o, observedAt: '2025-03-01T11:00:00Z' }) as Observation);
    const first = before[2] as Observation;
    const key = streamKeyOf(first);
    await bus.publish(before);
    // Raw garbage on the same key, so it sits in the partition between the two publishes.
    await bus.publishRaw([{ key, value: Buffer.from('garbage, not an Avro record') }], { topic: bus.topics.of(first.type) });
    await bus.publish(after);

    await createIngest({ eventStore, bus }).run({ group: `${prefix}ingest`, batchSize: 5, untilIdle: true }).done;

    assert.deepEqual(summary(await allEvents(eventStore)), await referenceSummary([...before, ...after]));
    const letters = await bus.listDeadLetters();
    assert.equal(letters.length, 1);
    assert.equal(letters[0]?.reason, 'not an Avro single-object record (missing the C3 01 header)');
    assert.equal(letters[0]?.payload, Buffer.from('garbage, not an Avro record').toString('base64'));
    // The headers as a non-JavaScript consumer sees them.
    const printed = await run('kcat', ['-C', '-b', broker, '-t', bus.topics.deadLetter, '-o', 'beginning', '-e', '-q', '-f', '%h\n%s\n']);
    const [headers, value] = printed.split('\n');
    const fields = new Map((headers ?? '').split(',').map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
    assert.equal(fields.get('dead-letter-reason'), 'not an Avro single-object record (missing the C3 01 header)');
    assert.equal(fields.get('original-topic'), bus.topics.of(first.type));
    assert.equal(fields.get('original-partition'), String(murmur2Partition(bus.topics.of(first.type), key, 4)));
    assert.equal(letters[0]?.source, `kafka:${fields.get('original-topic')}/${fields.get('original-partition')}/${fields.get('original-offset')}`);
    assert.equal(value, 'garbage, not an Avro record');
  });

  it('shares the partitions between two ingest consumers of one group, which together ingest everything exactly once', async function () {
    this.timeout(120_000);
    const observations = crawlDay('g', 250, 2);
    const expected = await referenceSummary(observations);
    const group = `${prefix}ingest`;
    const busB = open();
    const handled: [ObservationRecord[], ObservationRecord[]] = [[], []];
    const consumers = [bus, busB].map((b, i) => {
      const ingest = createIngest({ eventStore, bus: b });
      return b.consume(async (batch) => {
        await ingest.handleBatch(batch);
        handled[i]?.push(...batch);
      }, { group, batchSize: 100 });
    });
    await bus.ensureTopics();
    await waitFor('both consumers in the group', async () => {
      const { groups } = await admin.describeGroups([group]);
      return groups[0]?.state === 'Stable' && groups[0].members.length === 2;
    }, 60_000);

    await bus.publish(observations);
    const ids = () => new Set([...handled[0], ...handled[1]].map((r) => r.observation.observationId)).size;
    await waitFor('every observation handled', () => ids() === observations.length, 60_000);
    await Promise.all(consumers.map((c) => c.stop()));
    await Promise.all(consumers.map((c) => c.done));

    assert.ok(handled[0].length > 0 && handled[1].length > 0, `handled ${handled[0].length} and ${handled[1].length}`);
    const partitionsA = new Set(handled[0].map((r) => partitionOf(r.source)));
    const partitionsB = new Set(handled[1].map((r) => partitionOf(r.source)));
    assert.deepEqual([...partitionsA].filter((p) => partitionsB.has(p)), []);
    assert.deepEqual(summary(await allEvents(eventStore)), expected);
  });

  it('ingests every observation exactly once across a broker restart in the middle of the stream', async function () {
    this.timeout(300_000);
    const observations = crawlDay('r', 1250, 1);
    assert.equal(observations.length, 5000);
    const expected = await referenceSummary(observations);
    await bus.publish(observations);

    const ingest = createIngest({ eventStore, bus });
    let handled = 0;
    let restart: Promise<void> | null = null;
    let down: Promise<string> | null = null;
    const consumer = bus.consume(async (batch) => {
      await ingest.handleBatch(batch);
      handled += batch.length;
      if (handled >= 1500 && down === null) {
        down = servers('down', 'kafka');
        restart = down.then(() => servers('up', 'kafka')).then(() => {});
        // Hold this batch until the broker is gone: its commit then fails and kafkajs must
        // reconnect, rejoin and redeliver from the last committed offset.
        await down;
      }
    }, { group: `${prefix}ingest`, batchSize: 100, untilIdle: true });
    try {
      await consumer.done;
    } finally {
      // Whatever happened, leave a running broker for the next test.
      await (restart ?? Promise.resolve()).catch(() => servers('up', 'kafka'));
    }

    assert.notEqual(restart, null, 'the broker was never restarted');
    assert.ok(handled >= observations.length, `handled ${handled}`);
    const events = await allEvents(eventStore);
    assert.deepEqual(summary(events), expected);
    const perStream = new Map<string, number>();
    for (const e of events) perStream.set(e.streamId, (perStream.get(e.streamId) ?? 0) + 1);
    assert.equal(perStream.size, 3 * 1250);
  });

  it('keeps appending to and reading the Kafka event log across a broker restart, in the processes that used it before', async function () {
    // The writer keeps its transaction coordinator between transactions, and each store reads
    // the log's end on a connection of its own: both must find the broker again once it is back.
    this.timeout(300_000);
    const writer = kafkaEventStore({ brokers, topicPrefix: prefix });
    const reader = kafkaEventStore({ brokers, topicPrefix: prefix });
    closers.push(async () => {
      await writer.deleteTopic().catch(() => {});
      await Promise.all([writer.close(), reader.close()]);
    });
    /** Ingest's way with an outage: a retriable failure is tried again (its batch is redelivered). */
    const retried = async <T>(what: () => Promise<T>): Promise<T> => {
      for (let attempt = 0; ; attempt += 1) {
        try {
          return await what();
        } catch (err) {
          if (!isAppError(err) || !err.retriable || attempt >= 60) throw err;
          await new Promise((resolve) => setTimeout(resolve, 1000));
        }
      }
    };
    for (let i = 0; i < 3; i += 1) await writer.append(`genres-before-${i}`, [genreEvent(i)], 'no_stream');
    assert.equal(await reader.streamRevision('genres-before-2'), 0);
    try {
      await servers('down', 'kafka');
    } finally {
      await servers('up', 'kafka');
    }
    for (let i = 0; i < 3; i += 1) await retried(() => writer.append(`genres-after-${i}`, [genreEvent(10 + i)], 'no_stream'));
    assert.deepEqual(await retried(async () => Promise.all([0, 1, 2].map((i) => reader.streamRevision(`genres-after-${i}`)))), [0, 0, 0]);
    const all = (await reader.readAll({ limit: 100 })).map((e) => e.streamId);
    assert.deepEqual(all, ['genres-before-0', 'genres-before-1', 'genres-before-2', 'genres-after-0', 'genres-after-1', 'genres-after-2']);
  });

  /**
   * An admin client of this test only: kafkajs' admin keeps asking for the metadata of every
   * topic it was ever asked about, and the topics of earlier tests are deleted.
   */
  async function freshAdmin<T>(use: (a: Admin) => Promise<T>): Promise<T> {
    const a = new Kafka({ brokers, clientId: 'kafka-int-test', logLevel: logLevel.NOTHING }).admin();
    await a.connect();
    try {
      return await use(a);
    } finally {
      await a.disconnect();
    }
  }

  /** The end offset of every observation partition holding records, by `topic/partition`. */
  const endOffsets = (b: KafkaObservationBus): Promise<Map<string, string>> => freshAdmin(async (a) => {
    const ends = new Map<string, string>();
    for (const topic of b.topics.observations) {
      for (const p of await a.fetchTopicOffsets(topic)) if (p.high !== '0') ends.set(`${topic}/${p.partition}`, p.high);
    }
    return ends;
  });

  const committedOffsets = (group: string, b: KafkaObservationBus): Promise<Map<string, string>> => freshAdmin(async (a) => {
    const out = new Map<string, string>();
    for (const t of await a.fetchOffsets({ groupId: group, topics: [...b.topics.observations] })) {
      for (const p of t.partitions) out.set(`${t.topic}/${p.partition}`, p.offset);
    }
    return out;
  });

  for (const concurrency of [1, 2]) {
    it(`handles again the last chunk of a partition whose commit failed while kafkajs kept the group (broker down and back, ${concurrency} partition(s) at once)`, async function () {
      // The commit of a partition's last chunk fails (the broker is gone) and kafkajs, retrying
      // its fetch loop, keeps its member and the in-memory position of the partition: had that
      // position moved past the chunk before the commit, nothing would ever be fetched and
      // committed for the partition again, and an untilIdle consumer would wait forever.
      this.timeout(240_000);
      const observations = crawlDay('f', 250, 1);
      const expected = await referenceSummary(observations);
      const b = open(concurrency);
      await b.ensureTopics();
      await b.publish(observations);
      const ends = await endOffsets(b);
      const group = `${prefix}ingest-final-${concurrency}`;
      const ingest = createIngest({ eventStore, bus: b });
      let restart: Promise<void> | null = null;
      const consumer = b.consume(async (batch) => {
        await ingest.handleBatch(batch);
        const lastRecord = parseSource(batch.at(-1)?.source ?? '');
        const end = lastRecord === null ? undefined : ends.get(`${lastRecord.topic}/${lastRecord.partition}`);
        if (restart === null && lastRecord !== null && end !== undefined && BigInt(lastRecord.offset) + 1n === BigInt(end)) {
          // The partition's last chunk is handled: its commit comes next, with the broker gone.
          const down = servers('down', 'kafka');
          restart = down.then(() => servers('up', 'kafka')).then(() => {});
          await down;
        }
      }, { group, batchSize: 100, untilIdle: true });
      let ended = false;
      try {
        await Promise.race([
          consumer.done.then(() => { ended = true; }),
          new Promise((resolve) => setTimeout(resolve, 120_000)),
        ]);
      } finally {
        await (restart ?? Promise.resolve()).catch(() => servers('up', 'kafka'));
        await consumer.stop();
      }

      assert.notEqual(restart, null, 'the broker was never restarted');
      const committed = await committedOffsets(group, b);
      const behind = [...ends].filter(([key, end]) => committed.get(key) !== end).map(([key, end]) => `${key}: committed ${committed.get(key)} of ${end}`);
      assert.deepEqual(behind, [], 'partitions whose records were not all committed');
      assert.ok(ended, 'the untilIdle consumer did not end within 120 s of its start');
      assert.deepEqual(summary(await allEvents(eventStore)), expected);
    });
  }
});
