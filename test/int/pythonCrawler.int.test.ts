/**
 * The crawler contract (docs/crawler-contract.md) is enough to publish without our code: a
 * crawler written in Python (test/fixtures/python-crawler/crawler.py, fastavro + kafka-python
 * from PyPI, sharing only the .avsc files) publishes a crawl to a real Kafka, and ingest decides
 * it into the expected events; what ingest refuses reaches the dead letters with its reason,
 * and the Python side reads them back by their headers.
 *
 * The interpreter is `MARQUEE_PYTHON` (.ci/run sets it to a cached venv with the pinned
 * requirements.txt), default `~/.cache/marquee/pyvenv/bin/python`. With REQUIRE_SERVERS=1 a
 * missing interpreter or package fails; otherwise it skips, saying how to install them.
 */
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { schemaFingerprint } from '../../contracts/codec.ts';
import type { EventOfType, RecordedEvent } from '../../contracts/events.ts';
import type { EventStore } from '../../contracts/ports.ts';
import { kafkaObservationBus, type KafkaObservationBus } from '../../infra/kafka/observationBus.ts';
import { lmdbEventStore } from '../../infra/lmdb/eventStore.ts';
import { createIngest, type IngestStats } from '../../services/ingest/ingest.ts';
import { murmur2Partition, uniquePrefix } from '../fixtures/kafka/support.ts';
import { allEvents } from '../fixtures/kafka/workload.ts';
import { describeWithServer } from '../ports/requireServer.ts';

const run = promisify(execFile);
const PYTHON = process.env.MARQUEE_PYTHON || join(homedir(), '.cache', 'marquee', 'pyvenv', 'bin', 'python');
const CRAWLER = fileURLToPath(new URL('../fixtures/python-crawler/crawler.py', import.meta.url));
const REQUIREMENTS = fileURLToPath(new URL('../fixtures/python-crawler/requirements.txt', import.meta.url));
const SCHEMAS = fileURLToPath(new URL('../../contracts/schemas/', import.meta.url));
/** Partitions of the observation topics the bus creates (its default). */
const PARTITIONS = 4;

/** Why the Python crawler cannot run here, or null. */
function pythonProblem(): string | null {
  const probe = spawnSync(PYTHON, ['-c', 'import fastavro, kafka'], { encoding: 'utf8' });
  const install = `python3 -m venv ~/.cache/marquee/pyvenv && ~/.cache/marquee/pyvenv/bin/pip install -r ${REQUIREMENTS} (or set MARQUEE_PYTHON)`;
  if (probe.error) return `${PYTHON} cannot be run (${probe.error.message}): ${install}`;
  if (probe.status !== 0) return `${PYTHON} lacks fastavro or kafka-python (${probe.stderr.trim().split('\n').at(-1)}): ${install}`;
  return null;
}

type Sent = { type: string; observationId: string; topic: string; key: string; partition: number; offset: number; fingerprint: string };
type PyDeadLetter = { partition: number; offset: number; key: string | null; headers: Record<string, string>; value_bytes: number };

function ofType<T extends RecordedEvent['type']>(events: RecordedEvent[], type: T, stream: string): Array<RecordedEvent<EventOfType<T>>> {
  return events.filter((e) => e.type === type && e.streamId === stream) as Array<RecordedEvent<EventOfType<T>>>;
}

