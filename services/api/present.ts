/**
 * Read-model documents -> response bodies (snake_case, exactly the fields of spec 2.x).
 * Raw provider URLs never leave this layer: links carry only their token.
 */
import type { Genre, Offer, Provider } from '../../contracts/domain.ts';
import type { CollectionDoc, GenresDoc, MediaDoc, MediaItemDoc } from '../../contracts/readModels.ts';

export type GenreIndex = ReadonlyMap<number, Genre>;

/** The last index built, reused while the genres document reads the same (it rarely changes). */
let lastIndex: { genres: readonly Genre[]; index: GenreIndex } | undefined;

function sameGenres(a: readonly Genre[], b: readonly Genre[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i += 1) {
    const x = a[i] as Genre;
    const y = b[i] as Genre;
    if (x.id !== y.id || x.slug !== y.slug || x.name !== y.name) return false;
  }
  return true;
}

/**
 * Genres by id. Every media and list request needs it and the store decodes a fresh document
 * each time, so the index of an equal list is reused instead of rebuilt: comparing a few dozen
 * genres is cheaper than a new Map. Callers only read the index and copy what they expose.
 */
export function genreIndex(doc: GenresDoc | null): GenreIndex {
  const genres = doc?.genres ?? [];
  if (lastIndex && sameGenres(lastIndex.genres, genres)) return lastIndex.index;
  const index: GenreIndex = new Map(genres.map((g) => [g.id, g]));
  lastIndex = { genres, index };
  return index;
}

function genresOf(doc: MediaDoc, genres: GenreIndex): Genre[] {
  const out: Genre[] = [];
  for (const id of doc.details.genreIds) {
    const g = genres.get(id);
    if (g) out.push(g);
  }
  return out;
}

export interface MediaListItem {
  id: string;
  slug: string;
  title: string;
  original_title: string | null;
  year: number | null;
  kind: 'movie' | 'tv_show';
  poster: string | null;
  backdrop: string | null;
  genres: string[];
  popularity: number;
  tmdb_rating: number | null;
}

export function listItem(doc: MediaItemDoc, genres: GenreIndex): MediaListItem {
  const slugs: string[] = [];
  for (const id of doc.genreIds) {
    const g = genres.get(id);
    if (g) slugs.push(g.slug);
  }
  return {
    id: doc.id,
    slug: doc.slug,
    title: doc.title,
    original_title: doc.originalTitle,
    year: doc.year,
    kind: doc.kind,
    poster: doc.poster,
    backdrop: doc.backdrop,
    genres: slugs,
    // The list item requires a number; a title without a popularity figure ranks as 0.
    popularity: doc.popularity ?? 0,
    tmdb_rating: doc.tmdbRating,
  };
}

export function mediaDetail(
  doc: MediaDoc,
  genres: GenreIndex,
  options: { country: string; lang: string | undefined; imageBase: string },
): Record<string, unknown> {
  const d = doc.details;
  const body: Record<string, unknown> = {
    id: doc.id,
    slug: doc.slug,
    title: d.title,
    original_title: d.originalTitle,
    year: d.year,
    content_type: doc.kind,
    tagline: d.tagline,
    overview: d.overview,
    classification: d.classification,
    poster: d.poster,
    backdrop: d.backdrop,
    popularity: d.popularity,
    tmdb_rating: d.tmdbRating,
    vote_count: d.voteCount,
    runtime: d.runtime,
    in_production: d.inProduction,
    last_air_date: d.lastAirDate,
    genres: genresOf(doc, genres).map((g) => ({ id: g.id, slug: g.slug, name: g.name })),
    ratings: d.ratings.map((r) => ({ source: r.source, rating: r.rating })),
    external_ids: d.externalIds.map((e) => ({ source: e.source, id: e.id })),
    videos: d.videos.map((v) => ({ source: v.source, id: v.id })),
    content_rating: d.contentRatings.find((c) => c.country.toUpperCase() === options.country)?.rating ?? null,
    image_base: options.imageBase,
  };
  const overlay = options.lang === undefined ? undefined : doc.translations[options.lang];
  if (overlay) {
    body.translation = {
      title: overlay.title,
      overview: overlay.overview,
      tagline: overlay.tagline,
      poster: overlay.poster,
      backdrop: overlay.backdrop,
    };
  }
  return body;
}

export function linkItem(offer: Offer, isTv: boolean, token: string): Record<string, unknown> {
  const body: Record<string, unknown> = {
    provider_id: offer.providerId,
    addon_provider_id: offer.addonProviderId,
    link_token: token,
    price_types: offer.priceTypes,
    formats: offer.formats,
    audio_languages: offer.audioLanguages,
    subtitle_languages: offer.subtitleLanguages,
    available_from: offer.availableFrom,
    available_to: offer.availableTo,
    platforms: offer.platforms,
  };
  if (isTv) {
    body.season_number = offer.seasonNumber;
    body.episode_number = offer.episodeNumber;
  }
  return body;
}

export function providerItem(p: Provider): Record<string, unknown> {
  return { id: p.id, parent_id: p.parentId, name: p.name, logo: p.logo, short_id: p.shortId, weight: p.weight };
}

export function collectionSummary(c: CollectionDoc): Record<string, unknown> {
  return {
    id: c.id,
    name: c.name,
    slug: c.slug,
    description: c.description,
    country: c.country,
    language: c.language,
  };
}
