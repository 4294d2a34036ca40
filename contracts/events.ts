/**
 * Domain events: the system of record. Plain data `{ type, data, metadata }`, a union per
 * stream, past-tense PascalCase names. Their Avro schemas live in contracts/schemas/events.
 */
import type {
  CollectionBody,
  ContentType,
  FeaturedItemRef,
  FeaturedPeriod,
  Genre,
  MediaDetails,
  Offer,
  OfferKey,
  Provider,
  RankingEntry,
  Season,
  Translation,
} from './domain.ts';

export interface EventMetadata {
  /** The observation this event was decided from (absent for job-made events). */
  observationId?: string;
  /** When the crawler saw it; point-in-time queries (`links?at=`) fold by this. */
  observedAt?: string;
  /** The job or process that appended it, e.g. `ingest`, `ranking`. */
  producer?: string;
}

export interface EventBase<T extends string, D> {
  type: T;
  data: D;
  metadata: EventMetadata;
}

// media-{id}
export type MediaRegistered = EventBase<'MediaRegistered', {
  mediaId: string;
  kind: ContentType;
  sourceId: number;
  slug: string;
  details: MediaDetails;
}>;
export type MediaDetailsChanged = EventBase<'MediaDetailsChanged', {
  mediaId: string;
  /** The complete new details ... */
  details: MediaDetails;
  /** ... and the names of the fields that differ from the previous ones. */
  changedFields: string[];
}>;
export type MediaTranslationChanged = EventBase<'MediaTranslationChanged', {
  mediaId: string;
  language: string;
  translation: Translation;
}>;
export type SeasonChanged = EventBase<'SeasonChanged', {
  mediaId: string;
  season: Season;
}>;
export type MediaEvent = MediaRegistered | MediaDetailsChanged | MediaTranslationChanged | SeasonChanged;

// availability-{id}-{country}
export type OfferAdded = EventBase<'OfferAdded', { mediaId: string; country: string; offer: Offer }>;
export type OfferChanged = EventBase<'OfferChanged', {
  mediaId: string;
  country: string;
  offer: Offer;
  changedFields: string[];
}>;
export type OfferRemoved = EventBase<'OfferRemoved', { mediaId: string; country: string; offer: OfferKey }>;
export type AvailabilityEvent = OfferAdded | OfferChanged | OfferRemoved;

// providers-{country}
export type ProviderAdded = EventBase<'ProviderAdded', { country: string; provider: Provider }>;
export type ProviderChanged = EventBase<'ProviderChanged', { country: string; provider: Provider; changedFields: string[] }>;
export type ProviderRemoved = EventBase<'ProviderRemoved', { country: string; providerId: string }>;
export type ProvidersEvent = ProviderAdded | ProviderChanged | ProviderRemoved;

// genres
export type GenreDefined = EventBase<'GenreDefined', { genre: Genre }>;
export type GenreChanged = EventBase<'GenreChanged', { genre: Genre }>;
export type GenresEvent = GenreDefined | GenreChanged;

// collection-{slug}
export type CollectionPublished = EventBase<'CollectionPublished', { slug: string; collection: CollectionBody }>;
export type CollectionChanged = EventBase<'CollectionChanged', { slug: string; collection: CollectionBody; changedFields: string[] }>;
export type CollectionWithdrawn = EventBase<'CollectionWithdrawn', { slug: string }>;
export type CollectionEvent = CollectionPublished | CollectionChanged | CollectionWithdrawn;

// featured-{country}
export type FeaturedSelectionChanged = EventBase<'FeaturedSelectionChanged', {
  country: string;
  period: FeaturedPeriod;
  items: FeaturedItemRef[];
}>;
export type FeaturedEvent = FeaturedSelectionChanged;

// ranking-{country}
/**
 * One part of a day's chart: the entries of a bounded range of positions. A 250,000-title chart
 * is several MB, over EventStoreDB's 1 MiB append limit and Kafka's 1 MB record limit, so the
 * ranking job splits it into parts 1..parts appended in order; the day is complete once its
 * last part is in, and that part is always the day's last event. Events written before charts
 * were split have no `part`: each holds the whole chart (part 1 of 1, see chartPart).
 */
export type RankingComputed = EventBase<'RankingComputed', {
  country: string;
  /** The day ranked, `YYYY-MM-DD`. */
  date: string;
  formulaVersion: number;
  /** This part, 1-based. Absent: the whole chart in one event. */
  part?: number;
  /** How many parts the day's chart has. Absent: 1. */
  parts?: number;
  /**
   * The newest day the stream holds once this day is complete: this day, or a later one when
   * this is a backfill. Lets the job find the previous day from the end of the stream instead
   * of reading it all. Absent (older events, null): unknown.
   */
  latestDate?: string | null;
  /**
   * On a day's last part: how many PositionChanged events of the day sit just before it (so
   * its first part is `positionChanges + parts - 1` revisions back). Absent: 0.
   */
  positionChanges?: number;
  /** The ranked titles of this part, by position (every ranked title in an unsplit chart). */
  entries: RankingEntry[];
}>;

/** Which part of its day's chart a RankingComputed is; an event from before the split is the whole chart. */
export function chartPart(data: RankingComputed['data']): { part: number; parts: number } {
  return { part: data.part ?? 1, parts: data.parts ?? 1 };
}

export type PositionChanged = EventBase<'PositionChanged', {
  country: string;
  date: string;
  mediaId: string;
  kind: ContentType;
  /** null: the title left the chart. */
  position: number | null;
  /** null: the title entered the chart. */
  previousPosition: number | null;
}>;
export type RankingEvent = RankingComputed | PositionChanged;

export type DomainEvent =
  | MediaEvent
  | AvailabilityEvent
  | ProvidersEvent
  | GenresEvent
  | CollectionEvent
  | FeaturedEvent
  | RankingEvent;

export type EventType = DomainEvent['type'];

export const EVENT_TYPES: readonly EventType[] = [
  'MediaRegistered', 'MediaDetailsChanged', 'MediaTranslationChanged', 'SeasonChanged',
  'OfferAdded', 'OfferChanged', 'OfferRemoved',
  'ProviderAdded', 'ProviderChanged', 'ProviderRemoved',
  'GenreDefined', 'GenreChanged',
  'CollectionPublished', 'CollectionChanged', 'CollectionWithdrawn',
  'FeaturedSelectionChanged',
  'RankingComputed', 'PositionChanged',
];

export type EventOfType<T extends EventType> = Extract<DomainEvent, { type: T }>;

/** An event as stored: its stream, per-stream revision and global position. */
export type RecordedEvent<E extends DomainEvent = DomainEvent> = E & {
  streamId: string;
  /** 0-based revision within the stream. */
  revision: number;
  /**
   * Global position: orders all events, above 0; a checkpoint is the last one handled. What the
   * engine makes it, not a count: 1, 2, 3... on LMDB, offset + 1 on Kafka (gaps at transaction
   * markers), the `$all` commit position + 1 on EventStoreDB (a byte offset in its log). Compare
   * positions, never count with them.
   */
  position: number;
  /** When the store appended it, RFC 3339 UTC. */
  recordedAt: string;
};
