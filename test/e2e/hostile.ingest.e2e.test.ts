/**
 * Hostile input to ingest, on the real engines: an observation dated in the future, poison in
 * the middle of a batch (on the local inbox and on a real Kafka broker), observations whose
 * stream the event store cannot read or write, and a consumer whose handler fails. Each one is
 * dead-lettered with its reason (or the consumer restarted) while everything around it is
 * ingested, and a concurrent `/healthz` of the same process keeps answering within 100 ms.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CollectionObserved, Observation } from '../../contracts/observations.ts';
import type { ApiKeyStore, ConsumeOptions, EventStore, ObservationRecord, ReadStore } from '../../contracts/ports.ts';
import { kafkaObservationBus, type KafkaObservationBus } from '../../infra/kafka/observationBus.ts';
import { lmdbEventStore } from '../../infra/lmdb/eventStore.ts';
import { lmdbInbox, type LmdbInbox } from '../../infra/lmdb/inbox.ts';
import { lmdbApiKeyStore } from '../../infra/lmdb/apiKeyStore.ts';
import { lmdbReadStore } from '../../infra/lmdb/readStore.ts';
import { inProcessSearchIndex } from '../../infra/search/inProcessSearch.ts';
import { startApi, type RunningApi } from '../../services/api/server.ts';
import { createIngest, type Ingest } from '../../services/ingest/ingest.ts';
import {
  describeHealthReports,
  Health,
  HEALTH_COLLECTION,
  publishHealth,
  superviseConsumer,
  type HealthReport,
} from '../../services/shared/health.ts';
import { silentLogger } from '../../services/shared/logger.ts';
import { encodeUnchecked } from '../fixtures/avro/unchecked.ts';
import { uniquePrefix } from '../fixtures/kafka/support.ts';
import { allEvents } from '../fixtures/kafka/workload.ts';
import { describeWithServer } from '../ports/requireServer.ts';
import { waitFor } from '../ports/support.ts';
import { availabilityObserved, collectionObserved, mediaObserved, offer, T0 } from '../unit/ingestFixtures.ts';
import { testLinkTokens } from './api.linkTokens.ts';
import { assertResponsive, probeHealthzDuring } from './hostile.support.ts';
import { bin, embeddedEnv, freePort, marquee, root, stop } from './process.ts';

const HOUR = 3600_000;

/** The availability of title `n` in the US: one offer, so each is one OfferAdded on its own stream. */
function good(n: number, observedAt = T0): Observation {
  return availabilityObserved(`good-${n}`, observedAt, [offer('hulu', { webUrl: `https://hulu.example/${n}` })], 'US', 1000 + n);
}

const goodStream = (n: number) => `availability-mv${String(1000 + n).padStart(8, '0')}-US`;

/** Environment of a `marquee` child process on the embedded engines of `dataDir`. */
function embeddedEnvOf(dataDir: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return embeddedEnv({ DATA_DIR: dataDir, LOG_LEVEL: 'warn', ...extra });
}

