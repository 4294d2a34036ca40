/**
 * Webhooks, their delivery state and log: account data in read store collections of their own
 * (not projections: nothing here is derived from events, and a replay must never drop them).
 * Who writes what is in contracts/changeModels.ts: every document has one writer, and the only
 * contended writes (a lease, a replay request) insert new keys, the compare-and-set every read
 * store makes atomic.
 */
import { randomBytes } from 'node:crypto';
import {
  CHANGE_TYPES,
  WEBHOOK_DELIVERIES_COLLECTION,
  WEBHOOK_LEASES_COLLECTION,
  WEBHOOK_REPLAYS_COLLECTION,
  WEBHOOK_STATE_COLLECTION,
  WEBHOOKS_COLLECTION,
  type ChangeType,
  type DeliveryDoc,
  type ReplayRequest,
  type WebhookDoc,
  type WebhookState,
} from '../../contracts/changeModels.ts';
import { AppError } from '../../contracts/errors.ts';
import { isMediaId } from '../../contracts/ids.ts';
import type { Clock, ReadStore } from '../../contracts/ports.ts';
import { insertNew, takeLease } from '../shared/lease.ts';
import { committedPosition, feedSourceOf } from '../changes/feed.ts';
import { changeKey } from '../../projections/changes.ts';
import { rfc3339 } from '../snapshot/week.ts';

/**
 * Replaces a document its one writer owns: the position counts versions, so a stale retry of
 * the same writer is skipped rather than moving it back.
 */
export async function writeOwned<T>(readStore: ReadStore, collection: string, key: string, change: (doc: T | null) => T | null): Promise<T | null> {
  const stored = await readStore.get<T>(collection, key);
  const next = change(stored?.doc ?? null);
  await readStore.writeBatch<T>(collection, [{ key, doc: next, position: (stored?.position ?? 0) + 1 }]);
  return next;
}

export interface WebhookSpec {
  url: string;
  country: string;
  providers?: string[];
  mediaIds?: string[];
  types?: string[];
  /**
   * Where its deliveries start: after this feed key (a decoded `/v1/changes` cursor), null for
   * the feed's first change. Default: the feed's end when it is created, so it delivers the
   * changes that come from then on, not the country's whole history.
   */
  since?: string | null;
}

/** Longest receiver URL taken (what browsers and most servers keep to). */
const MAX_URL_LENGTH = 2048;

