/**
 * Behaviour suite of the ObservationBus port, run by every adapter (local inbox, Kafka). It only
 * uses the port plus `publishRaw`, which each adapter's caller implements for its transport so
 * poison records (bytes that do not decode) can be injected.
 */
import assert from 'node:assert/strict';
import { isAppError } from '../../contracts/errors.ts';
import type { AvailabilityObserved, Observation } from '../../contracts/observations.ts';
import type { ObservationBus, ObservationRecord } from '../../contracts/ports.ts';
import { OBSERVATION_SAMPLES } from '../fixtures/avro/samples.ts';
import { encodeUnchecked } from '../fixtures/avro/unchecked.ts';

export interface ObservationBusFixture {
  bus: ObservationBus;
  /** Publishes raw bytes as one record, exactly as given (no encoding, no validation). */
  publishRaw(bytes: Uint8Array): Promise<void>;
  cleanup(): Promise<void>;
}

/** Waits for a condition, polling; fails after `timeoutMs` with `what`. */
export async function waitFor(what: string, condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A small observation: the availability of title `key` in GB, told apart by `n`. */
export function availability(n: number, key = 1): AvailabilityObserved {
  const sample = OBSERVATION_SAMPLES.AvailabilityObserved;
  return {
    ...sample,
    observationId: `obs-${key}-${n}`,
    data: { ...sample.data, sourceId: key, offers: n % 2 === 0 ? [] : sample.data.offers.slice(0, 1) },
  };
}

const ids = (records: ObservationRecord[]) => records.map((r) => r.observation.observationId);

export function observationBusSuite(name: string, make: () => Promise<ObservationBusFixture>): void {
  describe(`ObservationBus behaviour: ${name}`, function () {
    this.timeout(30_000);
    let fixture: ObservationBusFixture;
    let bus: ObservationBus;
    let groupCounter = 0;
    const group = () => `group-${process.pid}-${Date.now()}-${(groupCounter += 1)}`;

    beforeEach(async () => {
      fixture = await make();
      bus = fixture.bus;
    });
    afterEach(async () => {
      await fixture.cleanup();
    });

    /** Consumes everything published so far with a fresh group; returns the batches. */
    async function drain(options: { group?: string; batchSize?: number } = {}): Promise<ObservationRecord[][]> {
      const batches: ObservationRecord[][] = [];
      const consumer = bus.consume(async (batch) => {
        batches.push(batch);
      }, { group: options.group ?? group(), batchSize: options.batchSize ?? 100, untilIdle: true });
      await consumer.done;
      return batches;
    }

    it('delivers published observations unchanged, in publish order per key', async () => {
      const published: Observation[] = [];
      for (let n = 0; n < 12; n += 1) published.push(availability(n, (n % 3) + 1));
      await bus.publish(published.slice(0, 5));
      await bus.publish(published.slice(5));
      const delivered = (await drain()).flat();
      assert.equal(delivered.length, 12);
      for (const key of [1, 2, 3]) {
        const expected = published.filter((o) => o.type === 'AvailabilityObserved' && o.data.sourceId === key);
        const got = delivered.map((r) => r.observation).filter((o) => o.type === 'AvailabilityObserved' && o.data.sourceId === key);
        assert.deepEqual(got, expected);
      }
      for (const record of delivered) assert.equal(typeof record.source, 'string');
      assert.equal(new Set(delivered.map((r) => r.source)).size, 12);
    });

    it('round-trips a sample of every observation type through the transport', async () => {
      const all = Object.values(OBSERVATION_SAMPLES);
      await bus.publish(all);
      const delivered = (await drain()).flat().map((r) => r.observation);
      assert.deepEqual(
        [...delivered].sort((a, b) => a.type.localeCompare(b.type)),
        [...all].sort((a, b) => a.type.localeCompare(b.type)),
      );
    });

    it('hands over batches no larger than batchSize and delivers every record once', async () => {
      await bus.publish(Array.from({ length: 7 }, (_, n) => availability(n)));
      const batches = await drain({ batchSize: 3 });
      assert.ok(batches.every((b) => b.length >= 1 && b.length <= 3), `batch sizes ${batches.map((b) => b.length).join(',')}`);
      assert.ok(batches.length >= 3);
      assert.deepEqual(ids(batches.flat()), Array.from({ length: 7 }, (_, n) => `obs-1-${n}`));
    });

    it('rejects done with the handler error and redelivers the failed batch to the next consumer of the group', async () => {
      await bus.publish([availability(0), availability(1), availability(2)]);
      const g = group();
      const failing = bus.consume(async () => {
        throw new Error('ingest crashed');
      }, { group: g, batchSize: 10 });
      await assert.rejects(failing.done, /ingest crashed/);
      const again = (await drain({ group: g })).flat();
      assert.deepEqual(ids(again), ['obs-1-0', 'obs-1-1', 'obs-1-2']);
    });

    it('commits a batch only after its handler resolved, so successful batches are not redelivered', async () => {
      await bus.publish(Array.from({ length: 5 }, (_, n) => availability(n)));
      const g = group();
      const handled: string[] = [];
      let failedBatch: string[] = [];
      let calls = 0;
      const first = bus.consume(async (batch) => {
        calls += 1;
        if (calls === 2) {
          failedBatch = ids(batch);
          throw new Error('second batch fails');
        }
        handled.push(...ids(batch));
      }, { group: g, batchSize: 2 });
      await assert.rejects(first.done, /second batch fails/);
      assert.ok(handled.length > 0 && failedBatch.length > 0);
      const rest = ids((await drain({ group: g, batchSize: 2 })).flat());
      assert.equal(rest[0], failedBatch[0]);
      assert.deepEqual([...handled, ...rest], Array.from({ length: 5 }, (_, n) => `obs-1-${n}`));
    });

    it('keeps the offsets of two groups independent', async () => {
      await bus.publish([availability(0), availability(1)]);
      const a = group();
      const b = group();
      assert.deepEqual(ids((await drain({ group: a })).flat()), ['obs-1-0', 'obs-1-1']);
      await bus.publish([availability(2)]);
      assert.deepEqual(ids((await drain({ group: a })).flat()), ['obs-1-2']);
      assert.deepEqual(ids((await drain({ group: b })).flat()), ['obs-1-0', 'obs-1-1', 'obs-1-2']);
    });

    it('dead-letters a record that does not decode, with the reason and its bytes, and delivers the ones after it', async () => {
      const poison = Buffer.from('definitely not an avro record');
      await bus.publish([availability(0)]);
      await fixture.publishRaw(poison);
      await bus.publish([availability(1)]);
      const delivered = (await drain()).flat();
      assert.deepEqual(ids(delivered), ['obs-1-0', 'obs-1-1']);
      const letters = await bus.listDeadLetters();
      assert.equal(letters.length, 1);
      const [letter] = letters;
      assert.ok(letter);
      assert.match(letter.reason, /C3 01 header/);
      assert.equal(typeof letter.payload, 'string');
      assert.deepEqual(Buffer.from(letter.payload as string, 'base64'), poison);
      assert.ok(!delivered.some((r) => r.source === letter.source));
    });

    it('dead-letters a record that decodes but does not validate, keeping the observation as payload', async () => {
      const bad = { ...availability(5), observedAt: 'yesterday' };
      await fixture.publishRaw(encodeUnchecked(bad));
      await bus.publish([availability(6)]);
      assert.deepEqual(ids((await drain()).flat()), ['obs-1-6']);
      const letters = await bus.listDeadLetters();
      assert.equal(letters.length, 1);
      assert.equal(letters[0]?.reason, 'AvailabilityObserved.observedAt: "yesterday" is not an RFC 3339 timestamp');
      assert.deepEqual(letters[0]?.payload, bad);
    });

    it('refuses to publish a batch holding an invalid observation and publishes none of it', async () => {
      const bad = { ...availability(1), observationId: '' };
      await assert.rejects(bus.publish([availability(0), bad]), (err) => isAppError(err, 'invalid_observation'));
      assert.deepEqual(await drain(), []);
    });

    it('ends an untilIdle consumer at once when nothing was published', async () => {
      const batches = await drain();
      assert.deepEqual(batches, []);
    });

    it('delivers observations published while a live consumer runs, and stop() ends it', async () => {
      const received: string[] = [];
      const consumer = bus.consume(async (batch) => {
        received.push(...ids(batch));
      }, { group: group(), batchSize: 10 });
      await bus.publish([availability(0)]);
      await waitFor('the first live record', () => received.length === 1);
      await bus.publish([availability(1), availability(2)]);
      await waitFor('the next live records', () => received.length === 3);
      await consumer.stop();
      await consumer.done;
      assert.deepEqual(received, ['obs-1-0', 'obs-1-1', 'obs-1-2']);
    });

    it('lists dead letters recorded by ingest, oldest first, up to the limit', async () => {
      const record: ObservationRecord = { source: 'test:1', observation: availability(1) };
      await bus.deadLetter(record, 'unknown provider');
      await bus.deadLetter({ source: 'test:2', payload: { raw: true } }, 'not an observation');
      const all = await bus.listDeadLetters();
      assert.deepEqual(all.map((l) => [l.source, l.reason, l.payload]), [
        ['test:1', 'unknown provider', availability(1)],
        ['test:2', 'not an observation', { raw: true }],
      ]);
      for (const letter of all) {
        assert.equal(typeof letter.id, 'string');
        assert.ok(!Number.isNaN(Date.parse(letter.at)));
      }
      assert.notEqual(all[0]?.id, all[1]?.id);
      assert.deepEqual((await bus.listDeadLetters({ limit: 1 })).map((l) => l.source), ['test:1']);
      assert.equal(await bus.countDeadLetters(), 2);
    });
  });
}
