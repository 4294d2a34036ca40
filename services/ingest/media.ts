/**
 * `media-{id}`: a title's details, translations and seasons.
 * MediaObserved registers a title the first time and records changed details afterwards;
 * MediaTranslationObserved and SeasonsObserved record what differs, once the title is known.
 */
import type { ContentType, MediaDetails, Season, Translation } from '../../contracts/domain.ts';
import type { DomainEvent, MediaEvent } from '../../contracts/events.ts';
import { mediaIdOf, slugify, streams } from '../../contracts/ids.ts';
import type {
  MediaObserved,
  MediaObservedData,
  MediaTranslationObserved,
  SeasonsObserved,
} from '../../contracts/observations.ts';
import {
  alreadySeen,
  changedFieldsOf,
  deepEqual,
  emptySeen,
  metadataOf,
  noteEvent,
  reject,
  skip,
  type Decider,
  type Decision,
  type Seen,
} from './decision.ts';

export type MediaObservation = MediaObserved | MediaTranslationObserved | SeasonsObserved;

export interface MediaState {
  seen: Seen;
  /** null until MediaRegistered. */
  media: { mediaId: string; kind: ContentType; sourceId: number; slug: string; details: MediaDetails } | null;
  translations: Record<string, Translation>;
  /** By season number. */
  seasons: Record<string, Season>;
}

/** The fields of MediaDetails, in the order `changedFields` lists them. */
export const MEDIA_DETAIL_FIELDS = [
  'title', 'originalTitle', 'year', 'releaseDate', 'tagline', 'overview', 'classification',
  'poster', 'backdrop', 'popularity', 'tmdbRating', 'voteCount', 'runtime', 'inProduction',
  'lastAirDate', 'genreIds', 'ratings', 'externalIds', 'videos', 'contentRatings', 'cast',
] as const satisfies readonly (keyof MediaDetails)[];

// Staleness is tracked per aspect: details, each translation, and seasons.
const DETAILS = 'details';
const SEASONS = 'seasons';
const translationAspect = (language: string) => `translation:${language}`;

/** The slug a title is registered with: `slugify(title)-year` when the year is known. */
export function mediaSlug(title: string, year: number | null): string {
  return year === null ? slugify(title) : `${slugify(title)}-${year}`;
}

/** Copies exactly the MediaDetails fields, so extra observation fields never reach an event. */
export function detailsOf(d: MediaObservedData): MediaDetails {
  return {
    title: d.title,
    originalTitle: d.originalTitle,
    year: d.year,
    releaseDate: d.releaseDate,
    tagline: d.tagline,
    overview: d.overview,
    classification: d.classification,
    poster: d.poster,
    backdrop: d.backdrop,
    popularity: d.popularity,
    tmdbRating: d.tmdbRating,
    voteCount: d.voteCount,
    runtime: d.runtime,
    inProduction: d.inProduction,
    lastAirDate: d.lastAirDate,
    genreIds: [...d.genreIds],
    ratings: d.ratings.map((r) => ({ source: r.source, rating: r.rating })),
    externalIds: d.externalIds.map((x) => ({ source: x.source, id: x.id })),
    videos: d.videos.map((v) => ({ source: v.source, id: v.id })),
    contentRatings: d.contentRatings.map((c) => ({ country: c.country.toUpperCase(), rating: c.rating })),
    cast: d.cast.map((c) => ({ personId: c.personId, name: c.name, role: c.role, character: c.character, order: c.order })),
  };
}

function seasonOf(s: Season): Season {
  return {
    seasonNumber: s.seasonNumber,
    title: s.title,
    overview: s.overview,
    poster: s.poster,
    airDate: s.airDate,
    episodes: s.episodes.map((e) => ({
      episodeNumber: e.episodeNumber,
      title: e.title,
      overview: e.overview,
      backdrop: e.backdrop,
      airDate: e.airDate,
    })),
  };
}

function initialState(): MediaState {
  return { seen: emptySeen(), media: null, translations: {}, seasons: {} };
}

