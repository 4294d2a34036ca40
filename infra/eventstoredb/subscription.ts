/**
 * The port's catch-up subscription on top of a push subscription that is a Node Readable (the
 * EventStoreDB client's `subscribeToAll`). Batches are whatever the readable has buffered when
 * the handler is free, at most `batchSize`; the next batch is taken only after the handler's
 * promise resolves, so a slow handler holds the buffer full and backpressure reaches the server.
 */
import type { RecordedEvent } from '../../contracts/events.ts';
import type { Subscription } from '../../contracts/ports.ts';

/** What is used of the client's subscription: a paused object-mode Readable that can unsubscribe. */
export interface PushSource {
  read(): unknown;
  on(event: 'readable' | 'end', listener: () => void): unknown;
  on(event: 'error', listener: (err: Error) => void): unknown;
  off(event: 'readable', listener: () => void): unknown;
  unsubscribe(): Promise<void>;
}

export interface PushSubscriptionOptions<T> {
  /** Positions at or below this are dropped (a start position may be delivered again). */
  after: number;
  batchSize: number;
  /** The event for the handler, or null to leave an item out (the server's own events). */
  convert(item: T): RecordedEvent | null;
  /** Turns an error of the source into the port's error. */
  onError(err: unknown): Error;
}

export function subscribeAllEvents<T>(
  source: PushSource,
  handler: (batch: RecordedEvent[]) => Promise<void>,
  options: PushSubscriptionOptions<T>,
): Subscription {
  let stopped = false;
  let ended = false;
  let failure: Error | undefined;
  let wake: (() => void) | undefined;
  const signal = () => {
    const resolve = wake;
    wake = undefined;
    resolve?.();
  };
  source.on('readable', signal);
  source.on('end', () => {
    ended = true;
    signal();
  });
  source.on('error', (err) => {
    failure = options.onError(err);
    signal();
  });

  let last = options.after;
  /** Up to batchSize buffered events; an empty array once the source is drained for now. */
  function take(): RecordedEvent[] {
    const batch: RecordedEvent[] = [];
    while (batch.length < options.batchSize) {
      const item = source.read() as T | null;
      if (item === null) break;
      const event = options.convert(item);
      if (event === null || event.position <= last) continue;
      last = event.position;
      batch.push(event);
    }
    return batch;
  }

  const done = (async () => {
    try {
      while (!stopped) {
        if (failure) throw failure;
        const batch = take();
        if (batch.length > 0) {
          await handler(batch);
          continue;
        }
        if (ended) throw options.onError(new Error('the server ended the subscription'));
        // `read()` just returned null, which arms the next 'readable'; nothing can slip in
        // between here and the wait because both run in this same turn.
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
      }
    } finally {
      source.off('readable', signal);
      await source.unsubscribe().catch(() => undefined);
    }
  })();
  // Whoever cares about a failing handler awaits `done`; without this, a subscription nobody
  // awaits would take the whole process down through an unhandled rejection.
  done.catch(() => undefined);

  return {
    done,
    async stop() {
      stopped = true;
      signal();
      await done.catch(() => undefined);
    },
  };
}
