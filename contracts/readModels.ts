/**
 * Read-model documents, shaped for the queries of the /v1 API and the snapshot files.
 * Keys are noted per model; logical names are the `name` of the projection that builds them.
 */
import type { ApiKeyRecord } from './ports.ts';
import type {
  CollectionItemRef,
  ContentType,
  FeaturedItemRef,
  Genre,
  MediaDetails,
  Offer,
  Provider,
  RankingEntry,
  Season,
  Translation,
} from './domain.ts';

/** `media`, key: media id. */
export interface MediaDoc {
  id: string;
  kind: ContentType;
  sourceId: number;
  slug: string;
  details: MediaDetails;
  /** Overlays by language code. */
  translations: Record<string, Translation>;
  /** `YYYY-MM-DD` of the first observation. */
  firstSeenAt: string;
}

/**
 * `media_items`, key: media id. What a media list item shows (search, rankings, trending,
 * featured, collections): a list page decodes dozens of these per request, so they carry
 * only the listed fields, not the whole detail.
 */
export interface MediaItemDoc {
  id: string;
  kind: ContentType;
  slug: string;
  title: string;
  originalTitle: string | null;
  year: number | null;
  poster: string | null;
  backdrop: string | null;
  genreIds: number[];
  popularity: number | null;
  tmdbRating: number | null;
}

/** `seasons`, key: media id (TV shows only). Seasons by number, episodes by number. */
export interface SeasonsDoc {
  mediaId: string;
  seasons: Season[];
}

export interface LinkOffer extends Offer {
  /** `YYYY-MM-DD` the offer was first seen (observedAt of its OfferAdded). */
  firstSeenAt: string;
  /**
   * `YYYY-MM-DD` its current run began: the day it was seen there, or the later `availableFrom`
   * it was listed ahead of (projections/links.ts `startedOn`). Not in the API's link objects
   * nor in the release: /v1/new confirms arrivals with it.
   */
  startedOn: string;
}

/** `links`, key: `${country}:${mediaId}` so a country's titles are one prefix scan. */
export interface LinksDoc {
  mediaId: string;
  kind: ContentType;
  country: string;
  offers: LinkOffer[];
}

/**
 * `ranking_inputs`: what the daily ranking formula reads, in blocks of 25 consecutive media ids,
 * so the job reads a country in a few documents per hundred titles instead of every `links` and
 * `media` document (projections/rankingInputs.ts). Two kinds of keys:
 * `o:${country}:${block}` (RankingOffersBlock) and `f:${block}` (RankingFactsBlock).
 */
export interface RankingOffersBlock {
  /** The titles of the block with an offer in the country, by media id ascending. */
  titles: RankingInputTitle[];
}

export interface RankingInputTitle {
  mediaId: string;
  kind: ContentType;
  /**
   * One per offer of the `links` document, in key order: of the offer what the formula reads and
   * its identity (`offerKeyString`), packed in one string (packRankingOffer in
   * projections/rankingInputs.ts says the format and why).
   */
  offers: string[];
}

/** Of an offer, what the formula reads. */
export type RankingInputOffer = Pick<Offer, 'providerId' | 'priceTypes' | 'availableFrom' | 'availableTo'>;

export interface RankingFactsBlock {
  /** The facts of each title of the block that has a `media` document, by media id ascending. */
  facts: RankingTitleFacts[];
}

/** What the formula reads of a title's details. */
export type RankingFacts = Pick<MediaDetails, 'tmdbRating' | 'voteCount' | 'popularity' | 'releaseDate' | 'lastAirDate' | 'year'>;

export interface RankingTitleFacts extends RankingFacts {
  mediaId: string;
}

export type RankingInputsDoc = RankingOffersBlock | RankingFactsBlock;

/** `providers`, key: country. */
export interface ProvidersDoc {
  country: string;
  providers: Provider[];
}

/** `genres`, key: `all`. */
export interface GenresDoc {
  genres: Genre[];
}

/** `collections`, key: slug. */
export interface CollectionDoc {
  id: string;
  slug: string;
  name: string;
  description: string | null;
  country: string | null;
  language: string | null;
  items: CollectionItemRef[];
}

/** `featured`, key: country. */
export interface FeaturedDoc {
  country: string;
  /** RFC 3339 of the last change. */
  updatedAt: string;
  daily: FeaturedItemRef[];
  weekly: FeaturedItemRef[];
}