function evolve(state: MediaState, event: DomainEvent): MediaState {
  const e = event as MediaEvent;
  switch (e.type) {
    case 'MediaRegistered':
      return {
        ...state,
        seen: noteEvent(state.seen, DETAILS, e.metadata),
        media: { mediaId: e.data.mediaId, kind: e.data.kind, sourceId: e.data.sourceId, slug: e.data.slug, details: e.data.details },
      };
    case 'MediaDetailsChanged':
      return {
        ...state,
        seen: noteEvent(state.seen, DETAILS, e.metadata),
        media: state.media === null ? null : { ...state.media, details: e.data.details },
      };
    case 'MediaTranslationChanged':
      return {
        ...state,
        seen: noteEvent(state.seen, translationAspect(e.data.language), e.metadata),
        translations: { ...state.translations, [e.data.language]: e.data.translation },
      };
    case 'SeasonChanged':
      return {
        ...state,
        seen: noteEvent(state.seen, SEASONS, e.metadata),
        seasons: { ...state.seasons, [String(e.data.season.seasonNumber)]: e.data.season },
      };
    default:
      return state;
  }
}

function decideMedia(state: MediaState, o: MediaObserved): Decision {
  const mediaId = mediaIdOf(o.data.contentType, o.data.sourceId);
  const stream = streams.media(mediaId);
  const details = detailsOf(o.data);
  const metadata = metadataOf(o);
  if (state.media === null) {
    return {
      kind: 'append',
      stream,
      events: [{
        type: 'MediaRegistered',
        data: { mediaId, kind: o.data.contentType, sourceId: o.data.sourceId, slug: mediaSlug(details.title, details.year), details },
        metadata,
      }],
    };
  }
  const changedFields = changedFieldsOf(state.media.details, details, MEDIA_DETAIL_FIELDS);
  if (changedFields.length === 0) return skip('unchanged details');
  return { kind: 'append', stream, events: [{ type: 'MediaDetailsChanged', data: { mediaId, details, changedFields }, metadata }] };
}

function decideTranslation(state: MediaState, o: MediaTranslationObserved): Decision {
  if (state.media === null) return reject('media not registered: a translation needs a MediaObserved first');
  const { language } = o.data;
  const translation: Translation = {
    title: o.data.title,
    overview: o.data.overview,
    tagline: o.data.tagline,
    poster: o.data.poster,
    backdrop: o.data.backdrop,
  };
  if (deepEqual(state.translations[language], translation)) return skip(`unchanged translation ${language}`);
  return {
    kind: 'append',
    stream: streams.media(state.media.mediaId),
    events: [{ type: 'MediaTranslationChanged', data: { mediaId: state.media.mediaId, language, translation }, metadata: metadataOf(o) }],
  };
}

function decideSeasons(state: MediaState, o: SeasonsObserved): Decision {
  if (state.media === null) return reject('media not registered: seasons need a MediaObserved first');
  if (state.media.kind !== 'tv_show') return reject('data.sourceId: seasons belong to TV shows only');
  const { mediaId } = state.media;
  const metadata = metadataOf(o);
  // Seasons absent from the observation are left alone: crawlers often fetch a few at a time.
  const events: DomainEvent[] = [...o.data.seasons]
    .sort((a, b) => a.seasonNumber - b.seasonNumber)
    .map(seasonOf)
    .filter((season) => !deepEqual(state.seasons[String(season.seasonNumber)], season))
    .map((season) => ({ type: 'SeasonChanged', data: { mediaId, season }, metadata }));
  if (events.length === 0) return skip('unchanged seasons');
  return { kind: 'append', stream: streams.media(mediaId), events };
}

function aspectsOf(o: MediaObservation): string[] {
  if (o.type === 'MediaObserved') return [DETAILS];
  if (o.type === 'MediaTranslationObserved') return [translationAspect(o.data.language)];
  return [SEASONS];
}

function decide(state: MediaState, o: MediaObservation): Decision {
  const seen = alreadySeen(state.seen, o, aspectsOf(o));
  if (seen !== null) return seen;
  if (o.type === 'MediaObserved') return decideMedia(state, o);
  if (o.type === 'MediaTranslationObserved') return decideTranslation(state, o);
  return decideSeasons(state, o);
}

export const mediaDecider: Decider<MediaState, MediaObservation> = {
  kind: 'media',
  observationTypes: ['MediaObserved', 'MediaTranslationObserved', 'SeasonsObserved'],
  initialState,
  evolve,
  decide,
};
