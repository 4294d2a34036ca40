/**
 * The global files of a release: the sixteen metadata files (written to a work directory,
 * then bundled as metadata.tar.gz) and the per-language translation overlays (written straight
 * into the release). One pass over `seasons`, one over `media` feeding every media-keyed file
 * at once, then the small models.
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
import { scanAll } from './scan.ts';
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
  const writers = new Map<string, ParquetRowWriter<string>>();
  const open = (name: string): ParquetRowWriter<string> => {
    const writer = openParquetWriter(metadataFile(name), fileSink(join(workDir, name)), input.parquet);
    writers.set(name, writer);
    return writer;
  };
  const translations = new Map<string, ParquetRowWriter<ReleaseFile>>();
  const rowCounts: Record<string, number> = {};

  async function appendAll(writer: ParquetRowWriter<unknown>, list: readonly SnapshotRow[]): Promise<void> {
    for (const row of list) await writer.append(row);
  }

  try {
    // Seasons first: tv_shows.parquet needs each show's season and episode counts.
    const seasons = open('seasons.parquet');
    const episodes = open('episodes.parquet');
    const counts = new Map<string, rows.SeasonCounts>();
    for await (const { doc } of scanAll<SeasonsDoc>(readStore, collections.seasons)) {
      const r = rows.seasonRows(doc);
      counts.set(doc.mediaId, r.counts);
      await appendAll(seasons, r.seasons);
      await appendAll(episodes, r.episodes);
    }

    const details = open('media_details.parquet');
    const movies = open('movies.parquet');
    const tvShows = open('tv_shows.parquet');
    const genresOf = open('media_genres.parquet');
    const ids = open('media_ids.parquet');
    const ratings = open('media_ratings.parquet');
    const talents = open('media_talents.parquet');
    const videos = open('media_videos.parquet');
    // Every person once, by id; the name last seen wins (media ids ascend, so deterministic).
    const people = new Map<string, string>();
    for await (const { doc } of scanAll<MediaDoc>(readStore, collections.media)) {
      await details.append(rows.mediaDetailsRow(doc));
      if (doc.kind === 'movie') await movies.append(rows.movieRow(doc));
      else await tvShows.append(rows.tvShowRow(doc, counts.get(doc.id)));
      await appendAll(genresOf, rows.mediaGenreRows(doc));
      await appendAll(ids, rows.mediaIdRows(doc));
      await appendAll(ratings, rows.mediaRatingRows(doc));
      await appendAll(talents, rows.mediaTalentRows(doc));
      await appendAll(videos, rows.mediaVideoRows(doc));
      for (const member of doc.details.cast) people.set(member.personId, member.name);
      for (const language of Object.keys(doc.translations)) {
        if (!LANGUAGE.test(language)) continue;
        let writer = translations.get(language);
        if (!writer) {
          const path = releasePaths.translation(language);
          writer = openParquetWriter(TRANSLATIONS_FILE, (bytes) => release.write(path, bytes), input.parquet);
          translations.set(language, writer);
        }
        const row = rows.translationRow(doc, language);
        if (row) await writer.append(row);
      }
    }
    counts.clear();

    const peoples = open('peoples.parquet');
    for (const id of [...people.keys()].sort(rows.compareNullable)) await peoples.append({ person_id: id, name: people.get(id) ?? '' });
    people.clear();

    const genres = await readStore.get<GenresDoc>(collections.genres, GENRES_KEY);
    await appendAll(open('genres.parquet'), rows.genreRows(genres?.doc ?? null));

    const providers = open('providers.parquet');
    const weights = open('provider_weights.parquet');
    for await (const { doc } of scanAll<ProvidersDoc>(readStore, collections.providers)) {
      await appendAll(providers, rows.providerRows(doc.country, doc.providers));
      await appendAll(weights, rows.providerWeightRows(doc.country, doc.providers));
    }

    const curated = open('collections.parquet');
    for await (const { doc } of scanAll<CollectionDoc>(readStore, collections.collections)) await appendAll(curated, rows.collectionRows(doc));

    const featured = open('featured.parquet');
    for await (const { doc } of scanAll<FeaturedDoc>(readStore, collections.featured)) await appendAll(featured, rows.featuredRows(doc));

    const bundle: TarEntry[] = [];
    for (const def of METADATA_FILES) {
      const writer = writers.get(def.file);
      if (!writer) throw new AppError('internal', `${def.file} was never written`);
      writers.delete(def.file);
      const { rows: count, result } = await writer.close();
      rowCounts[def.file] = count;
      bundle.push({ name: def.file, file: result });
      input.onFile?.(def.file, count);
    }
    const written: ReleaseFile[] = [];
    for (const language of [...translations.keys()].sort()) {
      const writer = translations.get(language) as ParquetRowWriter<ReleaseFile>;
      translations.delete(language);
      const { rows: count, result } = await writer.close();
      rowCounts[`lang_${language}.parquet`] = count;
      written.push(result);
      input.onFile?.(result.path, count);
    }
    return { bundle, translations: written, rowCounts };
  } catch (err) {
    for (const writer of [...writers.values(), ...translations.values()]) await writer.abort(err);
    throw err;
  }
}
