/**
 * Read-model documents to snapshot rows (pure). Each function returns the rows of one
 * document in the file's `sorted_by` order; the documents themselves arrive in key order
 * (media id, country, slug), which completes the order of the file.
 */
import type { Provider } from '../../contracts/domain.ts';
import type {
  CollectionDoc,
  FeaturedDoc,
  GenresDoc,
  LinksDoc,
  MediaDoc,
  RankingDoc,
  SeasonsDoc,
  TrendingDoc,
} from '../../contracts/readModels.ts';
import type { SnapshotRow } from './arrowSchema.ts';

/** What the builder needs of the link-token codec (services/links/linkTokens.ts). */
export interface LinkTokenEncoder {
  encode(webUrl: string): string;
  /** `encode` of many URLs in one batch, when the codec can (much cheaper per token). */
  encodeMany?(webUrls: readonly string[]): string[];
}

/** Code-unit order (byte order for the ASCII ids and slugs the files sort by), nulls first. */
export function compareNullable(a: string | number | null, b: string | number | null): number {
  if (a === b) return 0;
  if (a === null) return -1;
  if (b === null) return 1;
  return a < b ? -1 : 1;
}

type RowOrder = (a: SnapshotRow, b: SnapshotRow) => number;

/**
 * Rows compared by `keys` in turn, each in compareNullable's order (a missing value as null).
 * Compiled once per key list, reading each key by name: a loop reading `row[key]` for every
 * key at one site is a megamorphic keyed load per comparison, and the release sorts the rows
 * of every title (~3 % of the build's main thread at 50,000 titles). The keys are the
 * module's own constants, quoted by JSON.stringify.
 */
function compareBy(keys: readonly string[]): RowOrder {
  const steps = keys.map((key) => {
    const k = JSON.stringify(key);
    return `o = compare(a[${k}] ?? null, b[${k}] ?? null); if (o !== 0) return o;`;
  });
  const make = new Function('compare', `return (a, b) => { let o; ${steps.join(' ')} return 0; };`) as (compare: typeof compareNullable) => RowOrder;
  return make(compareNullable);
}

/**
 * `values` in the default sort's order: themselves when already in it, as a stored list usually
 * is, rather than a copy per offer (a million offers a country in a large catalog). Only
 * strings are compared here; anything else takes the default sort (which orders by String()).
 */
function sortedValues(values: readonly string[] | null): readonly string[] | null {
  if (values === null) return null;
  for (let i = 1; i < values.length; i++) {
    const a = values[i - 1];
    const b = values[i];
    if (typeof a !== 'string' || typeof b !== 'string' || a > b) return [...values].sort();
  }
  return values;
}

const LINK_ORDER = compareBy(['season_number', 'episode_number', 'provider_id', 'addon_provider_id', 'link_token']);

/** `tokens[from + i]` is the link token of `doc.offers[i]` (a build makes a page's tokens in one batch). */
export function linkRows(doc: LinksDoc, tokens: readonly string[], from = 0): SnapshotRow[] {
  const rows = doc.offers.map((o, i): SnapshotRow => ({
    media_id: doc.mediaId,
    season_number: o.seasonNumber,
    episode_number: o.episodeNumber,
    provider_id: o.providerId,
    addon_provider_id: o.addonProviderId,
    link_token: tokens[from + i] as string,
    available_from: o.availableFrom,
    available_to: o.availableTo,
    first_seen_at: o.firstSeenAt,
    price_types: sortedValues(o.priceTypes),
    formats: o.formats,
    audio_languages: o.audioLanguages,
    subtitle_languages: o.subtitleLanguages,
    platforms: o.platforms,
  }));
  return ascending(rows, LINK_ORDER, false) ? rows : rows.sort(LINK_ORDER);
}

export function rankingRows(doc: RankingDoc): SnapshotRow[] {
  return [...doc.entries]
    .sort((a, b) => a.position - b.position)
    .map((e) => ({ position: e.position, media_id: e.mediaId, kind: e.kind, score: e.score, points: e.points, date: doc.date }));
}

