/**
 * A large synthetic catalog written straight into the read models (no events): enough to
 * measure building a release of 250,000 titles without crawling and projecting them first.
 * Shapes follow the anchor catalog: ~1 link per title per country, a few hundred providers,
 * cast of ~8 drawn from a people pool, overlays in a few languages for a third of the titles.
 */
import type { Format, Platform, PriceType, Provider } from '../contracts/domain.ts';
import type { ReadStore } from '../contracts/ports.ts';
import type {
  CollectionDoc,
  FeaturedDoc,
  GenresDoc,
  LinkOffer,
  LinksDoc,
  MediaDoc,
  ProvidersDoc,
  RankingDoc,
  SeasonsDoc,
  TrendingDoc,
} from '../contracts/readModels.ts';
import { defaultCollectionName } from '../projections/collections.ts';
import { GENRES_KEY } from '../projections/genres.ts';
import { projectionByName } from '../projections/index.ts';
import { layoutRanking, rankingsProjection } from '../projections/rankings.ts';
import { trendingKey, trendingProjection } from '../projections/trending.ts';
import { storedWrites } from '../contracts/projection.ts';

export interface SyntheticCatalogOptions {
  /** Titles (70% movies). Default 250000. */
  titles?: number;
  /** Countries, from a fixed list. Default 4. */
  countries?: number;
  /** Providers per country. Default 60. */
  providersPerCountry?: number;
  /** The day the trending and ranking documents are dated (`YYYY-MM-DD`). Default 2026-11-20. */
  today?: string;
  /** Called after each written batch of titles. */
  onProgress?: (done: number, total: number) => void;
}

const COUNTRIES = ['US', 'GB', 'DE', 'FR', 'ES', 'IT', 'BR', 'JP', 'IN', 'CA', 'AU', 'MX'];
const LANGS = ['de', 'fr', 'es', 'it', 'ja', 'pt'];
const WORDS = 'the of a night last city river silent house dark light summer winter road home storm secret garden king queen war love star blue red'.split(' ');

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pad8 = (n: number): string => String(n).padStart(8, '0');
/** The collection a read model's projection writes now (its version's), where the build reads it. */
export function catalogCollection(name: string): string {
  const projection = projectionByName(name);
  if (projection === undefined) throw new Error(`no read model named ${name}`);
  return defaultCollectionName(projection);
}
const col = catalogCollection;
/** The read models the catalog writes. */
export const CATALOG_MODELS = ['providers', 'genres', 'media', 'seasons', 'links', 'rankings', 'trending', 'featured', 'collections'] as const;
const rankingsCollection = defaultCollectionName(rankingsProjection);
const trendingCollection = defaultCollectionName(trendingProjection);

