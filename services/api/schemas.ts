/**
 * OpenAPI 3.0.3 schemas of every response body (components.schemas). Nullability is exact:
 * `nullable: true` where the API contract says "null", and `required` lists every `req` field.
 */
import { FORMATS, LOCALES, PLATFORMS, PRICE_TYPES } from '../../contracts/domain.ts';

export type Schema = Record<string, unknown>;

const s = (): Schema => ({ type: 'string' });
const ns = (): Schema => ({ type: 'string', nullable: true });
const int = (): Schema => ({ type: 'integer' });
const nint = (): Schema => ({ type: 'integer', nullable: true });
const num = (): Schema => ({ type: 'number' });
const nnum = (): Schema => ({ type: 'number', nullable: true });
const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const arr = (items: Schema): Schema => ({ type: 'array', items });
const date = (nullable = false): Schema => ({ type: 'string', format: 'date', ...(nullable ? { nullable: true } : {}) });
const kind = (): Schema => ({ type: 'string', enum: ['movie', 'tv_show'] });

function obj(properties: Record<string, Schema>, optional: string[] = []): Schema {
  return {
    type: 'object',
    required: Object.keys(properties).filter((k) => !optional.includes(k)),
    properties,
  };
}

const listItemProps = (): Record<string, Schema> => ({
  id: s(),
  slug: s(),
  title: s(),
  original_title: ns(),
  year: nint(),
  kind: kind(),
  poster: { ...ns(), description: 'Path template `/posters/{size}/<image-id>.{ext}`; sizes w200, w500.' },
  backdrop: { ...ns(), description: 'Path template `/backdrops/{size}/<image-id>.{ext}`; sizes w780, w1280.' },
  genres: { ...arr(s()), description: 'Genre slugs (the values the `genre` filter takes).' },
  popularity: num(),
  tmdb_rating: nnum(),
});

function envelope(item: Schema, extra: Record<string, Schema> = {}): Schema {
  return obj({
    total: { ...int(), description: 'Items before pagination.' },
    limit: { ...int(), description: 'The page size applied (after clamping to the maximum).' },
    offset: { ...int(), description: 'Items skipped.' },
    results: arr(item),
    ...extra,
  });
}

const collectionFields = (): Record<string, Schema> => ({
  id: s(),
  name: s(),
  slug: s(),
  description: ns(),
  country: { ...ns(), description: 'null: shown in every country.' },
  language: ns(),
});

