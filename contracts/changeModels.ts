/**
 * Read models of the availability history (docs/api.md): the
 * change feed, the per-title history, and the arrival and departure indexes behind `/v1/new`
 * and `/v1/leaving`. Also the webhook account data the CLI writes (not derived from events).
 */
import type { ContentType, Offer, OfferKey } from './domain.ts';
import type { LinkOffer } from './readModels.ts';

export type ChangeType = 'new' | 'removed' | 'updated';
export const CHANGE_TYPES: readonly ChangeType[] = ['new', 'removed', 'updated'];

/**
 * One change of the feed: one offer event. `before` is not stored here: it is the state the
 * previous event of the same offer left, kept by `availability_history` (the interval this
 * event closed), so the feed needs no state of its own. Its feed key (a cursor's) is
 * `${country}:${position padded to 16 digits}` (projections/changes.ts `changeKey`).
 */
export interface ChangeDoc {
  /** Global event position: stable across replays, unique, the feed's order. */
  position: number;
  type: ChangeType;
  /** RFC 3339 observation time of the event. */
  at: string;
  country: string;
  mediaId: string;
  kind: ContentType;
  /** The offer's identity. */
  offer: OfferKey;
  /** The offer after the change; null when removed. */
  after: Offer | null;
  /** Link fields that differ (names of the Offer fields); empty for new and removed. */
  changed: string[];
}

/**
 * A change as `changes` stores it: a ChangeDoc without what its block and its other fields
 * already say (the country is the block's, the kind follows from the media id, the offer's key
 * from the offer). `changeDocOf` (projections/changes.ts) makes the ChangeDoc again.
 */
export interface ChangeEntry {
  position: number;
  type: ChangeType;
  at: string;
  mediaId: string;
  /** The offer after the change; for `removed`, its key alone. */
  offer: Offer | OfferKey;
  changed: string[];
}

/**
 * `changes`, key: the feed key of the first position of its block (`changeBlockKey`): the
 * country's changes at positions [start, start + CHANGE_BLOCK), so a per-country scan in key
 * order is the feed, oldest first, a block at a time. One document per change made 219,391
 * for the sample's week (208,823 of its first day), where blocks make 13,351 (12,282).
 */
export interface ChangeBlockDoc {
  /** In position order. */
  changes: ChangeEntry[];
}

/** One state of one offer: from the event that set it to the event that replaced or removed it. */
export interface HistoryInterval {
  offer: LinkOffer;
  /** RFC 3339 time and global position of the event that set this state. */
  from: string;
  fromPosition: number;
  /** Same for the event that ended it; null while it stands. */
  to: string | null;
  toPosition: number | null;
}

/** `availability_history`, key: `${country}:${mediaId}`. Never deleted: history outlives offers. */
export interface HistoryDoc {
  mediaId: string;
  kind: ContentType;
  country: string;
  /** In event order. */
  intervals: HistoryInterval[];
}

/**
 * `arrivals`, key: `${country}:${date}:${mediaId}`: the providers a title got an offer on that
 * day (OfferAdded; on its `availableFrom` when the offer was listed ahead of it).
 * `departures`, key: `${country}:${availableTo}:${mediaId}`: the providers on which an offer
 * announced that expiry. `upcoming`, key: `${country}:${availableFrom}:${mediaId}`: the
 * providers on which an offer was listed before its `availableFrom`. All are indexes by day,
 * never pruned by later events (that needs state the event lacks): readers confirm each entry
 * against `links`.
 */
export interface DayIndexDoc {
  country: string;
  date: string;
  mediaId: string;
  kind: ContentType;
  /** Provider ids, sorted, unique. */
  providers: string[];
}

/**
 * Webhooks are kept in collections each with one writer, because a read store guards a write
 * by its position exactly only when one process writes a document (FerretDB checks the guard
 * against a position read just before); new keys are the one atomic compare-and-set
 * everywhere (an insert of an existing key loses):
 * - `webhooks`: the definition, written by the CLI (create, delete);
 * - `webhook_state`: where delivery stands, written only by the worker holding the lease;
 * - `webhook_replays`: replay requests, new keys the CLI inserts and the worker applies;
 * - `webhook_leases`: lease epochs, new keys, so two workers cannot both take one.
 */

/** `webhooks` (account data written by the CLI), key: webhook id. */
export interface WebhookDoc {
  id: string;
  url: string;
  /**
   * The signing secret, stored as given to the owner: the worker needs it to sign every
   * delivery (unlike API keys, which are only compared and so stored hashed).
   */
  secret: string;
  country: string;
  /** Empty = every provider / title / type. */
  providers: string[];
  mediaIds: string[];
  types: ChangeType[];
  createdAt: string;
}

/** `webhook_state`, key: webhook id. Absent = nothing delivered yet. */
export interface WebhookState {
  /** Feed key of the last change delivered (or skipped past after a failed delivery); null = from the start. */
  cursor: string | null;
  /** Deliveries made so far; numbers the next delivery id. */
  deliveries: number;
  /** Sequence of the delivery being attempted (in order: nothing later goes out before it); null when none. */
  pending: number | null;
}

/** `webhook_replays`, key: `${webhookId}:${requested at, ms, padded}:${random}`. */
export interface ReplayRequest {
  /** Feed key to deliver after; null = from the start. */
  cursor: string | null;
  requestedAt: string;
}

export type DeliveryState = 'pending' | 'delivered' | 'failed' | 'superseded';

export interface DeliveryAttempt {
  at: string;
  /** HTTP status, or null when no answer came (connection refused, timeout). */
  status: number | null;
  latencyMs: number;
  error: string | null;
  /** The process that made the attempt. */
  holder: string;
}

/** `webhook_deliveries`, key: `${webhookId}:${sequence padded to 10 digits}`: the delivery log. */
export interface DeliveryDoc {
  id: string;
  webhookId: string;
  sequence: number;
  state: DeliveryState;
  /** The feed range delivered: after `since` (null = start) up to and including `until`. */
  since: string | null;
  until: string;
  changeIds: string[];
  createdAt: string;
  nextAttemptAt: string;
  attempts: DeliveryAttempt[];
}

export const CHANGE_MODELS = {
  changes: 'changes',
  history: 'availability_history',
  arrivals: 'arrivals',
  departures: 'departures',
  upcoming: 'upcoming',
} as const;

export const WEBHOOKS_COLLECTION = 'webhooks';
export const WEBHOOK_DELIVERIES_COLLECTION = 'webhook_deliveries';
export const WEBHOOK_STATE_COLLECTION = 'webhook_state';
export const WEBHOOK_REPLAYS_COLLECTION = 'webhook_replays';
/** Lease epochs of the process that delivers a webhook (one at a time), key: `${webhookId}:${epoch padded}`. */
export const WEBHOOK_LEASES_COLLECTION = 'webhook_leases';
