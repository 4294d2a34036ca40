/**
 * The projection runner: the projection decides, the runner writes (STYLE.md practice 5).
 *
 * Per batch of events after the checkpoint: keep the events the projection handles, group them
 * by document, load each document once, fold its events with `evolve`, and write every changed
 * document once, stamped with the position of the last event folded into it, together with the
 * checkpoint (the batch's last position) in one `writeBatch`. The store skips a write whose
 * position is not ahead of the stored one, and the fold skips events already folded into a
 * stored document, so redelivery and replay are no-ops.
 *
 * Depends on ports only; the composition root hands in the adapters.
 */
import { AppError, isAppError } from '../contracts/errors.ts';
import type { RecordedEvent } from '../contracts/events.ts';
import type { DocumentWrite, EventStore, ReadStore, Subscription } from '../contracts/ports.ts';
import type { Projection } from '../contracts/projection.ts';

export interface BatchInfo {
  /** The checkpoint after this batch: the position of its last event. */
  position: number;
  /** Events in the batch, handled or not. */
  events: number;
  /** Documents written, and those the store skipped as not ahead of what it holds. */
  written: number;
  skipped: number;
}

export interface RunnerOptions<D> {
  projection: Projection<D>;
  eventStore: EventStore;
  readStore: ReadStore;
  /** Physical collection the documents go to, e.g. `media.v1`. */
  collection: string;
  /** Checkpoint name. Default: the collection name. */
  checkpointName?: string;
  /** Events read per batch. Default 1000. */
  batchSize?: number;
  /** Idle poll interval once caught up (live mode), in ms. Default 50. */
  idleMs?: number;
  /** Called after each batch is committed. */
  onBatch?(info: BatchInfo): void;
  /**
   * A sink fed after each committed write, e.g. the search index. It sees the writes the runner
   * sent (including any the store skipped as stale, which a sink applies idempotently). A crash
   * between the commit and the sink loses that sink update: sinks that must not miss any are
   * rebuilt from the read store at start-up.
   */
  afterWrite?(writes: Array<DocumentWrite<D>>): Promise<void>;
  /** Attempts per batch when a port fails with a retriable error. Default 5. */
  attempts?: number;
  /** Aborting stops the runner like `stop()`. */
  signal?: AbortSignal;
}

/**
 * Folds one batch into the read store and moves the checkpoint to the batch's last position.
 * Exported for runners of other shapes (replay, tests).
 */
export async function applyBatch<D>(options: RunnerOptions<D>, batch: RecordedEvent[]): Promise<BatchInfo> {
  const last = batch[batch.length - 1];
  if (last === undefined) throw new AppError('internal', 'applyBatch needs at least one event');
  const { projection, readStore, collection } = options;
  const checkpoint = { name: checkpointNameOf(options), position: last.position };

  const handled = new Set<string>(projection.canHandle);
  const byDocument = new Map<string, RecordedEvent[]>();
  for (const event of batch) {
    if (!handled.has(event.type)) continue;
    const id = projection.documentId(event);
    if (id === null) continue;
    const list = byDocument.get(id);
    if (list) list.push(event);
    else byDocument.set(id, [event]);
  }

  const ids = [...byDocument.keys()];
  const stored = ids.length > 0 ? await readStore.getMany<D>(collection, ids) : [];
  const writes: Array<DocumentWrite<D>> = [];
  ids.forEach((id, index) => {
    const current = stored[index] ?? null;
    let doc: D | null = current?.doc ?? null;
    let position = current?.position ?? 0;
    let folded = false;
    for (const event of byDocument.get(id) ?? []) {
      // Already in the stored document (a replay or a redelivery): folding it again would
      // count it twice.
      if (event.position <= position) continue;
      doc = projection.evolve(doc, event);
      position = event.position;
      folded = true;
    }
    // A fold to null is written too: its tombstone keeps a replayed older write from
    // resurrecting the document.
    if (folded) writes.push({ key: id, doc, position });
  });

  const result = await readStore.writeBatch<D>(collection, writes, checkpoint);
  if (options.afterWrite && writes.length > 0) await options.afterWrite(writes);
  const info: BatchInfo = { position: last.position, events: batch.length, ...result };
  options.onBatch?.(info);
  return info;
}

/** Applies a batch, retrying a few times with a growing pause when a port reports a retriable failure. */
async function applyWithRetry<D>(options: RunnerOptions<D>, batch: RecordedEvent[]): Promise<BatchInfo> {
  const attempts = options.attempts ?? 5;
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await applyBatch(options, batch);
    } catch (err) {
      const retriable = isAppError(err) && err.retriable;
      if (!retriable || attempt >= attempts || options.signal?.aborted) throw err;
      await new Promise((resolve) => setTimeout(resolve, 100 * 2 ** (attempt - 1)));
    }
  }
}

export interface CatchUpResult {
  /** The checkpoint reached. */
  position: number;
  /** The head position it ran up to. */
  head: number;
  events: number;
}

export interface CatchUpOptions<D> extends RunnerOptions<D> {
  /** Called with (checkpoint, head) before the first batch and after each one. */
  onProgress?(position: number, head: number): void;
}

/**
 * Runs the projection from its checkpoint up to the event store's head position as read at the
 * start, then returns (start-up readiness, replay, tests). `onProgress(position, head)` is
 * called after every batch.
 */
export async function catchUp<D>(options: CatchUpOptions<D>): Promise<CatchUpResult> {
  const { eventStore, readStore } = options;
  const batchSize = options.batchSize ?? 1000;
  const head = await eventStore.headPosition();
  let position = await readStore.getCheckpoint(checkpointNameOf(options));
  let events = 0;
  options.onProgress?.(position, head);
  while (position < head && !options.signal?.aborted) {
    const batch = await eventStore.readAll({ after: position, limit: Math.min(batchSize, head - position) });
    if (batch.length === 0) break;
    const info = await applyWithRetry(options, batch);
    position = info.position;
    events += batch.length;
    options.onProgress?.(position, head);
  }
  return { position, head, events };
}

/**
 * Runs the projection live: catch-up from the checkpoint, then new events as they are appended,
 * until `stop()` (or the abort signal). `done` rejects if a batch fails for good; the checkpoint
 * then stays before that batch.
 */
export function runProjection<D>(options: RunnerOptions<D>): Subscription {
  let stopped = false;
  let subscription: Subscription | undefined;
  const stop = async () => {
    stopped = true;
    await subscription?.stop();
  };
  const onAbort = () => void stop();
  options.signal?.addEventListener('abort', onAbort, { once: true });

  const done = (async () => {
    try {
      const after = await options.readStore.getCheckpoint(checkpointNameOf(options));
      if (stopped || options.signal?.aborted) return;
      subscription = options.eventStore.subscribeAll((batch) => applyWithRetry(options, batch).then(() => undefined), {
        after,
        batchSize: options.batchSize ?? 1000,
        idleMs: options.idleMs ?? 50,
      });
      await subscription.done;
    } finally {
      options.signal?.removeEventListener('abort', onAbort);
    }
  })();
  done.catch(() => undefined);
  return {
    done,
    async stop() {
      await stop();
      await done.catch(() => undefined);
    },
  };
}

function checkpointNameOf(options: { collection: string; checkpointName?: string }): string {
  return options.checkpointName ?? options.collection;
}