export async function writeSyntheticCatalog(readStore: ReadStore, options: SyntheticCatalogOptions = {}): Promise<{ titles: number; links: number; countries: string[] }> {
  const titles = options.titles ?? 250_000;
  const countries = COUNTRIES.slice(0, options.countries ?? 4);
  const perCountry = options.providersPerCountry ?? 60;
  const today = options.today ?? '2026-11-20';
  const r = rng(42);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(r() * list.length)] as T;
  const words = (n: number): string => Array.from({ length: n }, () => pick(WORDS)).join(' ');
  let position = 1;

  const providers: Provider[] = Array.from({ length: perCountry }, (_, i) => ({
    id: `provider-${i}`, parentId: i % 10 === 9 ? `provider-${i - 1}` : null, name: `Provider ${i}`,
    logo: `/logos/provider-${i}.png`, shortId: `p${i}`, weight: Math.round(1000 / (i + 1)),
  }));
  await readStore.writeBatch<ProvidersDoc>(col('providers'), countries.map((country) => ({ key: country, doc: { country, providers }, position: position++ })));
  await readStore.writeBatch<GenresDoc>(col('genres'), [{
    key: GENRES_KEY, position: position++,
    doc: { genres: Array.from({ length: 20 }, (_, i) => ({ id: i + 1, slug: `genre-${i + 1}`, name: `Genre ${i + 1}` })) },
  }]);

  let links = 0;
  const BATCH = 1000;
  const ids: string[] = [];
  for (let start = 0; start < titles; start += BATCH) {
    const media: Array<{ key: string; doc: MediaDoc; position: number }> = [];
    const seasons: Array<{ key: string; doc: SeasonsDoc; position: number }> = [];
    const linkDocs: Array<{ key: string; doc: LinksDoc; position: number }> = [];
    for (let n = start; n < Math.min(titles, start + BATCH); n++) {
      const kind = n % 10 < 7 ? 'movie' : 'tv_show';
      const id = `${kind === 'movie' ? 'mv' : 'tv'}${pad8(n + 1)}`;
      ids.push(id);
      const translations: MediaDoc['translations'] = {};
      if (n % 3 === 0) for (const lang of [pick(LANGS), pick(LANGS)]) translations[lang] = { title: words(3), overview: words(30), tagline: null, poster: null, backdrop: null };
      const year = 1950 + Math.floor(r() * 76);
      media.push({
        key: id, position: position++,
        doc: {
          id, kind, sourceId: n + 1, slug: `${words(2).replace(/ /g, '-')}-${n}`, translations, firstSeenAt: '2026-10-01',
          details: {
            title: words(3), originalTitle: r() < 0.5 ? words(3) : null, year, releaseDate: `${year}-0${1 + Math.floor(r() * 9)}-1${Math.floor(r() * 9)}`,
            tagline: r() < 0.5 ? words(6) : null, overview: words(40), classification: pick(['G', 'PG', 'PG-13', 'R', null]),
            poster: `/posters/{size}/${id}.{ext}`, backdrop: `/backdrops/{size}/${id}.{ext}`, popularity: Math.round(r() * 10000) / 100,
            tmdbRating: Math.round(r() * 100) / 10, voteCount: Math.floor(r() * 20000), runtime: 20 + Math.floor(r() * 150),
            inProduction: kind === 'tv_show' ? r() < 0.3 : null, lastAirDate: kind === 'tv_show' ? '2025-06-01' : null,
            genreIds: [1 + Math.floor(r() * 20), 1 + Math.floor(r() * 20)], ratings: [{ source: 'imdb', rating: Math.round(r() * 100) / 10 }, { source: 'tmdb', rating: Math.round(r() * 100) / 10 }],
            externalIds: [{ source: 'imdb', id: `tt${pad8(n)}` }, { source: 'tmdb', id: String(n) }], videos: [{ source: 'youtube', id: `v${n}` }],
            contentRatings: [],
            cast: Array.from({ length: 8 }, (_, i) => {
              const person = Math.floor(r() * 400_000);
              return { personId: `p${pad8(person)}`, name: `Person ${person}`, role: i < 6 ? 'actor' : i === 6 ? 'director' : 'writer', character: i < 6 ? words(2) : null, order: i };
            }),
          },
        },
      });
      if (kind === 'tv_show') {
        const count = 1 + Math.floor(r() * 4);
        seasons.push({
          key: id, position: position++,
          doc: {
            mediaId: id,
            seasons: Array.from({ length: count }, (_, s) => ({
              seasonNumber: s + 1, title: `Season ${s + 1}`, overview: words(20), poster: null, airDate: '2020-01-01',
              episodes: Array.from({ length: 8 }, (_, e) => ({ episodeNumber: e + 1, title: words(3), overview: words(20), backdrop: null, airDate: '2020-01-08' })),
            })),
          },
        });
      }
      for (const country of countries) {
        if (r() < 0.45) continue;
        const offers: LinkOffer[] = Array.from({ length: 1 + Math.floor(r() * 3) }, (_, k) => ({
          providerId: pick(providers).id, addonProviderId: r() < 0.1 ? pick(providers).id : null,
          seasonNumber: kind === 'tv_show' && k > 0 ? k : null, episodeNumber: null,
          webUrl: `https://watch.example/${country}/${id}/${k}`,
          priceTypes: [pick(['flatrate', 'rent', 'buy', 'free', 'ads'] as PriceType[])], formats: [pick(['sd', 'hd', '4k'] as Format[])],
          audioLanguages: ['en'], subtitleLanguages: r() < 0.5 ? ['en', 'es'] : null,
          availableFrom: r() < 0.3 ? '2026-01-01' : null, availableTo: null, platforms: ['web', 'ios', 'android'] as Platform[], firstSeenAt: '2026-10-01', startedOn: '2026-10-01',
        }));
        links += offers.length;
        linkDocs.push({ key: `${country}:${id}`, position: position++, doc: { mediaId: id, kind, country, offers } });
      }
    }
    await readStore.writeBatch(col('media'), media);
    await readStore.writeBatch(col('seasons'), seasons);
    await readStore.writeBatch(col('links'), linkDocs);
    options.onProgress?.(Math.min(titles, start + BATCH), titles);
  }

  const ranked = ids.slice(0, Math.min(ids.length, 5000));
  for (const country of countries) {
    const ranking: RankingDoc = {
      country, date: today, formulaVersion: 1,
      entries: ranked.map((mediaId, i) => ({ mediaId, kind: mediaId.startsWith('mv') ? 'movie' : 'tv_show', position: i + 1, score: 1 - i / ranked.length, points: ranked.length - i })),
    };
    // Stored as the projection lays it out: a header and its blocks of ranks, at one position.
    const laid = layoutRanking(ranking, null);
    const at = position++;
    await readStore.writeBatch(rankingsCollection, [{ key: country, doc: laid.document, position: at }, ...laid.rows.map((r) => ({ ...r, position: at }))]);
    const trending: TrendingDoc = {
      country, date: today,
      entries: ranked.slice(0, 500).map((mediaId, i) => ({ mediaId, kind: mediaId.startsWith('mv') ? 'movie' : 'tv_show', position: i + 1, previousPosition: i % 7 === 0 ? null : i + 3 })),
    };
    // Also as the projection lays it out: the day, its head and its rows.
    await readStore.writeBatch(trendingCollection, storedWrites(trendingProjection, trendingKey(country, today), trending, null, position++));
    const featured: FeaturedDoc = {
      country, updatedAt: `${today}T06:00:00Z`,
      daily: ranked.slice(0, 10).map((mediaId, i) => ({ mediaId, position: i + 1 })),
      weekly: ranked.slice(10, 25).map((mediaId, i) => ({ mediaId, position: i + 1 })),
    };
    await readStore.writeBatch<FeaturedDoc>(col('featured'), [{ key: country, doc: featured, position: position++ }]);
  }
  await readStore.writeBatch<CollectionDoc>(col('collections'), Array.from({ length: 40 }, (_, i) => ({
    key: `collection-${String(i).padStart(2, '0')}`, position: position++,
    doc: {
      id: `col_collection-${i}`, slug: `collection-${String(i).padStart(2, '0')}`, name: `Collection ${i}`, description: words(10),
      country: i % 2 ? pick(countries) : null, language: 'en', items: ranked.slice(i * 20, i * 20 + 20).map((mediaId, k) => ({ mediaId, position: k % 3 ? k + 1 : null })),
    },
  })));
  return { titles, links, countries };
}
