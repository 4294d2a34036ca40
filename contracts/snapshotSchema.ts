/**
 * The columns of every file of a weekly release: the one definition that both writes the
 * Parquet files (services/snapshot maps it to an Arrow schema) and answers `GET /v1/schemas`,
 * so the documented schema cannot drift from the files. Pure data.
 *
 * Types are Parquet-ish strings: `UTF8`, `INT16`, `INT32`, `DOUBLE`, `BOOLEAN`, `DATE`
 * (days, `YYYY-MM-DD` in the read models) and `LIST<UTF8>`. Every file is written in its
 * `sorted_by` order, nulls first, strings by code unit (byte order for ASCII ids).
 */

export type SnapshotColumnType = 'UTF8' | 'INT16' | 'INT32' | 'DOUBLE' | 'BOOLEAN' | 'DATE' | 'LIST<UTF8>';

export interface SnapshotColumn {
  name: string;
  type: SnapshotColumnType;
  nullable: boolean;
  description: string;
}

export interface SnapshotFileSchema {
  /**
   * The file's name: the path inside a country directory (`links.parquet`), inside
   * metadata.tar.gz (`media_details.parquet`), or the pattern of the translation overlays
   * (`metadata/translations/lang_<language_code>.parquet`).
   */
  file: string;
  description: string;
  /** `per-country`: one file in each `country=<cc>/` directory; `global`: one per release. */
  location: 'per-country' | 'global';
  sorted_by: string[];
  columns: SnapshotColumn[];
}

/** Bumped whenever a column is added, removed, renamed or retyped in any file. */
export const SNAPSHOT_SCHEMA_VERSION = 1;

/** Where the schema is explained when the caller does not say (the API passes its own OpenAPI URL). */
export const SNAPSHOT_DOCS_DEFAULT = '/v1/openapi';

export const SNAPSHOT_LICENSE_NOTE =
  'Open data: free for personal, research and non-commercial use. Commercial use needs a separate license. '
  + 'Download a file with GET /v1/snapshots/download?path=<path> (API key required), then fetch its download_url with the same key.';

const c = (name: string, type: SnapshotColumnType, nullable: boolean, description: string): SnapshotColumn => ({
  name, type, nullable, description,
});

const mediaId = c('media_id', 'UTF8', false, 'Media id: `mv` + 8 digits for movies, `tv` + 8 digits for TV shows.');
const kind = c('kind', 'UTF8', false, '`movie` or `tv_show`.');

export const LINKS_FILE: SnapshotFileSchema = {
  file: 'links.parquet',
  description: 'Streaming links of every title available in the country, one row per offer.',
  location: 'per-country',
  sorted_by: ['media_id', 'season_number', 'episode_number', 'provider_id', 'addon_provider_id', 'link_token'],
  columns: [
    mediaId,
    c('season_number', 'INT16', true, 'Season of a TV show link; null for movies and show-level links.'),
    c('episode_number', 'INT16', true, 'Episode of a TV show link; null for movies, show- and season-level links.'),
    c('provider_id', 'UTF8', false, 'Provider slug (see providers.parquet).'),
    c('addon_provider_id', 'UTF8', true, 'Add-on channel provider slug, when the offer is through a channel.'),
    c('link_token', 'UTF8', false, 'Encrypted redirect token; follow it with GET /go/{link_token}.'),
    c('available_from', 'DATE', true, 'Launch date of the offer.'),
    c('available_to', 'DATE', true, 'Expiry date of the offer.'),
    c('first_seen_at', 'DATE', true, 'Day the offer was first observed.'),
    c('price_types', 'LIST<UTF8>', true, 'Sorted: flatrate, rent, buy, free, cinema, ads, fast, flatrate_and_buy.'),
    c('formats', 'LIST<UTF8>', true, 'sd, hd, uhd, 4k.'),
    c('audio_languages', 'LIST<UTF8>', true, 'ISO 639-1 codes.'),
    c('subtitle_languages', 'LIST<UTF8>', true, 'ISO 639-1 codes.'),
    c('platforms', 'LIST<UTF8>', true, 'Platforms with deep links: web, ios, android, android_tv, fire_tv, roku, webos.'),
  ],
};

export const RANKINGS_FILE: SnapshotFileSchema = {
  file: 'rankings.parquet',
  description: "The country's latest overall popularity ranking (availability, ratings and recency).",
  location: 'per-country',
  sorted_by: ['position'],
  columns: [
    c('position', 'INT32', false, '1 = most popular.'),
    mediaId,
    kind,
    c('score', 'DOUBLE', false, 'Ranking score.'),
    c('points', 'DOUBLE', false, 'Ranking points.'),
    c('date', 'DATE', false, 'Day the ranking was computed.'),
  ],
};

