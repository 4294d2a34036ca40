/**
 * Value types shared by observations, domain events and read models. Plain data only.
 * Dates are `YYYY-MM-DD` strings, timestamps RFC 3339 UTC strings (docs/api.md "Ids and formats").
 */

export type ContentType = 'movie' | 'tv_show';

export const PRICE_TYPES = ['flatrate', 'rent', 'buy', 'free', 'cinema', 'ads', 'fast', 'flatrate_and_buy'] as const;
export type PriceType = (typeof PRICE_TYPES)[number];

export const FORMATS = ['sd', 'hd', 'uhd', '4k'] as const;
export type Format = (typeof FORMATS)[number];

export const PLATFORMS = ['web', 'ios', 'android', 'android_tv', 'fire_tv', 'roku', 'webos'] as const;
export type Platform = (typeof PLATFORMS)[number];

/** The locales that have a search index: the only valid `lang` values. */
export const LOCALES = [
  'ar', 'bg', 'bn', 'ca', 'cs', 'da', 'de', 'el', 'en', 'es', 'et', 'fa', 'fi', 'fr', 'he', 'hi',
  'hr', 'hu', 'id', 'it', 'ja', 'ka', 'kn', 'ko', 'lt', 'lv', 'mk', 'ml', 'ms', 'nb', 'nl', 'no',
  'pl', 'pt', 'ro', 'ru', 'sk', 'sl', 'sq', 'sr', 'sv', 'ta', 'te', 'th', 'tl', 'tr', 'uk', 'ur',
  'vi', 'zh', 'zu',
] as const;
export type Locale = (typeof LOCALES)[number];

export interface Genre {
  id: number;
  slug: string;
  name: string;
}

export interface Rating {
  source: string;
  rating: number;
}

export interface ExternalId {
  source: string;
  id: string;
}

export interface Video {
  source: string;
  id: string;
}

export interface ContentRating {
  /** ISO 3166-1 alpha-2, upper case. */
  country: string;
  rating: string;
}

export interface CastMember {
  personId: string;
  name: string;
  /** `actor`, `director`, `writer`, ... */
  role: string;
  character: string | null;
  order: number;
}

/** Everything a crawler says about a title, apart from translations and seasons. */
export interface MediaDetails {
  title: string;
  originalTitle: string | null;
  year: number | null;
  releaseDate: string | null;
  tagline: string | null;
  overview: string | null;
  classification: string | null;
  /** Path template `/posters/{size}/<image-id>.{ext}` (docs/api.md). */
  poster: string | null;
  /** Path template `/backdrops/{size}/<image-id>.{ext}`. */
  backdrop: string | null;
  popularity: number | null;
  tmdbRating: number | null;
  voteCount: number | null;
  runtime: number | null;
  inProduction: boolean | null;
  lastAirDate: string | null;
  genreIds: number[];
  ratings: Rating[];
  externalIds: ExternalId[];
  videos: Video[];
  contentRatings: ContentRating[];
  cast: CastMember[];
}

export interface Translation {
  title: string | null;
  overview: string | null;
  tagline: string | null;
  poster: string | null;
  backdrop: string | null;
}

export interface Episode {
  episodeNumber: number;
  title: string;
  overview: string | null;
  backdrop: string | null;
  airDate: string | null;
}

export interface Season {
  seasonNumber: number;
  title: string;
  overview: string | null;
  poster: string | null;
  airDate: string | null;
  episodes: Episode[];
}

/**
 * An offer is identified by provider, add-on provider, season, episode and web URL
 * (docs/architecture.md); any other field changing is an OfferChanged.
 */
export interface OfferKey {
  providerId: string;
  addonProviderId: string | null;
  seasonNumber: number | null;
  episodeNumber: number | null;
  /** At most MAX_WEB_URL_BYTES bytes of UTF-8. */
  webUrl: string;
}

/**
 * Longest web URL of an offer, in UTF-8 bytes: 1,024, several times the longest provider URL
 * (tracking parameters included) and half of what every browser opens. It bounds the link
 * token (services/links/linkTokens.ts), so `/go` refuses a longer token before decoding it,
 * and base58 decoding, quadratic in the length, stays under ~5 ms for the longest token.
 */
export const MAX_WEB_URL_BYTES = 1024;

export interface Offer extends OfferKey {
  priceTypes: PriceType[] | null;
  formats: Format[] | null;
  audioLanguages: string[] | null;
  subtitleLanguages: string[] | null;
  availableFrom: string | null;
  availableTo: string | null;
  platforms: Platform[] | null;
}

export interface Provider {
  /** Provider slug, e.g. `netflix`. */
  id: string;
  parentId: string | null;
  name: string;
  logo: string | null;
  shortId: string | null;
  weight: number;
}

export interface CollectionItemRef {
  mediaId: string;
  position: number | null;
}

export interface CollectionBody {
  name: string;
  description: string | null;
  /** null = shown in every country. */
  country: string | null;
  language: string | null;
  items: CollectionItemRef[];
}

export type FeaturedPeriod = 'daily' | 'weekly';

export interface FeaturedItemRef {
  mediaId: string;
  position: number;
}

export interface RankingEntry {
  mediaId: string;
  kind: ContentType;
  position: number;
  score: number;
  points: number;
}

/** The key fields of an offer alone (an OfferRemoved carries them, a change feed entry of a removal stores them). */
export function offerKeyOf(o: OfferKey): OfferKey {
  return {
    providerId: o.providerId,
    addonProviderId: o.addonProviderId,
    seasonNumber: o.seasonNumber,
    episodeNumber: o.episodeNumber,
    webUrl: o.webUrl,
  };
}

/** The stable identity string of an offer, used as a map key by decide and projections. */
export function offerKeyString(o: OfferKey): string {
  // Concatenated, not an array joined: this runs for every offer event folded, by ingest and by
  // several projections. `?? ''` writes null and undefined as join did.
  return `${o.providerId ?? ''}|${o.addonProviderId ?? ''}|${o.seasonNumber ?? ''}|${o.episodeNumber ?? ''}|${o.webUrl ?? ''}`;
}
