/**
 * The position-guarded batch write of the MongoDB read store, built only from what FerretDB 1.x
 * runs correctly and fast: `find`, unordered `insertMany`, and `replaceOne` without upsert.
 *
 * Why not one bulk of `updateOne({ _id, position: { $lt } }, ..., { upsert: true })`: on a stale
 * write the filter misses, the upsert tries to insert the existing `_id` and fails with E11000.
 * Real MongoDB reports that per operation and goes on with an unordered bulk; FerretDB 1.24 stops
 * the whole `update` command at the first error (and reports the wrong index), so the rest of the
 * batch would be lost. Updates with an aggregation pipeline (`$cond` on the position) would avoid
 * the duplicate key, but FerretDB refuses them ("'update.updates.u' is the wrong type 'array'").
 *
 * So a batch is planned against the stored positions read first:
 * 1. per key, the writes that pass the guard in batch order form a rising run of positions; only
 *    the last of the run is sent (it is the one that would be left standing), the others count
 *    as written, every write not ahead of the run counts as skipped;
 * 2. keys with no stored document are inserted (unordered `insertMany`); keys with one are
 *    replaced, never upserted, so a replace cannot raise a duplicate key;
 * 3. whatever did not land (an insert beaten by a concurrent writer, a replace whose document
 *    moved or went away) is re-read and planned again, a few rounds at most.
 *
 * Dialects differ in where the guard is checked:
 * - `mongodb`: in each replace's filter, `{ _id, position: { $lt: position } }`, atomic on the
 *   server, so even two runners of one projection (a deploy overlap) can never move a document
 *   backwards; stored positions are looked up with `$in`;
 * - `ferretdb`: FerretDB's SQLite backend pushes only an exact `{ _id: <string> }` filter down to
 *   SQLite; any other filter (`$in`, a position condition) makes it read and decode the whole
 *   collection in Go for every statement. So lookups are one `{ _id }` find per key (a few at a
 *   time; one pass over the collection for large batches, see FERRETDB_SCAN_ABOVE) and replaces
 *   filter on `_id` alone, the guard being checked against the positions read just before. That
 *   is exact with one writer per collection, which is the deployment model (one runner per
 *   projection, DESIGN.md).
 */
import type { Collection } from 'mongodb';
import { AppError } from '../../contracts/errors.ts';
import type { DocumentWrite, WriteBatchResult } from '../../contracts/ports.ts';
import { isDuplicateKey } from './errors.ts';

/** How a document is stored: the read-model document as JSON text (see readStore.ts). */
export interface StoredRecord {
  _id: string;
  /** JSON text of the document; null for a deletion (a tombstone). */
  doc: string | null;
  position: number;
  /** Present and true on a tombstone: hidden from reads, kept so old writes cannot resurrect it. */
  deleted?: true;
}

export type MongoDialect = 'mongodb' | 'ferretdb';

export interface GuardedWriteOptions {
  dialect: MongoDialect;
  /** Replaces per `update` command (see readStore.ts `updatesPerCommand`). */
  updatesPerCommand: number;
  /** Keys per `$in` lookup (mongodb). */
  keysPerLookup: number;
  /** `{ _id }` finds in flight at once (ferretdb). */
  lookupConcurrency: number;
}

interface Plan {
  key: string;
  /** The last write of the rising run: the one sent to the server. */
  last: DocumentWrite<unknown>;
  /** How many writes of the batch the run holds (all of them count as written if it lands). */
  run: number;
}

/**
 * Above this many keys, FerretDB is asked for every stored position at once (one pass over the
 * collection) instead of key by key. FerretDB 1.24's SQLite tables index `_id` under a different
 * expression (`->"_id"`) than the one its queries use (`->'$._id'`), so even a lookup by `_id`
 * scans the table in SQLite: both costs grow with the collection, and measured on 10 000
 * documents one pass cost about as much as 250 lookups (1.0 s against 4.3 ms each).
 */
const FERRETDB_SCAN_ABOVE = 256;

/** Rounds of re-planning after writes that a concurrent writer beat, before giving up. */
const MAX_ROUNDS = 5;

/**
 * `knownMissing`: the collection did not exist a moment ago, so the lookup of stored positions
 * is skipped and every key is inserted (a concurrent creator shows up as duplicate keys, which
 * are re-planned like any other race). It spares a first build one lookup per document.
 */
