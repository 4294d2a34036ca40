/**
 * Every endpoint, declared once: path, parameters, response schema, errors and handler. The
 * router (app.ts) and the OpenAPI document (openapi.ts) are both generated from this list.
 */
import { PLATFORMS } from '../../contracts/domain.ts';
import { MAX_SLUG_CHARS, SLUG_PATTERN } from '../../contracts/ids.ts';
import { SEARCH_QUERY_MAX_CHARS, SEARCH_QUERY_MAX_WORDS } from '../../contracts/ports.ts';
import { RELEASE_VERSION_PATTERN } from '../../contracts/snapshotSchema.ts';
import { getCollection, listCollections, listLocales, listProviders } from './handlers/catalog.ts';
import { FEATURED_MAX, getFeatured, getRankings, getTrending } from './handlers/charts.ts';
import { follow } from './handlers/go.ts';
import { getEpisodes, getLinks, getMedia, getSeasons } from './handlers/media.ts';
import { search } from './handlers/search.ts';
import { snapshotDownload, snapshotFile, snapshotListing, snapshotSchemas } from './handlers/snapshots.ts';
import { LINK_TOKEN_PATTERN, MAX_LINK_TOKEN_CHARS } from '../links/linkTokens.ts';
import { changeEndpoints } from './changeEndpoints.ts';
import { p } from './params.ts';
import type { Endpoint } from './types.ts';

/** OpenAPI links of a page of media list items (search, rankings, a collection): its first title. */
const firstResultLinks: Endpoint['links'] = {
  title: { operationId: 'getMedia', parameters: { 'path.id': '$response.body#/results/0/id' }, description: 'The first result\'s detail.' },
  links: {
    operationId: 'getMediaLinks',
    parameters: { 'path.id': '$response.body#/results/0/id', 'query.country': '$request.query.country' },
    description: 'Where the first result streams in the same country.',
  },
  seasons: { operationId: 'getSeasons', parameters: { 'path.id': '$response.body#/results/0/id' }, description: 'The first result\'s seasons, when it is a TV show (404 for a movie).' },
};

