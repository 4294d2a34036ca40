/**
 * `seasons` read model, key: media id (TV shows only). Each SeasonChanged carries one complete
 * season, which replaces the stored season of the same number.
 */
import type { Season } from '../contracts/domain.ts';
import type { RecordedEvent } from '../contracts/events.ts';
import { defineProjection } from '../contracts/projection.ts';
import type { SeasonsDoc } from '../contracts/readModels.ts';

export const seasonsProjection = defineProjection<SeasonsDoc>({
  name: 'seasons',
  version: 1,
  canHandle: ['SeasonChanged'],
  documentId(event: RecordedEvent): string | null {
    return event.type === 'SeasonChanged' ? event.data.mediaId : null;
  },
  evolve(doc: SeasonsDoc | null, event: RecordedEvent): SeasonsDoc | null {
    if (event.type !== 'SeasonChanged') return doc;
    const changed = withSortedEpisodes(event.data.season);
    const others = (doc?.seasons ?? []).filter((s) => s.seasonNumber !== changed.seasonNumber);
    return {
      mediaId: event.data.mediaId,
      seasons: [...others, changed].sort((a, b) => a.seasonNumber - b.seasonNumber),
    };
  },
});

function withSortedEpisodes(season: Season): Season {
  return { ...season, episodes: [...season.episodes].sort((a, b) => a.episodeNumber - b.episodeNumber) };
}
