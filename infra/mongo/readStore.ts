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
 * - `<prefix><name>%dir`: the key directory of that collection, `{ _id: bucket, _b: parent }` (keys.ts).
 * - `<prefix>%meta`: `{ _id: 'checkpoint:<name>', position }`, and each switch of an alias,
 *   `{ _id: 'alias-switch:<name>:<n>', collection }`, the newest live (`{ _id: 'alias:<name>' }`
 *   before switches were numbered, read when there is none).
 *
 * Indexes: a key (`get`) is read by `_id`, which every MongoDB collection indexes. Scans and
 * batches of keys go through the key directory (keys.ts): each document holds its bucket (`_b`)
 * and a scan or a batch read is a few equality reads on it, indexed `{ _b: 1, _id: 1 }` on
 * MongoDB. Why: FerretDB 1.24 pushes only equality down to PostgreSQL (no range, no sort, no
 * `$in`): a range scan read and sorted the whole collection in FerretDB for every page. On
 * FerretDB those equalities use the GIN indexes of infra/local/ferretdb-index-id.sql, and the
 * MongoDB index is not made (it would serve nothing there and cost every write).
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
import { isDuplicateKey, mongoError } from './errors.ts';
import { documentOf, type StoredRecord } from './documents.ts';
import { forEachLimited, guardedWrite } from './guardedWrite.ts';
import {
  bucketChain,
  bucketOf,
  commonPrefix,
  compareUtf8,
  directoryCollectionName,
  idCondition,
  keyRange,
  metaCollectionName,
  mongoCollectionName,
  prefixEnd,
  readModelCollectionName,
  type KeyRange,
} from './keys.ts';

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

/** A bucket of the key directory (keys.ts). */
interface DirectoryNode {
  _id: string;
  /** Its parent bucket. */
  _b: string;
  /** Whether it holds buckets too, not only keys: a walk reads its buckets only then. */
  _i?: true;
}

interface MetaRecord {
  _id: string;
  position?: number;
  collection?: string;
  version?: number;
}

/** The meta record of the store's layout: version 2 has the key directory. */
const LAYOUT_ID = 'layout';
const LAYOUT_VERSION = 2;

/** Keys of one bucket from which getMany reads the bucket rather than each key. */
const BUCKET_READ_MIN = 8;

/** Keys per collection the store remembers as stored (a few MB of strings at most). */
const STORED_KEYS_MAX = 200_000;

