/**
 * The webhook delivery worker, run by the scheduler role. Per webhook it follows the change
 * feed of its country from the webhook's cursor with the webhook's filters, one delivery at a
 * time, so deliveries arrive in feed order:
 *
 * 1. no delivery pending: read up to 100 matching changes after the cursor; none -> move the
 *    cursor past what was examined; some -> log a pending delivery for that feed range;
 * 2. a pending delivery due: POST it (signed); 2xx -> delivered, cursor to the end of its range;
 *    anything else -> retry with exponential backoff until `retryForMs` after its first
 *    attempt, then log it failed and move on (the owner can `webhooks replay` it).
 *
 * A retry re-reads the same feed range with the same filters: the feed below the committed
 * position never changes, so the delivery carries the same changes under the same id. At least
 * once: a crash after the POST and before the log write sends it again. Every attempt is
 * logged with its status and latency. A lease per webhook keeps the work of several scheduler
 * processes apart: exactly one delivers a webhook at a time, and only it writes the webhook's
 * delivery state (replays reach it as requests, services/webhooks/store.ts). Webhooks are
 * stepped side by side, so a receiver slow to answer delays its own deliveries only.
 */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import {
  WEBHOOK_DELIVERIES_COLLECTION,
  WEBHOOK_STATE_COLLECTION,
  type DeliveryAttempt,
  type DeliveryDoc,
  type WebhookDoc,
  type WebhookState,
} from '../../contracts/changeModels.ts';
import type { Clock, ReadStore } from '../../contracts/ports.ts';
import { changeKey } from '../../projections/changes.ts';
import { feedSourceOf, presentChange, readFeed, type FeedFilter, type FeedSource } from '../changes/feed.ts';
import type { Logger } from '../shared/logger.ts';
import { rfc3339 } from '../snapshot/week.ts';
import { signatureHeader } from './signature.ts';
import { acquireLease, deliveryKey, INITIAL_STATE, listWebhooks, pendingReplays, removeReplays, trimDeliveries, writeOwned } from './store.ts';

/** Changes per delivery at most (the README's webhooks). */
export const DELIVERY_MAX_CHANGES = 100;

/** Webhooks a worker steps at once by default (each step is at most one POST). */
const DEFAULT_CONCURRENCY = 16;

/**
 * The most of a receiver's answer body read, then dropped: its status is the acknowledgement,
 * and a short body is read to its end so the connection can be reused. Reading the whole body,
 * as before, let a receiver that answered and then kept streaming hold every answer in memory
 * until the attempt's timeout (4.5 GB of RSS in the default 10 s on loopback: enough to kill
 * the scheduler process), and hold that webhook's step as long.
 */
const MAX_ANSWER_BYTES = 64 * 1024;

/** Reads and drops up to MAX_ANSWER_BYTES of the answer; cancels the rest. Never throws. */
async function dropAnswer(res: Response): Promise<void> {
  const reader = res.body?.getReader();
  if (reader === undefined) return;
  let read = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      read += value.byteLength;
      if (read > MAX_ANSWER_BYTES) break;
    }
  } catch {
    // The attempt's timeout or a closed connection while reading: the status is already in.
    return;
  }
  await reader.cancel().catch(() => {});
}

export interface DeliveryWorkerOptions {
  readStore: ReadStore;
  clock: Clock;
  /** Link tokens of the link objects, as the API encodes them. */
  encode(url: string): string;
  logger: Pick<Logger, 'info' | 'warn'>;
  /** How often every webhook is looked at, in ms. Default 1000. */
  intervalMs?: number;
  /** First retry delay, doubled per failed attempt, in ms. Default 10 000. */
  backoffBaseMs?: number;
  /** Longest retry delay, in ms. Default 3 600 000 (an hour). */
  backoffMaxMs?: number;
  /** How long a delivery is retried after its first attempt before it is marked failed, in ms. Default 24 h. */
  retryForMs?: number;
  /** Per-attempt timeout, in ms. Default 10 000. */
  timeoutMs?: number;
  /** Lease of a webhook, renewed on every look, in ms. Default 30 000. */
  leaseMs?: number;
  /** Webhooks stepped at once. Default 16. */
  concurrency?: number;
  /** This process's name in leases and the delivery log. Default host:pid:random. */
  holder?: string;
  /** Deliveries kept in each webhook's log, the newest. Default store.ts DELIVERIES_KEEP (1,000). */
  deliveriesKeep?: number;
}