/**
 * A day's full ranking of a country. Never stored whole (projections/rankings.ts stores a
 * header and a row per block of ranks, so a page of a 250,000-title chart reads its blocks, not
 * a 9 MB document): what the release writes, and what synthetic catalogs lay out.
 */
export interface RankingDoc {
  country: string;
  date: string;
  formulaVersion: number;
  entries: RankingEntry[];
}

/** Where a country's chart rows are stored: the served chart in one slot, the next one assembled in the other. */
export type RankingSlot = 'a' | 'b';

/** A chart overall (`all`) or of one kind. */
export type RankingSlice = ContentType | 'all';

/** A complete chart: its day and its length, overall and per kind, and the slot of its rows. */
export interface RankingChartHead {
  date: string;
  formulaVersion: number;
  slot: RankingSlot;
  total: number;
  totals: Record<ContentType, number>;
}

/** A newer chart whose parts are still arriving (`received` of `parts`), written in the other slot. */
export interface RankingPendingChart extends RankingChartHead {
  parts: number;
  received: number;
  /**
   * Per slice, the entries of its last block not yet full: a part ends anywhere in a block, and
   * the next part (folded in a later batch, onto this header) completes it.
   */
  tail: Record<RankingSlice, RankingEntry[]>;
}

/** `rankings`, key: country. The header of a country's charts. */
export interface RankingHeadDoc {
  country: string;
  /** The newest complete chart, the one served; null until one is complete. */
  chart: RankingChartHead | null;
  /** A newer chart being assembled; null when none is. */
  pending: RankingPendingChart | null;
  /** Ranks stored per slot and slice: a shorter chart deletes the blocks its slot holds beyond it. */
  stored: Record<RankingSlot, Record<RankingSlice, number>>;
}

/**
 * `rankings`, key: `${country}:${slot}:${kind or 'all'}:${block, zero-padded}` (rankingBlockKey):
 * a block of consecutive ranks of a chart (RANKING_BLOCK of them, fewer in the last), overall or
 * of one kind, in rank order. `position` stays the overall one.
 */
export interface RankingRowDoc {
  entries: RankingEntry[];
}

export interface TrendingEntry {
  mediaId: string;
  kind: ContentType;
  /** Position that day; null when the title left the chart. */
  position: number | null;
  previousPosition: number | null;
}

/**
 * `trending`, key: `${country}:${date}`: the day's fold, every title that moved, entered or left,
 * in the served order. Read whole only by the weekly release; the API reads the head and rows
 * below (projections/trending.ts).
 */
export interface TrendingDoc {
  country: string;
  date: string;
  entries: TrendingEntry[];
}

/**
 * `trending`, key: `head:${country}:${date}` (trendingHeadKey): the day and how many titles it
 * serves (those still in the chart), overall and per kind.
 */
export interface TrendingHeadDoc {
  country: string;
  date: string;
  total: number;
  totals: Record<ContentType, number>;
}

/**
 * `trending`, key: `row:${country}:${date}:${kind or 'all'}:${block, zero-padded}`
 * (trendingBlockKey): a block of consecutive served entries of the day (TRENDING_BLOCK of them,
 * fewer in the last), overall or of one kind, in trending order.
 */
export interface TrendingRowDoc {
  entries: TrendingEntry[];
}

/**
 * `api_keys` read-model collection, key: sha256 hex of the key. Where API keys were kept before
 * they had a port of their own (ApiKeyStore); read only to move them there once.
 */
export type ApiKeyDoc = Omit<ApiKeyRecord, 'lastUsedAt'>;

/** Logical read-model names. */
export const READ_MODELS = {
  media: 'media',
  mediaItems: 'media_items',
  seasons: 'seasons',
  links: 'links',
  providers: 'providers',
  genres: 'genres',
  collections: 'collections',
  featured: 'featured',
  rankings: 'rankings',
  rankingInputs: 'ranking_inputs',
  trending: 'trending',
  // History, changes and alerts (contracts/changeModels.ts).
  availabilityHistory: 'availability_history',
  changes: 'changes',
  arrivals: 'arrivals',
  departures: 'departures',
  upcoming: 'upcoming',
  search: 'search',
} as const;

export const API_KEYS_COLLECTION = 'api_keys';