export const schemas: Record<string, Schema> = {
  Error: obj(
    {
      error: { ...s(), description: 'A sentence for a person.' },
      code: {
        type: 'string',
        enum: ['unauthorized', 'invalid_parameter', 'missing_parameter', 'not_found', 'forbidden',
          'rate_limited', 'unavailable', 'internal', 'method_not_allowed'],
      },
      details: { type: 'object', additionalProperties: true, description: 'For example `{"parameter": "limit"}`.' },
    },
    ['details'],
  ),
  Genre: obj({ id: int(), slug: s(), name: s() }),
  Rating: obj({ source: s(), rating: num() }),
  ExternalId: obj({ source: s(), id: s() }),
  Video: obj({ source: s(), id: s() }),
  Translation: obj({ title: ns(), overview: ns(), tagline: ns(), poster: ns(), backdrop: ns() }),
  Media: obj(
    {
      id: s(),
      slug: s(),
      title: s(),
      original_title: ns(),
      year: nint(),
      content_type: kind(),
      tagline: ns(),
      overview: ns(),
      classification: ns(),
      poster: ns(),
      backdrop: ns(),
      popularity: nnum(),
      tmdb_rating: nnum(),
      vote_count: nint(),
      runtime: nint(),
      in_production: { type: 'boolean', nullable: true },
      last_air_date: date(true),
      genres: arr(ref('Genre')),
      ratings: arr(ref('Rating')),
      external_ids: arr(ref('ExternalId')),
      videos: arr(ref('Video')),
      content_rating: { ...ns(), description: 'The rating for the requested country (default US).' },
      translation: { ...ref('Translation'), description: 'Present only when `lang` is given and an overlay exists.' },
      image_base: { ...s(), description: 'Base URL to prefix to `poster` and `backdrop`.' },
    },
    ['runtime', 'in_production', 'last_air_date', 'translation'],
  ),
  StreamingLink: obj(
    {
      provider_id: s(),
      addon_provider_id: ns(),
      link_token: { ...s(), description: 'Redirect token: `GET /go/{link_token}`.' },
      price_types: { ...arr({ type: 'string', enum: [...PRICE_TYPES] }), nullable: true },
      formats: { ...arr({ type: 'string', enum: [...FORMATS] }), nullable: true },
      audio_languages: { ...arr(s()), nullable: true },
      subtitle_languages: { ...arr(s()), nullable: true },
      available_from: date(true),
      available_to: date(true),
      platforms: { ...arr({ type: 'string', enum: [...PLATFORMS] }), nullable: true },
      season_number: { ...nint(), description: 'TV shows only; null for a show-level link.' },
      episode_number: { ...nint(), description: 'TV shows only; null for a show- or season-level link.' },
    },
    ['season_number', 'episode_number'],
  ),
  StreamingLinks: arr(ref('StreamingLink')),
  Season: obj({ season_number: int(), title: s(), overview: ns(), poster: ns(), air_date: date(true), episode_count: int() }),
  Seasons: obj({ media_id: s(), seasons: arr(ref('Season')) }),
  Episode: obj({ episode_number: int(), title: s(), overview: ns(), backdrop: ns(), air_date: date(true) }),
  Episodes: obj({ media_id: s(), season_number: int(), episodes: arr(ref('Episode')) }),
  MediaListItem: obj(listItemProps()),
  RankingItem: obj({ ...listItemProps(), position: int(), score: num(), points: num() }),
  TrendingItem: obj({
    ...listItemProps(),
    position: { ...int(), description: 'Position on `date`.' },
    previous_position: { ...nint(), description: 'Position the day before; null when the title entered the chart.' },
    change: { ...nint(), description: '`previous_position - position`; null when new.' },
    date: date(),
  }),
  FeaturedItem: obj({ ...listItemProps(), position: int(), period: { type: 'string', enum: ['daily', 'weekly'] } }),
  CollectionItem: obj({ ...listItemProps(), position: nint() }),
  SearchResults: envelope(ref('MediaListItem'), {
    query: s(),
    country: s(),
    lang: { type: 'string', enum: [...LOCALES] },
    processing_time_ms: num(),
  }),
  Rankings: envelope(ref('RankingItem'), { country: s(), date: { ...date(true), description: 'Day ranked; null when no ranking exists yet.' } }),
  Trending: envelope(ref('TrendingItem'), {
    country: s(),
    date: { ...date(true), description: 'The day shown; null when no trending day exists yet.' },
  }),
  Featured: obj({
    country: s(),
    updated_at: { type: 'string', format: 'date-time', nullable: true, description: 'null when nothing is featured yet.' },
    results: arr(ref('FeaturedItem')),
  }),
  CollectionSummary: obj(collectionFields()),
  Collections: obj({ country: s(), collections: arr(ref('CollectionSummary')) }),
  CollectionDetail: envelope(ref('CollectionItem'), collectionFields()),
  Provider: obj({ id: s(), parent_id: ns(), name: s(), logo: ns(), short_id: ns(), weight: num() }),
  Providers: obj({ country: s(), providers: arr(ref('Provider')) }),
  Locales: obj({ locales: arr({ type: 'string', enum: [...LOCALES] }) }),
  SnapshotListing: obj({
    latest: { ...s(), description: 'Release label `<year>-W<week>`.' },
    published_at: { type: 'string', format: 'date-time' },
    countries: arr(s()),
    total_files: num(),
    total_size_bytes: num(),
    files: arr(obj({ path: s(), size_bytes: num(), sha256: s() }, ['sha256'])),
    download_base: s(),
    note: s(),
  }),
  SnapshotDownload: obj({
    version: s(),
    path: s(),
    size_bytes: num(),
    download_url: s(),
    expires_at: { type: 'string', format: 'date-time' },
  }),
  SnapshotSchemas: obj({
    schema_version: num(),
    description: s(),
    docs: s(),
    files: arr(obj(
      {
        file: s(),
        description: s(),
        location: { type: 'string', enum: ['per-country', 'global'] },
        sorted_by: arr(s()),
        columns: arr(obj({ name: s(), type: s(), nullable: { type: 'boolean' }, description: s() })),
      },
      ['sorted_by'],
    )),
  }),
  Health: obj(
    {
      status: s(),
      components: {
        ...arr(obj({ name: s(), state: s() })),
        description: '`/readyz`: each background loop and dependency of the process with its state.',
      },
    },
    ['components'],
  ),
  // History, changes and alerts.
  Change: obj({
    id: { ...s(), description: 'Unique and stable: deduplicate on it.' },
    type: { type: 'string', enum: ['new', 'removed', 'updated'] },
    at: { type: 'string', format: 'date-time', description: 'When the observation that caused it was made.' },
    country: s(),
    media_id: s(),
    kind: kind(),
    title: { ...ns(), description: "The title's current name; null when its details are not known yet." },
    provider_id: s(),
    addon_provider_id: ns(),
    season_number: { ...nint(), description: 'TV shows: the season of a season or episode link; null otherwise.' },
    episode_number: { ...nint(), description: 'TV shows: the episode of an episode link; null otherwise.' },
    before: { ...ref('StreamingLink'), nullable: true, description: 'The link before the change; null for `new`.' },
    after: { ...ref('StreamingLink'), nullable: true, description: 'The link after the change; null for `removed`.' },
    changed: {
      ...arr({ type: 'string', enum: ['price_types', 'formats', 'audio_languages', 'subtitle_languages', 'available_from', 'available_to', 'platforms'] }),
      description: 'Link fields that differ between `before` and `after`; empty for `new` and `removed`.',
    },
  }),
  Changes: obj({
    country: s(),
    results: arr(ref('Change')),
    next_cursor: { ...s(), description: 'Pass as `since` to continue after this page; always present.' },
    has_more: { type: 'boolean', description: 'More changes may follow now; false: the feed is read to its end for the moment.' },
  }),
  HistoryInterval: obj({
    provider_id: s(),
    addon_provider_id: ns(),
    season_number: nint(),
    episode_number: nint(),
    price_types: { ...arr({ type: 'string', enum: [...PRICE_TYPES] }), nullable: true },
    formats: { ...arr({ type: 'string', enum: [...FORMATS] }), nullable: true },
    from: { ...date(), description: 'First day (inclusive) the offer stood in this state at the end of the day.' },
    to: { ...date(true), description: 'Last day (inclusive) it did; null while it still stands.' },
    link_token: { ...s(), description: 'The redirect token of the offer, which tells apart offers of one provider.' },
  }, ['link_token']),
  History: obj({ media_id: s(), country: s(), intervals: arr(ref('HistoryInterval')) }),
  DayListItem: obj({
    ...listItemProps(),
    provider_id: s(),
    date: { ...date(), description: '`/v1/new`: the day the title became available on the provider; `/v1/leaving`: its `available_to`; `/v1/upcoming`: its `available_from`.' },
  }),
  DayList: envelope(ref('DayListItem'), {
    country: s(),
    from: { ...date(), description: 'First day of the window.' },
    to: { ...date(), description: 'Last day of the window.' },
  }),
};
