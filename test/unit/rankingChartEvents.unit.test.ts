import assert from 'node:assert/strict';
import { codec } from '../../contracts/codec.ts';
import type { DomainEvent, RankingComputed } from '../../contracts/events.ts';
import { appendBytes, dayEvents, MAX_APPEND_BYTES, packAppends, PART_ENTRIES } from '../../services/ranking/chartEvents.ts';
import { worstCaseChanges, worstCaseChart } from '../fixtures/ranking.ts';

const MiB = 1024 * 1024;
const TITLES = 250_000;
const CHART = 200;

/** The Kafka event log's record value (infra/kafka/eventStore.ts): the event with its stream, revision and time. */
function kafkaRecordBytes(event: DomainEvent): number {
  return Buffer.byteLength(JSON.stringify({ ...event, streamId: 'ranking-US', revision: 99_999_999, recordedAt: '2026-03-02T03:00:00.000Z' }));
}

describe('ranking chart events', () => {
  const entries = worstCaseChart(TITLES);
  const changes = worstCaseChanges(CHART);
  const day = { country: 'US', date: '2026-03-02', formulaVersion: 1, latestDate: '2026-03-02', entries, changes, metadata: { producer: 'ranking' } };

  it(`keeps every event and every append of a ${TITLES.toLocaleString('en')}-title chart well under 1 MiB`, function () {
    this.timeout(60_000);
    const events = dayEvents(day);
    const appends = packAppends(events);
    const eventSizes = events.map((e) => Math.max(appendBytes(e), kafkaRecordBytes(e), codec.encodeEvent(e).length));
    const appendSizes = appends.map((batch) => batch.reduce((sum, e) => sum + appendBytes(e), 0));
    const largestEvent = Math.max(...eventSizes);
    const largestAppend = Math.max(...appendSizes);
    // Before the split, the day was one event holding the whole chart.
    const whole: DomainEvent = { type: 'RankingComputed', data: { country: 'US', date: day.date, formulaVersion: 1, entries }, metadata: day.metadata };
    console.log(`      one unsplit event: ${kafkaRecordBytes(whole)} bytes; split: ${events.length} events in ${appends.length} appends, largest event ${largestEvent} bytes, largest append ${largestAppend} bytes`);
    assert.ok(kafkaRecordBytes(whole) > 16 * MiB);
    assert.ok(largestEvent < MiB / 4, `largest event ${largestEvent} bytes`);
    assert.ok(largestAppend <= MAX_APPEND_BYTES && MAX_APPEND_BYTES <= MiB / 2, `largest append ${largestAppend} bytes`);
    assert.equal(appends.flat().length, events.length);
  });

  it('splits the chart into consecutive ranges of positions and closes the day with its last part', () => {
    const events = dayEvents(day);
    const parts = events.filter((e): e is RankingComputed => e.type === 'RankingComputed');
    assert.equal(parts.length, TITLES / PART_ENTRIES);
    assert.deepEqual(parts.map((e) => e.data.part), Array.from({ length: parts.length }, (_, i) => i + 1));
    assert.ok(parts.every((e) => e.data.parts === parts.length && e.data.latestDate === '2026-03-02'));
    assert.deepEqual(parts.flatMap((e) => e.data.entries), entries);
    // Order: parts 1..P-1, the PositionChanged, part P, which counts them.
    assert.deepEqual(events.slice(parts.length - 1, -1).map((e) => e.type), changes.map(() => 'PositionChanged'));
    const last = events.at(-1) as RankingComputed;
    assert.deepEqual([last.data.part, last.data.positionChanges], [parts.length, changes.length]);
    assert.ok(parts.slice(0, -1).every((e) => e.data.positionChanges === 0));
    // The final append carries the PositionChanged with the last part: a crash never leaves them without it.
    const final = packAppends(events).at(-1) ?? [];
    assert.equal(final.filter((e) => e.type === 'PositionChanged').length, changes.length);
  });

  it('makes an empty chart one empty part, and a small day one append', () => {
    const empty = dayEvents({ ...day, entries: [], changes: [] });
    assert.deepEqual(empty.map((e) => [e.type, (e as RankingComputed).data.part, (e as RankingComputed).data.parts, (e as RankingComputed).data.entries]), [['RankingComputed', 1, 1, []]]);
    const small = dayEvents({ ...day, entries: entries.slice(0, 5), changes: changes.slice(0, 2) }, 2);
    assert.deepEqual(packAppends(small).map((batch) => batch.length), [5]);
    assert.deepEqual(packAppends(small, 1).map((batch) => batch.length), [1, 1, 1, 1, 1]);
  });
});
