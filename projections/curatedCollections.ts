/**
 * `collections` read model (curated lists of titles), key: slug. Each published or changed
 * event carries the whole collection body, so the document is rebuilt from it; a withdrawal
 * deletes it. (Named curatedCollections.ts so it does not clash with projections/collections.ts,
 * which names physical read-store collections.)
 */
import type { RecordedEvent } from '../contracts/events.ts';
import { defineProjection } from '../contracts/projection.ts';
import type { CollectionDoc } from '../contracts/readModels.ts';

/** Stable public id of a collection, derived from its slug so a replay mints the same one. */
export function collectionIdOf(slug: string): string {
  return `col_${slug}`;
}

export const collectionsProjection = defineProjection<CollectionDoc>({
  name: 'collections',
  version: 1,
  canHandle: ['CollectionPublished', 'CollectionChanged', 'CollectionWithdrawn'],
  documentId(event: RecordedEvent): string | null {
    switch (event.type) {
      case 'CollectionPublished':
      case 'CollectionChanged':
      case 'CollectionWithdrawn':
        return event.data.slug;
      default:
        return null;
    }
  },
  evolve(doc: CollectionDoc | null, event: RecordedEvent): CollectionDoc | null {
    switch (event.type) {
      case 'CollectionPublished':
      case 'CollectionChanged': {
        const { slug, collection } = event.data;
        return {
          id: collectionIdOf(slug),
          slug,
          name: collection.name,
          description: collection.description,
          country: collection.country,
          language: collection.language,
          // Items keep the curator's order: `position` may be null, so it cannot be the sort key.
          items: collection.items,
        };
      }
      case 'CollectionWithdrawn':
        return null;
      default:
        return doc;
    }
  },
});
