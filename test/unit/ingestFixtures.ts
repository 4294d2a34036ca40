/**
 * Observation and event builders for the ingest tests: a valid observation of each type, with
 * overrides for what a test is about.
 */
import type { Offer } from '../../contracts/domain.ts';
import type { DomainEvent, EventMetadata } from '../../contracts/events.ts';
import type {
  AvailabilityObserved,
  CollectionObserved,
  FeaturedObserved,
  GenresObserved,
  MediaObserved,
  MediaObservedData,
  MediaTranslationObserved,
  ProvidersObserved,
  SeasonsObserved,
} from '../../contracts/observations.ts';

export const T0 = '2025-03-01T10:00:00Z';
export const T1 = '2025-03-02T10:00:00Z';
export const T2 = '2025-03-03T10:00:00Z';

export function meta(observationId: string, observedAt: string): EventMetadata {
  return { observationId, observedAt, producer: 'ingest' };
}

/** An event as a decider emits it (the metadata of the observation it came from). */
export function ev<E extends DomainEvent>(type: E['type'], data: E['data'], observationId: string, observedAt: string): E {
  return { type, data, metadata: meta(observationId, observedAt) } as E;
}

export function mediaData(overrides: Partial<MediaObservedData> = {}): MediaObservedData {
  return {
    contentType: 'movie',
    sourceId: 603,
    title: 'The Matrix',
    originalTitle: 'The Matrix',
    year: 1999,
    releaseDate: '1999-03-31',
    tagline: 'Welcome to the Real World.',
    overview: 'A hacker learns the truth.',
    classification: 'R',
    poster: '/posters/{size}/p1.{ext}',
    backdrop: '/backdrops/{size}/b1.{ext}',
    popularity: 81.5,
    tmdbRating: 8.2,
    voteCount: 25000,
    runtime: 136,
    inProduction: null,
    lastAirDate: null,
    genreIds: [28, 878],
    ratings: [{ source: 'imdb', rating: 8.7 }],
    externalIds: [{ source: 'imdb', id: 'tt0133093' }],
    videos: [{ source: 'youtube', id: 'vKQi3bBA1y8' }],
    contentRatings: [{ country: 'US', rating: 'R' }],
    cast: [{ personId: 'p6384', name: 'Keanu Reeves', role: 'actor', character: 'Neo', order: 0 }],
    ...overrides,
  };
}

export function mediaObserved(id: string, observedAt: string, overrides: Partial<MediaObservedData> = {}): MediaObserved {
  return { type: 'MediaObserved', observationId: id, observedAt, data: mediaData(overrides) };
}

export function translationObserved(
  id: string,
  observedAt: string,
  overrides: Partial<MediaTranslationObserved['data']> = {},
): MediaTranslationObserved {
  return {
    type: 'MediaTranslationObserved',
    observationId: id,
    observedAt,
    data: {
      contentType: 'movie', sourceId: 603, language: 'de',
      title: 'Matrix', overview: 'Ein Hacker erfährt die Wahrheit.', tagline: null, poster: null, backdrop: null,
      ...overrides,
    },
  };
}

export function season(seasonNumber: number, title = `Season ${seasonNumber}`, episodes = 2): SeasonsObserved['data']['seasons'][number] {
  return {
    seasonNumber,
    title,
    overview: null,
    poster: null,
    airDate: '2020-01-01',
    episodes: Array.from({ length: episodes }, (_, i) => ({
      episodeNumber: i + 1, title: `Episode ${i + 1}`, overview: null, backdrop: null, airDate: null,
    })),
  };
}

export function seasonsObserved(id: string, observedAt: string, seasons: SeasonsObserved['data']['seasons'], sourceId = 1399): SeasonsObserved {
  return { type: 'SeasonsObserved', observationId: id, observedAt, data: { sourceId, seasons } };
}

export function offer(providerId: string, overrides: Partial<Offer> = {}): Offer {
  return {
    providerId,
    addonProviderId: null,
    seasonNumber: null,
    episodeNumber: null,
    webUrl: `https://${providerId}.example/watch/603`,
    priceTypes: ['flatrate'],
    formats: ['hd'],
    audioLanguages: ['en'],
    subtitleLanguages: ['en', 'de'],
    availableFrom: null,
    availableTo: null,
    platforms: ['web'],
    ...overrides,
  };
}

export function availabilityObserved(id: string, observedAt: string, offers: Offer[], country = 'US', sourceId = 603): AvailabilityObserved {
  return { type: 'AvailabilityObserved', observationId: id, observedAt, data: { contentType: 'movie', sourceId, country, offers } };
}

export function provider(id: string, overrides: Partial<ProvidersObserved['data']['providers'][number]> = {}): ProvidersObserved['data']['providers'][number] {
  return { id, parentId: null, name: id.toUpperCase(), logo: null, shortId: id.slice(0, 3), weight: 10, ...overrides };
}

export function providersObserved(id: string, observedAt: string, providers: ProvidersObserved['data']['providers'], country = 'US'): ProvidersObserved {
  return { type: 'ProvidersObserved', observationId: id, observedAt, data: { country, providers } };
}

export function genresObserved(id: string, observedAt: string, genres: GenresObserved['data']['genres']): GenresObserved {
  return { type: 'GenresObserved', observationId: id, observedAt, data: { genres } };
}

export function collectionObserved(
  id: string,
  observedAt: string,
  overrides: Partial<CollectionObserved['data']> = {},
): CollectionObserved {
  return {
    type: 'CollectionObserved',
    observationId: id,
    observedAt,
    data: {
      slug: 'best-of-90s',
      status: 'published',
      name: 'Best of the 90s',
      description: null,
      country: 'us',
      language: 'en',
      items: [{ contentType: 'movie', sourceId: 603, position: 1 }],
      ...overrides,
    },
  };
}

export function featuredObserved(
  id: string,
  observedAt: string,
  period: 'daily' | 'weekly',
  items: FeaturedObserved['data']['items'],
  country = 'US',
): FeaturedObserved {
  return { type: 'FeaturedObserved', observationId: id, observedAt, data: { country, period, items } };
}
