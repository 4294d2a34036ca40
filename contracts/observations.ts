/**
 * Observations: what a crawler saw at a time. They are commands, not facts: ingest decides
 * which domain events (if any) follow from them. Each carries an `observationId`, so a
 * redelivered observation is recognised, and `observedAt` (RFC 3339 UTC), so a late,
 * older observation never overwrites a newer state.
 *
 * A title is referred to by the crawler's `(contentType, sourceId)`; ingest maps it to the
 * Marquee media id with `mediaIdOf` (contracts/ids.ts), so a re-crawl never mints a new id.
 */
import type {
  ContentType,
  FeaturedPeriod,
  Genre,
  MediaDetails,
  Offer,
  Provider,
  Season,
} from './domain.ts';

export interface ObservationBase<T extends string, D> {
  type: T;
  observationId: string;
  observedAt: string;
  data: D;
}

export interface MediaRef {
  contentType: ContentType;
  /** The crawler's numeric source id (a catalog id such as a TMDB id). */
  sourceId: number;
}

/** The title's details as seen (the same fields as the `MediaDetails` of its events). */
export interface MediaObservedData extends MediaRef, MediaDetails {}

export interface MediaTranslationObservedData extends MediaRef {
  language: string;
  title: string | null;
  overview: string | null;
  tagline: string | null;
  poster: string | null;
  backdrop: string | null;
}

export interface SeasonsObservedData {
  /** Seasons belong to TV shows only. */
  sourceId: number;
  seasons: Season[];
}

/** The full offer set for a title in a country: an offer missing from it was removed. */
export interface AvailabilityObservedData extends MediaRef {
  country: string;
  offers: Offer[];
}

/** The full provider list of a country. */
export interface ProvidersObservedData {
  country: string;
  providers: Provider[];
}

export interface GenresObservedData {
  genres: Genre[];
}

export interface CollectionItemObserved extends MediaRef {
  position: number | null;
}

export interface CollectionObservedData {
  slug: string;
  /** `withdrawn` removes a published collection. */
  status: 'published' | 'withdrawn';
  name: string;
  description: string | null;
  country: string | null;
  language: string | null;
  items: CollectionItemObserved[];
}

export interface FeaturedItemObserved extends MediaRef {
  position: number;
}

export interface FeaturedObservedData {
  country: string;
  period: FeaturedPeriod;
  items: FeaturedItemObserved[];
}

export type MediaObserved = ObservationBase<'MediaObserved', MediaObservedData>;
export type MediaTranslationObserved = ObservationBase<'MediaTranslationObserved', MediaTranslationObservedData>;
export type SeasonsObserved = ObservationBase<'SeasonsObserved', SeasonsObservedData>;
export type AvailabilityObserved = ObservationBase<'AvailabilityObserved', AvailabilityObservedData>;
export type ProvidersObserved = ObservationBase<'ProvidersObserved', ProvidersObservedData>;
export type GenresObserved = ObservationBase<'GenresObserved', GenresObservedData>;
export type CollectionObserved = ObservationBase<'CollectionObserved', CollectionObservedData>;
export type FeaturedObserved = ObservationBase<'FeaturedObserved', FeaturedObservedData>;

export type Observation =
  | MediaObserved
  | MediaTranslationObserved
  | SeasonsObserved
  | AvailabilityObserved
  | ProvidersObserved
  | GenresObserved
  | CollectionObserved
  | FeaturedObserved;

export type ObservationType = Observation['type'];

export const OBSERVATION_TYPES: readonly ObservationType[] = [
  'MediaObserved',
  'MediaTranslationObserved',
  'SeasonsObserved',
  'AvailabilityObserved',
  'ProvidersObserved',
  'GenresObserved',
  'CollectionObserved',
  'FeaturedObserved',
];
