/**
 * The read store on a MongoDB server (or FerretDB 1.x, which CI runs: MongoDB wire protocol on
 * PostgreSQL, without transactions, change streams, pipeline updates or nested arrays; nothing here
 * needs them).
 *
 * Layout, in one database:
 * - one Mongo collection per read-model collection, `<prefix><name>` (keys.ts), holding each
 *   document as BSON fields beside `_id` (the key) and `_position` (documents.ts), so read models
 *   can be queried and indexed like any MongoDB data. A deletion keeps a tombstone
 *   (`_deleted: true`) with its position, so a replayed older write cannot resurrect the
 *   document; every read filters tombstones out. Dropping the collection drops them too.
 * - `<prefix>%meta`: `{ _id: 'checkpoint:<name>', position }` and `{ _id: 'alias:<name>', collection }`.
 *
 * Indexes: every query of the port (and so of the API) is by `_id` (a key, a key range, a
 * prefix), which every MongoDB collection indexes; no other index is needed. On FerretDB that
 * index serves `{ _id: k }` only on PostgreSQL with infra/local/ferretdb-index-id.sql, and never
 * serves `$in`, so batches are looked up key by key, a few at a time, on every server.
 *
 * `_id`s are compared by MongoDB (and FerretDB) in the byte order of their UTF-8 encoding, the
 * order the port promises for scans.
 *
 * Checkpoints without transactions: writeBatch writes the documents first and moves the
 * checkpoint after. A crash between the two leaves documents ahead of their checkpoint; the
 * runner then re-reads the events after the old checkpoint, the fold skips events at or below a
 * document's stored position, and the store skips writes whose position is not ahead. Re-applying
 * the batch is therefore a no-op, and the checkpoint catches up with the next batch. The reverse
 * order could lose events (a checkpoint ahead of documents that never got written).
 */
import { MongoClient, type Collection, type Db, type Filter } from 'mongodb';
import { AppError } from '../../contracts/errors.ts';
import type { DocumentWrite, ReadStore, ScanOptions, StoredDocument, WriteBatchResult } from '../../contracts/ports.ts';
import { mongoError } from './errors.ts';
import { documentOf, type StoredRecord } from './documents.ts';
import { forEachLimited, guardedWrite } from './guardedWrite.ts';
import { idCondition, keyRange, metaCollectionName, mongoCollectionName, readModelCollectionName } from './keys.ts';

export interface MongoReadStoreOptions {
  /** Connection string, e.g. `mongodb://127.0.0.1:27017`. */
  url: string;
  /** Database holding the read-model collections and the meta collection. */
  database: string;
  /** Prefix of the Mongo collection of each read-model collection. Default `rm_`. */
  collectionPrefix?: string;
  /**
   * How long an operation waits for a reachable server before it fails with `unavailable`, in
   * ms. Short, so an outage answers quickly instead of hanging requests (the API's own breaker,
   * services/shared/dependencies.ts, cuts a request at 1.5 s and then fails fast). Default 1500.
   */
  serverSelectionTimeoutMS?: number;
  /**
   * Commands in flight at once per batch (the writes of writeBatch, the `{ _id }` finds of
   * getMany). FerretDB holds a pooled backend connection per command (and per update until its
   * command ends): keep it well under its pool. Default 8.
   */
  concurrency?: number;
}

interface MetaRecord {
  _id: string;
  position?: number;
  collection?: string;
}

/** Excludes tombstones; `{ $ne: true }` also matches records without the field. */
const live = { _deleted: { $ne: true } } as const;