export async function guardedWrite(
  collection: Collection<StoredRecord>,
  writes: Array<DocumentWrite<unknown>>,
  options: GuardedWriteOptions,
  knownMissing = false,
): Promise<WriteBatchResult> {
  const keys = [...new Set(writes.map((w) => w.key))];
  let stored = knownMissing ? new Map<string, number>() : await storedPositions(collection, keys, options);

  const plans = new Map<string, Plan>();
  let skipped = 0;
  for (const write of writes) {
    const plan = plans.get(write.key);
    const base = plan?.last.position ?? stored.get(write.key) ?? Number.NEGATIVE_INFINITY;
    if (write.position <= base) {
      skipped += 1;
    } else if (plan) {
      plan.last = write;
      plan.run += 1;
    } else {
      plans.set(write.key, { key: write.key, last: write, run: 1 });
    }
  }

  let written = 0;
  let pending = [...plans.values()];
  for (let round = 0; pending.length > 0; round += 1) {
    if (round === MAX_ROUNDS) {
      throw new AppError('unavailable', `${pending.length} read-model writes kept losing to concurrent writers`, { retriable: true });
    }
    const missed = await send(collection, pending, stored, options);
    const landed = pending.filter((plan) => !missed.has(plan.key));
    for (const plan of landed) written += plan.run;
    if (missed.size === 0) break;

    // Re-read what did not land: a write whose position is no longer ahead is skipped, and one
    // that is still ahead (its document was created or dropped meanwhile) goes round again.
    stored = await storedPositions(collection, [...missed], options);
    pending = [];
    for (const key of missed) {
      const plan = plans.get(key) as Plan;
      const now = stored.get(key);
      if (now === plan.last.position) {
        // Our write landed after all (an error report can be coarse), or an equal one did.
        written += plan.run;
      } else if (now !== undefined && now > plan.last.position) {
        skipped += plan.run;
      } else {
        pending.push(plan);
      }
    }
  }
  return { written, skipped };
}

/** Stored position per key, tombstones included; keys without a document are absent. */
async function storedPositions(
  collection: Collection<StoredRecord>,
  keys: string[],
  options: GuardedWriteOptions,
): Promise<Map<string, number>> {
  const positions = new Map<string, number>();
  const projection = { _id: 1, position: 1 } as const;
  if (options.dialect === 'ferretdb' && keys.length > FERRETDB_SCAN_ABOVE) {
    const wanted = new Set(keys);
    for await (const record of collection.find({}, { projection })) {
      if (wanted.has(record._id)) positions.set(record._id, record.position);
    }
    return positions;
  }
  if (options.dialect === 'ferretdb') {
    await forEachLimited(keys, options.lookupConcurrency, async (key) => {
      const record = await collection.findOne({ _id: key }, { projection });
      if (record !== null) positions.set(record._id, record.position);
    });
    return positions;
  }
  for (let i = 0; i < keys.length; i += options.keysPerLookup) {
    const chunk = keys.slice(i, i + options.keysPerLookup);
    const found = await collection.find({ _id: { $in: chunk } }, { projection }).toArray();
    for (const record of found) positions.set(record._id, record.position);
  }
  return positions;
}

/** Runs `action` on every item with at most `limit` in flight; rejects with the first failure. */
export async function forEachLimited<T>(items: T[], limit: number, action: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const item = items[next] as T;
      next += 1;
      await action(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

function recordOf(write: DocumentWrite<unknown>): StoredRecord {
  if (write.doc === null) return { _id: write.key, doc: null, position: write.position, deleted: true };
  const json = JSON.stringify(write.doc);
  if (json === undefined) {
    throw new AppError('internal', `the document of ${JSON.stringify(write.key)} is not JSON (undefined or a function)`, { retriable: false });
  }
  return { _id: write.key, doc: json, position: write.position };
}

/** Sends one round of plans; returns the keys whose write did not (knowably) land. */
async function send(
  collection: Collection<StoredRecord>,
  plans: Plan[],
  stored: Map<string, number>,
  options: GuardedWriteOptions,
): Promise<Set<string>> {
  const missed = new Set<string>();
  const inserts = plans.filter((plan) => !stored.has(plan.key));
  const replaces = plans.filter((plan) => stored.has(plan.key));

  if (inserts.length > 0) {
    try {
      await collection.insertMany(inserts.map((plan) => recordOf(plan.last)), { ordered: false });
    } catch (err) {
      const writeErrors = (err as { writeErrors?: unknown }).writeErrors;
      const errors = Array.isArray(writeErrors) ? (writeErrors as Array<{ index: number; code: unknown }>) : null;
      // Only duplicate keys are a race to re-plan; anything else is a real failure.
      if (errors === null || errors.length === 0 || !errors.every((e) => isDuplicateKey(e.code))) throw err;
      for (const e of errors) {
        const plan = inserts[e.index];
        if (plan) missed.add(plan.key);
      }
    }
  }

  // Chunks run one after another: FerretDB holds a connection per matched update until its
  // command ends, so the chunk size bounds what one store takes from its pool.
  for (let i = 0; i < replaces.length; i += options.updatesPerCommand) {
    const chunk = replaces.slice(i, i + options.updatesPerCommand);
    const result = await collection.bulkWrite(
      chunk.map((plan) => {
        const { _id, ...replacement } = recordOf(plan.last);
        const filter = options.dialect === 'ferretdb' ? { _id } : { _id, position: { $lt: plan.last.position } };
        return { replaceOne: { filter, replacement } };
      }),
      { ordered: false },
    );
    // Counts come per command, not per operation: when some filter missed, the whole chunk is
    // re-read to tell which (rare: only a concurrent writer or a drop makes one miss here).
    if (result.matchedCount !== chunk.length) for (const plan of chunk) missed.add(plan.key);
  }
  return missed;
}