export function trendingRows(doc: TrendingDoc): SnapshotRow[] {
  return [...doc.entries]
    .sort((a, b) => compareNullable(a.mediaId, b.mediaId))
    .map((e) => ({
      date: doc.date,
      media_id: e.mediaId,
      kind: e.kind,
      position: e.position,
      previous_position: e.previousPosition,
      change: e.position === null || e.previousPosition === null ? null : e.previousPosition - e.position,
    }));
}

export function mediaDetailsRow(doc: MediaDoc): SnapshotRow {
  const d = doc.details;
  return {
    media_id: doc.id,
    kind: doc.kind,
    slug: doc.slug,
    title: d.title,
    original_title: d.originalTitle,
    year: d.year,
    release_date: d.releaseDate,
    tagline: d.tagline,
    overview: d.overview,
    classification: d.classification,
    poster: d.poster,
    backdrop: d.backdrop,
    popularity: d.popularity,
    tmdb_rating: d.tmdbRating,
    vote_count: d.voteCount,
    first_seen_at: doc.firstSeenAt,
  };
}

export function movieRow(doc: MediaDoc): SnapshotRow {
  return { media_id: doc.id, runtime: doc.details.runtime, release_date: doc.details.releaseDate };
}

export interface SeasonCounts {
  seasons: number;
  episodes: number;
}

/**
 * What tv_shows.parquet needs of a show's media document, kept from the media pass until the
 * seasons pass has counted its seasons (the two passes may run at once, on two threads).
 */
export interface TvShowFields {
  mediaId: string;
  inProduction: boolean | null;
  lastAirDate: string | null;
  runtime: number | null;
}

export function tvShowFields(doc: MediaDoc): TvShowFields {
  const d = doc.details;
  return { mediaId: doc.id, inProduction: d.inProduction, lastAirDate: d.lastAirDate, runtime: d.runtime };
}

export function tvShowRow(show: TvShowFields, counts: SeasonCounts | undefined): SnapshotRow {
  return {
    media_id: show.mediaId,
    in_production: show.inProduction,
    last_air_date: show.lastAirDate,
    runtime: show.runtime,
    season_count: counts?.seasons ?? 0,
    episode_count: counts?.episodes ?? 0,
  };
}

export function seasonRows(doc: SeasonsDoc): { seasons: SnapshotRow[]; episodes: SnapshotRow[]; counts: SeasonCounts } {
  const seasons = [...doc.seasons].sort((a, b) => a.seasonNumber - b.seasonNumber);
  const episodes: SnapshotRow[] = [];
  for (const s of seasons) {
    for (const e of [...s.episodes].sort((a, b) => a.episodeNumber - b.episodeNumber)) {
      episodes.push({
        media_id: doc.mediaId,
        season_number: s.seasonNumber,
        episode_number: e.episodeNumber,
        title: e.title,
        overview: e.overview,
        backdrop: e.backdrop,
        air_date: e.airDate,
      });
    }
  }
  return {
    seasons: seasons.map((s) => ({
      media_id: doc.mediaId,
      season_number: s.seasonNumber,
      title: s.title,
      overview: s.overview,
      poster: s.poster,
      air_date: s.airDate,
      episode_count: s.episodes.length,
    })),
    episodes,
    counts: { seasons: seasons.length, episodes: episodes.length },
  };
}

/**
 * Whether `rows` already ascend by `order` (`strict`: with no two equal). The stored lists
 * usually do (the crawl keeps them ordered), and checking costs one comparison per row where
 * the sort of a short list costs about log2(n) per row (binary insertion) and the distinct
 * filter another list. The result is the same either way: the sort is stable.
 */
function ascending(rows: readonly SnapshotRow[], order: RowOrder, strict: boolean): boolean {
  for (let i = 1; i < rows.length; i++) {
    const o = order(rows[i - 1] as SnapshotRow, rows[i] as SnapshotRow);
    if (o > 0 || (strict && o === 0)) return false;
  }
  return true;
}

