/**
 * The Kafka event log's local index (infra/kafka/eventLogIndex.ts), without a broker: the reads
 * every Kafka event store answers from it (the log in order, a stream forwards and backwards,
 * a stream's revision, the head), with offsets that skip the commit markers, and applying that
 * is idempotent by offset, since the writer and the tail consumer may both hand it a record.
 */
import assert from 'node:assert/strict';
import type { DomainEvent, RecordedEvent } from '../../contracts/events.ts';
import { eventLogIndex } from '../../infra/kafka/eventLogIndex.ts';
import { loggedEvent } from '../../infra/kafka/eventRecords.ts';

const STREAMS = ['availability-mv00000001-FR', 'genres', 'availability-mv00000002-FR'];

function genreDefined(n: number): DomainEvent {
  return { type: 'GenreDefined', data: { genre: { id: n, slug: `g${n}`, name: `Genre ${n}` } }, metadata: { producer: 'ingest' } } as DomainEvent;
}

/** 60 events of three streams in turn; every seventh record is followed by a commit marker's offset. */
function filled() {
  const index = eventLogIndex();
  const offsets: number[] = [];
  let offset = 0;
  for (let n = 0; n < 60; n += 1) {
    index.apply(offset, loggedEvent(STREAMS[n % 3] as string, genreDefined(n), Math.floor(n / 3), '2026-12-07T15:00:00.000Z'));
    offsets.push(offset);
    offset += n % 7 === 6 ? 2 : 1;
  }
  return { index, offsets };
}

const numbers = (events: RecordedEvent[]): number[] => events.map((e) => (e.data as { genre: { id: number } }).genre.id);

describe('the Kafka event log index (eventLogIndex.ts)', () => {
  it('answers the log in order by position, positions being offsets + 1 with the markers’ offsets left out', () => {
    const { index, offsets } = filled();
    const all = index.readAll(0, 1000);
    assert.deepEqual(numbers(all), Array.from({ length: 60 }, (_, n) => n));
    assert.deepEqual(all.map((e) => e.position), offsets.map((o) => o + 1));
    assert.equal(index.head, (offsets[59] as number) + 1);
    assert.equal(index.nextOffset, (offsets[59] as number) + 1);
    // After a position that is a marker's: from the next event on.
    const marker = (offsets[6] as number) + 1;
    assert.deepEqual(numbers(index.readAll(marker + 1, 3)), [7, 8, 9]);
    assert.deepEqual(index.readAll(index.head, 10), []);
  });

  it('answers a stream forwards from a revision, backwards up to one, and its last revision', () => {
    const { index } = filled();
    assert.equal(index.revision('genres'), 19);
    assert.equal(index.revision('missing'), -1);
    assert.deepEqual(numbers(index.readStream('genres', 17)), [52, 55, 58]);
    assert.deepEqual(index.readStream('genres', 20), []);
    assert.deepEqual(index.readStream('missing', 0), []);
    assert.deepEqual(numbers(index.readStreamBackwards('availability-mv00000002-FR', 4, 3)), [14, 11, 8]);
    assert.deepEqual(numbers(index.readStreamBackwards('genres', Number.MAX_SAFE_INTEGER, 2)), [58, 55]);
    assert.deepEqual(index.readStream('genres', 0).map((e) => e.revision), Array.from({ length: 20 }, (_, r) => r));
  });

  it('skips a record at an offset it has applied, and a wait resolves once the offset is read', async () => {
    const { index, offsets } = filled();
    const before = index.readAll(0, 1000);
    index.apply(offsets[10] as number, loggedEvent('genres', genreDefined(999), 99, '2026-12-07T15:00:00.000Z'));
    assert.deepEqual(index.readAll(0, 1000), before);
    assert.equal(index.revision('genres'), 19);
    const waited = index.reached(index.nextOffset + 3, 5000);
    index.advance(index.nextOffset + 2);
    await waited;
    await assert.rejects(index.reached(index.nextOffset + 1, 10), /not \d+, within 10 ms/);
  });
});
