import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppError, isAppError } from '../../contracts/errors.ts';
import type { Clock, EventStore, ReadStore, ReleaseManifest, ReleaseStore } from '../../contracts/ports.ts';
import type { LinksDoc, MediaDoc } from '../../contracts/readModels.ts';
import {
  LINKS_FILE,
  METADATA_FILES,
  PER_COUNTRY_FILES,
  TRANSLATIONS_FILE,
  type SnapshotFileSchema,
} from '../../contracts/snapshotSchema.ts';
import { lmdbEventStore } from '../../infra/lmdb/eventStore.ts';
import { lmdbReadStore } from '../../infra/lmdb/readStore.ts';
import { fsReleaseStore } from '../../infra/releases/fsReleaseStore.ts';
import { inProcessSearchIndex } from '../../infra/search/inProcessSearch.ts';
import { defaultCollectionName } from '../../projections/collections.ts';
import { linksProjection, mediaProjection } from '../../projections/index.ts';
import type { LinkTokenCodec } from '../../services/api/types.ts';
import { buildRelease, type BuildReleaseResult } from '../../services/snapshot/build.ts';
import { IDS, seedCatalog } from '../e2e/api.fixture.ts';
import { testLinkTokens } from '../e2e/api.linkTokens.ts';
import { DUCK_TYPES, extractTarGz, lit, openDuck, type Duck } from './snapshot.support.ts';

const clock: Clock = { now: () => new Date('2026-11-21T08:00:00Z') };