export function endpoints(openapi: () => unknown): Endpoint[] {
  return [
    {
      path: '/v1/search', operationId: 'search', tag: 'Catalog', summary: 'Full-text search',
      description: 'Full-text search with typo tolerance over movies and TV shows, ranked by relevance within the country.',
      params: [
        {
          name: 'q', in: 'query', type: 'string', required: true, maxLength: SEARCH_QUERY_MAX_CHARS, maxWords: SEARCH_QUERY_MAX_WORDS,
          description: `Search query: at most ${SEARCH_QUERY_MAX_CHARS} characters and ${SEARCH_QUERY_MAX_WORDS} words (400 past them).`,
        },
        p.country(),
        p.lang("Search language; default the country's primary language (English when it has no index)."),
        p.limit(20, 100), p.offset(), p.kind(),
        { name: 'genre', in: 'query', type: 'string', description: 'Genre slug.' },
        { name: 'provider', in: 'query', type: 'string', description: 'Provider `short_id` (available in the country on this provider).' },
      ],
      response: 'SearchResults', errors: [400], auth: 'required', needsCatalog: true, handler: search,
      links: firstResultLinks,
      // Kept until the index is written, where this process knows when it is (the in-process one).
      cacheable: true, stateOf: (deps) => deps.search.generation?.().toString(), timeField: 'processing_time_ms',
      lean: true,
    },
    {
      path: '/v1/rankings', operationId: 'getRankings', tag: 'Charts', summary: 'Popularity ranking of a country',
      description: 'Overall popularity ranking, combining availability across providers, ratings and recency. '
        + 'With `kind`, the titles of that kind keep their overall position.',
      params: [p.country(), p.limit(50, 200), p.offset(), p.kind()],
      response: 'Rankings', errors: [400], auth: 'required', needsCatalog: true, cacheable: true, handler: getRankings,
      links: firstResultLinks,
    },
    {
      path: '/v1/trending', operationId: 'getTrending', tag: 'Charts', summary: 'Daily trending titles',
      description: 'Titles whose ranking position changed on a day: largest climb first, then new entries by position, '
        + 'then titles that fell (smallest fall first); ties by position.',
      params: [
        p.country(), p.kind(),
        { name: 'date', in: 'query', type: 'date', description: 'Day `YYYY-MM-DD`; default the latest computed day of the country.' },
        p.limit(20, 100), p.offset(),
        p.lang('Language (one of /v1/locales); accepted for symmetry with search.'),
      ],
      response: 'Trending', errors: [400], auth: 'required', needsCatalog: true, cacheable: true, handler: getTrending,
    },
    {
      path: '/v1/featured', operationId: 'getFeatured', tag: 'Charts', summary: 'Hand-picked featured media',
      description: `The daily and weekly featured selections of a country, daily first, each by position; not paginated. `
        + `One answer holds at most ${FEATURED_MAX} items: with both selections, the first ${FEATURED_MAX / 2} of each `
        + `(a shorter selection leaves its room to the other); with \`period\`, the first ${FEATURED_MAX} of that one.`,
      params: [
        p.country(),
        p.lang('Language (one of /v1/locales).'),
        { name: 'period', in: 'query', type: 'string', enum: ['daily', 'weekly'], description: 'Only this selection; default both.' },
      ],
      response: 'Featured', errors: [400], auth: 'required', needsCatalog: true, cacheable: true, handler: getFeatured,
    },
    {
      path: '/v1/media/:id', operationId: 'getMedia', tag: 'Media', summary: 'Media detail',
      params: [
        p.mediaId(),
        p.lang('Language of the `translation` overlay (one of /v1/locales).'),
        { name: 'country', in: 'query', type: 'country', default: 'US', description: 'Country of the content rating; default `US`.' },
      ],
      response: 'Media', errors: [400, 404], auth: 'required', needsCatalog: true, cacheable: true, handler: getMedia,
      links: {
        links: { operationId: 'getMediaLinks', parameters: { 'path.id': '$response.body#/id' }, description: 'Where this title streams, in a country.' },
        seasons: { operationId: 'getSeasons', parameters: { 'path.id': '$response.body#/id' }, description: 'Its seasons, when it is a TV show (404 for a movie).' },
      },
    },
    {
      path: '/v1/media/:id/links', operationId: 'getMediaLinks', tag: 'Media', summary: 'Streaming links in a country',
      description: 'Ordered by provider weight (heaviest first), then provider id. Follow a link with `GET /go/{link_token}`.',
      params: [
        p.mediaId(), p.country(),
        { name: 'at', in: 'query', type: 'date', description: 'The links as they were at the end of this day (UTC), from the event history; a day to come gives the links as they stand now.' },
      ],
      response: 'StreamingLinks', errors: [400, 404], auth: 'required', needsCatalog: true, cacheable: (params) => params.at === undefined, handler: getLinks,
      links: {
        follow: { operationId: 'followLink', parameters: { 'path.link_token': '$response.body#/0/link_token' }, description: 'The redirect to the first link\'s provider.' },
      },
    },
    ...changeEndpoints(),
    {
      path: '/v1/media/:id/seasons', operationId: 'getSeasons', tag: 'Media', summary: 'Seasons of a TV show',
      description: '404 for a movie.',
      params: [p.mediaId()],
      response: 'Seasons', errors: [404], auth: 'required', needsCatalog: true, cacheable: true, handler: getSeasons,
      links: {
        episodes: {
          operationId: 'getEpisodes',
          parameters: { 'path.id': '$response.body#/media_id', 'path.season': '$response.body#/seasons/0/season_number' },
          description: 'The episodes of the first season.',
        },
      },
    },
    {
      path: '/v1/media/:id/seasons/:season/episodes', operationId: 'getEpisodes', tag: 'Media', summary: 'Episodes of a season',
      description: '404 for a movie or an unknown season.',
      params: [p.mediaId(), { name: 'season', in: 'path', type: 'integer', required: true, example: '1', description: 'Season number; any other form: 404.' }],
      response: 'Episodes', errors: [404], auth: 'required', needsCatalog: true, cacheable: true, handler: getEpisodes,
    },
    {
      path: '/v1/collections', operationId: 'listCollections', tag: 'Collections', summary: 'Curated collections of a country',
      description: 'Collections of that country and those shown in every country.',
      params: [p.country()],
      response: 'Collections', errors: [400], auth: 'required', needsCatalog: true, cacheable: true, handler: listCollections,
      links: {
        collection: {
          operationId: 'getCollection',
          parameters: { 'path.slug': '$response.body#/collections/0/slug', 'query.country': '$response.body#/country' },
          description: 'The first collection and its titles.',
        },
      },
    },
    {
      path: '/v1/collections/:slug', operationId: 'getCollection', tag: 'Collections', summary: 'A collection and its titles',
      params: [
        {
          name: 'slug', in: 'path', type: 'string', required: true, maxLength: MAX_SLUG_CHARS, pattern: SLUG_PATTERN, example: 'best-of-the-90s-us',
          description: 'Collection slug: lower-case letters and digits in words joined by `-`. Any other form: 404.',
        },
        p.country(), p.limit(50, 200), p.offset(),
      ],
      response: 'CollectionDetail', errors: [400, 404], auth: 'required', needsCatalog: true, cacheable: true, handler: getCollection,
      links: firstResultLinks,
    },
    {
      path: '/v1/providers', operationId: 'listProviders', tag: 'Catalog', summary: 'Streaming providers of a country',
      description: 'Sorted by weight (heaviest first), then id; not paginated.',
      params: [
        p.country(),
        { name: 'q', in: 'query', type: 'string', description: 'Only providers whose name or id contains this text (any case).' },
        { name: 'hide_children', in: 'query', type: 'boolean', default: false, description: 'Exclude child and add-on providers.' },
        { name: 'parent', in: 'query', type: 'string', description: 'Only the children of this provider id.' },
      ],
      response: 'Providers', errors: [400], auth: 'required', needsCatalog: true, cacheable: true, handler: listProviders,
    },
    {
      path: '/v1/locales', operationId: 'listLocales', tag: 'Catalog', summary: 'Languages with a search index',
      params: [], response: 'Locales', errors: [], auth: 'required', needsCatalog: false, handler: listLocales,
    },
    {
      path: '/v1/openapi', operationId: 'getOpenApi', tag: 'Meta', summary: 'This OpenAPI 3.0.3 document',
      params: [], response: 'OpenApiDocument', errors: [], auth: 'required', needsCatalog: false, handler: async () => openapi(),
    },
    {
      path: '/v1/snapshots', operationId: 'listSnapshots', tag: 'Snapshots', summary: 'The latest weekly release',
      description: 'The only /v1 endpoint that also answers without an API key.',
      params: [], response: 'SnapshotListing', errors: [], auth: 'optional', needsCatalog: false, handler: snapshotListing,
    },
    {
      path: '/v1/schemas', operationId: 'getSnapshotSchemas', tag: 'Snapshots', summary: 'Schemas of the snapshot files',
      params: [], response: 'SnapshotSchemas', errors: [], auth: 'required', needsCatalog: false, handler: snapshotSchemas,
    },
    {
      path: '/v1/snapshots/download', operationId: 'downloadSnapshotFile', tag: 'Snapshots', summary: 'A signed download URL',
      description: 'The `download_url` needs the API key and is valid for one hour.',
      params: [
        { name: 'path', in: 'query', type: 'string', required: true, description: 'File path relative to the release, e.g. `country=US/links.parquet`.' },
        { name: 'version', in: 'query', type: 'string', pattern: RELEASE_VERSION_PATTERN, example: '2026-W47', description: 'Release label `<ISO year>-W<ISO week>`; default the latest.' },
      ],
      response: 'SnapshotDownload', errors: [400, 403, 404], auth: 'required', needsCatalog: false, handler: snapshotDownload,
    },
    {
      path: '/v1/snapshots/file/:version/*path', operationId: 'getSnapshotFile', tag: 'Snapshots', summary: 'A file of a release',
      description: 'Needs the API key and the `expires` and `sig` of a download URL. Honours `Range` and `If-None-Match`.',
      params: [
        { name: 'version', in: 'path', type: 'string', required: true, pattern: RELEASE_VERSION_PATTERN, example: '2026-W47', description: 'Release label `<ISO year>-W<ISO week>`; any other form: 404.' },
        { name: 'path', in: 'path', type: 'string', required: true, description: 'File path within the release (URL-encoded).' },
        { name: 'expires', in: 'query', type: 'string', description: 'Expiry of the download URL (unix seconds); missing, malformed or past: 403.' },
        { name: 'sig', in: 'query', type: 'string', description: 'Signature of the download URL (64 hex); missing or wrong: 403.' },
      ],
      otherResponse: {
        status: 200, description: 'The file bytes.',
        contentTypes: ['application/vnd.apache.parquet', 'application/gzip'],
        headers: { ETag: 'The sha256 of the file, quoted.', 'Accept-Ranges': '`bytes`' },
      },
      moreResponses: [
        { status: 206, description: 'The requested `Range` of the file.', headers: { 'Content-Range': '`bytes <start>-<end>/<size>`' }, withBody: true },
        { status: 304, description: 'Not modified (the `If-None-Match` ETag matches).', withBody: false },
      ],
      errors: [403, 404, 416], auth: 'required', needsCatalog: false, handler: snapshotFile,
    },
    {
      path: '/go/:link_token', operationId: 'followLink', tag: 'Links', summary: 'Redirect to a streaming provider',
      params: [
        { name: 'link_token', in: 'path', type: 'string', required: true, maxLength: MAX_LINK_TOKEN_CHARS, pattern: LINK_TOKEN_PATTERN, description: 'The `link_token` of a streaming link (base58). A token that does not decrypt: 404.' },
        { name: 'platform', in: 'query', type: 'string', enum: [...PLATFORMS], default: 'web', description: 'Target platform of the deep link; default `web`.' },
      ],
      otherResponse: { status: 302, description: 'Redirect to the deep link.', headers: { Location: 'The deep link.' } },
      errors: [400, 404, 429], auth: 'none', needsCatalog: false, handler: follow,
    },
  ];
}
