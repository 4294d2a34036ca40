/**
 * A small catalog for the API tests, seeded the real way: domain events appended to an LMDB
 * event store, folded by every projection's catch-up runner into an LMDB read store, and the
 * search read model handed to the in-process search index.
 */
import type { MediaDetails, Offer, Provider, Season } from '../../contracts/domain.ts';
import type { DomainEvent } from '../../contracts/events.ts';
import { streams } from '../../contracts/ids.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ApiKeyStore, Clock, EventStore, ReadStore, SearchDocument, SearchIndex } from '../../contracts/ports.ts';
import { lmdbEventStore } from '../../infra/lmdb/eventStore.ts';
import { lmdbApiKeyStore } from '../../infra/lmdb/apiKeyStore.ts';
import { lmdbReadStore } from '../../infra/lmdb/readStore.ts';
import type { GenresDoc } from '../../contracts/readModels.ts';
import { defaultCollectionName } from '../../projections/collections.ts';
import { GENRES_KEY } from '../../projections/genres.ts';
import { ALL_PROJECTIONS, searchProjection, toSearchDocument, type SearchProjectionDoc } from '../../projections/index.ts';
import { catchUp } from '../../projections/runner.ts';

const at = (observedAt: string) => ({ observedAt, producer: 'test' });

export function details(overrides: Partial<MediaDetails> & { title: string }): MediaDetails {
  return {
    originalTitle: null, year: null, releaseDate: null, tagline: null, overview: null, classification: null,
    poster: null, backdrop: null, popularity: null, tmdbRating: null, voteCount: null, runtime: null,
    inProduction: null, lastAirDate: null, genreIds: [], ratings: [], externalIds: [], videos: [],
    contentRatings: [], cast: [],
    ...overrides,
  };
}

export function offer(providerId: string, webUrl: string, extra: Partial<Offer> = {}): Offer {
  return {
    providerId, addonProviderId: null, seasonNumber: null, episodeNumber: null, webUrl,
    priceTypes: ['flatrate'], formats: ['hd'], audioLanguages: ['en'], subtitleLanguages: null,
    availableFrom: null, availableTo: null, platforms: ['web', 'ios'],
    ...extra,
  };
}

function provider(id: string, weight: number, shortId: string | null, parentId: string | null = null): Provider {
  return { id, parentId, name: id.replace(/(^|-)(\w)/g, (_, s: string, c: string) => `${s ? ' ' : ''}${c.toUpperCase()}`), logo: `/logos/${id}.png`, shortId, weight };
}

const season = (n: number, episodes: number): Season => ({
  seasonNumber: n,
  title: `Season ${n}`,
  overview: null,
  poster: `/posters/{size}/s${n}.{ext}`,
  airDate: `2024-0${n}-01`,
  episodes: Array.from({ length: episodes }, (_, i) => ({
    episodeNumber: i + 1, title: `Episode ${i + 1}`, overview: null, backdrop: null, airDate: `2024-0${n}-${String(i + 1).padStart(2, '0')}`,
  })),
});

export const IDS = { landGirls: 'mv00000001', rapidFire: 'mv00000002', harbor: 'tv00000003' } as const;

