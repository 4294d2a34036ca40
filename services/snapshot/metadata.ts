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
import { PeopleIndex } from './people.ts';
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

/** Where the metadata files go, and what is told of them. */
export interface MetadataInput {
  readStore: ReadStore;
  collections: SnapshotCollections;
  /** Where the bundle's files are written (local files). */
  workDir: string;
  /** Where the translation overlays are written. */
  release: Pick<ReleaseWriter, 'write'>;
  parquet?: ParquetWriterOptions;
  /** Called as each file is finished (a bundle file by its name, an overlay by its release path). */
  onFile?: (path: string, rows: number) => void;
}

/** What one part of the metadata wrote: bundle files by name, overlays, rows per file name. */
export interface MetadataPart {
  bundled: Array<[name: string, file: string]>;
  translations: ReleaseFile[];
  rowCounts: Record<string, number>;
}

/**
 * The files of one part, with the backpressure of their writers: chunks that filled up during
 * the current document are awaited before the next one (an append returns a promise only when
 * it completed a chunk).
 */
function partWriter(input: MetadataInput) {
  const part: MetadataPart = { bundled: [], translations: [], rowCounts: {} };
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
    for (const name of names) writers[name] = openParquetWriter(metadataFile(name), fileSink(join(input.workDir, name)), input.parquet);
    try {
      await body(writers);
    } catch (err) {
      pending.length = 0;
      for (const name of names) await writers[name].abort(err);
      throw err;
    }
    for (const name of names) {
      const { rows: count, result } = await writers[name].close();
      part.bundled.push([name, result]);
      part.rowCounts[name] = count;
      input.onFile?.(name, count);
    }
  }
  async function appendAll(writer: ParquetRowWriter<unknown>, list: readonly SnapshotRow[]): Promise<void> {
    track(writer.appendAll(list));
    await settle();
  }
  const translationWriter = (language: string): ParquetRowWriter<ReleaseFile> => {
    const path = releasePaths.translation(language);
    return openParquetWriter(TRANSLATIONS_FILE, (bytes) => input.release.write(path, bytes), input.parquet);
  };
  async function closeTranslation(language: string, writer: ParquetRowWriter<ReleaseFile>): Promise<void> {
    const { rows: count, result } = await writer.close();
    part.rowCounts[`lang_${language}.parquet`] = count;
    part.translations.push(result);
    input.onFile?.(result.path, count);
  }
  return { part, track, settle, pending, withFiles, appendAll, translationWriter, closeTranslation };
}

/** Pages rather than documents: the loops await only when a chunk filled up. */
const mediaPages = (input: MetadataInput): AsyncGenerator<Array<{ doc: MediaDoc }>> => scanPages<MediaDoc>(input.readStore, input.collections.media);

/** seasons.parquet and episodes.parquet; the counts of each show's seasons and episodes, for tv_shows.parquet. */
export async function writeSeasonFiles(input: MetadataInput): Promise<{ part: MetadataPart; counts: Map<string, rows.SeasonCounts> }> {
  const { part, track, settle, pending, withFiles } = partWriter(input);
  const counts = new Map<string, rows.SeasonCounts>();
  await withFiles(['seasons.parquet', 'episodes.parquet'], async (w) => {
    for await (const page of scanPages<SeasonsDoc>(input.readStore, input.collections.seasons)) {
      for (const { doc } of page) {
        const r = rows.seasonRows(doc);
        counts.set(ownCopy(doc.mediaId), r.counts);
        track(w['seasons.parquet'].appendAll(r.seasons));
        track(w['episodes.parquet'].appendAll(r.episodes));
        if (pending.length > 0) await settle();
      }
    }
  });
  return { part, counts };
}

/**
 * One pass over the media feeds the per-title files: decoding a media document costs far more
 * than the rows it yields, and seven open writers stay well within memory (their row groups are
 * in wasm memory, a few MB each). The same pass writes the overlays of the first
 * TRANSLATIONS_PER_PASS languages met (a writer opens at a language's first title), which saves
 * a whole pass over the media when a catalog has no more languages than that, and gathers the
 * people for peoples.parquet. tv_shows.parquet is written after the pass, once `counts` (the
 * seasons pass, which may run at once on another thread) are known.
 * Returns every language met, and those whose overlays are written.
 */
