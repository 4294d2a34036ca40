/**
 * The global files of a release: the sixteen metadata files (written to a work directory,
 * then bundled as metadata.tar.gz) and the per-language translation overlays (written straight
 * into the release). One pass over `media` writes the per-title files and the overlays of the
 * first few languages met; any further languages take a pass each few of them (see
 * TRANSLATIONS_PER_PASS), so a bounded number of Parquet writers is open at any time.
 */
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AppError } from '../../contracts/errors.ts';
import type { ReadStore, ReleaseFile, ReleaseWriter } from '../../contracts/ports.ts';
import type { CollectionDoc, FeaturedDoc, GenresDoc, MediaDoc, ProvidersDoc, SeasonsDoc } from '../../contracts/readModels.ts';
import { METADATA_FILES, TRANSLATIONS_FILE, releasePaths, type SnapshotFileSchema } from '../../contracts/snapshotSchema.ts';
import { GENRES_KEY } from '../../projections/genres.ts';
import type { SnapshotRow } from './arrowSchema.ts';
import { openParquetWriter, type ParquetRowWriter, type ParquetWriterOptions } from './parquet.ts';
import * as rows from './rows.ts';
import { ownCopy } from '../shared/strings.ts';
import { scanAll, scanPages } from './scan.ts';
import type { TarEntry } from './tarball.ts';

/** Physical collections of the read models the release reads. */
export interface SnapshotCollections {
  media: string;
  seasons: string;
  links: string;
  providers: string;
  genres: string;
  collections: string;
  featured: string;
  rankings: string;
  trending: string;
}

export interface MetadataResult {
  /** The sixteen files, in bundle order, on disk in the work directory. */
  bundle: TarEntry[];
  translations: ReleaseFile[];
  /** Rows per file name (metadata files and `lang_<code>.parquet`). */
  rowCounts: Record<string, number>;
}

/** A language code that makes a valid file name; anything else is skipped. */
const LANGUAGE = /^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$/;

function metadataFile(name: string): SnapshotFileSchema {
  const def = METADATA_FILES.find((f) => f.file === name);
  if (!def) throw new AppError('internal', `no schema for ${name}`);
  return def;
}

/** Writes a Parquet byte stream to a local file; resolves with its path. */
function fileSink(path: string): (bytes: AsyncIterable<Uint8Array>) => Promise<string> {
  return async (bytes) => {
    await pipeline(Readable.from(bytes), createWriteStream(path));
    return path;
  };
}

/**
 * Languages whose overlays are written in one pass over the media. Every open writer keeps a
 * row group, page buffers and a dictionary per column in wasm memory (which never shrinks), so
 * the passes bound how many are open at once; re-reading the media model costs far less.
 */
export const TRANSLATIONS_PER_PASS = 6;