describe('hostile input to ingest (e2e)', function () {
  this.timeout(120_000);
  let dataDir: string;
  let eventStore: EventStore;
  let readStore: ReadStore;
  let apiKeys: ApiKeyStore;
  let inbox: LmdbInbox;
  let health: Health;
  let api: RunningApi;

  beforeEach(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'marquee-hostile-ingest-'));
    eventStore = lmdbEventStore({ dataDir });
    readStore = lmdbReadStore({ dataDir });
    apiKeys = lmdbApiKeyStore({ dataDir });
    inbox = lmdbInbox({ dataDir, pollMs: 5 });
    health = new Health();
    api = await startApi({
      readStore, apiKeys, search: inProcessSearchIndex(), linkTokens: await testLinkTokens(), clock: { now: () => new Date() },
      eventStore, health, ready: () => true,
    });
  });

  afterEach(async () => {
    await api.close();
    await inbox.close();
    await eventStore.close();
    await apiKeys.close();
    await readStore.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** Consumes everything published so far, probing /healthz meanwhile. */
  async function drain(ingest: Ingest, options: ConsumeOptions = {}): Promise<void> {
    const probed = await probeHealthzDuring(api.url, ingest.run({ batchSize: 500, untilIdle: true, ...options }).done);
    assertResponsive(probed);
  }

  it('dead-letters an observedAt beyond the allowed clock skew with the reason, and its stream goes on', async () => {
    const now = new Date(Date.parse(T0) + 2 * HOUR);
    const ingest = createIngest({ eventStore, bus: inbox, clock: { now: () => now } });
    const nextWeek = new Date(now.getTime() + 7 * 24 * HOUR).toISOString();
    const inAnHour = new Date(now.getTime() + HOUR).toISOString();
    await inbox.publish([good(1), availabilityObserved('future', nextWeek, [], 'US', 1001), good(2)]);
    await drain(ingest);
    const letters = await inbox.listDeadLetters();
    assert.deepEqual(letters.map((l) => [l.source, l.reason]), [
      ['inbox:2', `observedAt: ${nextWeek} is later than now (${now.toISOString()}) plus the allowed clock skew of 24 h`],
    ]);
    // Had the future observation been folded, this one (dated before it) would be skipped as stale.
    await inbox.publish([availabilityObserved('later', inAnHour, [], 'US', 1001)]);
    await drain(ingest);
    assert.deepEqual((await allEvents(eventStore)).map((e) => `${e.streamId} ${e.type} ${e.metadata.observationId}`), [
      `${goodStream(1)} OfferAdded good-1`,
      `${goodStream(2)} OfferAdded good-2`,
      `${goodStream(1)} OfferRemoved later`,
    ]);
  });

  it('dead-letters poison in the middle of an inbox batch and ingests everything before and after it', async () => {
    const ingest = createIngest({ eventStore, bus: inbox });
    const slug = 'a'.repeat(2100);
    await inbox.publish([1, 2, 3, 4, 5].map((n) => good(n)));
    await inbox.publishRaw([
      Buffer.from('not an avro record'),
      encodeUnchecked(good(90, '2025-02-30T10:00:00Z')),
      encodeUnchecked(collectionObserved('long-slug', T0, { slug })),
    ]);
    await inbox.publish([availabilityObserved('future', '2999-01-01T00:00:00Z', [], 'US', 1091)]);
    await inbox.publish([6, 7, 8, 9, 10].map((n) => good(n)));
    await drain(ingest);

    const letters = await inbox.listDeadLetters();
    assert.deepEqual(letters.map((l) => l.source), ['inbox:6', 'inbox:7', 'inbox:8', 'inbox:9']);
    assert.match(letters[0]?.reason ?? '', /C3 01 header/);
    assert.equal(letters[1]?.reason, 'AvailabilityObserved.observedAt: "2025-02-30T10:00:00Z" is not an RFC 3339 timestamp');
    assert.equal(letters[2]?.reason, 'CollectionObserved.data.slug: longer than 80 characters (2100)');
    assert.match(letters[3]?.reason ?? '', /^observedAt: 2999-01-01T00:00:00Z is later than now/);
    assert.deepEqual(
      (await allEvents(eventStore)).map((e) => e.streamId),
      [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map(goodStream),
    );
    assert.equal(inbox.committedOffset('ingest'), inbox.lastSequence());
    assert.deepEqual(ingest.totals(), { observations: 11, appended: 10, skipped: 0, rejected: 1, conflicts: 0, takeovers: 0 });
  });

  it('dead-letters what the event store cannot read or write, appends the rest of the batch, and stays exactly once', async () => {
    // Handed straight to ingest (a bus refuses the slug, and no Avro record carries such a
    // number), so the event store itself meets them: a stream name over LMDB's key size, a value
    // msgpack cannot encode. Both fail the same way every time.
    const unreadable: CollectionObserved = collectionObserved('long-slug', T0, { slug: 'a'.repeat(2100) });
    const unwritable = mediaObserved('huge-vote-count', T0, { sourceId: 77, voteCount: 2n ** 70n as never });
    const batch: ObservationRecord[] = [good(1), unreadable, good(2), unwritable, good(3)].map((observation, i) => ({
      source: `test:${i}`, observation,
    }));
    const probed = await probeHealthzDuring(api.url, createIngest({ eventStore, bus: inbox }).handleBatch(batch));
    assertResponsive(probed);
    assert.deepEqual(probed.outcome, { observations: 5, appended: 3, skipped: 0, rejected: 2, conflicts: 0, takeovers: 0 });
    const letters = await inbox.listDeadLetters();
    assert.deepEqual(letters.map((l) => l.source), ['test:1', 'test:3']);
    // A stream with no head is not read (one lookup finds none), so the append meets the key.
    assert.match(letters[0]?.reason ?? '', /^append to collection-a{100,} failed: LMDB event store refused a key: .*max(imum)? key size/);
    assert.match(letters[1]?.reason ?? '', /^append to media-mv00000077 failed: LMDB event store could not encode a value/);
    assert.equal((letters[1]?.payload as { data: { voteCount: unknown } }).data.voteCount, String(2n ** 70n));
    assert.deepEqual((await allEvents(eventStore)).map((e) => e.streamId), [goodStream(1), goodStream(2), goodStream(3)]);

    // Redelivered to a fresh instance (a crash before the commit): nothing is appended twice.
    const again = await createIngest({ eventStore, bus: inbox }).handleBatch(batch);
    assert.deepEqual([again.appended, again.skipped, again.rejected], [0, 3, 2]);
    assert.equal(await eventStore.headPosition(), 3);
  });

  it('restarts a consumer whose handler fails; /readyz, /metrics and the published report show its state', async () => {
    const ingest = createIngest({ eventStore, bus: inbox });
    await inbox.publish([1, 2, 3].map((n) => good(n)));
    let failures = 0;
    const handler = async (batch: ObservationRecord[]) => {
      if (failures < 2) {
        failures += 1;
        throw new Error(`the handler failed (${failures})`);
      }
      await ingest.handleBatch(batch);
    };
    const report = publishHealth(health, readStore, silentLogger, { ready: () => true, intervalMs: 100 });
    // The second pause is 5 s: long enough to look at every view of the state while it lasts.
    const consumer = superviseConsumer(health, 'ingest', silentLogger, () => inbox.consume(handler, { group: 'ingest' }), { minBackoffMs: 2500 });
    try {
      await waitFor('the second failure', () => failures === 2 && health.get('ingest')?.state === 'backing_off', 20_000);
      const probed = await probeHealthzDuring(api.url, (async () => {
        const ready = await fetch(`${api.url}/readyz`);
        assert.equal(ready.status, 503);
        const body = (await ready.json()) as { error: string; details: { components: Array<{ name: string; state: string; last_error: string }> } };
        assert.match(body.error, /ingest is backing off/);
        assert.deepEqual(body.details.components, [{ name: 'ingest', state: 'backing_off', last_error: 'the handler failed (2)' }]);
        const metrics = await (await fetch(`${api.url}/metrics`)).text();
        assert.match(metrics, /marquee_component_state\{component="ingest",state="backing_off"\} 1/);
        assert.match(metrics, /marquee_component_state\{component="ingest",state="running"\} 0/);
        await waitFor('the published report', async () => {
          const stored = await readStore.get<HealthReport>(HEALTH_COLLECTION, health.processName);
          return stored?.doc.components.some((c) => c.name === 'ingest' && c.state === 'backing_off' && c.restarts === 2) ?? false;
        });
        const stored = await readStore.get<HealthReport>(HEALTH_COLLECTION, health.processName);
        const lines = describeHealthReports([stored?.doc as HealthReport], new Date());
        assert.match(lines[0] ?? '', / not ready /);
        assert.ok(lines.some((l) => /^ {2}ingest +backing_off +since \S+ +restarts 2$/.test(l)), lines.join('\n'));
        assert.ok(lines.includes('    last error: the handler failed (2)'), lines.join('\n'));
      })());
      assertResponsive(probed);

      await waitFor('the restart that succeeds', () => health.get('ingest')?.state === 'running' && inbox.committedOffset('ingest') === 3, 20_000);
      assert.equal((await fetch(`${api.url}/readyz`)).status, 200);
      // Each failed batch was redelivered; its observations were appended once.
      assert.deepEqual((await allEvents(eventStore)).map((e) => e.streamId), [1, 2, 3].map(goodStream));

      // `marquee status`, another process, reads the reports: this one and one that stopped reporting.
      const gone: HealthReport = { process: 'gone-host:1', at: new Date(Date.now() - 45_000).toISOString(), ready: true, components: [] };
      await readStore.writeBatch(HEALTH_COLLECTION, [{ key: gone.process, doc: gone, position: 1 }]);
      await waitFor('the report of the recovery', async () => {
        const stored = await readStore.get<HealthReport>(HEALTH_COLLECTION, health.processName);
        return stored?.doc.ready === true;
      });
      const status = await marquee(['status'], embeddedEnvOf(dataDir));
      assert.equal(status.code, 0, status.stderr);
      assert.match(status.stdout, new RegExp(`${health.processName.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} {2}ready `));
      assert.match(status.stdout, /\n {4}ingest +running +since \S+ +restarts 2\n {6}last error: the handler failed \(2\)\n/);
      assert.match(status.stdout, /gone-host:1 {2}STALE: last report \d+ s ago/);
    } finally {
      await consumer.stop();
      await report.stop();
    }
    assert.equal(health.get('ingest')?.state, 'stopped');
    // A process that stopped cleanly takes its report with it.
    assert.equal(await readStore.get(HEALTH_COLLECTION, health.processName), null);
  });

  it('forgets the reports of processes silent for over a day, so killed processes do not pile up in `status`', async () => {
    const hour = 3_600_000;
    const aged = (process: string, ageMs: number): HealthReport => ({ process, at: new Date(Date.now() - ageMs).toISOString(), ready: true, components: [] });
    await readStore.writeBatch(HEALTH_COLLECTION, [
      { key: 'pod-killed-yesterday:1', doc: aged('pod-killed-yesterday:1', 25 * hour), position: 1 },
      { key: 'pod-killed-an-hour-ago:1', doc: aged('pod-killed-an-hour-ago:1', hour), position: 1 },
      { key: 'garbled:1', doc: { process: 'garbled:1' } as unknown as HealthReport, position: 1 },
    ]);
    const report = publishHealth(health, readStore, silentLogger, { ready: () => true, intervalMs: 100 });
    try {
      await waitFor('this process\'s report', async () => (await readStore.get(HEALTH_COLLECTION, health.processName)) !== null);
      await waitFor('the day-old and garbled reports removed', async () => (await readStore.count(HEALTH_COLLECTION)) === 2);
      assert.deepEqual((await readStore.scan(HEALTH_COLLECTION)).map((r) => r.key).sort(), [health.processName, 'pod-killed-an-hour-ago:1'].sort());
    } finally {
      await report.stop();
    }
  });

  describeWithServer('poison on a real Kafka broker', 'KAFKA_BROKERS', (url) => {
    let bus: KafkaObservationBus;

    beforeEach(() => {
      // One partition: the poison sits between the other records in one ordered batch.
      bus = kafkaObservationBus({ brokers: url.split(','), topicPrefix: uniquePrefix(), partitions: 1, maxWaitMs: 100, idleCheckMs: 100 });
    });
    afterEach(async () => {
      await bus.deleteTopics().catch(() => {});
      await bus.close();
    });

    it('dead-letters poison in the middle of a Kafka batch and ingests everything before and after it', async () => {
      const ingest = createIngest({ eventStore, bus });
      await bus.publish([1, 2, 3, 4, 5].map((n) => good(n)));
      const valid = encodeUnchecked(availabilityObserved('trailing', T0, [], 'US', 1092));
      const unknownSchema = Buffer.from(valid);
      unknownSchema.fill(0xab, 2, 10);
      await bus.publishRaw([
        { value: Buffer.from('not an avro record') },
        { value: encodeUnchecked(availabilityObserved('bad-country', T0, [], 'USA', 1090)) },
        // A tombstone, an empty value, a record with bytes after it, one naming no schema we know.
        { value: null },
        { value: Buffer.alloc(0) },
        { value: Buffer.concat([valid, Buffer.from([1, 2, 3])]) },
        { value: unknownSchema },
      ]);
      await bus.publish([availabilityObserved('future', '2999-01-01T00:00:00Z', [], 'US', 1091)]);
      await bus.publish([6, 7, 8, 9, 10].map((n) => good(n)));
      await drain(ingest, { group: 'hostile' });

      const letters = await bus.listDeadLetters();
      assert.deepEqual(letters.map((l) => l.source.replace(/^.*\//, 'offset ')), [5, 6, 7, 8, 9, 10, 11].map((n) => `offset ${n}`));
      assert.match(letters[0]?.reason ?? '', /C3 01 header/);
      assert.equal(letters[1]?.reason, 'AvailabilityObserved.data.country: expected a two-letter country code, got "USA"');
      assert.equal(letters[2]?.reason, 'empty record (no value)');
      assert.equal(letters[3]?.reason, 'empty record (no value)');
      assert.equal(letters[4]?.reason, 'cannot decode the AvailabilityObserved v1 body: trailing data');
      assert.equal(letters[5]?.reason, 'unknown writer schema fingerprint abababababababab');
      assert.match(letters[6]?.reason ?? '', /^observedAt: 2999-01-01T00:00:00Z is later than now/);
      assert.deepEqual(
        (await allEvents(eventStore)).map((e) => e.streamId),
        [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map(goodStream),
      );
      assert.deepEqual(ingest.totals(), { observations: 11, appended: 10, skipped: 0, rejected: 1, conflicts: 0, takeovers: 0 });
    });
  });
});

describe('marquee start and marquee status (e2e)', function () {
  this.timeout(180_000);

  it('reports its supervised loops to /readyz and marquee status, and withdraws the report when it stops', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'marquee-hostile-status-'));
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const env = embeddedEnvOf(dataDir, {
      PORT: String(port), LOG_LEVEL: 'info', SAMPLE_TITLES: '40', SAMPLE_COUNTRIES: 'US', SAMPLE_DAYS: '1',
    });
    let log = '';
    const server = spawn(process.execPath, [bin, 'start', '--sample'], { env, cwd: root });
    server.stdout.on('data', (d) => (log += d));
    server.stderr.on('data', (d) => (log += d));
    try {
      await waitFor('readiness', async () => {
        if (server.exitCode !== null) throw new Error(`marquee start exited with ${server.exitCode}:\n${log}`);
        return (await fetch(`${base}/readyz`).catch(() => null))?.status === 200;
      }, 150_000);
      const ready = (await (await fetch(`${base}/readyz`)).json()) as { components: Array<{ name: string; state: string }> };
      assert.ok(ready.components.some((c) => c.name === 'ingest' && c.state === 'running'), JSON.stringify(ready));
      const metrics = await (await fetch(`${base}/metrics`)).text();
      assert.match(metrics, /marquee_component_state\{component="ingest",state="running"\} 1/);

      const status = await marquee(['status'], env);
      assert.equal(status.code, 0, status.stderr);
      assert.match(status.stdout, /processes:\n {2}\S+:\d+ {2}ready /);
      assert.match(status.stdout, /\n {4}ingest +running +since \S+ +restarts 0\n/);
      assert.match(status.stdout, /\n {4}health-report +running +since \S+ +restarts 0 {2}\(not critical\)\n/);
    } finally {
      assert.equal(await stop(server), 0, log.slice(-2000));
    }
    const after = await marquee(['status'], env);
    assert.match(after.stdout, /processes:\n {2}no running process reports its health/);
    rmSync(dataDir, { recursive: true, force: true });
  });
});