export async function writeMediaFiles(
  input: MetadataInput,
  counts: Promise<ReadonlyMap<string, rows.SeasonCounts>>,
): Promise<{ part: MetadataPart; languages: string[]; written: string[] }> {
  const files = partWriter(input);
  const { track, settle, pending, withFiles } = files;
  const languages = new Set<string>();
  const early = new Map<string, ParquetRowWriter<ReleaseFile>>();
  const shows: rows.TvShowFields[] = [];
  // Every person once, by id; the name last seen wins (media ids ascend, so deterministic).
  const people = new PeopleIndex();
  try {
    await withFiles(
      [
        'media_details.parquet',
        'movies.parquet',
        'media_genres.parquet',
        'media_ids.parquet',
        'media_ratings.parquet',
        'media_videos.parquet',
        'media_talents.parquet',
      ],
      async (w) => {
        for await (const page of mediaPages(input)) {
          for (const { doc } of page) {
            track(w['media_details.parquet'].append(rows.mediaDetailsRow(doc)));
            if (doc.kind === 'movie') track(w['movies.parquet'].append(rows.movieRow(doc)));
            else {
              // Kept until the pass ends: copies, not slices holding the document's strings.
              const show = rows.tvShowFields(doc);
              show.mediaId = ownCopy(show.mediaId);
              if (show.lastAirDate !== null) show.lastAirDate = ownCopy(show.lastAirDate);
              shows.push(show);
            }
            for (const language of Object.keys(doc.translations)) {
              if (!languages.has(language)) {
                if (!LANGUAGE.test(language)) continue;
                languages.add(language);
                if (early.size < TRANSLATIONS_PER_PASS) early.set(language, files.translationWriter(language));
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
            for (const member of doc.details.cast) people.note(member.personId, member.name);
            if (pending.length > 0) await settle();
          }
        }
      },
    );
  } catch (err) {
    for (const writer of early.values()) await writer.abort(err);
    throw err;
  }
  for (const language of [...early.keys()].sort()) await files.closeTranslation(language, early.get(language) as ParquetRowWriter<ReleaseFile>);

  await withFiles(['peoples.parquet'], async (w) => {
    for (const { id, name } of people.byId()) {
      track(w['peoples.parquet'].append({ person_id: id, name }));
      if (pending.length > 0) await settle();
    }
  });

  const seasons = await counts;
  await withFiles(['tv_shows.parquet'], async (w) => {
    for (const show of shows) {
      track(w['tv_shows.parquet'].append(rows.tvShowRow(show, seasons.get(show.mediaId))));
      if (pending.length > 0) await settle();
    }
  });
  return { part: files.part, languages: [...languages], written: [...early.keys()] };
}

/** The files of the small read models: genres, providers and their weights, collections, featured lists. */
export async function writeSmallFiles(input: MetadataInput): Promise<MetadataPart> {
  const { part, withFiles, appendAll } = partWriter(input);
  const { readStore, collections } = input;
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
  return part;
}

/** The overlays of `languages` (those the media pass did not write), a few per pass over the media. */
export async function writeTranslationPasses(input: MetadataInput, languages: readonly string[]): Promise<MetadataPart> {
  const files = partWriter(input);
  const { track, settle, pending } = files;
  const sorted = [...languages].sort();
  for (let i = 0; i < sorted.length; i += TRANSLATIONS_PER_PASS) {
    const group = sorted.slice(i, i + TRANSLATIONS_PER_PASS);
    const writers = group.map((language) => ({ language, writer: files.translationWriter(language) }));
    try {
      for await (const page of mediaPages(input)) {
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
    for (const { language, writer } of writers) await files.closeTranslation(language, writer);
  }
  return files.part;
}

/** The parts put together: the bundle's files in bundle order, the overlays sorted by path. */
export function metadataResult(parts: readonly MetadataPart[]): MetadataResult {
  const bundled = new Map(parts.flatMap((p) => p.bundled));
  const translations = parts.flatMap((p) => p.translations).sort((a, b) => (a.path < b.path ? -1 : 1));
  const rowCounts: Record<string, number> = Object.assign({}, ...parts.map((p) => p.rowCounts));
  const bundle: TarEntry[] = METADATA_FILES.map((def) => {
    const file = bundled.get(def.file);
    if (file === undefined) throw new AppError('internal', `${def.file} was never written`);
    return { name: def.file, file };
  });
  return { bundle, translations, rowCounts };
}

/** Every metadata file and overlay, one part after another on this thread. */
export async function writeMetadata(input: MetadataInput): Promise<MetadataResult> {
  const seasons = await writeSeasonFiles(input);
  const media = await writeMediaFiles(input, Promise.resolve(seasons.counts));
  seasons.counts.clear();
  const small = await writeSmallFiles(input);
  const rest = await writeTranslationPasses(input, media.languages.filter((language) => !media.written.includes(language)));
  return metadataResult([seasons.part, media.part, small, rest]);
}
