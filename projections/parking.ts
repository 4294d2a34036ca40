/**
 * Parked events: what the runner (runner.ts) does with an event whose read-model write keeps
 * failing, so one bad document never holds a projection's checkpoint (and with it the daily
 * ranking and the weekly release, which wait for the read models to catch up).
 *
 * One record per parked DOCUMENT, in the reserved read-store collection `_parked`, keyed by the
 * runner's checkpoint name and a SHA-256 of the document id: the id itself may be what cannot be
 * written (a 2,100-character slug is longer than an LMDB key may be), so it lives in the value.
 *
 * The rule for later events: once a document has a parked event, every later event of that
 * document is parked behind it (reason "an earlier event of this document is parked") instead of
 * being folded onto the stored document. Folding it would write a state that silently lacks the
 * parked event, and the position guard would then skip the parked event for good on a retry. So
 * the stored document keeps its last good state, listed as parked, until `retryParked` folds all
 * its parked events in order and removes the record.
 *
 * Guard positions: a record is written at twice the position of its newest event, and removed
 * at that plus one. A runner parking a later event writes at a higher position than both, so a
 * retry that removes the record while the runner adds to it cannot lose the runner's event: if
 * the runner wrote first, the removal is skipped as stale; if the removal came first, the
 * runner's write is still ahead of its tombstone.
 */
import { createHash } from 'node:crypto';
import { AppError } from '../contracts/errors.ts';
import type { EventType, RecordedEvent } from '../contracts/events.ts';
import type { EventStore, ReadStore, StoredDocument } from '../contracts/ports.ts';
import { storedWrites, type Projection } from '../contracts/projection.ts';

/** Reserved read-store collection of parked records (like `_health`, never a read model). */
export const PARKED_COLLECTION = '_parked';

/** Reason recorded for an event parked because its document already has a parked event. */
export const BEHIND_PARKED = 'an earlier event of this document is parked';

export interface ParkedEvent {
  position: number;
  type: EventType;
  /** Why it was parked: the error of the write, or BEHIND_PARKED. */
  reason: string;
  /** Write attempts before it was parked (0 for an event parked behind another). */
  attempts: number;
  /** When it was parked (RFC 3339). */
  at: string;
}

export interface ParkedDocument {
  /** Logical read-model name, e.g. `collections`. */
  projection: string;
  /** Physical collection the document belongs in, e.g. `collections_v1`. */
  collection: string;
  /** Checkpoint name of the runner that parked it. */
  checkpoint: string;
  documentId: string;
  /** Oldest first; a retry folds them in this order. */
  events: ParkedEvent[];
}

/** What the runner hands to `park`: events of one document, to add to its record. */
export interface Parking {
  documentId: string;
  events: RecordedEvent[];
  reason: string;
  attempts: number;
  /** The record already stored for the document, if any. */
  existing?: StoredDocument<ParkedDocument> | undefined;
}

export function parkedKey(checkpoint: string, documentId: string): string {
  return `${checkpoint}/${createHash('sha256').update(documentId, 'utf8').digest('hex')}`;
}

/** The parked records of these documents, by document id (one read per batch). */
export async function readParked(
  readStore: ReadStore,
  checkpoint: string,
  documentIds: string[],
): Promise<Map<string, StoredDocument<ParkedDocument>>> {
  const found = new Map<string, StoredDocument<ParkedDocument>>();
  if (documentIds.length === 0) return found;
  // Almost always none: a count of the checkpoint's range spares the lookup of every key.
  if ((await readStore.count(PARKED_COLLECTION, { prefix: `${checkpoint}/` })) === 0) return found;
  const records = await readStore.getMany<ParkedDocument>(PARKED_COLLECTION, documentIds.map((id) => parkedKey(checkpoint, id)));
  records.forEach((record, index) => {
    const id = documentIds[index] as string;
    // A SHA-256 collision is not a case to design for; comparing costs nothing.
    if (record !== null && record.doc.documentId === id) found.set(id, record);
  });
  return found;
}

/**
 * Adds events to the parked records of their documents in one write. Throws when the store
 * refuses it: the caller then must not move its checkpoint.
 */