/** Distinct values only: a crawler repeating an entry must not duplicate a row. */
function distinctSorted(rows: SnapshotRow[], order: RowOrder): SnapshotRow[] {
  if (rows.length < 2 || ascending(rows, order, true)) return rows;
  const sorted = rows.sort(order);
  return sorted.filter((row, i) => i === 0 || order(sorted[i - 1] as SnapshotRow, row) !== 0);
}

const GENRE_ORDER = compareBy(['genre_id']);
const ID_ORDER = compareBy(['source', 'external_id']);
const RATING_ORDER = compareBy(['source', 'rating']);
const TALENT_ORDER = compareBy(['cast_order', 'person_id', 'role', 'character']);
const VIDEO_ORDER = compareBy(['source', 'video_id']);

export function mediaGenreRows(doc: MediaDoc): SnapshotRow[] {
  return distinctSorted(doc.details.genreIds.map((id) => ({ media_id: doc.id, genre_id: id })), GENRE_ORDER);
}

export function mediaIdRows(doc: MediaDoc): SnapshotRow[] {
  return distinctSorted(
    doc.details.externalIds.map((x) => ({ media_id: doc.id, source: x.source, external_id: x.id })),
    ID_ORDER,
  );
}

export function mediaRatingRows(doc: MediaDoc): SnapshotRow[] {
  return distinctSorted(doc.details.ratings.map((r) => ({ media_id: doc.id, source: r.source, rating: r.rating })), RATING_ORDER);
}

export function mediaTalentRows(doc: MediaDoc): SnapshotRow[] {
  return distinctSorted(
    doc.details.cast.map((m) => ({ media_id: doc.id, cast_order: m.order, person_id: m.personId, role: m.role, character: m.character })),
    TALENT_ORDER,
  );
}

export function mediaVideoRows(doc: MediaDoc): SnapshotRow[] {
  return distinctSorted(doc.details.videos.map((v) => ({ media_id: doc.id, source: v.source, video_id: v.id })), VIDEO_ORDER);
}

export function translationRow(doc: MediaDoc, language: string): SnapshotRow | null {
  const t = doc.translations[language];
  if (!t) return null;
  return { media_id: doc.id, title: t.title, overview: t.overview, tagline: t.tagline, poster: t.poster, backdrop: t.backdrop };
}

export function genreRows(doc: GenresDoc | null): SnapshotRow[] {
  return [...(doc?.genres ?? [])].sort((a, b) => a.id - b.id).map((g) => ({ genre_id: g.id, slug: g.slug, name: g.name }));
}

export function providerRows(country: string, providers: readonly Provider[]): SnapshotRow[] {
  return [...providers]
    .sort((a, b) => compareNullable(a.id, b.id))
    .map((p) => ({ country, provider_id: p.id, parent_id: p.parentId, name: p.name, logo: p.logo, short_id: p.shortId }));
}

/** `rank` follows the providers read model's order: heaviest first, ties by id. */
export function providerWeightRows(country: string, providers: readonly Provider[]): SnapshotRow[] {
  const ranked = [...providers].sort((a, b) => b.weight - a.weight || compareNullable(a.id, b.id));
  return ranked
    .map((p, i) => ({ country, provider_id: p.id, weight: p.weight, rank: i + 1 }))
    .sort((a, b) => compareNullable(a.provider_id, b.provider_id));
}

export function collectionRows(doc: CollectionDoc): SnapshotRow[] {
  const base = {
    slug: doc.slug,
    collection_id: doc.id,
    name: doc.name,
    description: doc.description,
    country: doc.country,
    language: doc.language,
  };
  if (doc.items.length === 0) return [{ ...base, item_index: null, media_id: null, position: null }];
  return doc.items.map((item, i) => ({ ...base, item_index: i, media_id: item.mediaId, position: item.position }));
}

export function featuredRows(doc: FeaturedDoc): SnapshotRow[] {
  const rows: SnapshotRow[] = [];
  for (const [period, items] of [['daily', doc.daily], ['weekly', doc.weekly]] as const) {
    const sorted = [...items].sort((a, b) => a.position - b.position || compareNullable(a.mediaId, b.mediaId));
    for (const item of sorted) rows.push({ country: doc.country, period, position: item.position, media_id: item.mediaId });
  }
  return rows;
}