export const TRENDING_FILE: SnapshotFileSchema = {
  file: 'trending.parquet',
  description: 'Daily trending positions of the seven days ending with the release week (or the build day, if earlier): '
    + 'one row per title that moved, entered or left the chart that day.',
  location: 'per-country',
  sorted_by: ['date', 'media_id'],
  columns: [
    c('date', 'DATE', false, 'Day of the position change.'),
    mediaId,
    kind,
    c('position', 'INT32', true, 'Position that day; null when the title left the chart.'),
    c('previous_position', 'INT32', true, 'Position the day before; null when the title entered the chart.'),
    c('change', 'INT32', true, 'previous_position - position (positive = climbed); null when entered or left.'),
  ],
};

const linkFields: Array<[string, SnapshotColumnType, string]> = [
  ['price_types', 'LIST<UTF8>', 'price types'],
  ['formats', 'LIST<UTF8>', 'formats'],
  ['audio_languages', 'LIST<UTF8>', 'audio languages'],
  ['subtitle_languages', 'LIST<UTF8>', 'subtitle languages'],
  ['available_from', 'DATE', 'launch date'],
  ['available_to', 'DATE', 'expiry date'],
  ['platforms', 'LIST<UTF8>', 'platforms with deep links'],
];

export const CHANGES_FILE: SnapshotFileSchema = {
  file: 'changes.parquet',
  description: 'Every change of the release week (Monday to Sunday, UTC, by `at`) to the streaming links of the country, '
    + 'one row per offer that appeared, disappeared or changed: the rows GET /v1/changes answers for that week, in its order.',
  location: 'per-country',
  sorted_by: ['change_id'],
  columns: [
    c('change_id', 'UTF8', false, 'The change `id` of GET /v1/changes (unique and stable; sorts in feed order).'),
    c('at', 'UTF8', false, 'RFC 3339 UTC time of the observation that caused the change.'),
    c('date', 'DATE', false, 'UTC day of `at`.'),
    c('type', 'UTF8', false, '`new`, `removed` or `updated`.'),
    mediaId,
    kind,
    c('provider_id', 'UTF8', false, 'Provider slug.'),
    c('addon_provider_id', 'UTF8', true, 'Add-on channel provider slug.'),
    c('season_number', 'INT16', true, 'Season of a TV show link.'),
    c('episode_number', 'INT16', true, 'Episode of a TV show link.'),
    c('link_token', 'UTF8', false, 'Encrypted redirect token of the offer.'),
    c('changed', 'LIST<UTF8>', false, 'Link fields that differ (empty for new and removed).'),
    ...linkFields.flatMap(([name, type, what]) => [
      c(`before_${name}`, type, true, `Before the change: ${what} (null for new).`),
      c(`after_${name}`, type, true, `After the change: ${what} (null for removed).`),
    ]),
  ],
};

const metadata = (file: string, description: string, sorted_by: string[], columns: SnapshotColumn[]): SnapshotFileSchema => ({
  file, description, location: 'global', sorted_by, columns,
});