describe('the weekly release built from the read models', function () {
  this.timeout(60_000);
  let dir: string;
  let eventStore: EventStore;
  let readStore: ReadStore;
  let releases: ReleaseStore;
  let linkTokens: LinkTokenCodec;
  let built: BuildReleaseResult;
  let manifest: ReleaseManifest;
  let duck: Duck;
  let metadataDir: string;

  const file = (path: string): string => join(dir, 'releases', manifest.version, path);
  const parquet = (path: string): string => lit(file(path));
  const meta = (name: string): string => lit(join(metadataDir, name));

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'marquee-snapshot-int-'));
    eventStore = lmdbEventStore({ dataDir: dir, clock });
    readStore = lmdbReadStore({ dataDir: dir });
    await seedCatalog(eventStore, readStore, inProcessSearchIndex());
    linkTokens = await testLinkTokens();
    releases = fsReleaseStore({ dir: join(dir, 'releases') });
    built = await buildRelease({ readStore, releases, linkTokens, clock });
    manifest = built.manifest;
    duck = await openDuck();
    metadataDir = join(dir, 'metadata');
  });

  after(async () => {
    duck?.close();
    await readStore?.close();
    await eventStore?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('publishes the ISO week of the clock with every file of every covered country, sizes and sha256 matching the bytes', async () => {
    assert.equal(manifest.version, '2026-W47');
    assert.equal(manifest.publishedAt, '2026-11-21T08:00:00Z');
    assert.deepEqual(manifest.countries, ['DE', 'US']);
    assert.deepEqual(manifest.files.map((f) => f.path), [
      'country=DE/changes.parquet', 'country=DE/links.parquet', 'country=DE/rankings.parquet', 'country=DE/trending.parquet',
      'country=US/changes.parquet', 'country=US/links.parquet', 'country=US/rankings.parquet', 'country=US/trending.parquet',
      'metadata.tar.gz',
      'metadata/translations/lang_de.parquet',
    ]);
    for (const f of manifest.files) {
      const bytes = readFileSync(file(f.path));
      assert.equal(bytes.length, f.sizeBytes, f.path);
      assert.equal(createHash('sha256').update(bytes).digest('hex'), f.sha256, f.path);
    }
    assert.deepEqual(await releases.list(), [manifest]);
  });

  it('writes links.parquet rows equal to the links read model, with the tokens of the link-token codec', async () => {
    const docs = await readStore.scan<LinksDoc>(defaultCollectionName(linksProjection), { prefix: 'US:' });
    const expected = docs.flatMap(({ doc }) => doc.offers.map((o) => ({
      media_id: doc.mediaId,
      season_number: o.seasonNumber,
      episode_number: o.episodeNumber,
      provider_id: o.providerId,
      addon_provider_id: o.addonProviderId,
      link_token: linkTokens.encode(o.webUrl),
      available_from: o.availableFrom,
      available_to: o.availableTo,
      first_seen_at: o.firstSeenAt,
      price_types: o.priceTypes === null ? null : [...o.priceTypes].sort(),
      formats: o.formats,
      audio_languages: o.audioLanguages,
      subtitle_languages: o.subtitleLanguages,
      platforms: o.platforms,
    })));
    const rows = await duck.rows(`SELECT * FROM read_parquet(${parquet('country=US/links.parquet')}, hive_partitioning = false)`);
    assert.equal(rows.length, 4);
    assert.deepEqual(
      [...rows].sort((a, b) => String(a.link_token).localeCompare(String(b.link_token))),
      [...expected].sort((a, b) => a.link_token.localeCompare(b.link_token)),
    );
    const amazon = rows.find((r) => r.provider_id === 'amazon');
    assert.deepEqual(amazon?.price_types, ['buy', 'rent']);
    assert.equal(amazon?.first_seen_at, '2026-11-10');
    assert.equal(linkTokens.decode(String(amazon?.link_token)), 'https://www.amazon.com/dp/B01');
    const episode = rows.find((r) => r.media_id === IDS.harbor && r.episode_number !== null);
    assert.deepEqual([episode?.season_number, episode?.episode_number], [1, 1]);
    assert.equal((await duck.rows(`SELECT count(*)::INT AS n FROM read_parquet(${parquet('country=DE/links.parquet')}, hive_partitioning = false)`))[0]?.n, 0);
  });

  it("writes the country's latest ranking and the week's trending positions", async () => {
    const ranking = await duck.rows(`SELECT * FROM read_parquet(${parquet('country=US/rankings.parquet')}, hive_partitioning = false)`);
    assert.deepEqual(ranking, [
      { position: 1, media_id: IDS.landGirls, kind: 'movie', score: 0.95, points: 950, date: '2026-11-20' },
      { position: 2, media_id: IDS.harbor, kind: 'tv_show', score: 0.7, points: 700, date: '2026-11-20' },
      { position: 3, media_id: IDS.rapidFire, kind: 'movie', score: 0.6, points: 600, date: '2026-11-20' },
    ]);
    const trending = await duck.rows(`SELECT * FROM read_parquet(${parquet('country=US/trending.parquet')}, hive_partitioning = false)`);
    assert.deepEqual(trending, [
      { date: '2026-11-19', media_id: IDS.rapidFire, kind: 'movie', position: 1, previous_position: null, change: null },
      { date: '2026-11-20', media_id: IDS.landGirls, kind: 'movie', position: 1, previous_position: 3, change: 2 },
      { date: '2026-11-20', media_id: IDS.rapidFire, kind: 'movie', position: 3, previous_position: 1, change: -2 },
      { date: '2026-11-20', media_id: IDS.harbor, kind: 'tv_show', position: 2, previous_position: null, change: null },
    ].sort((a, b) => a.date.localeCompare(b.date) || a.media_id.localeCompare(b.media_id)));
  });

  it('bundles the sixteen metadata files in metadata.tar.gz, with the values of the read models', async () => {
    const names = await extractTarGz(file('metadata.tar.gz'), metadataDir);
    assert.deepEqual(names, METADATA_FILES.map((f) => f.file));
    assert.equal(names.length, 16);
    const count = async (name: string): Promise<number> =>
      Number((await duck.rows(`SELECT count(*)::INT AS n FROM read_parquet(${meta(name)})`))[0]?.n);
    const media = await readStore.scan<MediaDoc>(defaultCollectionName(mediaProjection));
    assert.equal(await count('media_details.parquet'), media.length);
    assert.deepEqual(
      {
        'movies.parquet': await count('movies.parquet'), 'tv_shows.parquet': await count('tv_shows.parquet'),
        'seasons.parquet': await count('seasons.parquet'), 'episodes.parquet': await count('episodes.parquet'),
        'genres.parquet': await count('genres.parquet'), 'media_genres.parquet': await count('media_genres.parquet'),
        'providers.parquet': await count('providers.parquet'), 'provider_weights.parquet': await count('provider_weights.parquet'),
        'collections.parquet': await count('collections.parquet'), 'featured.parquet': await count('featured.parquet'),
        'media_ids.parquet': await count('media_ids.parquet'), 'media_videos.parquet': await count('media_videos.parquet'),
      },
      {
        'movies.parquet': 2, 'tv_shows.parquet': 1, 'seasons.parquet': 2, 'episodes.parquet': 5, 'genres.parquet': 3,
        'media_genres.parquet': 4, 'providers.parquet': 5, 'provider_weights.parquet': 5, 'collections.parquet': 5,
        'featured.parquet': 3, 'media_ids.parquet': 1, 'media_videos.parquet': 1,
      },
    );
    const [landGirls] = await duck.rows(
      `SELECT title, year, tmdb_rating, vote_count, first_seen_at, poster FROM read_parquet(${meta('media_details.parquet')}) WHERE media_id = ${lit(IDS.landGirls)}`,
    );
    const doc = media.find((m) => m.key === IDS.landGirls)?.doc;
    assert.deepEqual(landGirls, {
      title: doc?.details.title, year: doc?.details.year, tmdb_rating: doc?.details.tmdbRating,
      vote_count: doc?.details.voteCount, first_seen_at: doc?.firstSeenAt, poster: doc?.details.poster,
    });
    assert.deepEqual(await duck.rows(`SELECT * FROM read_parquet(${meta('tv_shows.parquet')})`), [
      { media_id: IDS.harbor, in_production: true, last_air_date: '2024-02-02', runtime: null, season_count: 2, episode_count: 5 },
    ]);
    assert.deepEqual(await duck.rows(`SELECT provider_id, weight, rank FROM read_parquet(${meta('provider_weights.parquet')}) WHERE country = 'US'`), [
      { provider_id: 'amazon', weight: 80, rank: 2 },
      { provider_id: 'hbo-amazon', weight: 10, rank: 4 },
      { provider_id: 'hulu', weight: 50, rank: 3 },
      { provider_id: 'netflix', weight: 100, rank: 1 },
    ]);
    assert.deepEqual(await duck.rows(`SELECT slug, item_index, media_id, position FROM read_parquet(${meta('collections.parquet')})`), [
      { slug: 'best-of-2026', item_index: 0, media_id: IDS.harbor, position: 1 },
      { slug: 'best-of-2026', item_index: 1, media_id: IDS.landGirls, position: 2 },
      { slug: 'best-of-2026', item_index: 2, media_id: IDS.rapidFire, position: null },
      { slug: 'german-picks', item_index: null, media_id: null, position: null },
      { slug: 'us-westerns', item_index: 0, media_id: IDS.rapidFire, position: null },
    ]);
  });

  it('writes one translation overlay per language that has one', async () => {
    assert.deepEqual(await duck.rows(`SELECT * FROM read_parquet(${parquet('metadata/translations/lang_de.parquet')}, hive_partitioning = false)`), [
      { media_id: IDS.landGirls, title: 'Die Landmädchen', overview: 'Ein Kriegsdrama.', tagline: null, poster: null, backdrop: null },
    ]);
  });

  /** Every Parquet file of the release with its schema (metadata files after extraction). */
  async function everyFile(): Promise<Array<{ sql: string; def: SnapshotFileSchema }>> {
    if ((await extractTarGz(file('metadata.tar.gz'), metadataDir)).length !== 16) throw new Error('bundle incomplete');
    return [
      ...manifest.countries.flatMap((cc) => PER_COUNTRY_FILES.map((def) => ({ sql: parquet(`country=${cc}/${def.file}`), def }))),
      ...METADATA_FILES.map((def) => ({ sql: meta(def.file), def })),
      { sql: parquet('metadata/translations/lang_de.parquet'), def: TRANSLATIONS_FILE },
    ];
  }

  it('declares exactly the column names, types and nullability of the schema in every file', async () => {
    const files = await everyFile();
    assert.equal(files.length, 2 * 4 + 16 + 1);
    for (const { sql, def } of files) {
      const described = await duck.rows(`DESCRIBE SELECT * FROM read_parquet(${sql}, hive_partitioning = false)`);
      assert.deepEqual(
        described.map((d) => [d.column_name, d.column_type]),
        def.columns.map((c) => [c.name, DUCK_TYPES[c.type]]),
        def.file,
      );
      const repetition = await duck.rows(
        `SELECT name, repetition_type FROM parquet_schema(${sql}) WHERE name IN (${def.columns.map((c) => lit(c.name)).join(', ')})`,
      );
      for (const col of def.columns) {
        const found = repetition.find((r) => r.name === col.name);
        assert.equal(found?.repetition_type, col.nullable ? 'OPTIONAL' : 'REQUIRED', `${def.file} ${col.name}`);
      }
    }
    const logical = await duck.rows(`SELECT name, logical_type FROM parquet_schema(${parquet('country=US/links.parquet')}) WHERE name IN ('season_number', 'available_from')`);
    assert.deepEqual(logical.map((r) => [r.name, String(r.logical_type).replace(/bitWidth=[^,]*/, 'bitWidth=16')]), [
      ['season_number', 'IntType(bitWidth=16, isSigned=1)'],
      ['available_from', 'DateType()'],
    ]);
  });

  it('stores the rows of every file in its sorted_by order', async () => {
    for (const { sql, def } of await everyFile()) {
      const cols = def.sorted_by.join(', ');
      const asStored = await duck.rows(`SELECT ${cols} FROM read_parquet(${sql}, hive_partitioning = false)`);
      const sorted = await duck.rows(`SELECT ${cols} FROM read_parquet(${sql}, hive_partitioning = false) ORDER BY ${def.sorted_by.map((c) => `${c} ASC NULLS FIRST`).join(', ')}`);
      assert.deepEqual(asStored, sorted, def.file);
    }
    assert.deepEqual(LINKS_FILE.sorted_by, ['media_id', 'season_number', 'episode_number', 'provider_id', 'addon_provider_id', 'link_token']);
  });

  it('compresses every column chunk with ZSTD and records column statistics', async () => {
    for (const { sql, def } of await everyFile()) {
      const chunks = await duck.rows(`SELECT path_in_schema, compression, stats_null_count FROM parquet_metadata(${sql})`);
      const rows = Number((await duck.rows(`SELECT count(*)::INT AS n FROM read_parquet(${sql}, hive_partitioning = false)`))[0]?.n);
      // An empty file has no row group, hence no column chunk.
      assert.equal(chunks.length === 0, rows === 0, def.file);
      if (rows > 0) assert.ok(chunks.length >= def.columns.length, def.file);
      for (const chunk of chunks) {
        assert.equal(chunk.compression, 'ZSTD', `${def.file} ${chunk.path_in_schema}`);
        assert.notEqual(chunk.stats_null_count, null, `${def.file} ${chunk.path_in_schema}`);
      }
    }
    const stats = await duck.rows(
      `SELECT path_in_schema AS col, stats_min_value AS min, stats_max_value AS max FROM parquet_metadata(${parquet('country=US/links.parquet')}) WHERE path_in_schema IN ('media_id', 'first_seen_at')`,
    );
    assert.deepEqual(stats, [
      { col: 'media_id', min: IDS.landGirls, max: IDS.harbor },
      { col: 'first_seen_at', min: '2026-11-01', max: '2026-11-10' },
    ]);
  });

  it('treats a second build of a published week as a no-op that returns the published manifest', async () => {
    const again = await buildRelease({ readStore, releases, linkTokens, clock });
    assert.equal(again.created, false);
    assert.deepEqual(again.manifest, manifest);
    assert.deepEqual((await releases.list()).map((m) => m.version), ['2026-W47']);
  });

  it('answers two builds of one week run at once with one release, the later one a no-op', async () => {
    // A scheduler and `snapshot build` by hand: the one that lost the race failed with
    // "already published", though the week was released.
    const store = fsReleaseStore({ dir: join(dir, 'raced') });
    const both = await Promise.all([1, 2].map(() => buildRelease({ readStore, releases: store, linkTokens, clock, week: '2026-W46' })));
    assert.deepEqual(both.map((r) => r.created).sort(), [false, true]);
    const [first, second] = both as [BuildReleaseResult, BuildReleaseResult];
    assert.deepEqual(first.manifest, second.manifest);
    assert.deepEqual((await store.list()).map((m) => m.version), ['2026-W46']);
  });

  it('keeps only the newest releases after publishing', async () => {
    const store = fsReleaseStore({ dir: join(dir, 'pruned') });
    for (const week of ['2026-W44', '2026-W45', '2026-W46']) {
      const result = await buildRelease({ readStore, releases: store, linkTokens, clock, week, keep: 2 });
      assert.equal(result.created, true);
    }
    assert.deepEqual((await store.list()).map((m) => m.version), ['2026-W46', '2026-W45']);
    assert.equal(await store.get('2026-W44'), null);
    // A week older than both kept ones: it was built, published and pruned at once.
    await assert.rejects(
      buildRelease({ readStore, releases: store, linkTokens, clock, week: '2026-W40', keep: 2 }),
      (err: unknown) => isAppError(err, 'invalid_parameter') && err.message === 'release week 2026-W40 would be pruned as soon as published: the newest 2 releases are kept (RELEASES_KEEP), and 2026-W46, 2026-W45 are newer',
    );
    assert.deepEqual((await store.list()).map((m) => m.version), ['2026-W46', '2026-W45']);
  });

  it('publishes nothing when a read fails half-way, and stops the files written alongside at their next read', async () => {
    const store = fsReleaseStore({ dir: join(dir, 'failing') });
    const linksCollection = defaultCollectionName(linksProjection);
    const mediaCollection = defaultCollectionName(mediaProjection);
    const boom = new Error('links read failed');
    let failedAt = -1;
    let reads = 0;
    let mediaReadsAfter = 0;
    // The countries' links fail at their first read; the metadata runs alongside (build.ts).
    const failing: ReadStore = new Proxy(readStore, {
      get(target, property) {
        const value = Reflect.get(target, property, target) as unknown;
        if (typeof value !== 'function') return value;
        return async (...args: unknown[]) => {
          reads += 1;
          if (property === 'scan' && args[0] === mediaCollection && failedAt >= 0) mediaReadsAfter += 1;
          if (property === 'scan' && args[0] === linksCollection) {
            failedAt = reads;
            throw boom;
          }
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    await assert.rejects(buildRelease({ readStore: failing, releases: store, linkTokens, clock, parquet: { chunkRows: 1 } }), (err) => err === boom);
    assert.ok(failedAt > 0);
    assert.equal(mediaReadsAfter, 0, 'the media pass read on after the failure');
    assert.deepEqual(await store.list(), []);
    assert.equal(await store.get('2026-W47'), null);
  });

  it('on build threads, publishes nothing when a file cannot be written, and fails with that error', async () => {
    const store = fsReleaseStore({ dir: join(dir, 'failing-threads') });
    const boom = new AppError('unavailable', 'the release store is full');
    let refused = 0;
    // The US links fail as the release takes them; every other file is written as usual.
    const failing: ReleaseStore = {
      ...store,
      async begin(version) {
        const writer = await store.begin(version);
        return {
          ...writer,
          write: (path, data) => {
            if (path === 'country=US/links.parquet') {
              refused += 1;
              return Promise.reject(boom);
            }
            return writer.write(path, data);
          },
        };
      },
    };
    const keys = { keys: [{ version: 1, key: new Uint8Array(32).fill(7) }] };
    const threads = { lmdb: { dataDir: dir }, linkKeys: keys, count: 2 };
    await assert.rejects(buildRelease({ readStore, releases: failing, linkTokens, clock, threads, parquet: { chunkRows: 1 } }), (err) => err === boom);
    assert.equal(refused, 1);
    assert.deepEqual(await store.list(), []);
    assert.equal(await store.get('2026-W47'), null);
    // The build threads are gone and their stores closed: the same week builds afterwards.
    const again = await buildRelease({ readStore, releases: store, linkTokens, clock, threads });
    assert.equal(again.created, true);
    assert.deepEqual(again.manifest.files.map((f) => f.path), manifest.files.map((f) => f.path));
  });

  it('refuses a malformed week before writing anything', async () => {
    const store = fsReleaseStore({ dir: join(dir, 'malformed') });
    await assert.rejects(
      buildRelease({ readStore, releases: store, linkTokens, clock, week: '2026-W54' }),
      (err: unknown) => (err as { code?: string }).code === 'invalid_parameter',
    );
    assert.deepEqual(await store.list(), []);
  });

  it('refuses a week after the clock\'s, writing nothing: it would be the latest release until then', async () => {
    const store = fsReleaseStore({ dir: join(dir, 'to-come') });
    await assert.rejects(
      buildRelease({ readStore, releases: store, linkTokens, clock, week: '2026-W48' }),
      (err: unknown) => isAppError(err, 'invalid_parameter') && err.message === 'release week 2026-W48 is after this week (2026-W47, UTC): a week is released once it has come',
    );
    assert.deepEqual(await store.list(), []);
  });

  it('reports progress for every file of the release', async () => {
    const store = fsReleaseStore({ dir: join(dir, 'progress') });
    const seen: Array<{ file: string; done: number; total: number }> = [];
    await buildRelease({ readStore, releases: store, linkTokens, clock, onProgress: ({ file: f, done, total }) => seen.push({ file: f, done, total }) });
    assert.deepEqual(seen.map((s) => s.file).sort(), manifest.files.map((f) => f.path).sort());
    assert.deepEqual(seen.at(-1), { file: 'metadata.tar.gz', done: 10, total: 10 });
    assert.equal(built.rowCounts['country=US/links.parquet'], 4);
  });
});
