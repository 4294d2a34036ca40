/**
 * `media` read model, key: media id. The detail of a title with its translation overlays;
 * seasons live in their own model (`seasons`) because they are large and read separately.
 */
import type { RecordedEvent } from '../contracts/events.ts';
import { defineProjection } from '../contracts/projection.ts';
import type { MediaDoc } from '../contracts/readModels.ts';
import { eventDate } from './time.ts';

export const mediaProjection = defineProjection<MediaDoc>({
  name: 'media',
  version: 1,
  canHandle: ['MediaRegistered', 'MediaDetailsChanged', 'MediaTranslationChanged'],
  documentId(event: RecordedEvent): string | null {
    switch (event.type) {
      case 'MediaRegistered':
      case 'MediaDetailsChanged':
      case 'MediaTranslationChanged':
        return event.data.mediaId;
      default:
        return null;
    }
  },
  evolve(doc: MediaDoc | null, event: RecordedEvent): MediaDoc | null {
    switch (event.type) {
      case 'MediaRegistered':
        // Registration opens the stream, so a stored doc only exists on a replay of the same
        // event; keep what was folded since (translations) and the first-seen day.
        return {
          id: event.data.mediaId,
          kind: event.data.kind,
          sourceId: event.data.sourceId,
          slug: event.data.slug,
          details: event.data.details,
          translations: doc?.translations ?? {},
          firstSeenAt: doc?.firstSeenAt ?? eventDate(event),
        };
      case 'MediaDetailsChanged':
        // Nothing to change without a registration: keep the (missing) document as it is.
        if (doc === null) return null;
        return { ...doc, details: event.data.details };
      case 'MediaTranslationChanged':
        if (doc === null) return null;
        return {
          ...doc,
          translations: withSortedKey(doc.translations, event.data.language, event.data.translation),
        };
      default:
        return doc;
    }
  },
});

/** Same entries with keys in ascending order, so equal folds produce byte-equal documents. */
export function sortedRecord<V>(record: Record<string, V>): Record<string, V> {
  const out: Record<string, V> = {};
  for (const key of Object.keys(record).sort()) {
    const value = record[key];
    if (value !== undefined) out[key] = value;
  }
  return out;
}

/**
 * `record` with `key` set, keys kept ascending, assuming `record`'s already are: a full sort
 * only when the key is new (folds run per event, and most events touch a key that exists).
 */
export function withSortedKey<V>(record: Record<string, V>, key: string, value: V): Record<string, V> {
  if (Object.hasOwn(record, key)) return { ...record, [key]: value };
  return sortedRecord({ ...record, [key]: value });
}