export async function park(
  readStore: ReadStore,
  target: { projection: string; collection: string; checkpoint: string },
  parkings: Parking[],
  now: Date,
): Promise<ParkedDocument[]> {
  const at = now.toISOString();
  const records: ParkedDocument[] = [];
  const writes = parkings.map((p) => {
    const events = [...(p.existing?.doc.events ?? [])];
    const known = new Set(events.map((e) => e.position));
    for (const event of p.events) {
      // A batch applied again (a crash before its checkpoint) parks the same events again.
      if (known.has(event.position)) continue;
      events.push({ position: event.position, type: event.type, reason: p.reason, attempts: p.attempts, at });
    }
    events.sort((a, b) => a.position - b.position);
    const doc: ParkedDocument = { ...target, documentId: p.documentId, events };
    records.push(doc);
    const newest = events[events.length - 1]?.position ?? 0;
    return { key: parkedKey(target.checkpoint, p.documentId), doc, position: 2 * newest };
  });
  if (writes.length > 0) await readStore.writeBatch(PARKED_COLLECTION, writes);
  return records;
}

/** Parked records, oldest first event first; only those of one checkpoint when given. */
export async function listParked(readStore: ReadStore, options: { checkpoint?: string } = {}): Promise<Array<StoredDocument<ParkedDocument>>> {
  const records = await readStore.scan<ParkedDocument>(
    PARKED_COLLECTION,
    options.checkpoint === undefined ? {} : { prefix: `${options.checkpoint}/` },
  );
  return records.sort((a, b) => (a.doc.events[0]?.position ?? 0) - (b.doc.events[0]?.position ?? 0));
}

/** Number of parked events (not documents) of one checkpoint. */
export async function countParked(readStore: ReadStore, checkpoint: string): Promise<number> {
  const records = await listParked(readStore, { checkpoint });
  return records.reduce((sum, r) => sum + r.doc.events.length, 0);
}

/** Removes every parked record of a checkpoint (its collection was dropped). */
export async function dropParked(readStore: ReadStore, checkpoint: string): Promise<number> {
  const records = await listParked(readStore, { checkpoint });
  await readStore.writeBatch(
    PARKED_COLLECTION,
    records.map((r) => ({ key: r.key, doc: null, position: r.position + 1 })),
  );
  return records.length;
}

export interface RetryOutcome {
  documentId: string;
  /** Positions of the parked events of the document, oldest first. */
  positions: number[];
  ok: boolean;
  /** Why it still fails, when it does. */
  reason?: string;
}

export interface RetryOptions {
  projection: Projection<unknown>;
  eventStore: EventStore;
  readStore: ReadStore;
  /** The checkpoint whose records to retry (the runner's, by default its collection). */
  checkpoint: string;
  /** Only the document holding the event at this position (all its parked events, in order). */
  position?: number;
}

/**
 * Re-applies parked events, oldest document first: per document, folds its parked events in
 * order onto the stored document, writes it, and removes the record. Idempotent: events already
 * folded into the stored document (a retry that wrote but did not remove) are skipped by the
 * document's position, as in the runner. A document whose write still fails keeps its record and
 * is reported with the reason; the others go on.
 */
export async function retryParked(options: RetryOptions): Promise<RetryOutcome[]> {
  const { projection, eventStore, readStore, checkpoint } = options;
  const records = (await listParked(readStore, { checkpoint })).filter(
    (r) => options.position === undefined || r.doc.events.some((e) => e.position === options.position),
  );
  const outcomes: RetryOutcome[] = [];
  for (const record of records) {
    const { documentId, collection } = record.doc;
    const positions = record.doc.events.map((e) => e.position);
    try {
      const current = await readStore.get<unknown>(collection, documentId);
      let doc: unknown = current?.doc ?? null;
      let position = current?.position ?? 0;
      let folded = false;
      for (const parked of positions) {
        if (parked <= position) continue;
        doc = projection.evolve(doc, await eventAt(eventStore, parked));
        position = parked;
        folded = true;
      }
      if (folded) await readStore.writeBatch(collection, storedWrites(projection, documentId, doc, current?.doc ?? null, position));
      await readStore.writeBatch(PARKED_COLLECTION, [{ key: record.key, doc: null, position: record.position + 1 }]);
      outcomes.push({ documentId, positions, ok: true });
    } catch (err) {
      outcomes.push({ documentId, positions, ok: false, reason: err instanceof Error ? err.message : String(err) });
    }
  }
  return outcomes;
}

async function eventAt(eventStore: EventStore, position: number): Promise<RecordedEvent> {
  const [event] = await eventStore.readAll({ after: position - 1, limit: 1 });
  if (event === undefined || event.position !== position) {
    throw new AppError('internal', `the parked event at position ${position} is not in the event store`, { retriable: false });
  }
  return event;
}
