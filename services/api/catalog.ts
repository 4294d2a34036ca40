/**
 * Read access to the read models for the API: resolves each model's live physical collection
 * (alias, else `<name>_v<version>`) and turns every driver failure into AppError `unavailable`,
 * so an outage answers 503 and never 500.
 */
import { asUnavailable } from '../../contracts/errors.ts';
import type { ReadStore, ScanOptions, StoredDocument } from '../../contracts/ports.ts';
import type {
  CollectionDoc,
  FeaturedDoc,
  GenresDoc,
  LinksDoc,
  MediaDoc,
  MediaItemDoc,
  ProvidersDoc,
  RankingHeadDoc,
  RankingRowDoc,
  SeasonsDoc,
  TrendingDoc,
  TrendingHeadDoc,
  TrendingRowDoc,
} from '../../contracts/readModels.ts';
import type { ChangeBlockDoc, DayIndexDoc, HistoryDoc } from '../../contracts/changeModels.ts';
import { liveCollection } from '../../projections/collections.ts';

export interface CatalogModels {
  media: MediaDoc;
  /** Keys are the projections' names. */
  media_items: MediaItemDoc;
  seasons: SeasonsDoc;
  links: LinksDoc;
  providers: ProvidersDoc;
  genres: GenresDoc;
  collections: CollectionDoc;
  featured: FeaturedDoc;
  /** The header under the country, rows under `${country}:${slice}:${rank}` (projections/rankings.ts). */
  rankings: RankingHeadDoc | RankingRowDoc;
  /** The day under `${country}:${date}`, its head and rows beside it (projections/trending.ts). */
  trending: TrendingDoc | TrendingHeadDoc | TrendingRowDoc;
  availability_history: HistoryDoc;
  changes: ChangeBlockDoc;
  arrivals: DayIndexDoc;
  departures: DayIndexDoc;
  upcoming: DayIndexDoc;
}
export type ModelName = keyof CatalogModels;

export interface CatalogOptions {
  /** Projection version per read model, used when no alias is set. Default 1 for each. */
  versions?: Partial<Record<ModelName, number>>;
  /**
   * How long a resolved alias is reused, in ms. Default 1000: a switch after a rebuild is
   * seen within a second without an extra read per request.
   */
  aliasTtlMs?: number;
  now?: () => number;
}

export interface Catalog {
  collectionOf(name: ModelName): Promise<string>;
  get<N extends ModelName>(name: N, key: string): Promise<CatalogModels[N] | null>;
  getMany<N extends ModelName>(name: N, keys: string[]): Promise<Array<CatalogModels[N] | null>>;
  scan<N extends ModelName>(name: N, options?: ScanOptions): Promise<Array<StoredDocument<CatalogModels[N]>>>;
  /**
   * The state of these read models: each one's live collection and its checkpoint, which the
   * projection runner moves with every write (responseCache.ts). Equal stamps, same documents.
   */
  stamp(names: readonly ModelName[]): Promise<string>;
}

/** The catalog, noting in `used` each read model a caller reads through it. */
export function trackingCatalog(catalog: Catalog, used: Set<ModelName>): Catalog {
  return {
    collectionOf: catalog.collectionOf,
    // What a caller made from the state of these models depends on them, read or not (kept list items).
    stamp(names) {
      for (const name of names) used.add(name);
      return catalog.stamp(names);
    },
    get(name, key) {
      used.add(name);
      return catalog.get(name, key);
    },
    getMany(name, keys) {
      used.add(name);
      return catalog.getMany(name, keys);
    },
    scan(name, options) {
      used.add(name);
      return catalog.scan(name, options);
    },
  };
}

export function createCatalog(store: ReadStore, options: CatalogOptions = {}): Catalog {
  const ttl = options.aliasTtlMs ?? 1000;
  const now = options.now ?? Date.now;
  const cache = new Map<ModelName, { collection: string; until: number }>();

  async function collectionOf(name: ModelName): Promise<string> {
    const hit = cache.get(name);
    if (hit && hit.until > now()) return hit.collection;
    let alias: string | null;
    try {
      alias = await store.getAlias(name);
    } catch (err) {
      throw asUnavailable(err, 'The catalog');
    }
    const collection = liveCollection(alias, { name, version: options.versions?.[name] ?? 1 });
    if (ttl > 0) cache.set(name, { collection, until: now() + ttl });
    return collection;
  }

  async function guarded<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (err) {
      throw asUnavailable(err, 'The catalog');
    }
  }

  return {
    collectionOf,
    async get(name, key) {
      const collection = await collectionOf(name);
      const stored = await guarded(() => store.get<CatalogModels[typeof name]>(collection, key));
      return stored?.doc ?? null;
    },
    async getMany(name, keys) {
      if (keys.length === 0) return [];
      const collection = await collectionOf(name);
      const stored = await guarded(() => store.getMany<CatalogModels[typeof name]>(collection, keys));
      return stored.map((s) => s?.doc ?? null);
    },
    async scan(name, scanOptions) {
      const collection = await collectionOf(name);
      return guarded(() => store.scan<CatalogModels[typeof name]>(collection, scanOptions));
    },
    async stamp(names) {
      // Collections from the alias cache without a promise when it holds them, and all the
      // checkpoints in one read: this runs for every request that may reuse a kept answer.
      const collections: string[] = [];
      for (const name of names) {
        const hit = cache.get(name);
        collections.push(hit !== undefined && hit.until > now() ? hit.collection : await collectionOf(name));
      }
      const checkpoints = await guarded(() => store.getCheckpoints(collections));
      let stamp = '';
      for (let i = 0; i < collections.length; i += 1) stamp += `${collections[i]}@${checkpoints[i]};`;
      return stamp;
    },
  };
}
