/**
 * The shared vocabulary of the ingest deciders: the decision value, the decider shape, and the
 * bookkeeping every stream state carries so that redelivered and late observations are no-ops.
 */
import type { DomainEvent, EventMetadata } from '../../contracts/events.ts';
import type { Observation } from '../../contracts/observations.ts';

/**
 * What an observation leads to. Outcomes are values, not exceptions: a skip moves on, a reject
 * goes to the dead letters with its reason; neither is an exception.
 */
export type Decision =
  | { kind: 'append'; stream: string; events: DomainEvent[] }
  /** Nothing to record: unchanged re-crawl, redelivered observation, or an older (stale) one. */
  | { kind: 'skip'; reason: string }
  /** The observation is invalid for this stream; it goes to the dead letters. */
  | { kind: 'reject'; reason: string };

/** A pure decider for one stream kind (emmett-style `decide` / `evolve` / `initialState`). */
export interface Decider<S, O extends Observation = Observation> {
  /** Stream kind: the part of the stream name before the first `-`. */
  readonly kind: string;
  readonly observationTypes: readonly O['type'][];
  initialState(): S;
  /** Folds one event (a stored RecordedEvent or a freshly decided DomainEvent). */
  evolve(state: S, event: DomainEvent): S;
  /**
   * Optional: folds several events at once, with the same result as `evolve` one by one. For a
   * state that `evolve` copies (it never mutates), so a stream's events copy it once, not once each.
   */
  evolveAll?(state: S, events: readonly DomainEvent[]): S;
  decide(state: S, observation: O): Decision;
}

/**
 * How many observation ids a stream state remembers. A redelivery older than that is still a
 * no-op: its observedAt is then behind the stream's last change (stale), or it is unchanged.
 */
export const RECENT_OBSERVATIONS = 64;

/**
 * Redelivery and staleness bookkeeping, folded from event metadata. `lastObservedAt` is kept per
 * aspect of the stream (for example the details of a title apart from each translation), so a
 * translation crawled a minute before the details is not mistaken for an old observation.
 */
export interface Seen {
  /** Observation ids of the most recent folded events, oldest first, at most RECENT_OBSERVATIONS. */
  recentObservationIds: string[];
  /** observedAt (RFC 3339) of the last change per aspect. */
  lastObservedAt: Record<string, string>;
}

export function emptySeen(): Seen {
  return { recentObservationIds: [], lastObservedAt: {} };
}

/** Records the metadata of a folded event under `aspect`. */
export function noteEvent(seen: Seen, aspect: string, metadata: EventMetadata): Seen {
  let ids = seen.recentObservationIds;
  const id = metadata.observationId;
  // Several events of one observation share its id: remember it once.
  if (id !== undefined && ids[ids.length - 1] !== id && !ids.includes(id)) {
    ids = [...ids, id];
    if (ids.length > RECENT_OBSERVATIONS) ids = ids.slice(ids.length - RECENT_OBSERVATIONS);
  }
  let last = seen.lastObservedAt;
  const at = metadata.observedAt;
  const previous = last[aspect];
  // `at === previous` changes nothing (the events of one observation share it): no two parses
  // per folded event.
  if (at !== undefined && at !== previous && (previous === undefined || timeOf(at) >= timeOf(previous))) {
    last = { ...last, [aspect]: at };
  }
  if (ids === seen.recentObservationIds && last === seen.lastObservedAt) return seen;
  return { recentObservationIds: ids, lastObservedAt: last };
}

/**
 * The skip that applies before any comparison, or null: the observation was already folded
 * (redelivery), or it is older than the last change of the aspect it concerns (stale).
 */
export function alreadySeen(seen: Seen, observation: Observation, aspects: readonly string[]): Decision | null {
  if (seen.recentObservationIds.includes(observation.observationId)) {
    return { kind: 'skip', reason: `duplicate observation ${observation.observationId}` };
  }
  const at = timeOf(observation.observedAt);
  // Stale only when every aspect it touches has seen a newer change; a brand-new aspect is news.
  const stale = aspects.length > 0 && aspects.every((aspect) => {
    const last = seen.lastObservedAt[aspect];
    return last !== undefined && at < timeOf(last);
  });
  if (stale) return { kind: 'skip', reason: `stale observation (observedAt ${observation.observedAt} is older than the last change)` };
  return null;
}

/** Whether `observedAt` is older than the last change of `aspect`. */
export function isStaleFor(seen: Seen, aspect: string, observedAt: string): boolean {
  const last = seen.lastObservedAt[aspect];
  return last !== undefined && timeOf(observedAt) < timeOf(last);
}

/** Milliseconds since the epoch; timestamps with different offsets compare correctly. */
export function timeOf(rfc3339: string): number {
  return Date.parse(rfc3339);
}

/** The metadata every ingest event carries. */
export function metadataOf(observation: Observation): EventMetadata {
  return { observationId: observation.observationId, observedAt: observation.observedAt, producer: 'ingest' };
}

export function skip(reason: string): Decision {
  return { kind: 'skip', reason };
}

export function reject(reason: string): Decision {
  return { kind: 'reject', reason };
}

/** Structural equality of plain data (arrays by order, objects by own keys). */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((item, i) => deepEqual(item, b[i]));
  }
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  const keys = Object.keys(ra);
  if (keys.length !== Object.keys(rb).length) return false;
  return keys.every((k) => Object.prototype.hasOwnProperty.call(rb, k) && deepEqual(ra[k], rb[k]));
}

/** Names of the given fields whose values differ, in the order given. */
export function changedFieldsOf<T extends object>(before: T, after: T, fields: readonly (keyof T & string)[]): string[] {
  return fields.filter((f) => !deepEqual(before[f], after[f]));
}

/** Ascending, locale-independent comparison of strings (deterministic event order). */
export function byString(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