export async function writeMetadata(input: {
  readStore: ReadStore;
  collections: SnapshotCollections;
  workDir: string;
  release: ReleaseWriter;
  parquet?: ParquetWriterOptions;
  /** Called as each file is finished. */
  onFile?: (path: string, rows: number) => void;
}): Promise<MetadataResult> {
  const { readStore, collections, workDir, release } = input;
  const bundled = new Map<string, string>();
  const rowCounts: Record<string, number> = {};
  // Pages rather than documents: the loops below await only when a chunk filled up (a
  // document at a time through an async generator, and an await for each, cost a few
  // microtask turns per title).
  const mediaPages = (): AsyncGenerator<Array<{ doc: MediaDoc }>> => scanPages<MediaDoc>(readStore, collections.media);

  // Chunks that filled up during the current document; awaited before the next one, which is
  // the backpressure (an append returns a promise only when it completed a chunk).
  const pending: Array<Promise<void>> = [];
  const track = (p: Promise<void> | undefined): void => {
    if (p === undefined) return;
    // Awaited by settle(); until then (or if a later append throws first) never unhandled.
    p.catch(() => {});
    pending.push(p);
  };
  async function settle(): Promise<void> {
    if (pending.length === 0) return;
    await Promise.all(pending.splice(0));
  }
  /** Opens the named metadata files, runs `body` with them, and closes them all (or aborts them all). */
  async function withFiles<K extends string>(names: readonly K[], body: (w: Record<K, ParquetRowWriter<string>>) => Promise<void>): Promise<void> {
    const writers = {} as Record<K, ParquetRowWriter<string>>;
    for (const name of names) writers[name] = openParquetWriter(metadataFile(name), fileSink(join(workDir, name)), input.parquet);
    try {
      await body(writers);
    } catch (err) {
      pending.length = 0;
      for (const name of names) await writers[name].abort(err);
      throw err;
    }
    for (const name of names) {
      const { rows: count, result } = await writers[name].close();
      bundled.set(name, result);
      rowCounts[name] = count;
      input.onFile?.(name, count);
    }
  }

  async function appendAll(writer: ParquetRowWriter<unknown>, list: readonly SnapshotRow[]): Promise<void> {
    track(writer.appendAll(list));
    await settle();
  }

  // Seasons first: tv_shows.parquet needs each show's season and episode counts.
  const counts = new Map<string, rows.SeasonCounts>();
  await withFiles(['seasons.parquet', 'episodes.parquet'], async (w) => {
    for await (const page of scanPages<SeasonsDoc>(readStore, collections.seasons)) {
      for (const { doc } of page) {
        const r = rows.seasonRows(doc);
        counts.set(doc.mediaId, r.counts);
        track(w['seasons.parquet'].appendAll(r.seasons));
        track(w['episodes.parquet'].appendAll(r.episodes));
        if (pending.length > 0) await settle();
      }
    }
  });

  // One pass over the media feeds all eight per-title files: decoding a media document costs
  // far more than the rows it yields, and eight open writers stay well within memory (their
  // row groups are in wasm memory, a few MB each). The same pass writes the overlays of the
  // first TRANSLATIONS_PER_PASS languages met (a writer opens at a language's first title),
  // which saves a whole pass over the media when a catalog has no more languages than that.
  const languages = new Set<string>();
  const early = new Map<string, ParquetRowWriter<ReleaseFile>>();
  const translationWriter = (language: string): ParquetRowWriter<ReleaseFile> => {
    const path = releasePaths.translation(language);
    return openParquetWriter(TRANSLATIONS_FILE, (bytes) => release.write(path, bytes), input.parquet);
  };
  // Every person once, by id; the name last seen wins (media ids ascend, so deterministic).
  const people = new Map<string, string>();
  try {
    await withFiles(
      [
        'media_details.parquet',
        'movies.parquet',
        'tv_shows.parquet',
        'media_genres.parquet',
        'media_ids.parquet',
        'media_ratings.parquet',
        'media_videos.parquet',
        'media_talents.parquet',
      ],
      async (w) => {
        for await (const page of mediaPages()) {
          for (const { doc } of page) {
            track(w['media_details.parquet'].append(rows.mediaDetailsRow(doc)));
            if (doc.kind === 'movie') track(w['movies.parquet'].append(rows.movieRow(doc)));
            else track(w['tv_shows.parquet'].append(rows.tvShowRow(doc, counts.get(doc.id))));
            for (const language of Object.keys(doc.translations)) {
              if (!languages.has(language)) {
                if (!LANGUAGE.test(language)) continue;
                languages.add(language);
                if (early.size < TRANSLATIONS_PER_PASS) early.set(language, translationWriter(language));
              }
              const writer = early.get(language);
              const row = writer === undefined ? null : rows.translationRow(doc, language);
              if (row) track((writer as ParquetRowWriter<ReleaseFile>).append(row));
            }
            track(w['media_genres.parquet'].appendAll(rows.mediaGenreRows(doc)));
            track(w['media_ids.parquet'].appendAll(rows.mediaIdRows(doc)));
            track(w['media_ratings.parquet'].appendAll(rows.mediaRatingRows(doc)));
            track(w['media_videos.parquet'].appendAll(rows.mediaVideoRows(doc)));
            track(w['media_talents.parquet'].appendAll(rows.mediaTalentRows(doc)));
            for (const member of doc.details.cast) {
              // Stored only when new or renamed: replacing a name with an equal one would keep
              // each title's copy of it alive (the map is old), to be copied by the collector.
              // A Map keeps the key it first got, so the id is copied only for a new person.
              const known = people.get(member.personId);
              if (known !== member.name) people.set(known === undefined ? ownCopy(member.personId) : member.personId, ownCopy(member.name));
            }
            if (pending.length > 0) await settle();
          }
        }
      },
    );
  } catch (err) {
    for (const writer of early.values()) await writer.abort(err);
    throw err;
  }
  const translations: ReleaseFile[] = [];
  for (const language of [...early.keys()].sort()) {
    const { rows: count, result } = await (early.get(language) as ParquetRowWriter<ReleaseFile>).close();
    rowCounts[`lang_${language}.parquet`] = count;
    translations.push(result);
    input.onFile?.(result.path, count);
  }
  counts.clear();

  await withFiles(['peoples.parquet'], async (w) => {
    // The default sort is code-unit order for strings, as compareNullable's, without a call per comparison.
    for (const id of [...people.keys()].sort()) {
      track(w['peoples.parquet'].append({ person_id: id, name: people.get(id) ?? '' }));
      if (pending.length > 0) await settle();
    }
  });
  people.clear();

  await withFiles(['genres.parquet'], async (w) => {
    const genres = await readStore.get<GenresDoc>(collections.genres, GENRES_KEY);
    await appendAll(w['genres.parquet'], rows.genreRows(genres?.doc ?? null));
  });
  await withFiles(['providers.parquet', 'provider_weights.parquet'], async (w) => {
    for await (const { doc } of scanAll<ProvidersDoc>(readStore, collections.providers)) {
      await appendAll(w['providers.parquet'], rows.providerRows(doc.country, doc.providers));
      await appendAll(w['provider_weights.parquet'], rows.providerWeightRows(doc.country, doc.providers));
    }
  });
  await withFiles(['collections.parquet', 'featured.parquet'], async (w) => {
    for await (const { doc } of scanAll<CollectionDoc>(readStore, collections.collections)) await appendAll(w['collections.parquet'], rows.collectionRows(doc));
    for await (const { doc } of scanAll<FeaturedDoc>(readStore, collections.featured)) await appendAll(w['featured.parquet'], rows.featuredRows(doc));
  });

  // The languages the media pass did not write, a few per pass.
  const sorted = [...languages].filter((language) => !early.has(language)).sort();
  for (let i = 0; i < sorted.length; i += TRANSLATIONS_PER_PASS) {
    const group = sorted.slice(i, i + TRANSLATIONS_PER_PASS);
    const writers = group.map((language) => ({ language, writer: translationWriter(language) }));
    try {
      for await (const page of mediaPages()) {
        for (const { doc } of page) {
          for (const { language, writer } of writers) {
            const row = rows.translationRow(doc, language);
            if (row) track(writer.append(row));
          }
          if (pending.length > 0) await settle();
        }
      }
    } catch (err) {
      pending.length = 0;
      for (const { writer } of writers) await writer.abort(err);
      throw err;
    }
    for (const { language, writer } of writers) {
      const { rows: count, result } = await writer.close();
      rowCounts[`lang_${language}.parquet`] = count;
      translations.push(result);
      input.onFile?.(result.path, count);
    }
  }

  translations.sort((a, b) => (a.path < b.path ? -1 : 1));
  const bundle: TarEntry[] = METADATA_FILES.map((def) => {
    const file = bundled.get(def.file);
    if (file === undefined) throw new AppError('internal', `${def.file} was never written`);
    return { name: def.file, file };
  });
  return { bundle, translations, rowCounts };
}
