/**
 * Ingest on the Kafka event log when another process takes the log over in the middle of an
 * append (two ingest processes share one log, docs/kafka-event-log.md): the fenced append
 * committed nothing, so ingest decides the streams again and appends once, without failing the
 * batch. Failing it restarted the consumer with a growing backoff, and two ingest processes
 * fencing each other kept a day of the topology test from being ingested within two minutes.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kafkaEventStore } from '../../infra/kafka/eventStore.ts';
import { streamKeyOf } from '../../infra/kafka/topics.ts';
import { lmdbInbox } from '../../infra/lmdb/inbox.ts';
import { createIngest } from '../../services/ingest/ingest.ts';
import { KCAT_AVAILABILITY } from '../fixtures/kafka/availability.ts';
import { describeWithServer } from '../ports/requireServer.ts';
import { genreEvent } from '../ports/support.ts';

describeWithServer('ingest on the Kafka event log taken over mid-append (int)', 'KAFKA_BROKERS', (url) => {
  it('decides the batch again and appends its events once, without failing it', async function () {
    this.timeout(90_000);
    const brokers = url.split(',');
    const topicPrefix = `test-fenced-${process.pid}-${Date.now().toString(36)}.`;
    const other = kafkaEventStore({ brokers, topicPrefix });
    let takeovers = 0;
    const store = kafkaEventStore({
      brokers,
      topicPrefix,
      // Between sending this append's records and committing them, another process appends:
      // it takes the log over, and this commit is refused.
      beforeCommit: async () => {
        if (takeovers > 0) return;
        takeovers += 1;
        await other.append('another-process', [genreEvent(1)], 'any');
      },
    });
    const dataDir = mkdtempSync(join(tmpdir(), 'marquee-fenced-'));
    const bus = lmdbInbox({ dataDir });
    try {
      const ingest = createIngest({ eventStore: store, bus });
      const stats = await ingest.handleBatch([{ source: 'test:1', observation: KCAT_AVAILABILITY }]);
      assert.equal(takeovers, 1, 'the first append was taken over');
      assert.equal(stats.takeovers, 1, 'the takeover counted');
      const logged = await store.readAll({ after: 0, limit: 100 });
      const key = streamKeyOf(KCAT_AVAILABILITY);
      assert.deepEqual(logged.filter((e) => e.streamId === key).map((e) => [e.revision, e.type]), [[0, 'OfferAdded'], [1, 'OfferAdded']], 'each event once');
      assert.deepEqual(logged.filter((e) => e.streamId === 'another-process').map((e) => e.revision), [0]);
    } finally {
      await bus.close();
      await other.close();
      await store.deleteTopic().catch(() => undefined);
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