/** The sixteen core metadata files bundled in metadata.tar.gz, in bundle order. */
export const METADATA_FILES: readonly SnapshotFileSchema[] = [
  metadata('media_details.parquet', 'Every title with its base (English) metadata.', ['media_id'], [
    mediaId,
    kind,
    c('slug', 'UTF8', false, 'URL slug.'),
    c('title', 'UTF8', false, 'Title.'),
    c('original_title', 'UTF8', true, 'Original title.'),
    c('year', 'INT16', true, 'Release year (first air year for TV shows).'),
    c('release_date', 'DATE', true, 'Release date.'),
    c('tagline', 'UTF8', true, 'Tagline.'),
    c('overview', 'UTF8', true, 'Overview.'),
    c('classification', 'UTF8', true, 'Classification.'),
    c('poster', 'UTF8', true, 'Path template `/posters/{size}/<image-id>.{ext}`.'),
    c('backdrop', 'UTF8', true, 'Path template `/backdrops/{size}/<image-id>.{ext}`.'),
    c('popularity', 'DOUBLE', true, 'Popularity.'),
    c('tmdb_rating', 'DOUBLE', true, 'TMDB rating.'),
    c('vote_count', 'INT32', true, 'Number of votes behind tmdb_rating.'),
    c('first_seen_at', 'DATE', false, 'Day the title was first observed.'),
  ]),
  metadata('movies.parquet', 'Movie-specific fields.', ['media_id'], [
    mediaId,
    c('runtime', 'INT32', true, 'Runtime in minutes.'),
    c('release_date', 'DATE', true, 'Release date.'),
  ]),
  metadata('tv_shows.parquet', 'TV-show-specific fields.', ['media_id'], [
    mediaId,
    c('in_production', 'BOOLEAN', true, 'Whether new episodes are being made.'),
    c('last_air_date', 'DATE', true, 'Air date of the latest episode.'),
    c('runtime', 'INT32', true, 'Typical episode runtime in minutes.'),
    c('season_count', 'INT16', false, 'Seasons known.'),
    c('episode_count', 'INT32', false, 'Episodes known, over all seasons.'),
  ]),
  metadata('seasons.parquet', 'Seasons of TV shows.', ['media_id', 'season_number'], [
    mediaId,
    c('season_number', 'INT16', false, 'Season number (0 = specials).'),
    c('title', 'UTF8', false, 'Season title.'),
    c('overview', 'UTF8', true, 'Overview.'),
    c('poster', 'UTF8', true, 'Path template `/posters/{size}/<image-id>.{ext}`.'),
    c('air_date', 'DATE', true, 'First air date.'),
    c('episode_count', 'INT16', false, 'Episodes in the season.'),
  ]),
  metadata('episodes.parquet', 'Episodes of TV shows.', ['media_id', 'season_number', 'episode_number'], [
    mediaId,
    c('season_number', 'INT16', false, 'Season number.'),
    c('episode_number', 'INT16', false, 'Episode number within the season.'),
    c('title', 'UTF8', false, 'Episode title.'),
    c('overview', 'UTF8', true, 'Overview.'),
    c('backdrop', 'UTF8', true, 'Path template `/backdrops/{size}/<image-id>.{ext}`.'),
    c('air_date', 'DATE', true, 'Air date.'),
  ]),
  metadata('media_genres.parquet', 'Genres of each title.', ['media_id', 'genre_id'], [
    mediaId,
    c('genre_id', 'INT32', false, 'Genre id (see genres.parquet).'),
  ]),
  metadata('genres.parquet', 'The genre table.', ['genre_id'], [
    c('genre_id', 'INT32', false, 'Genre id.'),
    c('slug', 'UTF8', false, 'Genre slug (the value of the API `genre` filter).'),
    c('name', 'UTF8', false, 'English name.'),
  ]),
  metadata('media_ids.parquet', 'Identifiers of each title in external catalogs.', ['media_id', 'source', 'external_id'], [
    mediaId,
    c('source', 'UTF8', false, 'External catalog, e.g. `imdb`, `tmdb`.'),
    c('external_id', 'UTF8', false, 'Identifier in that catalog.'),
  ]),
  metadata('media_ratings.parquet', 'Ratings of each title by source.', ['media_id', 'source'], [
    mediaId,
    c('source', 'UTF8', false, 'Rating source, e.g. `imdb`.'),
    c('rating', 'DOUBLE', false, 'Rating on that source\'s scale.'),
  ]),
  metadata('media_talents.parquet', 'Cast and crew of each title.', ['media_id', 'cast_order', 'person_id', 'role'], [
    mediaId,
    c('cast_order', 'INT32', false, 'Billing order.'),
    c('person_id', 'UTF8', false, 'Person id (see peoples.parquet).'),
    c('role', 'UTF8', false, '`actor`, `director`, `writer`, ...'),
    c('character', 'UTF8', true, 'Character played, for actors.'),
  ]),
  metadata('peoples.parquet', 'Every person in media_talents, once.', ['person_id'], [
    c('person_id', 'UTF8', false, 'Person id.'),
    c('name', 'UTF8', false, 'Name (as last seen in a title\'s cast).'),
  ]),
  metadata('media_videos.parquet', 'Trailers and clips of each title.', ['media_id', 'source', 'video_id'], [
    mediaId,
    c('source', 'UTF8', false, 'Video host, e.g. `youtube`.'),
    c('video_id', 'UTF8', false, 'Video id on that host.'),
  ]),
  metadata('providers.parquet', 'Streaming providers per country.', ['country', 'provider_id'], [
    c('country', 'UTF8', false, 'ISO 3166-1 alpha-2, upper case.'),
    c('provider_id', 'UTF8', false, 'Provider slug.'),
    c('parent_id', 'UTF8', true, 'Parent provider of a child/add-on provider.'),
    c('name', 'UTF8', false, 'Display name.'),
    c('logo', 'UTF8', true, 'Logo path.'),
    c('short_id', 'UTF8', true, 'Short id (the value of the API `provider` filter).'),
  ]),
  metadata('provider_weights.parquet', 'Provider popularity weights per country.', ['country', 'provider_id'], [
    c('country', 'UTF8', false, 'ISO 3166-1 alpha-2, upper case.'),
    c('provider_id', 'UTF8', false, 'Provider slug.'),
    c('weight', 'DOUBLE', false, 'Weight: higher-weight providers are listed first.'),
    c('rank', 'INT16', false, '1 = the heaviest provider of the country (ties by provider id).'),
  ]),
  metadata('collections.parquet', 'Curated collections, one row per item in curator order; a collection without items has one row with null item fields.', ['slug', 'item_index'], [
    c('slug', 'UTF8', false, 'Collection slug.'),
    c('collection_id', 'UTF8', false, 'Collection id.'),
    c('name', 'UTF8', false, 'Name.'),
    c('description', 'UTF8', true, 'Description.'),
    c('country', 'UTF8', true, 'Country it is shown in; null = every country.'),
    c('language', 'UTF8', true, 'Language of the collection.'),
    c('item_index', 'INT32', true, '0-based index of the item in curator order.'),
    c('media_id', 'UTF8', true, 'Media id of the item.'),
    c('position', 'INT32', true, 'Position shown for the item, when the curator gave one.'),
  ]),
  metadata('featured.parquet', 'Hand-picked featured titles per country and period.', ['country', 'period', 'position', 'media_id'], [
    c('country', 'UTF8', false, 'ISO 3166-1 alpha-2, upper case.'),
    c('period', 'UTF8', false, '`daily` or `weekly`.'),
    c('position', 'INT16', false, 'Position in the selection.'),
    mediaId,
  ]),
];