/** Every stream of the fixture with its events, in append order. */
export function fixtureStreams(): Array<{ stream: string; events: DomainEvent[] }> {
  const o = '2026-11-01T08:00:00Z';
  return [
    {
      stream: streams.genres(),
      events: [
        { type: 'GenreDefined', data: { genre: { id: 18, slug: 'drama', name: 'Drama' } }, metadata: at(o) },
        { type: 'GenreDefined', data: { genre: { id: 28, slug: 'action', name: 'Action' } }, metadata: at(o) },
        { type: 'GenreDefined', data: { genre: { id: 35, slug: 'comedy', name: 'Comedy' } }, metadata: at(o) },
      ],
    },
    {
      stream: streams.providers('US'),
      events: [
        provider('hulu', 50, 'hlu'), provider('netflix', 100, 'nfx'), provider('amazon', 80, 'amp'),
        provider('hbo-amazon', 10, 'hba', 'amazon'),
      ].map((p) => ({ type: 'ProviderAdded', data: { country: 'US', provider: p }, metadata: at(o) })),
    },
    {
      stream: streams.providers('DE'),
      events: [{ type: 'ProviderAdded', data: { country: 'DE', provider: provider('netflix', 90, 'nfx') }, metadata: at(o) }],
    },
    {
      stream: streams.media(IDS.landGirls),
      events: [
        {
          type: 'MediaRegistered',
          data: {
            mediaId: IDS.landGirls, kind: 'movie', sourceId: 1, slug: 'the-land-girls',
            details: details({
              title: 'The Land Girls', originalTitle: 'The Land Girls', year: 1998, tagline: 'Three women, one farm.',
              overview: 'Wartime farm drama.', classification: 'PG-13', poster: '/posters/{size}/lg.{ext}',
              backdrop: '/backdrops/{size}/lg.{ext}', popularity: 50.5, tmdbRating: 6.4, voteCount: 120, runtime: 111,
              genreIds: [18], ratings: [{ source: 'imdb', rating: 6.3 }], externalIds: [{ source: 'imdb', id: 'tt0119494' }],
              videos: [{ source: 'youtube', id: 'abc123' }],
              contentRatings: [{ country: 'US', rating: 'PG-13' }, { country: 'DE', rating: '12' }],
            }),
          },
          metadata: at(o),
        },
        {
          type: 'MediaTranslationChanged',
          data: {
            mediaId: IDS.landGirls, language: 'de',
            translation: { title: 'Die Landmädchen', overview: 'Ein Kriegsdrama.', tagline: null, poster: null, backdrop: null },
          },
          metadata: at(o),
        },
      ],
    },
    {
      stream: streams.media(IDS.rapidFire),
      events: [{
        type: 'MediaRegistered',
        data: { mediaId: IDS.rapidFire, kind: 'movie', sourceId: 2, slug: 'rapid-fire', details: details({ title: 'Rapid Fire', year: 1992, genreIds: [28] }) },
        metadata: at(o),
      }],
    },
    {
      stream: streams.media(IDS.harbor),
      events: [
        {
          type: 'MediaRegistered',
          data: {
            mediaId: IDS.harbor, kind: 'tv_show', sourceId: 3, slug: 'harbor-lights',
            details: details({ title: 'Harbor Lights', year: 2024, genreIds: [18, 35], popularity: 20, inProduction: true, lastAirDate: '2024-02-02' }),
          },
          metadata: at(o),
        },
        { type: 'SeasonChanged', data: { mediaId: IDS.harbor, season: season(2, 2) }, metadata: at(o) },
        { type: 'SeasonChanged', data: { mediaId: IDS.harbor, season: season(1, 3) }, metadata: at(o) },
      ],
    },
    {
      stream: streams.availability(IDS.landGirls, 'US'),
      events: [
        { type: 'OfferAdded', data: { mediaId: IDS.landGirls, country: 'US', offer: offer('netflix', 'https://www.netflix.com/title/1') }, metadata: at('2026-11-01T10:00:00Z') },
        { type: 'OfferAdded', data: { mediaId: IDS.landGirls, country: 'US', offer: offer('hulu', 'https://www.hulu.com/movie/land-girls') }, metadata: at('2026-11-10T10:00:00Z') },
        { type: 'OfferAdded', data: { mediaId: IDS.landGirls, country: 'US', offer: offer('amazon', 'https://www.amazon.com/dp/B01', { priceTypes: ['rent', 'buy'] }) }, metadata: at('2026-11-10T11:00:00Z') },
        {
          type: 'OfferRemoved',
          data: { mediaId: IDS.landGirls, country: 'US', offer: { providerId: 'netflix', addonProviderId: null, seasonNumber: null, episodeNumber: null, webUrl: 'https://www.netflix.com/title/1' } },
          metadata: at('2026-11-15T10:00:00Z'),
        },
      ],
    },
    {
      stream: streams.availability(IDS.harbor, 'US'),
      events: [
        { type: 'OfferAdded', data: { mediaId: IDS.harbor, country: 'US', offer: offer('netflix', 'https://www.netflix.com/title/3') }, metadata: at(o) },
        { type: 'OfferAdded', data: { mediaId: IDS.harbor, country: 'US', offer: offer('netflix', 'https://www.netflix.com/watch/3-1-1', { seasonNumber: 1, episodeNumber: 1 }) }, metadata: at(o) },
      ],
    },
    {
      stream: streams.collection('best-of-2026'),
      events: [{
        type: 'CollectionPublished',
        data: { slug: 'best-of-2026', collection: { name: 'Best of 2026', description: 'Our picks.', country: null, language: 'en', items: [
          { mediaId: IDS.harbor, position: 1 }, { mediaId: IDS.landGirls, position: 2 }, { mediaId: IDS.rapidFire, position: null },
        ] } },
        metadata: at(o),
      }],
    },
    {
      stream: streams.collection('us-westerns'),
      events: [{
        type: 'CollectionPublished',
        data: { slug: 'us-westerns', collection: { name: 'US Westerns', description: null, country: 'US', language: null, items: [{ mediaId: IDS.rapidFire, position: null }] } },
        metadata: at(o),
      }],
    },
    {
      stream: streams.collection('german-picks'),
      events: [{
        type: 'CollectionPublished',
        data: { slug: 'german-picks', collection: { name: 'German picks', description: null, country: 'DE', language: 'de', items: [] } },
        metadata: at(o),
      }],
    },
    {
      stream: streams.featured('US'),
      events: [
        { type: 'FeaturedSelectionChanged', data: { country: 'US', period: 'daily', items: [{ mediaId: IDS.harbor, position: 2 }, { mediaId: IDS.landGirls, position: 1 }] }, metadata: at('2026-11-20T06:00:00Z') },
        { type: 'FeaturedSelectionChanged', data: { country: 'US', period: 'weekly', items: [{ mediaId: IDS.rapidFire, position: 1 }] }, metadata: at('2026-11-20T07:00:00Z') },
      ],
    },
    {
      stream: streams.ranking('US'),
      events: [
        {
          type: 'RankingComputed',
          data: { country: 'US', date: '2026-11-19', formulaVersion: 1, entries: [
            { mediaId: IDS.rapidFire, kind: 'movie', position: 1, score: 0.9, points: 900 },
            { mediaId: IDS.landGirls, kind: 'movie', position: 3, score: 0.5, points: 500 },
          ] },
          metadata: { producer: 'ranking' },
        },
        { type: 'PositionChanged', data: { country: 'US', date: '2026-11-19', mediaId: IDS.rapidFire, kind: 'movie', position: 1, previousPosition: null }, metadata: { producer: 'ranking' } },
        {
          type: 'RankingComputed',
          data: { country: 'US', date: '2026-11-20', formulaVersion: 1, entries: [
            { mediaId: IDS.landGirls, kind: 'movie', position: 1, score: 0.95, points: 950 },
            { mediaId: IDS.harbor, kind: 'tv_show', position: 2, score: 0.7, points: 700 },
            { mediaId: IDS.rapidFire, kind: 'movie', position: 3, score: 0.6, points: 600 },
          ] },
          metadata: { producer: 'ranking' },
        },
        { type: 'PositionChanged', data: { country: 'US', date: '2026-11-20', mediaId: IDS.rapidFire, kind: 'movie', position: 3, previousPosition: 1 }, metadata: { producer: 'ranking' } },
        { type: 'PositionChanged', data: { country: 'US', date: '2026-11-20', mediaId: IDS.landGirls, kind: 'movie', position: 1, previousPosition: 3 }, metadata: { producer: 'ranking' } },
        { type: 'PositionChanged', data: { country: 'US', date: '2026-11-20', mediaId: IDS.harbor, kind: 'tv_show', position: 2, previousPosition: null }, metadata: { producer: 'ranking' } },
      ],
    },
  ];
}

