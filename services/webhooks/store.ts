/**
 * Webhooks and their delivery log: account data the CLI and the delivery worker write to read
 * store collections of their own (not projections: nothing here is derived from events, and a
 * replay must never drop them). Every update is a compare-and-set on the stored position, so
 * the CLI (`replay`, `delete`) and a worker never overwrite each other's change unseen.
 */
import { randomBytes } from 'node:crypto';
import {
  CHANGE_TYPES,
  WEBHOOK_DELIVERIES_COLLECTION,
  WEBHOOK_LEASES_COLLECTION,
  WEBHOOKS_COLLECTION,
  type ChangeType,
  type DeliveryDoc,
  type WebhookDoc,
} from '../../contracts/changeModels.ts';
import { AppError } from '../../contracts/errors.ts';
import type { Clock, ReadStore } from '../../contracts/ports.ts';
import { rfc3339 } from '../snapshot/week.ts';

/** Applies `change` to the stored document unless another writer got there first; then it retries on the new one. */
export async function updateDocument<T>(
  readStore: ReadStore,
  collection: string,
  key: string,
  change: (doc: T | null) => T | null,
): Promise<T | null> {
  for (let attempt = 0; attempt < 20; attempt += 1) {
    const stored = await readStore.get<T>(collection, key);
    const next = change(stored?.doc ?? null);
    // Position = a version counter: a concurrent writer of the same version is skipped.
    const { written } = await readStore.writeBatch<T>(collection, [{ key, doc: next, position: (stored?.position ?? 0) + 1 }]);
    if (written === 1) return next;
  }
  throw new AppError('unavailable', `${collection}/${key} keeps changing under this update; try again`, { retriable: true });
}

export interface WebhookSpec {
  url: string;
  country: string;
  providers?: string[];
  mediaIds?: string[];
  types?: string[];
}

export async function createWebhook(readStore: ReadStore, spec: WebhookSpec, clock: Clock): Promise<WebhookDoc> {
  let url: URL;
  try {
    url = new URL(spec.url);
  } catch {
    throw new AppError('invalid_parameter', `--url must be an http(s) URL, got "${spec.url}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new AppError('invalid_parameter', `--url must be http or https, got ${url.protocol}`);
  if (!/^[A-Za-z]{2}$/.test(spec.country)) throw new AppError('invalid_parameter', `--country takes a two-letter country code, got "${spec.country}"`);
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
    cursor: null,
    deliveries: 0,
    pending: null,
  };
  await updateDocument<WebhookDoc>(readStore, WEBHOOKS_COLLECTION, doc.id, () => doc);
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
  await updateDocument<WebhookDoc>(readStore, WEBHOOKS_COLLECTION, id, () => null);
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
 * Points the webhook at `cursorKey` (a feed key of its country, or null for the start): the
 * worker delivers everything after it again, in order. A delivery still being retried is
 * superseded (logged as such) so the replay starts at once.
 */
export async function replayWebhook(readStore: ReadStore, id: string, cursorKey: string | null): Promise<WebhookDoc> {
  let superseded: number | null = null;
  const updated = await updateDocument<WebhookDoc>(readStore, WEBHOOKS_COLLECTION, id, (doc) => {
    if (doc === null) throw new AppError('not_found', `No webhook '${id}'.`);
    superseded = doc.pending;
    return { ...doc, cursor: cursorKey, pending: null };
  });
  if (superseded !== null) {
    await updateDocument<DeliveryDoc>(readStore, WEBHOOK_DELIVERIES_COLLECTION, deliveryKey(id, superseded), (d) =>
      d === null || d.state !== 'pending' ? d : { ...d, state: 'superseded' });
  }
  return updated as WebhookDoc;
}

/**
 * Takes or renews the delivery lease of a webhook for `ms`: true when this holder has it.
 * Exactly one process delivers a webhook at a time (the lease expires if its holder dies).
 */
export async function acquireLease(readStore: ReadStore, webhookId: string, holder: string, now: number, ms: number): Promise<boolean> {
  const stored = await readStore.get<{ holder: string; until: number }>(WEBHOOK_LEASES_COLLECTION, webhookId);
  if (stored && stored.doc.holder !== holder && stored.doc.until > now) return false;
  const { written } = await readStore.writeBatch(WEBHOOK_LEASES_COLLECTION, [
    { key: webhookId, doc: { holder, until: now + ms }, position: (stored?.position ?? 0) + 1 },
  ]);
  return written === 1;
}
