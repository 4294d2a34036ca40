/**
 * `changes` read model: the change feed, in blocks. A document holds a country's changes (one
 * per offer event) at positions [start, start + CHANGE_BLOCK), in position order, keyed by the
 * feed key of `start`, so a country's feed is one prefix scan in position order a block at a
 * time. A change's own feed key, `${country}:${position padded}`, is what readers page by: a
 * cursor (the last change read) resumes exactly after what was read, whatever was committed
 * meanwhile, positions only growing. Keys and blocks follow from positions alone, so a replay
 * from 0 rebuilds the same documents.
 *
 * Ingest appends nothing for a re-crawl that changes nothing, so every event is a change.
 */
import type { OfferKey } from '../contracts/domain.ts';
import type { RecordedEvent } from '../contracts/events.ts';
import { kindOfMediaId } from '../contracts/ids.ts';
import { defineProjection } from '../contracts/projection.ts';
import type { ChangeBlockDoc, ChangeDoc } from '../contracts/changeModels.ts';
import { isOfferEvent, OFFER_EVENT_TYPES } from './links.ts';
import { eventTime } from './time.ts';

/** Wide enough for any safe-integer position, so key order is position order. */
const POSITION_DIGITS = 16;

export function changeKey(country: string, position: number): string {
  return `${country}:${String(position).padStart(POSITION_DIGITS, '0')}`;
}

/** The position in a change key, or null when the key is not one. */
export function positionOfChangeKey(key: string): { country: string; position: number } | null {
  const m = /^([A-Z]{2}):(\d{16})$/.exec(key);
  return m ? { country: m[1] as string, position: Number(m[2]) } : null;
}

/**
 * The change id receivers deduplicate on: derived from the event position alone, padded so ids
 * sort as the feed does (changes.parquet is sorted by it).
 */
export function changeId(position: number): string {
  return `chg_${String(position).padStart(POSITION_DIGITS, '0')}`;
}

function keyOf(o: OfferKey): OfferKey {
  return { providerId: o.providerId, addonProviderId: o.addonProviderId, seasonNumber: o.seasonNumber, episodeNumber: o.episodeNumber, webUrl: o.webUrl };
}

/**
 * Positions per block. On the embedded log positions are consecutive (on the Kafka log nearly
 * so: a transaction's commit marker takes an offset), so a block holds a thousand changes of
 * its country at most (16 on average on the sample, whose crawl interleaves 50 countries, 65
 * at most): a live batch rewrites one small document per country. On EventStoreDB a position
 * is a byte offset, so a block holds a few changes: correct, only less packed.
 */
export const CHANGE_BLOCK = 1000;

/** Key of the block holding the change of `country` at `position`. */
export function changeBlockKey(country: string, position: number): string {
  return changeKey(country, position - (position % CHANGE_BLOCK));
}

/** The change an offer event makes, or null for an event of no change (not an offer's, or an id of no kind). */
export function changeOf(event: RecordedEvent): ChangeDoc | null {
  if (!isOfferEvent(event)) return null;
  const { mediaId, country } = event.data;
  const kind = kindOfMediaId(mediaId);
  // Ingest validates ids; an id that names no kind has no link to describe.
  if (kind === null) return null;
  const base = { position: event.position, at: eventTime(event), country, mediaId, kind, offer: keyOf(event.data.offer) };
  switch (event.type) {
    case 'OfferAdded':
      return { ...base, type: 'new', after: event.data.offer, changed: [] };
    case 'OfferChanged':
      return { ...base, type: 'updated', after: event.data.offer, changed: [...event.data.changedFields] };
    case 'OfferRemoved':
      return { ...base, type: 'removed', after: null, changed: [] };
  }
}

export const changesProjection = defineProjection<ChangeBlockDoc>({
  name: 'changes',
  // v2: blocks of changes. v1 stored one document per change: 219,391 for the sample's week,
  // the most of any read model, where blocks make 13,351. Blocks took 0.3-1.5 s off
  // `npm run bench -- ingest` (about 15 s) and 1.2-1.6 s off a first start (about 30 s) on a
  // 2-core machine.
  version: 2,
  canHandle: OFFER_EVENT_TYPES,
  documentId(event: RecordedEvent): string | null {
    return isOfferEvent(event) ? changeBlockKey(event.data.country, event.position) : null;
  },
  evolve(doc: ChangeBlockDoc | null, event: RecordedEvent): ChangeBlockDoc | null {
    const change = changeOf(event);
    return change === null ? doc : { changes: [...(doc?.changes ?? []), change] };
  },
  // The fold above with the block copied once per batch, not once per change.
  evolveAll(doc: ChangeBlockDoc | null, events: readonly RecordedEvent[]): ChangeBlockDoc | null {
    const changes = [...(doc?.changes ?? [])];
    for (const event of events) {
      const change = changeOf(event);
      if (change !== null) changes.push(change);
    }
    return changes.length === 0 ? doc : { changes };
  },
});