/** Buckets a scan loads ahead of the one it reads, per level of the directory. */
const WALK_LOOKAHEAD = 4;

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
  const directoryOf = (collection: string): Collection<DirectoryNode> =>
    db.collection<DirectoryNode>(directoryCollectionName(prefix, collection));

  async function run<T>(what: string, action: () => Promise<T>): Promise<T> {
    if (closed) throw new AppError('closed', 'the MongoDB read store is closed');
    try {
      return await action();
    } catch (err) {
      throw mongoError(err, `MongoDB read store (${what})`);
    }
  }

  function rangeFilter(range: KeyRange): Filter<StoredRecord> {
    const condition = idCondition(range);
    // `_id: {}` would match only an `_id` equal to an empty document: omit an unbounded range.
    return Object.keys(condition).length === 0 ? { ...live } : { _id: condition, ...live };
  }

  /**
   * The live records of `range` in key order (or reverse), read node by node through the key
   * directory (keys.ts): one or two equality reads per node visited, so a page costs its own size and
   * the depth of its first key, whatever the size of the collection.
   */
  async function* walk(collection: string, range: KeyRange, reverse: boolean): AsyncGenerator<StoredRecord> {
    const target = docs(collection);
    const directory = directoryOf(collection);
    const inRange = (key: string) => compareUtf8(key, range.low) >= 0 && (range.high === null || compareUtf8(key, range.high) < 0);
    // A bucket holds keys in [bucket, prefixEnd(bucket)): skip it when that misses the range.
    const overlaps = (bucket: string) => {
      const end = prefixEnd(bucket);
      return (range.high === null || compareUtf8(bucket, range.high) < 0) && (end === null || compareUtf8(end, range.low) > 0);
    };
    type Child = { key: string; record: StoredRecord | null; inner?: boolean };
    /** A node's children in range, in walk order: its records, and its buckets to expand. */
    async function load(node: string, inner: boolean): Promise<Child[]> {
      const [records, buckets] = await Promise.all([
        target.find({ _b: node, ...rangeFilter(range) }).toArray(),
        inner ? directory.find({ _b: node }, { projection: { _id: 1, _i: 1 } }).toArray() : [],
      ]);
      const children: Child[] = [
        ...records.filter((r) => inRange(r._id)).map((record) => ({ key: record._id, record })),
        ...buckets.filter((b) => overlaps(b._id)).map((b) => ({ key: b._id, record: null, inner: b._i === true })),
      ];
      // Ascending; a key equal to a bucket sorts before the longer keys the bucket holds.
      children.sort((a, b) => compareUtf8(a.key, b.key) || (a.record === null ? 1 : 0) - (b.record === null ? 1 : 0));
      if (reverse) children.reverse();
      return children;
    }
    async function* visit(children: Child[]): AsyncGenerator<StoredRecord> {
      // The next few buckets load while the ones before them are read: a page spans several
      // small buckets, and their round trips overlap instead of adding up.
      const buckets = children.filter((c) => c.record === null);
      const loads = new Map<string, Promise<Child[]>>();
      let next = 0;
      for (const child of children) {
        if (child.record !== null) {
          yield child.record;
          continue;
        }
        while (next < buckets.length && loads.size < WALK_LOOKAHEAD) {
          const bucket = buckets[next] as Child;
          next += 1;
          const loading = load(bucket.key, bucket.inner === true);
          // A walk stopped at its limit leaves loads unread: their failure is nobody's.
          loading.catch(() => undefined);
          loads.set(bucket.key, loading);
        }
        const loading = loads.get(child.key) as Promise<Child[]>;
        loads.delete(child.key);
        yield* visit(await loading);
      }
    }
    // Every key of the range starts with the common prefix of its bounds, so they all sit
    // under that prefix's bucket: the walk starts there rather than at the root, reading its
    // buckets too (whether it has any is on its own node, unread).
    yield* visit(await load(bucketOf(commonPrefix(range.low, range.high ?? '')), true));
  }

  /**
   * Buckets known to be in each collection's directory (keys.ts), with whether they hold buckets
   * (and so the indexes made): a node is never removed but with its collection, so once seen it
   * needs no write again. (A collection dropped by another process is one a replay retired:
   * nothing writes it after.)
   */
  const directories = new Map<string, Map<string, boolean>>();
  /**
   * Keys known to be stored in each collection: found by a getMany or written by this store (a
   * key never leaves but with its collection: a deletion keeps a tombstone). guardedWrite
   * replaces those directly instead of first trying to insert them: an insert that meets a
   * stored key costs FerretDB a retry of its whole chunk one document at a time, then the
   * replace. A projection reads a batch's documents just before it writes them, but not the rows
   * it lays out (the ranking rows, rewritten every day): those are known from the last write.
   * Only a hint: a wrong guess costs a retry, never a wrong write. Bounded: a collection's set
   * starts again empty past STORED_KEYS_MAX keys.
   */
  const storedKeys = new Map<string, Set<string>>();
  function noteStored(collection: string, keys: Iterable<string>): void {
    let known = storedKeys.get(collection);
    if (known === undefined || known.size > STORED_KEYS_MAX) {
      known = new Set();
      storedKeys.set(collection, known);
    }
    for (const key of keys) known.add(key);
  }

  function knownBuckets(collection: string): Map<string, boolean> {
    let known = directories.get(collection);
    if (known === undefined) {
      known = new Map();
      directories.set(collection, known);
    }
    return known;
  }
  /** Collections whose indexes this store made (or found not needed). */
  const indexed = new Set<string>();

  async function ensureDirectory(collection: string, keys: Iterable<string>): Promise<void> {
    if (!indexed.has(collection)) {
      // Equality on `_b` is every read of a scan: MongoDB needs the indexes. FerretDB never
      // uses them (its btree on `_jsonb -> '_b'` cannot serve the `@>` it filters with; the GIN
      // index of infra/local/ferretdb-index-id.sql does), so there they would only be one more
      // index for PostgreSQL to maintain on every write.
      if (!(await isFerretDb())) {
        await docs(collection).createIndex({ _b: 1, _id: 1 });
        await directoryOf(collection).createIndex({ _b: 1 });
      }
      indexed.add(collection);
    }
    const known = knownBuckets(collection);
    /** The nodes to write, with whether each holds buckets (`_i`) besides keys. */
    const nodes = new Map<string, DirectoryNode>();
    for (const key of keys) {
      let inner = false; // a key's own bucket holds keys; every bucket above it holds a bucket
      for (const { bucket, parent } of bucketChain(key)) {
        const node = nodes.get(bucket);
        if (node !== undefined || known.get(bucket) === true || (known.has(bucket) && !inner)) {
          // Known or queued as needed; so are the buckets above it, which all hold a bucket.
          if (node !== undefined && inner) node._i = true;
          break;
        }
        nodes.set(bucket, { _id: bucket, _b: parent, ...(inner ? { _i: true as const } : {}) });
        inner = true;
      }
    }
    if (nodes.size === 0) return;
    const directory = directoryOf(collection);
    const listed = [...nodes.values()];
    let stored: DirectoryNode[] = [];
    try {
      await directory.insertMany(listed, { ordered: false });
    } catch (err) {
      // Nodes another write (or process) made already answer with a duplicate key: the goal,
      // unless this write needs a node that held only keys to say it now holds a bucket too.
      const writeErrors = (err as { writeErrors?: unknown }).writeErrors;
      const errors = Array.isArray(writeErrors) ? (writeErrors as Array<{ index: number; code: unknown }>) : null;
      if (errors === null || !errors.every((e) => isDuplicateKey(e.code))) throw err;
      stored = errors.map((e) => listed[e.index] as DirectoryNode).filter((node) => node._i === true);
    }
    await forEachLimited(stored, concurrency, async (node) => {
      await directory.updateOne({ _id: node._id }, { $set: { _i: true } });
    });
    for (const node of listed) known.set(node._id, node._i === true);
    existing.add(collection);
  }

  let ferretDb: Promise<boolean> | undefined;
  /** Whether the server is FerretDB (its buildInfo names its version), asked once. */
  function isFerretDb(): Promise<boolean> {
    ferretDb ??= db.admin().command({ buildInfo: 1 }).then((info) => typeof info.ferretdbVersion === 'string');
    // A failed ask is asked again next time rather than remembered.
    ferretDb.catch(() => { ferretDb = undefined; });
    return ferretDb;
  }

  /**
   * The newest switch of an alias: the one with the highest number. With none yet, number 0 and
   * the collection of the alias record a store written before switches holds, if any.
   */
  async function latestSwitch(name: string): Promise<{ switch: number; collection: string | null }> {
    const prefix = switchId(name, '');
    // One round trip for both (getAlias runs on every alias refresh of every process): the
    // switches are few, one a replay.
    const records = await meta.find({ $or: [{ _id: { $gte: prefix, $lt: `${prefix}~` } }, { _id: aliasId(name) }] }).toArray();
    let newest = { switch: 0, collection: null as string | null };
    for (const record of records) {
      const collection = typeof record.collection === 'string' ? record.collection : null;
      // The alias record of an older store counts only while no switch is found.
      const n = record._id.startsWith(prefix) ? Number(record._id.slice(prefix.length)) : 0;
      if (n > newest.switch || (n === 0 && newest.switch === 0)) newest = { switch: n, collection };
    }
    return newest;
  }

  async function putMeta(id: string, fields: Omit<MetaRecord, '_id'>): Promise<void> {
    await meta.updateOne({ _id: id }, { $set: fields }, { upsert: true });
  }

  /**
   * Gives the documents of a database written before the key directory their bucket and their
   * collection its directory, once (then `layout` in the meta collection says so): without them
   * a scan would not see those documents. Safe to run twice at once: both write the same.
   */
  async function upgradeLayout(): Promise<void> {
    const layout = await meta.findOne({ _id: LAYOUT_ID });
    if (layout?.version === LAYOUT_VERSION) return;
    for (const name of await store.listCollections()) {
      const target = docs(name);
      const cursor = target.find({ _b: { $exists: false } }, { projection: { _id: 1 } });
      for (;;) {
        const ids: string[] = [];
        for (let doc = await cursor.next(); doc !== null; doc = ids.length < 1000 ? await cursor.next() : null) ids.push(doc._id);
        if (ids.length === 0) break;
        await ensureDirectory(name, ids);
        await forEachLimited(ids, concurrency, async (id) => {
          await target.updateOne({ _id: id }, { $set: { _b: bucketOf(id) } });
        });
      }
      await cursor.close();
    }
    await putMeta(LAYOUT_ID, { version: LAYOUT_VERSION });
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
        // Many keys of one bucket are read with one equality on the bucket (FerretDB pushes it
        // down; the `$in` then filters that bucket's documents in FerretDB), other keys one by
        // one by `_id`: never `$in` alone, which FerretDB answers by reading the whole
        // collection. A bucket holds up to 10 or 100 keys of digits: reading it whole pays only
        // when the batch wants a good share of it, as FerretDB decodes every document it reads.
        const buckets = new Map<string, string[]>();
        for (const key of unique) {
          const bucket = bucketOf(key);
          const list = buckets.get(bucket);
          if (list === undefined) buckets.set(bucket, [key]);
          else list.push(key);
        }
        // A key whose bucket is not in the directory is not stored: the directory gets a
        // document's bucket before the document, and loses it only with the collection. So the
        // buckets not known to exist are looked up first, one read of their parent's children
        // for all of them, and the keys of those found missing are not read at all. On a first
        // build most keys are new: one directory read stands for dozens of `{ _id }` reads, each
        // of which cost FerretDB more than writing the document.
        const known = knownBuckets(collection);
        const byParent = new Map<string, string[]>();
        for (const bucket of buckets.keys()) {
          if (bucket === '' || known.has(bucket)) continue;
          const parent = bucketOf(bucket);
          const list = byParent.get(parent);
          if (list === undefined) byParent.set(parent, [bucket]);
          else list.push(bucket);
        }
        const directory = directoryOf(collection);
        await forEachLimited([...byParent.keys()], concurrency, async (parent) => {
          const children = await directory.find({ _b: parent }, { projection: { _id: 1, _i: 1 } }).toArray();
          for (const child of children) if (known.get(child._id) !== true) known.set(child._id, child._i === true);
        });
        for (const bucket of [...buckets.keys()]) if (bucket !== '' && !known.has(bucket)) buckets.delete(bucket);
        // Two keys or more of a bucket that this store has not seen stored are most likely new
        // keys of a bucket a first build is filling (one a batch before began): one read of the
        // bucket answers them all, where an `{ _id }` read each found nothing.
        const seen = storedKeys.get(collection);
        const reads: Array<Filter<StoredRecord>> = [];
        for (const [bucket, inBucket] of buckets) {
          const unseen = seen === undefined ? inBucket.length : inBucket.filter((key) => !seen.has(key)).length;
          if (inBucket.length >= BUCKET_READ_MIN || unseen >= 2) reads.push({ _b: bucket, _id: { $in: inBucket } });
          else for (const key of inBucket) reads.push({ _id: key });
        }
        await forEachLimited(reads, concurrency, async (filter) => {
          for (const record of await target.find(filter).toArray()) byKey.set(record._id, record);
        });
      });
      // What the write of this batch will find stored (see writeBatch).
      noteStored(collection, byKey.keys());
      return keys.map((key) => {
        const record = byKey.get(key);
        return record === undefined || record._deleted ? null : storedDocument<T>(record);
      });
    },

    async scan<T>(collection: string, scanOptions: ScanOptions = {}) {
      const range = keyRange(scanOptions);
      if (range === null || scanOptions.limit === 0) return [];
      return run('scan', async () => {
        const out: Array<StoredDocument<T>> = [];
        if (await knownMissing(collection)) return out;
        let skip = scanOptions.offset ?? 0;
        const limit = scanOptions.limit ?? Number.POSITIVE_INFINITY;
        for await (const record of walk(collection, range, scanOptions.reverse === true)) {
          if (skip > 0) skip -= 1;
          else if (out.push(storedDocument<T>(record)) >= limit) break;
        }
        return out;
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
        // The directory before the documents: a document is never written where no scan finds it.
        if (writes.length > 0) await ensureDirectory(collection, writes.map((w) => w.key));
        const result =
          writes.length === 0
            ? { written: 0, skipped: 0 }
            : await guardedWrite(docs(collection), writes as Array<DocumentWrite<unknown>>, concurrency, storedKeys.get(collection));
        noteStored(collection, writes.map((w) => w.key));
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

    async purge(collection, keys) {
      if (keys.length === 0) return;
      // One equality each: FerretDB pushes only equality down to PostgreSQL (see the header).
      await run('purge', () => forEachLimited(keys, concurrency, async (key) => {
        await docs(collection).deleteOne({ _id: key });
      }));
      storedKeys.get(collection)?.clear();
    },

    async dropCollection(collection) {
      await run('dropCollection', async () => {
        existing.delete(collection);
        directories.delete(collection);
        indexed.delete(collection);
        storedKeys.delete(collection);
        for (const target of [docs(collection), directoryOf(collection)]) {
          try {
            await target.drop();
          } catch (err) {
            // 26 NamespaceNotFound: dropping a collection that does not exist is not a failure.
            if ((err as { code?: unknown }).code !== 26) throw err;
          }
        }
      });
    },

    async getAlias(name) {
      return run('getAlias', async () => (await latestSwitch(name)).collection);
    },

    async setAlias(name, collection) {
      return run('setAlias', async () => {
        // Each switch inserts the next switch's key: of two switching at once, exactly one
        // creates it and the other reads that one and takes the key after. An update or
        // findOneAndUpdate would not do: FerretDB reads the document and writes it apart, and
        // eight switches at once answered the same predecessor to several of them. Each lost
        // try means another switch went through; a bounded number, so a call never spins.
        for (let attempt = 0; attempt < MAX_SWITCH_ATTEMPTS; attempt += 1) {
          const latest = await latestSwitch(name);
          try {
            await meta.insertOne({ _id: switchId(name, latest.switch + 1), collection });
            return latest.collection;
          } catch (err) {
            if (!isDuplicateKey((err as { code?: unknown }).code)) throw err;
          }
        }
        throw new AppError('unavailable', `alias ${name}: ${MAX_SWITCH_ATTEMPTS} other switches went first; switch again`, { retriable: true });
      });
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
  try {
    await upgradeLayout();
  } catch (err) {
    await client.close().catch(() => undefined);
    throw mongoError(err, `MongoDB read store at ${redact(options.url)} (upgrading its layout)`);
  }
  return store;
}

const checkpointId = (name: string) => `checkpoint:${name}`;
/** Tries of one alias switch, each lost to another switch, before it gives up. */
const MAX_SWITCH_ATTEMPTS = 50;
/** The alias record of a store written before switches (read, never written now). */
const aliasId = (name: string) => `alias:${name}`;
/**
 * The `n`th switch of an alias, its number padded so the key order is their order; the name
 * encoded, so it holds no `:` and no alias's keys begin with another's prefix.
 */
const switchId = (name: string, n: number | '') => `alias-switch:${encodeURIComponent(name)}:${n === '' ? '' : String(n).padStart(12, '0')}`;

function storedDocument<T>(record: StoredRecord): StoredDocument<T> {
  return { key: record._id, doc: documentOf(record) as T, position: record._position };
}

/** The connection string without its password, for error messages and logs. */
function redact(url: string): string {
  return url.replace(/\/\/([^:/@]+):([^@]*)@/, '//$1:***@');
}