/** Appends the fixture, runs every projection to the head, and fills the search index. */
export async function seedCatalog(eventStore: EventStore, readStore: ReadStore, search: SearchIndex): Promise<void> {
  for (const { stream, events } of fixtureStreams()) {
    await eventStore.append(stream, events, 'no_stream');
  }
  for (const projection of ALL_PROJECTIONS) {
    await catchUp({ projection, eventStore, readStore, collection: defaultCollectionName(projection) });
  }
  const genres = await readStore.get<GenresDoc>(defaultCollectionName({ name: 'genres', version: 1 }), GENRES_KEY);
  const rows = await readStore.scan<SearchProjectionDoc>(defaultCollectionName(searchProjection));
  const docs = rows
    .map((r) => toSearchDocument(r.doc, genres?.doc.genres ?? []))
    .filter((d): d is SearchDocument => d !== null);
  await search.upsert(docs);
}

/** A fresh data directory with the fixture's LMDB stores; `close()` closes them and removes it. */
export interface FixtureStores {
  eventStore: EventStore;
  readStore: ReadStore;
  apiKeys: ApiKeyStore;
  close(): Promise<void>;
}

export function openFixtureStores(prefix: string, clock: Clock): FixtureStores {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const eventStore = lmdbEventStore({ dataDir: dir, clock });
  const readStore = lmdbReadStore({ dataDir: dir });
  const apiKeys = lmdbApiKeyStore({ dataDir: dir });
  return {
    eventStore,
    readStore,
    apiKeys,
    async close() {
      await apiKeys.close();
      await readStore.close();
      await eventStore.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** An app listening on a free local port: its base URL, and a close that drops idle keep-alive sockets. */
export async function listenLocally(app: { listen(port: number, host: string, done: () => void): Server }): Promise<{ url: string; close(): Promise<void> }> {
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
