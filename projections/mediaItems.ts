/**
 * `media_items` read model, key: media id: the fields of a media list item, kept apart from
 * the full detail so list endpoints decode small documents (see contracts/readModels.ts).
 */
import type { MediaDetails } from '../contracts/domain.ts';
import type { RecordedEvent } from '../contracts/events.ts';
import { defineProjection } from '../contracts/projection.ts';
import type { MediaItemDoc } from '../contracts/readModels.ts';

function itemOf(base: Pick<MediaItemDoc, 'id' | 'kind' | 'slug'>, d: MediaDetails): MediaItemDoc {
  return {
    id: base.id,
    kind: base.kind,
    slug: base.slug,
    title: d.title,
    originalTitle: d.originalTitle,
    year: d.year,
    poster: d.poster,
    backdrop: d.backdrop,
    genreIds: d.genreIds,
    popularity: d.popularity,
    tmdbRating: d.tmdbRating,
  };
}

export const mediaItemsProjection = defineProjection<MediaItemDoc>({
  name: 'media_items',
  version: 1,
  canHandle: ['MediaRegistered', 'MediaDetailsChanged'],
  documentId(event: RecordedEvent): string | null {
    return event.type === 'MediaRegistered' || event.type === 'MediaDetailsChanged' ? event.data.mediaId : null;
  },
  evolve(doc: MediaItemDoc | null, event: RecordedEvent): MediaItemDoc | null {
    switch (event.type) {
      case 'MediaRegistered':
        return itemOf({ id: event.data.mediaId, kind: event.data.kind, slug: event.data.slug }, event.data.details);
      case 'MediaDetailsChanged':
        // Details of a title never registered: nothing to list.
        return doc === null ? null : itemOf(doc, event.data.details);
      default:
        return doc;
    }
  },
});
