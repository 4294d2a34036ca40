/**
 * ApiKeyStore in LMDB: one named database `keys:api` of the data directory's environment
 * (env.ts), keyed by the key's hash. Each change is a read-check-write inside one LMDB write
 * transaction, which LMDB serialises across processes, so a CLI creating or revoking a key
 * while the server touches it never loses either write.
 */
import type { Database, RootDatabase } from 'lmdb';
import { AppError } from '../../contracts/errors.ts';
import type { ApiKeyRecord, ApiKeyStore } from '../../contracts/ports.ts';
import { byCreation } from '../../contracts/apiKeys.ts';
import { closeLmdb, openLmdb } from './env.ts';
import { lmdbError } from './errors.ts';

export interface LmdbApiKeyStoreOptions {
  dataDir: string;
}

export function lmdbApiKeyStore(options: LmdbApiKeyStoreOptions): ApiKeyStore {
  const root: RootDatabase = openLmdb({ dataDir: options.dataDir });
  const keys: Database<ApiKeyRecord, string> = root.openDB({ name: 'keys:api' });
  let closed = false;

  function open(): void {
    if (closed) throw new AppError('closed', 'the LMDB key store is closed');
  }

  async function change<T>(what: string, action: () => T): Promise<T> {
    open();
    let result: T;
    try {
      result = await keys.transaction(action);
    } catch (err) {
      throw lmdbError(err, `LMDB key store (${what})`);
    }
    return result;
  }

  return {
    async create(key) {
      const created = await change('create', () => {
        if (keys.get(key.hash) !== undefined) return false;
        keys.put(key.hash, key);
        return true;
      });
      if (!created) throw new AppError('forbidden', `An API key with this hash already exists (${key.id}).`);
    },
    async findByHash(hash) {
      open();
      try {
        // lmdb-js reads from a snapshot it renews only at its next timer turn; a server whose
        // event loop was busy would refuse a key the CLI created a moment ago. A lookup runs
        // only when the API's cache misses, so a fresh snapshot here costs next to nothing.
        root.resetReadTxn();
        return keys.get(hash) ?? null;
      } catch (err) {
        throw lmdbError(err, 'LMDB key store (find)');
      }
    },
    async list() {
      open();
      try {
        root.resetReadTxn();
        return [...keys.getRange()].map((e) => e.value).sort(byCreation);
      } catch (err) {
        throw lmdbError(err, 'LMDB key store (list)');
      }
    },
    async revoke(hash, at) {
      return change('revoke', () => {
        const stored = keys.get(hash);
        if (stored === undefined) return null;
        if (stored.revokedAt !== null) return stored;
        const revoked = { ...stored, revokedAt: at };
        keys.put(hash, revoked);
        return revoked;
      });
    },
    async touch(hash, at) {
      await change('touch', () => {
        const stored = keys.get(hash);
        if (stored === undefined || (stored.lastUsedAt !== null && stored.lastUsedAt >= at)) return;
        keys.put(hash, { ...stored, lastUsedAt: at });
      });
    },
    async close() {
      if (closed) return;
      closed = true;
      await closeLmdb(options.dataDir);
    },
  };
}
