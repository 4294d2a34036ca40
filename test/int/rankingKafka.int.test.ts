/**
 * A ranking day of a 250,000-title country on the real Kafka event log (KAFKA_BROKERS): the
 * broker refuses a record over 1 MB (message.max.bytes), so the day as one unsplit event cannot
 * be written at all, while the day in parts is, and the next day reads back only its end.
 */
import assert from 'node:assert/strict';
import type { DomainEvent } from '../../contracts/events.ts';
import type { ExpectedRevision } from '../../contracts/ports.ts';
import { kafkaEventStore, type KafkaEventStore } from '../../infra/kafka/eventStore.ts';
import { foldStream } from '../../projections/fold.ts';
import { rankingsProjection } from '../../projections/rankings.ts';
import { dayEvents, packAppends } from '../../services/ranking/chartEvents.ts';
import { readRankingHistory } from '../../services/ranking/history.ts';
import { countingReads, worstCaseChanges, worstCaseChart } from '../fixtures/ranking.ts';
import { describeWithServer } from '../ports/requireServer.ts';

describeWithServer('a 250,000-title ranking day on the Kafka event log', 'KAFKA_BROKERS', (url) => {
  const topicPrefix = `test-ranking-${process.pid}-${Date.now().toString(36)}.`;
  let store: KafkaEventStore;

  before(() => {
    store = kafkaEventStore({ brokers: url.split(','), topicPrefix });
  });

  after(async function () {
    this.timeout(30_000);
    try {
      await store.deleteTopic();
    } finally {
      await store.close();
    }
  });

  it('refuses the day as one event, takes it in parts, and the next day reads two events of it', async function () {
    this.timeout(240_000);
    const entries = worstCaseChart(250_000);
    const metadata = { producer: 'ranking' };
    const whole: DomainEvent = { type: 'RankingComputed', data: { country: 'US', date: '2026-03-02', formulaVersion: 1, entries }, metadata };
    await assert.rejects(store.append('ranking-US', [whole], 'no_stream'));
    assert.equal(await store.streamRevision('ranking-US'), -1);

    const day = { country: 'US', date: '2026-03-02', formulaVersion: 1, latestDate: '2026-03-02', entries, changes: worstCaseChanges(200), metadata };
    let expected: ExpectedRevision = 'no_stream';
    for (const batch of packAppends(dayEvents(day))) expected = (await store.append('ranking-US', batch, expected)).nextExpectedRevision;

    const { store: counting, reads } = countingReads(store);
    const history = await readRankingHistory(counting, 'ranking-US', '2026-03-03', 200);
    assert.deepEqual([history.exists, history.previous?.date, history.latest], [false, '2026-03-02', '2026-03-02']);
    assert.deepEqual(history.previous?.entries, entries.slice(0, 200));
    // The day's last part (the stream's last event), then its first part.
    assert.deepEqual(reads, { events: 2, wholeStream: 0 });

    // Folded from the log, the parts make the whole chart.
    const folded = foldStream(rankingsProjection, await store.readStream('ranking-US'));
    assert.deepEqual([folded?.chart?.date, folded?.chart?.total, folded?.pending], ['2026-03-02', 250_000, null]);
  });
});
