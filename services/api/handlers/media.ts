/** /v1/media/{id}, its links (also as of a past day), seasons and episodes. */
import { AppError } from '../../../contracts/errors.ts';
import { streams } from '../../../contracts/ids.ts';
import type { LinkOffer, LinksDoc } from '../../../contracts/readModels.ts';
import { eventsUntilEndOfDay, foldStream } from '../../../projections/fold.ts';
import { linksKey, linksProjection } from '../../../projections/links.ts';
import { compareStrings } from '../../../projections/offerOrder.ts';
import { int, reqStr, str } from '../params.ts';
import { linkItem, mediaDetail } from '../present.ts';
import type { HandlerInput } from '../types.ts';
import { loadGenres, notFound, requireMedia } from './common.ts';

export async function getMedia({ params, catalog, imageBase }: HandlerInput): Promise<unknown> {
  const id = reqStr(params, 'id');
  const [doc, genres] = await Promise.all([requireMedia(catalog, id), loadGenres(catalog)]);
  return mediaDetail(doc, genres, { country: reqStr(params, 'country'), lang: str(params, 'lang'), imageBase });
}

export async function getLinks({ params, catalog, deps }: HandlerInput): Promise<unknown> {
  const id = reqStr(params, 'id');
  const country = reqStr(params, 'country');
  const at = str(params, 'at');
  const media = await requireMedia(catalog, id);

  let doc: LinksDoc | null;
  if (at === undefined) {
    doc = await catalog.get('links', linksKey(country, id));
  } else {
    const eventStore = deps.eventStore;
    if (!eventStore) throw new AppError('unavailable', 'The event history is not available to this API process.');
    let events;
    try {
      events = await eventStore.readStream(streams.availability(id, country));
    } catch (err) {
      throw new AppError('unavailable', 'The event history is unavailable.', { cause: err });
    }
    doc = foldStream(linksProjection, eventsUntilEndOfDay(events, at));
  }

  const providers = await catalog.get('providers', country);
  const offers = [...(doc?.offers ?? [])];
  // Weights of the providers these offers name only: a country lists hundreds of providers, a
  // title a handful of offers. As before, a provider listed twice weighs as its last entry.
  const named = new Set(offers.map((o) => o.providerId));
  const weight = new Map<string, number>();
  for (const p of providers?.providers ?? []) if (named.has(p.id)) weight.set(p.id, p.weight);
  offers.sort((a: LinkOffer, b: LinkOffer) =>
    (weight.get(b.providerId) ?? 0) - (weight.get(a.providerId) ?? 0) || compareStrings(a.providerId, b.providerId));
  const isTv = media.kind === 'tv_show';
  return offers.map((o) => linkItem(o, isTv, deps.linkTokens.encode(o.webUrl)));
}

async function tvSeasons({ params, catalog }: HandlerInput) {
  const id = reqStr(params, 'id');
  const media = await requireMedia(catalog, id);
  if (media.kind !== 'tv_show') throw notFound(`Media '${id}' is a movie: it has no seasons.`);
  const doc = await catalog.get('seasons', id);
  return { id, seasons: [...(doc?.seasons ?? [])].sort((a, b) => a.seasonNumber - b.seasonNumber) };
}

export async function getSeasons(input: HandlerInput): Promise<unknown> {
  const { id, seasons } = await tvSeasons(input);
  return {
    media_id: id,
    seasons: seasons.map((s) => ({
      season_number: s.seasonNumber,
      title: s.title,
      overview: s.overview,
      poster: s.poster,
      air_date: s.airDate,
      episode_count: s.episodes.length,
    })),
  };
}

export async function getEpisodes(input: HandlerInput): Promise<unknown> {
  const { id, seasons } = await tvSeasons(input);
  // Its form (a non-negative integer, else 404) is checked with the parameter (endpoints.ts).
  const number = int(input.params, 'season');
  const season = seasons.find((s) => s.seasonNumber === number);
  if (!season) throw notFound(`Media '${id}' has no season ${number}.`);
  return {
    media_id: id,
    season_number: season.seasonNumber,
    episodes: [...season.episodes]
      .sort((a, b) => a.episodeNumber - b.episodeNumber)
      .map((e) => ({
        episode_number: e.episodeNumber,
        title: e.title,
        overview: e.overview,
        backdrop: e.backdrop,
        air_date: e.airDate,
      })),
  };
}
