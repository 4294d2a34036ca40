/**
 * A catch-up subscription built from two reads every event store has: "events after a position"
 * and "the newest position". It reads history in batches, then, once caught up, polls the head
 * (a single key lookup) every `idleMs` instead of holding a cursor open, so it also sees events
 * appended by other processes on the same store.
 */
import type { RecordedEvent } from '../../contracts/events.ts';
import type { ReadAllOptions, SubscribeOptions, Subscription } from '../../contracts/ports.ts';

export interface PollingSource {
  readAll(options: ReadAllOptions): Promise<RecordedEvent[]>;
  headPosition(): Promise<number>;
}

export function pollingSubscription(
  source: PollingSource,
  handler: (batch: RecordedEvent[]) => Promise<void>,
  options: SubscribeOptions = {},
): Subscription {
  const batchSize = options.batchSize ?? 1000;
  const idleMs = options.idleMs ?? 50;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let wake: (() => void) | undefined;

  const done = (async () => {
    let after = options.after ?? 0;
    while (!stopped) {
      // The head lookup is cheap; reading a range only when something is new keeps idle polling
      // from decoding anything.
      if ((await source.headPosition()) > after) {
        const batch = await source.readAll({ after, limit: batchSize });
        const last = batch[batch.length - 1];
        if (last !== undefined && !stopped) {
          await handler(batch);
          after = last.position;
          continue;
        }
      }
      if (stopped) break;
      await new Promise<void>((resolve) => {
        wake = resolve;
        timer = setTimeout(resolve, idleMs);
      });
      wake = undefined;
    }
  })();
  // Whoever cares about a failing handler awaits `done`; without this, a subscription nobody
  // awaits would take the whole process down through an unhandled rejection.
  done.catch(() => undefined);

  return {
    done,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      wake?.();
      await done.catch(() => undefined);
    },
  };
}