export async function createWebhook(readStore: ReadStore, spec: WebhookSpec, clock: Clock): Promise<WebhookDoc> {
  let url: URL;
  try {
    url = new URL(spec.url);
  } catch {
    throw new AppError('invalid_parameter', `--url must be an http(s) URL, got "${spec.url}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new AppError('invalid_parameter', `--url must be http or https, got ${url.protocol}`);
  // fetch refuses a URL with credentials ("cannot be constructed from a URL that includes
  // credentials"): every delivery would fail, and `webhooks list` would print the password.
  if (url.username !== '' || url.password !== '') {
    throw new AppError('invalid_parameter', '--url must not carry a user or password (user:password@host): deliveries are signed (Marquee-Signature); a receiver wanting a token of its own takes it in the path or query');
  }
  if (url.href.length > MAX_URL_LENGTH) throw new AppError('invalid_parameter', `--url is ${url.href.length} characters long; at most ${MAX_URL_LENGTH}`);
  if (!/^[A-Za-z]{2}$/.test(spec.country)) throw new AppError('invalid_parameter', `--country takes a two-letter country code, got "${spec.country}"`);
  // A malformed id matches no change: the webhook would deliver nothing, and say nothing.
  const badMedia = (spec.mediaIds ?? []).find((id) => !isMediaId(id));
  if (badMedia !== undefined) throw new AppError('invalid_parameter', `--media takes media ids such as mv00001234 or tv00000567, got "${badMedia}"`);
  const types = spec.types ?? [];
  for (const t of types) {
    if (!(CHANGE_TYPES as readonly string[]).includes(t)) throw new AppError('invalid_parameter', `--types takes ${CHANGE_TYPES.join(',')}; got "${t}"`);
  }
  const doc: WebhookDoc = {
    id: `wh_${randomBytes(6).toString('hex')}`,
    url: url.toString(),
    secret: `whsec_${randomBytes(24).toString('hex')}`,
    country: spec.country.toUpperCase(),
    providers: spec.providers ?? [],
    mediaIds: spec.mediaIds ?? [],
    types: types as ChangeType[],
    createdAt: rfc3339(clock.now()),
  };
  // The start is a replay request, the one way the delivery state is moved by anyone but its
  // worker, written before the webhook exists: no worker steps it from the feed's first change.
  const since = spec.since === undefined ? changeKey(doc.country, await committedPosition(feedSourceOf(readStore))) : spec.since;
  if (since !== null) await insertReplay(readStore, doc.id, since, clock);
  if (!(await insertNew(readStore, WEBHOOKS_COLLECTION, doc.id, doc))) throw new AppError('internal', `webhook id ${doc.id} exists; try again`);
  return doc;
}

export async function listWebhooks(readStore: ReadStore): Promise<WebhookDoc[]> {
  return (await readStore.scan<WebhookDoc>(WEBHOOKS_COLLECTION)).map((r) => r.doc);
}

export async function requireWebhook(readStore: ReadStore, id: string): Promise<WebhookDoc> {
  const stored = await readStore.get<WebhookDoc>(WEBHOOKS_COLLECTION, id);
  if (!stored) throw new AppError('not_found', `No webhook '${id}'.`);
  return stored.doc;
}

export async function deleteWebhook(readStore: ReadStore, id: string): Promise<void> {
  await requireWebhook(readStore, id);
  await writeOwned<WebhookDoc>(readStore, WEBHOOKS_COLLECTION, id, () => null);
  // Its log, state, lease and pending replays go with it (they were left behind for good before).
  // The log is purged like a trimmed one; the state and lease epochs are deleted at the highest
  // position, so their tombstones refuse a step still under way that would write them back.
  for (;;) {
    const rows = await readStore.scan<DeliveryDoc>(WEBHOOK_DELIVERIES_COLLECTION, { prefix: `${id}:`, limit: 1000 });
    if (rows.length === 0) break;
    await readStore.purge(WEBHOOK_DELIVERIES_COLLECTION, rows.map((r) => r.key));
  }
  await deleteForGood(readStore, WEBHOOK_STATE_COLLECTION, [id]);
  const leases = await readStore.scan(WEBHOOK_LEASES_COLLECTION, { prefix: `${id}:`, limit: 1000 });
  await deleteForGood(readStore, WEBHOOK_LEASES_COLLECTION, leases.map((l) => l.key));
  await removeReplays(readStore, (await pendingReplays(readStore, id)).keys);
}

/** Deletes documents at the highest position: their tombstones refuse any later write of them. */
async function deleteForGood(readStore: ReadStore, collection: string, keys: string[]): Promise<void> {
  if (keys.length > 0) await readStore.writeBatch(collection, keys.map((key) => ({ key, doc: null, position: Number.MAX_SAFE_INTEGER })));
}

/**
 * Deliveries kept per webhook: the log is for seeing what a receiver answered lately, and each
 * holds up to 100 change ids and every attempt, so kept for good it grew by a document of a few
 * KB per delivery, without end. A change delivered long ago is still in the feed
 * (`/v1/changes`) and can be delivered again with `webhooks replay`.
 */
export const DELIVERIES_KEEP = 1000;

/**
 * Removes the deliveries of a webhook older than its `keep` newest, at most 100 at a time:
 * called after each new delivery, so the log stays at `keep` and any left over (a removal that
 * failed) goes with the next ones.
 */
export async function trimDeliveries(readStore: ReadStore, webhookId: string, newest: number, keep = DELIVERIES_KEEP): Promise<number> {
  if (newest <= keep) return 0;
  const old = await readStore.scan<DeliveryDoc>(WEBHOOK_DELIVERIES_COLLECTION, { prefix: `${webhookId}:`, end: deliveryKey(webhookId, newest - keep + 1), limit: 100 });
  // Purged: no write comes back to a delivery this far behind, and a deletion's tombstone would stay.
  await readStore.purge(WEBHOOK_DELIVERIES_COLLECTION, old.map((r) => r.key));
  return old.length;
}

export const INITIAL_STATE: WebhookState = { cursor: null, deliveries: 0, pending: null };

export async function webhookState(readStore: ReadStore, id: string): Promise<WebhookState> {
  return (await readStore.get<WebhookState>(WEBHOOK_STATE_COLLECTION, id))?.doc ?? INITIAL_STATE;
}

export function deliveryKey(webhookId: string, sequence: number): string {
  return `${webhookId}:${String(sequence).padStart(10, '0')}`;
}

/** The delivery log of a webhook, newest first. */
export async function listDeliveries(readStore: ReadStore, webhookId: string, limit = 50): Promise<DeliveryDoc[]> {
  const rows = await readStore.scan<DeliveryDoc>(WEBHOOK_DELIVERIES_COLLECTION, { prefix: `${webhookId}:`, reverse: true, limit });
  return rows.map((r) => r.doc);
}

/**
 * Asks the worker to deliver everything after `cursorKey` (a feed key of the webhook's
 * country, null for the start) again, in order; it applies the newest request at its next look,
 * superseding a delivery still being retried.
 */
export async function requestReplay(readStore: ReadStore, id: string, cursorKey: string | null, clock: Clock): Promise<void> {
  await requireWebhook(readStore, id);
  await insertReplay(readStore, id, cursorKey, clock);
}

async function insertReplay(readStore: ReadStore, id: string, cursorKey: string | null, clock: Clock): Promise<void> {
  const now = clock.now();
  const key = `${id}:${String(now.getTime()).padStart(15, '0')}:${randomBytes(4).toString('hex')}`;
  await insertNew<ReplayRequest>(readStore, WEBHOOK_REPLAYS_COLLECTION, key, { cursor: cursorKey, requestedAt: rfc3339(now) });
}

/** The newest replay request of a webhook and the keys of all its requests (to remove once applied). */
export async function pendingReplays(readStore: ReadStore, id: string): Promise<{ latest: ReplayRequest | null; keys: string[] }> {
  const rows = await readStore.scan<ReplayRequest>(WEBHOOK_REPLAYS_COLLECTION, { prefix: `${id}:` });
  return { latest: rows[rows.length - 1]?.doc ?? null, keys: rows.map((r) => r.key) };
}

export async function removeReplays(readStore: ReadStore, keys: string[]): Promise<void> {
  if (keys.length > 0) await readStore.writeBatch(WEBHOOK_REPLAYS_COLLECTION, keys.map((key) => ({ key, doc: null, position: 2 })));
}

/**
 * Takes or renews the delivery lease of a webhook (services/shared/lease.ts): true when `holder`
 * has it until at least `now + ms / 2`.
 */
export async function acquireLease(readStore: ReadStore, webhookId: string, holder: string, now: number, ms: number): Promise<boolean> {
  return (await takeLease(readStore, WEBHOOK_LEASES_COLLECTION, webhookId, holder, now, ms)) !== null;
}
