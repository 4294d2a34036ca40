/**
 * The projection runner: the projection decides, the runner writes.
 *
 * Per batch of events after the checkpoint: keep the events the projection handles, group them
 * by document, load each document once, fold its events with `evolve`, and write every changed
 * document once, stamped with the position of the last event folded into it, together with the
 * checkpoint (the batch's last position) in one `writeBatch`. The store skips a write whose
 * position is not ahead of the stored one, and the fold skips events already folded into a
 * stored document, so redelivery and replay are no-ops.
 *
 * A write that keeps failing never holds the checkpoint: the document is found by splitting the
 * batch, parked with its reason (parking.ts, which also says what happens to its later events)
 * and the checkpoint moves on. A fold that throws is a bug of the projection, not of one
 * document's data, and still stops the batch (the caller holds the checkpoint and retries).
 *
 * Depends on ports only; the composition root hands in the adapters.
 */
import { AppError, isAppError } from '../contracts/errors.ts';
import type { RecordedEvent } from '../contracts/events.ts';
import {
  systemClock, type Clock, type DocumentWrite, type EventStore, type ReadStore, type StoredDocument, type Subscription, type WriteBatchResult,
} from '../contracts/ports.ts';
import { evolveEach, storedWrites, type Projection } from '../contracts/projection.ts';
import { BEHIND_PARKED, park, readParked, type ParkedDocument, type Parking } from './parking.ts';

export interface BatchInfo {
  /** The checkpoint after this batch: the position of its last event. */
  position: number;
  /** Events in the batch, handled or not. */
  events: number;
  /** Documents written, and those the store skipped as not ahead of what it holds. */
  written: number;
  skipped: number;
  /** Documents parked by this batch (their write kept failing, or an earlier event of theirs is parked). */
  parked: ParkedDocument[];
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
   * A sink fed after each committed write, parked documents left out. It sees the writes the
   * runner sent (including any the store skipped as stale, which a sink applies idempotently).
   * At most once: a crash or a failure of the sink after the commit loses that update, because
   * the retried batch folds nothing already folded. A sink that must miss nothing follows the
   * read model on a checkpoint of its own instead, as the search index does
   * (services/shared/searchFeed.ts).
   */
  afterWrite?(writes: Array<DocumentWrite<D>>): Promise<void>;
  /**
   * Attempts per batch when a port fails with a retriable error, and per document before its
   * write is parked. Default 5 (pauses of 0.1, 0.2, 0.4 and 0.8 s).
   */
  attempts?: number;
  /** Called with the documents a batch parked, before `onBatch`. */
  onParked?(parked: ParkedDocument[]): void;
  /** Time of the parked records. Default: the system clock. */
  clock?: Clock;
  /** Aborting stops the runner like `stop()`. */
  signal?: AbortSignal;
}

/** The events of `batch` whose type is one of `types`, in log order. */
function eventsOfTypes(types: readonly string[], batch: readonly RecordedEvent[]): RecordedEvent[] {
  const handled = new Set<string>(types);
  return batch.filter((event) => handled.has(event.type));
}

/**
 * Folds one batch into the read store and moves the checkpoint to the batch's last position.
 * A document whose write keeps failing is parked (parking.ts) and the rest of the batch is
 * written: see `writeOrPark`. Exported for runners of other shapes (the projection group,
 * replay, tests). `handledEvents`, when given, are the batch's events of the projection's types
 * in log order, picked by a caller that picks them for several projections in one pass (the
 * group); otherwise they are picked here.
 */
/**
 * The events past `position`, in log order: the list itself when its first is (being in log
 * order, all are), a filtered copy otherwise. What a document, or a projection that lagged,
 * still has to fold.
 */
export function eventsAfter(events: RecordedEvent[], position: number): RecordedEvent[] {
  return events[0] === undefined || events[0].position > position ? events : events.filter((e) => e.position > position);
}

export async function applyBatch<D>(options: RunnerOptions<D>, batch: RecordedEvent[], handledEvents?: readonly RecordedEvent[]): Promise<BatchInfo> {
  const last = batch[batch.length - 1];
  if (last === undefined) throw new AppError('internal', 'applyBatch needs at least one event');
  const { projection, readStore, collection } = options;
  const checkpointName = checkpointNameOf(options);
  const checkpoint = { name: checkpointName, position: last.position };

  const byDocument = new Map<string, RecordedEvent[]>();
  for (const event of handledEvents ?? eventsOfTypes(projection.canHandle, batch)) {
    const id = projection.documentId(event);
    if (id === null) continue;
    const list = byDocument.get(id);
    if (list) list.push(event);
    else byDocument.set(id, [event]);
  }

  const ids = [...byDocument.keys()];
  // A projection of one document per event has nothing stored to fold onto (see onePerEvent).
  const read = (): Promise<Array<StoredDocument<D> | null>> =>
    projection.onePerEvent === true ? Promise.resolve(ids.map(() => null)) : readStore.getMany<D>(collection, ids);
  const [stored, parked] = ids.length > 0 ? await Promise.all([read(), readParked(readStore, checkpointName, ids)]) : [[], new Map()];
  const writes: Array<DocumentWrite<D>> = [];
  /** Per write (same index), the events folded into it: what gets parked if it fails. */
  const folded: RecordedEvent[][] = [];
  const behindParked: Parking[] = [];
  ids.forEach((id, index) => {
    const current = stored[index] ?? null;
    let doc: D | null = current?.doc ?? null;
    let position = current?.position ?? 0;
    // Already in the stored document (a replay or a redelivery): folding it again would
    // count it twice.
    const fresh = eventsAfter(byDocument.get(id) ?? [], position);
    if (fresh.length === 0) return;
    const existing = parked.get(id);
    if (existing !== undefined) {
      behindParked.push({ documentId: id, events: fresh, reason: BEHIND_PARKED, attempts: 0, existing });
      return;
    }
    doc = evolveEach(projection, doc, fresh);
    position = (fresh[fresh.length - 1] as RecordedEvent).position;
    // A fold to null is written too: its tombstone keeps a replayed older write from
    // resurrecting the document. A laid-out document's rows are parked, if their write
    // fails, with the events that made them.
    for (const write of storedWrites(projection, id, doc, current?.doc ?? null, position)) {
      writes.push(write);
      folded.push(fresh);
    }
  });

  const outcome = await writeOrPark(options, { writes, folded, behindParked, checkpoint });
  const sunk = outcome.parkedIds.size === 0 ? writes : writes.filter((w) => !outcome.parkedIds.has(w.key));
  if (options.afterWrite && sunk.length > 0) await options.afterWrite(sunk);
  const info: BatchInfo = {
    position: last.position,
    events: batch.length,
    written: outcome.written,
    skipped: outcome.skipped,
    parked: outcome.parked,
  };
  if (outcome.parked.length > 0) options.onParked?.(outcome.parked);
  options.onBatch?.(info);
  return info;
}