describeWithServer('a Python crawler following docs/crawler-contract.md', 'KAFKA_BROKERS', (url) => {
  const brokers = url.split(',').map((b) => b.trim()).filter(Boolean);
  const problem = pythonProblem();
  if (problem !== null) {
    if (process.env.REQUIRE_SERVERS === '1') {
      it('fails: REQUIRE_SERVERS=1 but the Python crawler cannot run', () => assert.fail(problem));
    } else {
      it(`skipped: ${problem}`, function () {
        this.skip();
      });
    }
    return;
  }

  let prefix: string;
  let dataDir: string;
  let eventStore: EventStore;
  let bus: KafkaObservationBus;
  let sent: Sent[];
  let firstStats: IngestStats;

  async function crawler(args: string[]): Promise<unknown[]> {
    try {
      const { stdout } = await run(PYTHON, [CRAWLER, ...args, '--brokers', brokers.join(','), '--topic-prefix', prefix], { maxBuffer: 16 << 20 });
      return stdout.split('\n').filter((line) => line.trim() !== '').map((line) => JSON.parse(line) as unknown);
    } catch (err) {
      const { stderr } = err as { stderr?: string };
      throw new Error(`crawler.py ${args[0]} failed: ${stderr ?? (err as Error).message}`);
    }
  }

  /** Ingests everything published so far (as `marquee start` would), returning this run's stats. */
  async function ingestAll(): Promise<IngestStats> {
    const ingest = createIngest({ eventStore, bus });
    await bus.consume((batch) => ingest.handleBatch(batch).then(() => undefined), { group: `${prefix}ingest`, untilIdle: true }).done;
    return ingest.totals();
  }

  before(async function () {
    this.timeout(120_000);
    prefix = uniquePrefix();
    dataDir = mkdtempSync(join(tmpdir(), 'marquee-python-crawler-'));
    eventStore = lmdbEventStore({ dataDir });
    bus = kafkaObservationBus({ brokers, topicPrefix: prefix, maxWaitMs: 100, idleCheckMs: 100 });
    // Marquee creates its topics when ingest starts; the crawler publishes into them.
    await bus.ensureTopics();
    sent = (await crawler(['publish', '--schemas', SCHEMAS, '--malformed'])) as Sent[];
    firstStats = await ingestAll();
  });

  after(async function () {
    this.timeout(60_000);
    await bus?.deleteTopics().catch(() => {});
    await bus?.close();
    await eventStore?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('sends each record to its stream kind\'s topic, keyed by its stream, in the partition Java clients and kafkajs pick', () => {
    assert.equal(sent.length, 10);
    const byType = (t: string) => sent.filter((s) => s.type === t);
    assert.deepEqual(
      byType('MediaTranslationObserved').map((s) => [s.topic, s.key]),
      [[`${prefix}observations.media`, 'media-tv00001399']],
    );
    assert.deepEqual(byType('AvailabilityObserved').map((s) => s.key), [
      'availability-tv00001399-US', 'availability-mv00000603-US', 'availability-mv00000603-USA',
    ]);
    for (const s of sent) {
      assert.equal(s.partition, murmur2Partition(s.topic, s.key, PARTITIONS), `${s.observationId} landed in another partition than kafkajs would pick`);
    }
    // The fingerprints the Python side computed from the .avsc files are the ones Marquee knows.
    assert.equal(byType('AvailabilityObserved')[0]?.fingerprint, schemaFingerprint('AvailabilityObserved'));
    assert.equal(sent.find((s) => s.observationId === 'py-media-tv1399-1')?.fingerprint, schemaFingerprint('MediaObserved'));
  });

  it('is ingested into the expected events, in crawl order per stream', async () => {
    const events = await allEvents(eventStore);
    const summary = events.map((e) => `${e.streamId}#${e.revision} ${e.type}`).sort();
    assert.deepEqual(summary, [
      'availability-mv00000603-US#0 OfferAdded',
      'availability-tv00001399-US#0 OfferAdded',
      'genres#0 GenreDefined',
      'genres#1 GenreDefined',
      'media-mv00000603#0 MediaRegistered',
      'media-tv00001399#0 MediaRegistered',
      'media-tv00001399#1 MediaTranslationChanged',
      'media-tv00001399#2 SeasonChanged',
      'providers-US#0 ProviderAdded',
      'providers-US#1 ProviderAdded',
    ]);
    // Neither bad record reaches ingest: the bus dead-letters what it cannot decode (the unknown
    // schema) and what breaks a domain rule (the three-letter country), having validated each once.
    assert.deepEqual(firstStats, { observations: 8, appended: 10, skipped: 0, rejected: 0, conflicts: 0, takeovers: 0 });

    const [show] = ofType(events, 'MediaRegistered', 'media-tv00001399');
    assert.equal(show?.data.slug, 'game-of-thrones-2011');
    assert.equal(show?.data.details.lastAirDate, '2019-05-19');
    assert.deepEqual(show?.metadata, { observationId: 'py-media-tv1399-1', observedAt: '2025-03-01T10:00:00Z', producer: 'ingest' });
    // Written with MediaObserved v1, read as v2: the fields v1 lacks are null.
    const [movie] = ofType(events, 'MediaRegistered', 'media-mv00000603');
    assert.equal(movie?.data.details.runtime, 136);
    assert.equal(movie?.data.details.inProduction, null);
    assert.equal(ofType(events, 'MediaTranslationChanged', 'media-tv00001399')[0]?.data.translation.title, 'Game of Thrones – Das Lied von Eis und Feuer');
    assert.deepEqual(ofType(events, 'SeasonChanged', 'media-tv00001399')[0]?.data.season.episodes.map((e) => e.title), ['Winter Is Coming', 'The Kingsroad']);
    const [showOffer] = ofType(events, 'OfferAdded', 'availability-tv00001399-US');
    assert.equal(showOffer?.data.country, 'US', 'a lower-case country is stored upper case');
    assert.deepEqual(showOffer?.data.offer.formats, ['hd', '4k']);
    assert.deepEqual(showOffer?.data.offer.platforms, ['web', 'ios']);
    assert.deepEqual(ofType(events, 'OfferAdded', 'availability-mv00000603-US')[0]?.data.offer.priceTypes, ['rent', 'buy']);
    assert.deepEqual(ofType(events, 'ProviderAdded', 'providers-US').map((e) => e.data.provider.id), ['hulu', 'netflix']);
  });

  it('sends what ingest refuses to the dead letters with its reason, and Python reads them back by their headers', async function () {
    this.timeout(60_000);
    const letters = await bus.listDeadLetters();
    assert.equal(letters.length, 2, JSON.stringify(letters));
    const badCountry = sent.find((s) => s.observationId === 'py-bad-country-1') as Sent;
    const unknownSchema = sent.find((s) => s.observationId === 'py-unknown-schema-1') as Sent;
    const countryLetter = letters.find((l) => l.source === `kafka:${badCountry.topic}/${badCountry.partition}/${badCountry.offset}`);
    assert.match(countryLetter?.reason ?? '', /country/);
    assert.equal((countryLetter?.payload as { observationId?: string }).observationId, 'py-bad-country-1');
    const schemaLetter = letters.find((l) => l.source === `kafka:${unknownSchema.topic}/${unknownSchema.partition}/${unknownSchema.offset}`);
    assert.match(schemaLetter?.reason ?? '', new RegExp(`unknown writer schema fingerprint ${unknownSchema.fingerprint}`));

    const read = (await crawler(['dead-letters'])) as PyDeadLetter[];
    assert.equal(read.length, 2);
    for (const original of [badCountry, unknownSchema]) {
      const letter = read.find((l) => l.headers['original-offset'] === String(original.offset) && l.headers['original-topic'] === original.topic);
      assert.ok(letter, `no dead letter names ${original.topic}/${original.offset}: ${JSON.stringify(read)}`);
      assert.equal(letter.headers['original-partition'], String(original.partition));
      assert.equal(letter.headers['payload-encoding'], 'avro');
      assert.equal(letter.headers['dead-letter-source'], `kafka:${original.topic}/${original.partition}/${original.offset}`);
      assert.match(letter.headers['dead-letter-at'] ?? '', /^\d{4}-\d{2}-\d{2}T/);
      assert.ok((letter.headers['dead-letter-reason'] ?? '').length > 0);
      assert.ok(letter.value_bytes > 10);
    }
  });

  it('publishing the same crawl again appends nothing (observation ids make redelivery a no-op)', async function () {
    this.timeout(120_000);
    const before = await eventStore.headPosition();
    const again = (await crawler(['publish', '--schemas', SCHEMAS])) as Sent[];
    assert.equal(again.length, 8);
    const stats = await ingestAll();
    assert.deepEqual(stats, { observations: 8, appended: 0, skipped: 8, rejected: 0, conflicts: 0, takeovers: 0 });
    assert.equal(await eventStore.headPosition(), before);
  });
});
