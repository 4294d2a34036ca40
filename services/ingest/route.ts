/**
 * Which stream an observation concerns. Observations name titles by the crawler's
 * `(contentType, sourceId)`; the media id is derived from it (contracts/ids.ts), so the route of
 * a re-crawl is always the same stream. Call on a valid observation only (contracts/observationRules.ts).
 */
import { mediaIdOf, streamOfObservation } from '../../contracts/ids.ts';
import type { Observation } from '../../contracts/observations.ts';

/** Country codes are accepted in any case and stored upper case (docs/crawler-contract.md). */
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

/** The stream an observation concerns (one routing for ingest and the transports). */
export const streamOf = streamOfObservation;