interface BatchWrites<D> {
  writes: Array<DocumentWrite<D>>;
  /** The events folded into each write, at the write's index. */
  folded: RecordedEvent[][];
  behindParked: Parking[];
  checkpoint: { name: string; position: number };
}

/**
 * Writes the batch and its checkpoint in one `writeBatch`. When that fails, finds the documents
 * that cannot be written by splitting the writes in halves (a bad document costs about
 * 2 log2(n) writes), writes everything else, parks each bad document after `attempts` tries
 * (at once when the error is not retriable), and only then moves the checkpoint.
 *
 * An outage must not park everything: a document is parked only once the store accepted its
 * parked record, which proves the store is up and refuses that one document. When the parked
 * record cannot be written either, this throws without moving the checkpoint (documents written
 * so far are ahead of it, which the position guard makes harmless), and the caller's own retry
 * handles the outage.
 */
async function writeOrPark<D>(
  options: RunnerOptions<D>,
  batch: BatchWrites<D>,
): Promise<{ written: number; skipped: number; parked: ParkedDocument[]; parkedIds: Set<string> }> {
  const { readStore, collection, projection } = options;
  const { writes, folded, behindParked, checkpoint } = batch;
  const target = { projection: projection.name, collection, checkpoint: checkpoint.name };
  const now = () => (options.clock ?? systemClock).now();
  const parked: ParkedDocument[] = [];
  const parkedIds = new Set<string>();
  // Parked before the checkpoint moves past their events (a crash in between parks them again).
  if (behindParked.length > 0) parked.push(...(await park(readStore, target, behindParked, now())));

  let first: unknown;
  try {
    const result = await readStore.writeBatch<D>(collection, writes, checkpoint);
    return { ...result, parked, parkedIds };
  } catch (err) {
    // Nothing to split: the store refused the checkpoint alone (an outage).
    if (writes.length === 0) throw err;
    first = err;
  }

  // Only now, with a write failed: the events of each document's write, to park it with.
  const foldedEvents = new Map(writes.map((w, i) => [w.key, folded[i] ?? []]));
  const totals = { written: 0, skipped: 0 };
  const add = (r: WriteBatchResult) => {
    totals.written += r.written;
    totals.skipped += r.skipped;
  };
  const bisect = async (part: Array<DocumentWrite<D>>, failure?: unknown): Promise<void> => {
    if (failure === undefined) {
      try {
        add(await readStore.writeBatch<D>(collection, part));
        return;
      } catch (err) {
        failure = err;
      }
    }
    if (part.length > 1) {
      const middle = Math.ceil(part.length / 2);
      await bisect(part.slice(0, middle));
      await bisect(part.slice(middle));
      return;
    }
    const write = part[0] as DocumentWrite<D>;
    const retried = await retryOne(options, () => readStore.writeBatch<D>(collection, [write]), failure);
    if (retried.result !== undefined) {
      add(retried.result);
      return;
    }
    const events = foldedEvents.get(write.key) ?? [];
    const reason = retried.error instanceof Error ? retried.error.message : String(retried.error);
    parked.push(...(await park(readStore, target, [{ documentId: write.key, events, reason, attempts: retried.attempts }], now())));
    parkedIds.add(write.key);
  };
  await bisect(writes, first);
  await readStore.writeBatch<D>(collection, [], checkpoint);
  return { ...totals, parked, parkedIds };
}

/**
 * Tries one write again while it fails with a retriable error, up to `attempts` in all with a
 * doubling pause; a non-retriable error (a key too long, a value that cannot be encoded) is final
 * at once. Returns the result, or the last error with the number of attempts made.
 */
async function retryOne<R>(
  options: Pick<RunnerOptions<unknown>, 'attempts' | 'signal'>,
  write: () => Promise<R>,
  firstError: unknown,
): Promise<{ result?: R; error?: unknown; attempts: number }> {
  const limit = options.attempts ?? 5;
  let error = firstError;
  let attempts = 1;
  while (attempts < limit && isAppError(error) && error.retriable && !options.signal?.aborted) {
    await new Promise((resolve) => setTimeout(resolve, 100 * 2 ** (attempts - 1)));
    attempts += 1;
    try {
      return { result: await write(), attempts };
    } catch (err) {
      error = err;
    }
  }
  return { error, attempts };
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
