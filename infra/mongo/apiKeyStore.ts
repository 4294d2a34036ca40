/**
 * ApiKeyStore in MongoDB: the `api_keys` collection of the database, one document per key with
 * its fields as BSON fields and the hash as `_id`, so an operator can query keys with any
 * MongoDB tool; the last use of each key is a document of its own in `api_keys_last_use`.
 *
 * Why two collections: FerretDB 1.x applies an update by reading the document, changing it in
 * its own process and writing it back whole, so two concurrent `$set`s of different fields of
 * one document can lose one of them (the behaviour suite saw a revocation lost to a touch
 * that raced it). The API touches keys all the time and a revocation must never be lost, so
 * they never write the same document. Revocation is a conditional update (`revokedAt` still
 * null), last use a `$max` upsert; both atomic on MongoDB.
 */
import { MongoClient, MongoServerError, type Collection } from 'mongodb';
import { AppError } from '../../contracts/errors.ts';
import type { ApiKeyRecord, ApiKeyStore } from '../../contracts/ports.ts';
import { byCreation } from '../../contracts/apiKeys.ts';
import { isDuplicateKey, mongoError } from './errors.ts';

export interface MongoApiKeyStoreOptions {
  url: string;
  database: string;
  /** Default `api_keys`. */
  collection?: string;
  /** Default 1500 ms: an outage answers `unavailable` quickly. */
  serverSelectionTimeoutMS?: number;
}

type KeyDocument = Omit<ApiKeyRecord, 'hash' | 'lastUsedAt'> & { _id: string };
interface LastUseDocument {
  _id: string;
  lastUsedAt: string;
}

function toRecord(doc: KeyDocument, lastUsedAt: string | null): ApiKeyRecord {
  return { id: doc.id, name: doc.name, hash: doc._id, prefix: doc.prefix, createdAt: doc.createdAt, revokedAt: doc.revokedAt ?? null, lastUsedAt };
}

export async function mongoApiKeyStore(options: MongoApiKeyStoreOptions): Promise<ApiKeyStore> {
  const client = new MongoClient(options.url, { serverSelectionTimeoutMS: options.serverSelectionTimeoutMS ?? 1500, retryWrites: false });
  try {
    await client.connect();
  } catch (err) {
    await client.close().catch(() => undefined);
    throw mongoError(err, 'MongoDB key store');
  }
  const name = options.collection ?? 'api_keys';
  const keys: Collection<KeyDocument> = client.db(options.database).collection<KeyDocument>(name);
  const uses: Collection<LastUseDocument> = client.db(options.database).collection<LastUseDocument>(`${name}_last_use`);

  /** `$max` upsert; two first uses at once both insert, and the loser's update then finds the document. */
  async function recordUse(hash: string, at: string): Promise<void> {
    try {
      await uses.updateOne({ _id: hash }, { $max: { lastUsedAt: at } }, { upsert: true });
    } catch (err) {
      if (!(err instanceof MongoServerError && isDuplicateKey(err.code))) throw err;
      await uses.updateOne({ _id: hash }, { $max: { lastUsedAt: at } });
    }
  }

  async function withLastUse(doc: KeyDocument | null): Promise<ApiKeyRecord | null> {
    if (doc === null) return null;
    return toRecord(doc, (await uses.findOne({ _id: doc._id }))?.lastUsedAt ?? null);
  }
  let closed = false;

  async function run<T>(what: string, action: () => Promise<T>): Promise<T> {
    if (closed) throw new AppError('closed', 'the MongoDB key store is closed');
    try {
      return await action();
    } catch (err) {
      throw mongoError(err, `MongoDB key store (${what})`);
    }
  }

  return {
    async create(key) {
      const { hash, lastUsedAt, ...fields } = key;
      await run('create', async () => {
        try {
          await keys.insertOne({ _id: hash, ...fields });
          if (lastUsedAt !== null) await recordUse(hash, lastUsedAt);
        } catch (err) {
          if (err instanceof MongoServerError && isDuplicateKey(err.code)) {
            throw new AppError('forbidden', `An API key with this hash already exists (${key.id}).`);
          }
          throw err;
        }
      });
    },
    async findByHash(hash) {
      return run('find', async () => withLastUse(await keys.findOne({ _id: hash })));
    },
    async list() {
      return run('list', async () => {
        const [docs, lastUses] = await Promise.all([keys.find({}).toArray(), uses.find({}).toArray()]);
        const lastUse = new Map(lastUses.map((u) => [u._id, u.lastUsedAt]));
        return docs.map((d) => toRecord(d, lastUse.get(d._id) ?? null)).sort(byCreation);
      });
    },
    async revoke(hash, at) {
      return run('revoke', async () => {
        // Only a key not yet revoked: the first revocation time is kept.
        await keys.updateOne({ _id: hash, revokedAt: null }, { $set: { revokedAt: at } });
        return withLastUse(await keys.findOne({ _id: hash }));
      });
    },
    async touch(hash, at) {
      await run('touch', async () => {
        // Only a known key gets a last-use document (the upsert would create one for any hash).
        if ((await keys.countDocuments({ _id: hash }, { limit: 1 })) === 0) return;
        await recordUse(hash, at);
      });
    },
    async close() {
      if (closed) return;
      closed = true;
      await client.close();
    },
  };
}