export interface DeliveryWorker {
  /** Looks at every webhook once, at most one step (a new delivery or a due attempt) each, and waits for the steps under way. */
  tick(): Promise<void>;
  start(): void;
  stop(): Promise<void>;
}

function filterOf(hook: WebhookDoc): FeedFilter | undefined {
  const filter: FeedFilter = {
    ...(hook.providers.length > 0 ? { providers: new Set(hook.providers) } : {}),
    ...(hook.mediaIds.length > 0 ? { mediaIds: new Set(hook.mediaIds) } : {}),
    ...(hook.types.length > 0 ? { types: new Set(hook.types) } : {}),
  };
  return Object.keys(filter).length > 0 ? filter : undefined;
}

export function createDeliveryWorker(options: DeliveryWorkerOptions): DeliveryWorker {
  const { readStore, clock, logger } = options;
  const source: FeedSource = feedSourceOf(readStore);
  const holder = options.holder ?? `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  const backoffBase = options.backoffBaseMs ?? 10_000;
  const backoffMax = options.backoffMaxMs ?? 3_600_000;
  const retryFor = options.retryForMs ?? 24 * 3_600_000;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const leaseMs = options.leaseMs ?? 30_000;
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> = Promise.resolve();
  let stopped = false;
  /** The steps under way, by webhook id: one at a time per webhook keeps its deliveries in order. */
  const stepping = new Map<string, Promise<void>>();
  const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
  /** Where in the list of webhooks the next look starts. */
  let firstInLine = 0;

  /** The delivery's changes: the same feed range with the same filters, every time. */
  async function changesOf(hook: WebhookDoc, delivery: Pick<DeliveryDoc, 'since' | 'until'>) {
    const filter = filterOf(hook);
    const page = await readFeed(source, { country: hook.country, after: delivery.since, limit: DELIVERY_MAX_CHANGES, ...(filter ? { filter } : {}) });
    return page.changes.filter((c) => changeKey(c.doc.country, c.doc.position) <= delivery.until);
  }

  const saveState = (hook: WebhookDoc, state: WebhookState) => writeOwned<WebhookState>(readStore, WEBHOOK_STATE_COLLECTION, hook.id, () => state);
  const saveDelivery = (delivery: DeliveryDoc) => writeOwned<DeliveryDoc>(readStore, WEBHOOK_DELIVERIES_COLLECTION, deliveryKey(delivery.webhookId, delivery.sequence), () => delivery);

  async function newDelivery(hook: WebhookDoc, state: WebhookState): Promise<void> {
    const after = state.cursor;
    const filter = filterOf(hook);
    const page = await readFeed(source, { country: hook.country, after, limit: DELIVERY_MAX_CHANGES, ...(filter ? { filter } : {}) });
    if (page.lastKey === after) return;
    // Nothing matched in what was examined: move past it without a delivery.
    if (page.changes.length === 0) return void (await saveState(hook, { ...state, cursor: page.lastKey }));
    const sequence = state.deliveries + 1;
    const now = rfc3339(clock.now());
    const delivery: DeliveryDoc = {
      id: `${hook.id}_${sequence}`,
      webhookId: hook.id,
      sequence,
      state: 'pending',
      since: after,
      until: page.lastKey as string,
      changeIds: page.changes.map((c) => presentChange(c, options.encode).id as string),
      createdAt: now,
      nextAttemptAt: now,
      attempts: [],
    };
    await saveDelivery(delivery);
    const pending = { ...state, deliveries: sequence, pending: sequence };
    await saveState(hook, pending);
    await trimDeliveries(readStore, hook.id, sequence, options.deliveriesKeep);
    await attempt(hook, pending, delivery);
  }

  async function post(hook: WebhookDoc, delivery: DeliveryDoc, body: string): Promise<DeliveryAttempt> {
    const started = Date.now();
    const at = rfc3339(clock.now());
    const t = Math.floor(clock.now().getTime() / 1000);
    try {
      const res = await fetch(hook.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'marquee-delivery': delivery.id, 'marquee-signature': signatureHeader(hook.secret, body, t) },
        body,
        redirect: 'manual',
        signal: AbortSignal.timeout(timeoutMs),
      });
      await dropAnswer(res);
      return { at, status: res.status, latencyMs: Date.now() - started, error: null, holder };
    } catch (err) {
      const cause = (err as { cause?: { code?: string } }).cause?.code;
      return { at, status: null, latencyMs: Date.now() - started, error: cause ?? (err as Error).message, holder };
    }
  }

  async function attempt(hook: WebhookDoc, state: WebhookState, delivery: DeliveryDoc): Promise<void> {
    const changes = await changesOf(hook, delivery);
    const body = JSON.stringify({ webhook_id: hook.id, delivery_id: delivery.id, changes: changes.map((c) => presentChange(c, options.encode)) });
    const result = await post(hook, delivery, body);
    const delivered = result.status !== null && result.status >= 200 && result.status < 300;
    const attempts = [...delivery.attempts, result];
    const now = clock.now().getTime();
    const firstAt = Date.parse(attempts[0]?.at ?? delivery.createdAt);
    const failed = !delivered && now - firstAt >= retryFor;
    const delay = Math.min(backoffMax, backoffBase * 2 ** (attempts.length - 1));
    const outcome = delivered ? 'delivered' : failed ? 'failed' : 'pending';
    await saveDelivery({ ...delivery, attempts, state: outcome, nextAttemptAt: rfc3339(new Date(now + delay)) });
    if (outcome === 'pending') return;
    if (failed) logger.warn({ webhook: hook.id, delivery: delivery.id, attempts: attempts.length }, 'webhook delivery failed for good; moving on');
    await saveState(hook, { ...state, cursor: delivery.until, pending: null });
  }

  /** Applies the newest replay request: the cursor moves back, a delivery being retried is superseded. */
  async function applyReplays(hook: WebhookDoc, state: WebhookState): Promise<WebhookState> {
    const { latest, keys } = await pendingReplays(readStore, hook.id);
    if (latest === null) return state;
    if (state.pending !== null) {
      const stored = await readStore.get<DeliveryDoc>(WEBHOOK_DELIVERIES_COLLECTION, deliveryKey(hook.id, state.pending));
      if (stored && stored.doc.state === 'pending') await saveDelivery({ ...stored.doc, state: 'superseded' });
    }
    const replayed = { ...state, cursor: latest.cursor, pending: null };
    await saveState(hook, replayed);
    await removeReplays(readStore, keys);
    return replayed;
  }

  async function step(hook: WebhookDoc): Promise<void> {
    if (!(await acquireLease(readStore, hook.id, holder, clock.now().getTime(), leaseMs))) return;
    const stored = await readStore.get<WebhookState>(WEBHOOK_STATE_COLLECTION, hook.id);
    const state = await applyReplays(hook, stored?.doc ?? INITIAL_STATE);
    if (state.pending === null) return newDelivery(hook, state);
    const delivery = await readStore.get<DeliveryDoc>(WEBHOOK_DELIVERIES_COLLECTION, deliveryKey(hook.id, state.pending));
    if (delivery === null || delivery.doc.state !== 'pending') return void (await saveState(hook, { ...state, pending: null }));
    if (Date.parse(delivery.doc.nextAttemptAt) > clock.now().getTime()) return;
    await attempt(hook, state, delivery.doc);
  }

  /**
   * Starts a step for each webhook not in one already, `concurrency` at most at once, and returns
   * without waiting for them: a receiver that takes its whole timeout to answer holds its own
   * webhook's next step, not every other webhook's (looked at one after the other, one slow
   * receiver let the others have a delivery per answer of its).
   */
  async function look(): Promise<void> {
    const hooks = await listWebhooks(readStore);
    for (let k = 0; k < hooks.length; k++) {
      const i = (firstInLine + k) % hooks.length;
      const hook = hooks[i] as WebhookDoc;
      if (stopped) return;
      if (stepping.size >= concurrency) {
        // The webhooks left without a slot come first at the next look. Started from the top of
        // the list each time, the first ones took every slot at every look (a step holds one
        // until it has looked, even with nothing to send) and the others never had a turn.
        firstInLine = i;
        return;
      }
      if (stepping.has(hook.id)) continue;
      const run = step(hook)
        .catch((err: unknown) => logger.warn({ err, webhook: hook.id }, 'webhook step failed; trying again at the next look'))
        .finally(() => stepping.delete(hook.id));
      stepping.set(hook.id, run);
    }
  }

  async function tick(): Promise<void> {
    await look();
    await Promise.all(stepping.values());
  }

  return {
    tick,
    start() {
      if (timer) return;
      const loop = () => {
        running = look()
          .catch((err: unknown) => logger.warn({ err }, 'webhook worker look failed'))
          .finally(() => {
            if (!stopped) timer = setTimeout(loop, options.intervalMs ?? 1000);
          });
      };
      stopped = false;
      loop();
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
      await Promise.all(stepping.values());
    },
  };
}
