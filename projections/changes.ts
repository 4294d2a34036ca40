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
import { offerKeyOf, type ContentType, type Offer } from '../contracts/domain.ts';
import type { RecordedEvent } from '../contracts/events.ts';
import { kindOfMediaId } from '../contracts/ids.ts';
import { defineProjection } from '../contracts/projection.ts';
import type { ChangeBlockDoc, ChangeDoc, ChangeEntry } from '../contracts/changeModels.ts';
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
export function changeOf(event: RecordedEvent): ChangeEntry | null {
  if (!isOfferEvent(event)) return null;
  const { mediaId } = event.data;
  // Ingest validates ids; an id that names no kind has no link to describe.
  if (kindOfMediaId(mediaId) === null) return null;
  const at = eventTime(event);
  switch (event.type) {
    case 'OfferAdded':
      return { position: event.position, at, mediaId, type: 'new', offer: event.data.offer, changed: [] };
    case 'OfferChanged':
      return { position: event.position, at, mediaId, type: 'updated', offer: event.data.offer, changed: [...event.data.changedFields] };
    case 'OfferRemoved':
      return { position: event.position, at, mediaId, type: 'removed', offer: offerKeyOf(event.data.offer), changed: [] };
  }
}

/** The change of `country` a stored entry holds, whole again (the feed's readers take this). */
export function changeDocOf(country: string, entry: ChangeEntry): ChangeDoc {
  const removed = entry.type === 'removed';
  return {
    position: entry.position,
    type: entry.type,
    at: entry.at,
    country,
    mediaId: entry.mediaId,
    // changeOf stores the changes of media ids of a kind only.
    kind: kindOfMediaId(entry.mediaId) as ContentType,
    offer: removed ? entry.offer : offerKeyOf(entry.offer),
    after: removed ? null : (entry.offer as Offer),
    changed: entry.changed,
  };
}

export const changesProjection = defineProjection<ChangeBlockDoc>({
  name: 'changes',
  // v2: blocks of changes. v1 stored one document per change: 219,391 for the sample's week,
  // the most of any read model, where blocks make 13,351. Blocks took 0.3-1.5 s off
  // `npm run bench -- ingest` (about 15 s) and 1.2-1.6 s off a first start (about 30 s) on a
  // 2-core machine. v3: entries without what the block and the offer already say (ChangeEntry).
  // Folding the sample's week (328,658 events) into this read model alone took 4.4-4.5 s with
  // v1, 3.0-3.3 s with v2 and 2.4-3.4 s (2.8 on average) with v3.
  version: 3,
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
