/**
 * API keys: `mk_live_` + 32 lowercase hex characters, stored only as their SHA-256 hash in the
 * ApiKeyStore (contracts/ports.ts). The plain key is returned once, at creation (CLI).
 */
import { createHash, randomBytes } from 'node:crypto';
import { AppError, asUnavailable } from '../../contracts/errors.ts';
import type { ApiKeyRecord, ApiKeyStore, Clock, ReadStore } from '../../contracts/ports.ts';
import { API_KEYS_COLLECTION, type ApiKeyDoc } from '../../contracts/readModels.ts';

export const API_KEY_PATTERN = /^mk_live_[0-9a-f]{32}$/;
/** Characters kept for listing: `mk_live_` and the first 4 hex digits. */
const PREFIX_LENGTH = 12;
/** Last use is written at most this often per key (and process): the hot path stays a cache hit. */
export const LAST_USE_INTERVAL_MS = 60_000;

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

export function isWellFormedApiKey(key: string): boolean {
  return API_KEY_PATTERN.test(key);
}

function rfc3339Seconds(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** Longest key name: `keys list` prints one key a line, its name in a column. */
export const API_KEY_NAME_MAX = 100;

/**
 * A key's name is a label for people: 1 to API_KEY_NAME_MAX characters, none of them a control
 * character, since `keys list` prints it as it is and a newline in it would forge a line of the
 * listing (another key, or a revocation that never happened).
 */
export function checkApiKeyName(name: string): void {
  if (name.trim() === '') throw new AppError('invalid_parameter', 'a key name needs a character other than spaces');
  if (name.length > API_KEY_NAME_MAX) throw new AppError('invalid_parameter', `a key name is at most ${API_KEY_NAME_MAX} characters (got ${name.length})`);
  // C0 controls, DEL and C1 controls; line and paragraph separators too (some terminals break there).
  if (/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/.test(name)) throw new AppError('invalid_parameter', 'a key name cannot hold control characters (a newline, a tab, an escape)');
}

export async function createApiKey(keys: ApiKeyStore, name: string, clock: Clock): Promise<{ key: string; doc: ApiKeyRecord }> {
  checkApiKeyName(name);
  const key = `mk_live_${randomBytes(16).toString('hex')}`;
  const hash = hashApiKey(key);
  const doc: ApiKeyRecord = {
    id: `key_${hash.slice(0, 12)}`,
    name,
    hash,
    prefix: key.slice(0, PREFIX_LENGTH),
    createdAt: rfc3339Seconds(clock.now()),
    revokedAt: null,
    lastUsedAt: null,
  };
  await keys.create(doc);
  return { key, doc };
}

export async function listApiKeys(keys: ApiKeyStore): Promise<ApiKeyRecord[]> {
  return keys.list();
}

/**
 * Revokes a key given as the full key, its id (`key_...`) or an unambiguous prefix of the
 * key. Revoking twice keeps the first revocation time. Throws `not_found` or, for a prefix
 * that matches several keys, `invalid_parameter`.
 */
/** A key as stored after `revokeApiKey`, and whether it was revoked before (its first time kept). */
export type RevokedApiKey = ApiKeyRecord & { alreadyRevoked: boolean };

export async function revokeApiKey(keys: ApiKeyStore, keyOrPrefix: string, clock: Clock = { now: () => new Date() }): Promise<RevokedApiKey> {
  let matches: ApiKeyRecord[];
  if (isWellFormedApiKey(keyOrPrefix)) {
    const stored = await keys.findByHash(hashApiKey(keyOrPrefix));
    matches = stored ? [stored] : [];
  } else {
    matches = (await keys.list()).filter((k) => k.id === keyOrPrefix || k.prefix.startsWith(keyOrPrefix));
    const byId = matches.find((k) => k.id === keyOrPrefix);
    if (byId) matches = [byId];
  }
  if (matches.length === 0) throw new AppError('not_found', `No API key matches '${keyOrPrefix}'.`);
  if (matches.length > 1) {
    throw new AppError('invalid_parameter', `'${keyOrPrefix}' matches ${matches.length} API keys; give more characters.`);
  }
  const [match] = matches as [ApiKeyRecord];
  const revoked = await keys.revoke(match.hash, rfc3339Seconds(clock.now()));
  if (revoked === null) throw new AppError('not_found', `No API key matches '${keyOrPrefix}'.`);
  return { ...revoked, alreadyRevoked: match.revokedAt !== null };
}

/**
 * Moves the keys kept in the `api_keys` read-model collection (before keys had a port of their
 * own) into the key store, once: a key already there is left as it is. Returns how many moved.
 */
export async function moveLegacyApiKeys(readStore: ReadStore, keys: ApiKeyStore): Promise<number> {
  const legacy = await readStore.scan<ApiKeyDoc>(API_KEYS_COLLECTION);
  let moved = 0;
  for (const { doc } of legacy) {
    if ((await keys.findByHash(doc.hash)) !== null) continue;
    await keys.create({ ...doc, lastUsedAt: null }).catch((err: unknown) => {
      // Another process moved it first.
      if ((err as { code?: string }).code !== 'forbidden') throw err;
    });
    moved += 1;
  }
  return moved;
}

export interface KeyLookupOptions {
  /** How long an answer is reused, in ms, capped at 1 s. Default 1000. */
  ttlMs?: number;
  /** Where time comes from for last-use records. Default the system clock. */
  clock?: Clock;
  /** Called when recording a last use fails (the request itself goes on). */
  onTouchError?: (err: unknown) => void;
}

/**
 * Looks up a presented key per request, reusing an answer for at most `ttlMs` (capped at 1 s,
 * so a revocation is refused at once for practical purposes). Returns the key when it is well
 * formed, known and not revoked; null otherwise. Store failures are `unavailable`.
 * A valid key's last use is recorded at most once a minute, in the background: a cache hit
 * costs no write and a request never waits for one.
 */
export interface KeyLookup {
  (key: string): Promise<ApiKeyRecord | null>;
  /**
   * The answer still cached for `key`, synchronously (valid key, or null when refused), or
   * undefined when the store must be asked: the hot path checks a key with no promise.
   */
  cached(key: string): ApiKeyRecord | null | undefined;
}

export function createKeyLookup(keys: ApiKeyStore, options: KeyLookupOptions = {}): KeyLookup {
  const ttl = Math.min(Math.max(options.ttlMs ?? 1000, 0), 1000);
  const clock = options.clock ?? { now: () => new Date() };
  // Keyed by the presented key itself, so a cached answer costs no SHA-256 per request; the
  // hash is only computed to read the store on a miss.
  const cache = new Map<string, { doc: ApiKeyRecord | null; until: number }>();
  /** Hash -> when this process last recorded a use (ms of `clock`); only valid keys get here. */
  const touched = new Map<string, number>();

  function recordUse(doc: ApiKeyRecord): void {
    const now = clock.now();
    const last = touched.get(doc.hash);
    if (last !== undefined && now.getTime() - last < LAST_USE_INTERVAL_MS) return;
    touched.set(doc.hash, now.getTime());
    keys.touch(doc.hash, rfc3339Seconds(now)).catch((err: unknown) => {
      // Tried again with the next request rather than a minute later.
      touched.delete(doc.hash);
      options.onTouchError?.(err);
    });
  }

  function cached(key: string): ApiKeyRecord | null | undefined {
    const hit = cache.get(key);
    if (hit === undefined || hit.until <= Date.now()) return isWellFormedApiKey(key) ? undefined : null;
    if (hit.doc) recordUse(hit.doc);
    return hit.doc;
  }

  async function lookup(key: string): Promise<ApiKeyRecord | null> {
    const known = cached(key);
    if (known !== undefined) return known;
    const now = Date.now();
    let stored;
    try {
      stored = await keys.findByHash(hashApiKey(key));
    } catch (err) {
      throw asUnavailable(err, 'The key store');
    }
    const doc = stored && stored.revokedAt === null ? stored : null;
    if (ttl > 0) {
      // Bounded: expired answers are swept when the cache grows, so random keys cannot pile up.
      if (cache.size >= 10_000) for (const [k, v] of cache) if (v.until <= now) cache.delete(k);
      if (cache.size < 10_000) cache.set(key, { doc, until: now + ttl });
    }
    if (doc) recordUse(doc);
    return doc;
  }
  return Object.assign(lookup, { cached });
}