export async function mongoReadStore(options: MongoReadStoreOptions): Promise<ReadStore> {
  const prefix = options.collectionPrefix ?? 'rm_';
  const client = new MongoClient(options.url, {
    serverSelectionTimeoutMS: options.serverSelectionTimeoutMS ?? 1500,
    // The driver's one automatic retry of a failed write is left off: every write here is
    // idempotent, so the caller's own retry repeats a batch safely, and an outage surfaces
    // within serverSelectionTimeoutMS rather than after two of them.
    retryWrites: false,
  });
  try {
    await client.connect();
  } catch (err) {
    await client.close().catch(() => undefined);
    throw mongoError(err, `MongoDB read store at ${redact(options.url)}`);
  }
  const concurrency = options.concurrency ?? 8;
  const db: Db = client.db(options.database);
  const meta: Collection<MetaRecord> = db.collection<MetaRecord>(metaCollectionName(prefix));
  let closed = false;
  /** Collections seen to exist; only "exists" is cached, so a stale entry merely costs lookups. */
  const existing = new Set<string>();

  /**
   * Whether a collection is certainly absent, so getMany can answer without a lookup per key:
   * the runner asks every batch for its parked documents, in a collection that rarely exists.
   */
  async function knownMissing(collection: string): Promise<boolean> {
    if (existing.has(collection)) return false;
    const name = mongoCollectionName(prefix, collection);
    const found = await db.listCollections({ name }, { nameOnly: true }).toArray();
    if (found.length > 0) existing.add(collection);
    return found.length === 0;
  }

  const docs = (collection: string): Collection<StoredRecord> =>
    db.collection<StoredRecord>(mongoCollectionName(prefix, collection));

  async function run<T>(what: string, action: () => Promise<T>): Promise<T> {
    if (closed) throw new AppError('closed', 'the MongoDB read store is closed');
    try {
      return await action();
    } catch (err) {
      throw mongoError(err, `MongoDB read store (${what})`);
    }
  }

  function rangeFilter(range: NonNullable<ReturnType<typeof keyRange>>): Filter<StoredRecord> {
    const condition = idCondition(range);
    // `_id: {}` would match only an `_id` equal to an empty document: omit an unbounded range.
    return Object.keys(condition).length === 0 ? { ...live } : { _id: condition, ...live };
  }

  async function putMeta(id: string, fields: Omit<MetaRecord, '_id'>): Promise<void> {
    await meta.updateOne({ _id: id }, { $set: fields }, { upsert: true });
  }

  const store: ReadStore = {
    async get<T>(collection: string, key: string) {
      // `{ _id }` alone, tombstones filtered here: the filter FerretDB answers with its index.
      const record = await run('get', () => docs(collection).findOne({ _id: key }));
      return record === null || record._deleted ? null : storedDocument<T>(record);
    },

    async getMany<T>(collection: string, keys: string[]) {
      if (keys.length === 0) return [];
      const unique = [...new Set(keys)];
      const byKey = new Map<string, StoredRecord>();
      await run('getMany', async () => {
        if (await knownMissing(collection)) return;
        const target = docs(collection);
        // Key by key, not `$in`: FerretDB answers `$in` by reading the whole collection.
        await forEachLimited(unique, concurrency, async (key) => {
          const record = await target.findOne({ _id: key });
          if (record !== null) byKey.set(key, record);
        });
      });
      return keys.map((key) => {
        const record = byKey.get(key);
        return record === undefined || record._deleted ? null : storedDocument<T>(record);
      });
    },

    async scan<T>(collection: string, scanOptions: ScanOptions = {}) {
      const range = keyRange(scanOptions);
      if (range === null || scanOptions.limit === 0) return [];
      return run('scan', async () => {
        let cursor = docs(collection)
          .find(rangeFilter(range))
          .sort({ _id: scanOptions.reverse ? -1 : 1 });
        if (scanOptions.offset) cursor = cursor.skip(scanOptions.offset);
        if (scanOptions.limit !== undefined) cursor = cursor.limit(scanOptions.limit);
        return (await cursor.toArray()).map((record) => storedDocument<T>(record));
      });
    },

    async count(collection, countOptions = {}) {
      const range = keyRange(countOptions);
      if (range === null) return 0;
      return run('count', () => docs(collection).countDocuments(rangeFilter(range)));
    },

    async writeBatch<T>(
      collection: string,
      writes: Array<DocumentWrite<T>>,
      checkpoint?: { name: string; position: number },
    ): Promise<WriteBatchResult> {
      return run('writeBatch', async () => {
        const result =
          writes.length === 0
            ? { written: 0, skipped: 0 }
            : await guardedWrite(docs(collection), writes as Array<DocumentWrite<unknown>>, concurrency);
        // After the documents, never before: see the header.
        if (checkpoint) await putMeta(checkpointId(checkpoint.name), { position: checkpoint.position });
        return result;
      });
    },

    async getCheckpoint(name) {
      const record = await run('getCheckpoint', () => meta.findOne({ _id: checkpointId(name) }));
      return typeof record?.position === 'number' ? record.position : 0;
    },

    async getCheckpoints(names) {
      if (names.length === 0) return [];
      const records = await run('getCheckpoints', () => meta.find({ _id: { $in: names.map(checkpointId) } }).toArray());
      const byId = new Map(records.map((r) => [r._id, r.position]));
      return names.map((name) => {
        const position = byId.get(checkpointId(name));
        return typeof position === 'number' ? position : 0;
      });
    },

    async setCheckpoint(name, position) {
      await run('setCheckpoint', () => putMeta(checkpointId(name), { position }));
    },

    async dropCollection(collection) {
      await run('dropCollection', async () => {
        existing.delete(collection);
        try {
          await docs(collection).drop();
        } catch (err) {
          // 26 NamespaceNotFound: dropping a collection that does not exist is not a failure.
          if ((err as { code?: unknown }).code !== 26) throw err;
        }
      });
    },

    async getAlias(name) {
      const record = await run('getAlias', () => meta.findOne({ _id: aliasId(name) }));
      return typeof record?.collection === 'string' ? record.collection : null;
    },

    async setAlias(name, collection) {
      // One document update: readers see the old or the new collection, never neither.
      await run('setAlias', () => putMeta(aliasId(name), { collection }));
    },

    async listCollections() {
      const listed = await run('listCollections', () => db.listCollections({}, { nameOnly: true }).toArray());
      return listed
        .map((info) => readModelCollectionName(prefix, info.name))
        .filter((name): name is string => name !== null)
        .sort();
    },

    async close() {
      if (closed) return;
      closed = true;
      await client.close();
    },
  };
  return store;
}

const checkpointId = (name: string) => `checkpoint:${name}`;
const aliasId = (name: string) => `alias:${name}`;

function storedDocument<T>(record: StoredRecord): StoredDocument<T> {
  return { key: record._id, doc: documentOf(record) as T, position: record._position };
}

/** The connection string without its password, for error messages and logs. */
function redact(url: string): string {
  return url.replace(/\/\/([^:/@]+):([^@]*)@/, '//$1:***@');
}
