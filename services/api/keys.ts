/**
 * API keys: `mk_live_` + 32 lowercase hex characters, stored only as their SHA-256 hash in the
 * `api_keys` collection (key = hash). The plain key is returned once, at creation (CLI).
 * These are account data, not derived from events, so their write position is a clock value.
 */
import { createHash, randomBytes } from 'node:crypto';
import { AppError, asUnavailable } from '../../contracts/errors.ts';
import type { Clock, ReadStore } from '../../contracts/ports.ts';
import { API_KEYS_COLLECTION, type ApiKeyDoc } from '../../contracts/readModels.ts';

export const API_KEY_PATTERN = /^mk_live_[0-9a-f]{32}$/;
/** Characters kept for listing: `mk_live_` and the first 4 hex digits. */
const PREFIX_LENGTH = 12;

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

export function isWellFormedApiKey(key: string): boolean {
  return API_KEY_PATTERN.test(key);
}

/** A position that moves forward with time and past the stored one, so the write is never skipped. */
function nextPosition(clock: Clock, stored: number): number {
  return Math.max(clock.now().getTime(), stored + 1);
}

export async function createApiKey(
  readStore: ReadStore,
  name: string,
  clock: Clock,
): Promise<{ key: string; doc: ApiKeyDoc }> {
  const key = `mk_live_${randomBytes(16).toString('hex')}`;
  const hash = hashApiKey(key);
  const doc: ApiKeyDoc = {
    id: `key_${hash.slice(0, 12)}`,
    name,
    hash,
    prefix: key.slice(0, PREFIX_LENGTH),
    createdAt: clock.now().toISOString().replace(/\.\d{3}Z$/, 'Z'),
    revokedAt: null,
  };
  await readStore.writeBatch<ApiKeyDoc>(API_KEYS_COLLECTION, [{ key: hash, doc, position: nextPosition(clock, 0) }]);
  return { key, doc };
}

export async function listApiKeys(readStore: ReadStore): Promise<ApiKeyDoc[]> {
  const rows = await readStore.scan<ApiKeyDoc>(API_KEYS_COLLECTION);
  return rows.map((r) => r.doc).sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
}

/**
 * Revokes a key given as the full key, its id (`key_...`) or an unambiguous prefix of the
 * key. Revoking twice keeps the first revocation time. Throws `not_found` or, for a prefix
 * that matches several keys, `invalid_parameter`.
 */
export async function revokeApiKey(
  readStore: ReadStore,
  keyOrPrefix: string,
  clock: Clock = { now: () => new Date() },
): Promise<ApiKeyDoc> {
  let matches: Array<{ doc: ApiKeyDoc; position: number }>;
  if (isWellFormedApiKey(keyOrPrefix)) {
    const stored = await readStore.get<ApiKeyDoc>(API_KEYS_COLLECTION, hashApiKey(keyOrPrefix));
    matches = stored ? [stored] : [];
  } else {
    const rows = await readStore.scan<ApiKeyDoc>(API_KEYS_COLLECTION);
    matches = rows.filter((r) => r.doc.id === keyOrPrefix || r.doc.prefix.startsWith(keyOrPrefix));
    const byId = matches.find((r) => r.doc.id === keyOrPrefix);
    if (byId) matches = [byId];
  }
  if (matches.length === 0) throw new AppError('not_found', `No API key matches '${keyOrPrefix}'.`);
  if (matches.length > 1) {
    throw new AppError('invalid_parameter', `'${keyOrPrefix}' matches ${matches.length} API keys; give more characters.`);
  }
  const [match] = matches as [{ doc: ApiKeyDoc; position: number }];
  if (match.doc.revokedAt !== null) return match.doc;
  const doc: ApiKeyDoc = { ...match.doc, revokedAt: clock.now().toISOString().replace(/\.\d{3}Z$/, 'Z') };
  await readStore.writeBatch<ApiKeyDoc>(API_KEYS_COLLECTION, [
    { key: doc.hash, doc, position: nextPosition(clock, match.position) },
  ]);
  return doc;
}

/**
 * Looks up a presented key per request, reusing an answer for at most `ttlMs` (capped at 1 s,
 * so a revocation is refused at once for practical purposes). Returns the key document when
 * the key is well formed, known and not revoked; null otherwise. Store failures are `unavailable`.
 */
export function createKeyLookup(readStore: ReadStore, ttlMs = 1000): (key: string) => Promise<ApiKeyDoc | null> {
  const ttl = Math.min(Math.max(ttlMs, 0), 1000);
  // Keyed by the presented key itself, so a cached answer costs no SHA-256 per request; the
  // hash is only computed to read the store on a miss.
  const cache = new Map<string, { doc: ApiKeyDoc | null; until: number }>();
  return async (key) => {
    if (!isWellFormedApiKey(key)) return null;
    const now = Date.now();
    const hit = cache.get(key);
    if (hit && hit.until > now) return hit.doc;
    const hash = hashApiKey(key);
    let stored;
    try {
      stored = await readStore.get<ApiKeyDoc>(API_KEYS_COLLECTION, hash);
    } catch (err) {
      throw asUnavailable(err, 'The key store');
    }
    const doc = stored && stored.doc.revokedAt === null ? stored.doc : null;
    if (ttl > 0) {
      // Bounded: expired answers are swept when the cache grows, so random keys cannot pile up.
      if (cache.size >= 10_000) for (const [k, v] of cache) if (v.until <= now) cache.delete(k);
      if (cache.size < 10_000) cache.set(key, { doc, until: now + ttl });
    }
    return doc;
  };
}
