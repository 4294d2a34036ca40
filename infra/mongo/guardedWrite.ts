/**
 * The position-guarded batch write of the MongoDB read store: one code path for MongoDB 7 and
 * FerretDB 1.24.
 *
 * First every document of the batch is inserted (one unordered `insertMany`), except those the
 * caller's hint says are stored (keys the store found or wrote before): a key without a stored
 * document is written there, which is most keys of a first build. The keys that already have one
 * answer with a duplicate key (MongoDB and FerretDB both go on past it and report each failed
 * index; FerretDB by retrying the chunk that met it one document at a time, hence the hint) and
 * are written, like the hinted ones, with `replaceOne({ _id, _position: { $lt: position } },
 * record, { upsert: true })`: the guard is in the filter. MongoDB checks it and writes in one step,
 * so there even two runners of one projection could never move a document backwards; FerretDB
 * 1.24 reads the document and writes it apart (measured: of eight conditional updates of one
 * document at once, several passed the same filter), so writers of one collection must not
 * overlap: the projector's lease (services/shared/lease.ts) is what keeps them apart, on any
 * server. When the stored document is not behind, the filter misses, the upsert tries to insert the
 * existing `_id` and the server answers with a duplicate key: that write is skipped. Nothing is
 * read first.
 *
 * One replace per command, a few in flight at once, rather than one unordered bulk per batch:
 * FerretDB 1.24 stops a bulk `update` at its first error (and reports the wrong index), so a bulk
 * holding one stale write would leave the rest unknown; and it runs the updates of one command
 * one after another anyway, measured slower per write than separate commands in flight together
 * (11-25 ms against 3-7 ms on 20 000 documents). A lone command's answer is exact on both servers.
 *
 * Within a batch, the writes of one key that pass the guard in batch order form a rising run of
 * positions; only the last of the run is sent (it is the one that would be left standing) and
 * every write of the run counts as written if it lands; a write not ahead of the run is skipped.
 */
import type { Collection } from 'mongodb';
import type { DocumentWrite, WriteBatchResult } from '../../contracts/ports.ts';
import { recordOf, type StoredRecord } from './documents.ts';
import { isDuplicateKey } from './errors.ts';
import { bucketOf } from './keys.ts';

interface Plan {
  /** The last write of the rising run: the one sent to the server. */
  last: DocumentWrite<unknown>;
  /** How many writes of the batch the run holds. */
  run: number;
}

export async function guardedWrite(
  collection: Collection<StoredRecord>,
  writes: Array<DocumentWrite<unknown>>,
  concurrency: number,
  /** Keys likely stored already: replaced without the insert first (a hint; see the header). */
  stored: ReadonlySet<string> = new Set(),
): Promise<WriteBatchResult> {
  const plans = new Map<string, Plan>();
  let skipped = 0;
  for (const write of writes) {
    const plan = plans.get(write.key);
    if (plan === undefined) plans.set(write.key, { last: write, run: 1 });
    else if (write.position <= plan.last.position) skipped += 1;
    else {
      plan.last = write;
      plan.run += 1;
    }
  }
  // Encoded before anything is sent, so a document that cannot be stored fails the whole batch.
  // Each with its bucket, which scans find it by (keys.ts).
  const sends = [...plans.values()].map((plan) => ({
    plan,
    record: { ...recordOf(plan.last.key, plan.last.doc, plan.last.position), _b: bucketOf(plan.last.key) },
  }));
  let written = 0;
  const inserts = sends.filter((send) => !stored.has(send.record._id));
  let replaces = sends.filter((send) => stored.has(send.record._id));
  try {
    if (inserts.length > 0) await collection.insertMany(inserts.map((send) => send.record), { ordered: false });
  } catch (err) {
    const writeErrors = (err as { writeErrors?: unknown }).writeErrors;
    const errors = Array.isArray(writeErrors) ? (writeErrors as Array<{ index: number; code: unknown }>) : null;
    // Only duplicate keys mean "stored already"; anything else is a real failure.
    if (errors === null || errors.length === 0 || !errors.every((e) => isDuplicateKey(e.code))) throw err;
    const failed = new Set(errors.map((e) => e.index));
    replaces = [...replaces, ...inserts.filter((_, index) => failed.has(index))];
  }
  const replaced = new Set(replaces);
  for (const send of sends) if (!replaced.has(send)) written += send.plan.run;
  await forEachLimited(replaces, concurrency, async ({ plan, record }) => {
    try {
      await collection.replaceOne({ _id: record._id, _position: { $lt: record._position } }, record, { upsert: true });
      written += plan.run;
    } catch (err) {
      if (!isDuplicateKey((err as { code?: unknown }).code)) throw err;
      skipped += plan.run;
    }
  });
  return { written, skipped };
}

/** Runs `action` on every item with at most `limit` in flight; rejects with the first failure. */
export async function forEachLimited<T>(items: T[], limit: number, action: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (next < items.length && !failed) {
      const item = items[next] as T;
      next += 1;
      try {
        await action(item);
      } catch (err) {
        failed = true;
        throw err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
