/**
 * The batching of the EventStoreDB subscription (infra/eventstoredb/subscription.ts) on a fake
 * source: an object-mode PassThrough standing in for the client's `subscribeToAll` readable.
 * The adapter itself needs a server (test/ports/eventStoreDb.int.test.ts); this part does not.
 */
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { AppError, isAppError } from '../../contracts/errors.ts';
import type { RecordedEvent } from '../../contracts/events.ts';
import { subscribeAllEvents } from '../../infra/eventstoredb/subscription.ts';
import { genreEvent, waitFor } from '../ports/support.ts';

interface FakeItem {
  position: number;
  system?: boolean;
}

function fakeSource() {
  const stream = new PassThrough({ objectMode: true, highWaterMark: 4 });
  let unsubscribed = 0;
  return {
    stream,
    get unsubscribed() {
      return unsubscribed;
    },
    source: Object.assign(stream, {
      async unsubscribe() {
        unsubscribed += 1;
        stream.destroy();
      },
    }),
  };
}

function convert(item: FakeItem): RecordedEvent | null {
  if (item.system) return null;
  return { ...genreEvent(item.position), streamId: 's', revision: item.position - 1, position: item.position, recordedAt: '2024-01-01T00:00:00.000Z' };
}

const onError = (err: unknown) => new AppError('unavailable', 'subscription failed', { cause: err });

describe('EventStoreDB subscription batching', () => {
  it('hands over what is buffered in batches of at most batchSize, one handler at a time', async () => {
    const fake = fakeSource();
    const sizes: number[] = [];
    const positions: number[] = [];
    let inFlight = 0;
    let overlapped = false;
    const subscription = subscribeAllEvents<FakeItem>(
      fake.source,
      async (batch) => {
        inFlight += 1;
        if (inFlight > 1) overlapped = true;
        sizes.push(batch.length);
        positions.push(...batch.map((e) => e.position));
        await new Promise((resolve) => setTimeout(resolve, 5));
        inFlight -= 1;
      },
      { after: 0, batchSize: 2, convert, onError },
    );
    for (const position of [1, 2, 3, 4, 5]) fake.stream.write({ position });
    await waitFor('five events', () => positions.length === 5);
    await subscription.stop();
    assert.deepEqual(positions, [1, 2, 3, 4, 5]);
    assert.ok(sizes.every((size) => size >= 1 && size <= 2), `sizes ${sizes.join(',')}`);
    assert.equal(overlapped, false);
    assert.equal(fake.unsubscribed, 1);
  });

  it('leaves out the server events and positions at or before the start', async () => {
    const fake = fakeSource();
    const positions: number[] = [];
    const subscription = subscribeAllEvents<FakeItem>(
      fake.source,
      async (batch) => {
        positions.push(...batch.map((e) => e.position));
      },
      { after: 10, batchSize: 100, convert, onError },
    );
    for (const item of [{ position: 10 }, { position: 11 }, { position: 12, system: true }, { position: 13 }]) fake.stream.write(item);
    await waitFor('the events after the start', () => positions.length === 2);
    await subscription.stop();
    assert.deepEqual(positions, [11, 13]);
  });

  it('delivers events that arrive after it went idle, and nothing once stopped', async () => {
    const fake = fakeSource();
    const positions: number[] = [];
    const subscription = subscribeAllEvents<FakeItem>(
      fake.source,
      async (batch) => {
        positions.push(...batch.map((e) => e.position));
      },
      { after: 0, batchSize: 100, convert, onError },
    );
    fake.stream.write({ position: 1 });
    await waitFor('the first event', () => positions.length === 1);
    fake.stream.write({ position: 2 });
    await waitFor('the live event', () => positions.length === 2);
    await subscription.stop();
    await subscription.done;
    assert.deepEqual(positions, [1, 2]);
    assert.equal(fake.unsubscribed, 1);
  });

  it('rejects done with the error of a handler that throws, and unsubscribes', async () => {
    const fake = fakeSource();
    const subscription = subscribeAllEvents<FakeItem>(
      fake.source,
      async () => {
        throw new Error('projection failed');
      },
      { after: 0, batchSize: 100, convert, onError },
    );
    fake.stream.write({ position: 1 });
    await assert.rejects(subscription.done, /projection failed/);
    assert.equal(fake.unsubscribed, 1);
  });

  it('rejects done with an unavailable error when the source fails', async () => {
    const fake = fakeSource();
    const subscription = subscribeAllEvents<FakeItem>(fake.source, async () => undefined, { after: 0, batchSize: 100, convert, onError });
    fake.stream.destroy(new Error('connection reset'));
    await assert.rejects(subscription.done, (err: unknown) => isAppError(err, 'unavailable'));
  });

  it('rejects done when the server ends the subscription', async () => {
    const fake = fakeSource();
    const subscription = subscribeAllEvents<FakeItem>(fake.source, async () => undefined, { after: 0, batchSize: 100, convert, onError });
    fake.stream.end();
    await assert.rejects(subscription.done, (err: unknown) => isAppError(err, 'unavailable'));
  });
});