export const TRANSLATIONS_FILE: SnapshotFileSchema = {
  file: 'metadata/translations/lang_<language_code>.parquet',
  description: 'Language overlay: one row per title with a translation in that language; null fields fall back to media_details.',
  location: 'global',
  sorted_by: ['media_id'],
  columns: [
    mediaId,
    c('title', 'UTF8', true, 'Translated title.'),
    c('overview', 'UTF8', true, 'Translated overview.'),
    c('tagline', 'UTF8', true, 'Translated tagline.'),
    c('poster', 'UTF8', true, 'Localized poster path template.'),
    c('backdrop', 'UTF8', true, 'Localized backdrop path template.'),
  ],
};

export const PER_COUNTRY_FILES: readonly SnapshotFileSchema[] = [LINKS_FILE, RANKINGS_FILE, TRENDING_FILE, CHANGES_FILE];

/** Every file definition, in the order `GET /v1/schemas` lists them. */
export const SNAPSHOT_FILES: readonly SnapshotFileSchema[] = [...PER_COUNTRY_FILES, ...METADATA_FILES, TRANSLATIONS_FILE];

/** Name of the metadata bundle in a release. */
export const METADATA_BUNDLE = 'metadata.tar.gz';

/** Release paths, shared by the writer and the readers. */
export const releasePaths = {
  country: (country: string, file: string): string => `country=${country}/${file}`,
  translation: (language: string): string => `metadata/translations/lang_${language}.parquet`,
};

/** A release label `<ISO year>-W<two-digit ISO week>`, e.g. `2026-W47`. */
export const RELEASE_VERSION_PATTERN = /^\d{4}-W(0[1-9]|[1-4]\d|5[0-3])$/;

/** The body of `GET /v1/schemas`. */
export function schemaDefinitions(docs: string = SNAPSHOT_DOCS_DEFAULT): {
  schema_version: number;
  description: string;
  docs: string;
  files: SnapshotFileSchema[];
} {
  return {
    schema_version: SNAPSHOT_SCHEMA_VERSION,
    description: 'Columns of every file in a weekly release: per-country links, rankings, trending and changes; '
      + `the sixteen metadata files of ${METADATA_BUNDLE}; and the per-language translation overlays.`,
    docs,
    files: SNAPSHOT_FILES.map((f) => ({ ...f, sorted_by: [...f.sorted_by], columns: f.columns.map((col) => ({ ...col })) })),
  };
}

/**
 * Whether a string is a well-formed release file path: relative, `/`-separated, no empty,
 * `.` or `..` segment, and only the characters release paths use. Readers still match paths
 * against the manifest exactly; this only refuses what can never be a release file.
 */
export function isReleasePath(path: string): boolean {
  if (path.length === 0 || path.length > 512) return false;
  if (!/^[A-Za-z0-9._=-]+(\/[A-Za-z0-9._=-]+)*$/.test(path)) return false;
  return path.split('/').every((segment) => segment !== '.' && segment !== '..');
}
