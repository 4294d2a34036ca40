/**
 * Which stream an observation concerns. Observations name titles by the crawler's
 * `(contentType, sourceId)`; the media id is derived from it (contracts/ids.ts), so the route of
 * a re-crawl is always the same stream. Call on a valid observation only (validate.ts).
 */
import { mediaIdOf, streams } from '../../contracts/ids.ts';
import type { Observation } from '../../contracts/observations.ts';

/** Country codes are accepted in any case and stored upper case (decisions.md). */
export function normalizeCountry(country: string): string {
  return country.toUpperCase();
}

/** The media id an observation's title maps to; seasons belong to TV shows only. */
export function mediaIdOfObservation(observation: Observation): string | null {
  switch (observation.type) {
    case 'MediaObserved':
    case 'MediaTranslationObserved':
    case 'AvailabilityObserved':
      return mediaIdOf(observation.data.contentType, observation.data.sourceId);
    case 'SeasonsObserved':
      return mediaIdOf('tv_show', observation.data.sourceId);
    default:
      return null;
  }
}

export function streamOf(observation: Observation): string {
  switch (observation.type) {
    case 'MediaObserved':
    case 'MediaTranslationObserved':
      return streams.media(mediaIdOf(observation.data.contentType, observation.data.sourceId));
    case 'SeasonsObserved':
      return streams.media(mediaIdOf('tv_show', observation.data.sourceId));
    case 'AvailabilityObserved':
      return streams.availability(
        mediaIdOf(observation.data.contentType, observation.data.sourceId),
        normalizeCountry(observation.data.country),
      );
    case 'ProvidersObserved':
      return streams.providers(normalizeCountry(observation.data.country));
    case 'GenresObserved':
      return streams.genres();
    case 'CollectionObserved':
      return streams.collection(observation.data.slug);
    case 'FeaturedObserved':
      return streams.featured(normalizeCountry(observation.data.country));
  }
}
