/** Tiny builders of recorded events and domain values for projection and ranking unit tests. */
import type { MediaDetails, Offer, Provider } from '../../contracts/domain.ts';
import type { DomainEvent, EventMetadata, EventOfType, EventType, RecordedEvent } from '../../contracts/events.ts';

export interface RecordedOptions {
  metadata?: EventMetadata;
  streamId?: string;
  revision?: number;
  position?: number;
  recordedAt?: string;
}

let nextPosition = 1;

/** A recorded event of `type`; position increases per call unless given. */
export function recorded<T extends EventType>(
  type: T,
  data: EventOfType<T>['data'],
  options: RecordedOptions = {},
): RecordedEvent {
  const event = {
    type,
    data,
    metadata: options.metadata ?? {},
    streamId: options.streamId ?? 'test-stream',
    revision: options.revision ?? 0,
    position: options.position ?? nextPosition++,
    recordedAt: options.recordedAt ?? '2026-03-01T12:00:00Z',
  };
  return event as unknown as RecordedEvent<DomainEvent>;
}

export function observedAt(at: string): RecordedOptions {
  return { metadata: { observedAt: at } };
}

export function details(overrides: Partial<MediaDetails> = {}): MediaDetails {
  return {
    title: 'The Land Girls',
    originalTitle: null,
    year: 2009,
    releaseDate: '2009-09-07',
    tagline: null,
    overview: null,
    classification: null,
    poster: null,
    backdrop: null,
    popularity: 10,
    tmdbRating: 7,
    voteCount: 100,
    runtime: null,
    inProduction: null,
    lastAirDate: null,
    genreIds: [],
    ratings: [],
    externalIds: [],
    videos: [],
    contentRatings: [],
    cast: [],
    ...overrides,
  };
}

export function offer(overrides: Partial<Offer> = {}): Offer {
  return {
    providerId: 'netflix',
    addonProviderId: null,
    seasonNumber: null,
    episodeNumber: null,
    webUrl: 'https://example.com/watch/1',
    priceTypes: ['flatrate'],
    formats: ['hd'],
    audioLanguages: null,
    subtitleLanguages: null,
    availableFrom: null,
    availableTo: null,
    platforms: ['web'],
    ...overrides,
  };
}

export function provider(id: string, weight: number, overrides: Partial<Provider> = {}): Provider {
  return { id, parentId: null, name: id, logo: null, shortId: id.slice(0, 3), weight, ...overrides };
}
