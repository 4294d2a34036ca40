/** /v1/changes, /v1/media/{id}/history, /v1/new, /v1/leaving and /v1/upcoming: the availability history. */
import { CHANGE_TYPES, type ChangeType, type HistoryInterval } from '../../../contracts/changeModels.ts';
import type { ContentType } from '../../../contracts/domain.ts';
import { AppError } from '../../../contracts/errors.ts';
import { linksKey } from '../../../projections/links.ts';
import { compareOfferKeys } from '../../../projections/offerOrder.ts';
import { dateOf } from '../../../projections/time.ts';
import { addDays, dayList, type DayListRequest } from '../../changes/dayLists.ts';
import { decodeCursor, encodeCursor, feedStart, presentChange, readFeed } from '../../changes/feed.ts';
import { int, reqStr, str, type ParsedParams } from '../params.ts';
import type { HandlerInput } from '../types.ts';
import { listItems, page, requireMedia } from './common.ts';

/** A comma-separated list parameter as a set; undefined when absent. */
function listParam(params: ParsedParams, name: string): Set<string> | undefined {
  const raw = str(params, name);
  if (raw === undefined) return undefined;
  const values = raw.split(',').map((v) => v.trim()).filter((v) => v !== '');
  if (values.length === 0 || values.length > 100) {
    throw new AppError('invalid_parameter', `Parameter '${name}' takes 1 to 100 comma-separated values.`, { details: { parameter: name } });
  }
  return new Set(values);
}

export function changeTypesParam(params: ParsedParams): Set<ChangeType> | undefined {
  const types = listParam(params, 'type');
  for (const t of types ?? []) {
    if (!(CHANGE_TYPES as readonly string[]).includes(t)) {
      throw new AppError('invalid_parameter', `Parameter 'type' takes ${CHANGE_TYPES.join(', ')}; got '${t}'.`, { details: { parameter: 'type' } });
    }
  }
  return types as Set<ChangeType> | undefined;
}

export async function getChanges({ params, deps, catalog }: HandlerInput): Promise<unknown> {
  const country = reqStr(params, 'country');
  const since = str(params, 'since');
  const after = since === undefined ? null : decodeCursor(since, country);
  const providers = listParam(params, 'provider');
  const mediaIds = listParam(params, 'media_id');
  const types = changeTypesParam(params);
  const filter = providers || mediaIds || types
    ? { ...(providers ? { providers } : {}), ...(mediaIds ? { mediaIds } : {}), ...(types ? { types } : {}) }
    : undefined;
  const feed = await readFeed({ catalog, readStore: deps.readStore }, { country, after, limit: int(params, 'limit'), ...(filter ? { filter } : {}) });
  return {
    country,
    results: feed.changes.map((c) => presentChange(c, (url) => deps.linkTokens.encode(url))),
    next_cursor: encodeCursor(feed.lastKey ?? feedStart(country)),
    has_more: feed.hasMore,
  };
}

/**
 * Day intervals of an offer state: it stood at the end of every day from the day of the event
 * that set it up to the day before the event that ended it (what `links?at=` folds). A state
 * that began and ended on one day never stood at a day's end and is left out.
 */
function dayInterval(interval: HistoryInterval): { from: string; to: string | null } | null {
  const from = dateOf(interval.from);
  const to = interval.to === null ? null : addDays(dateOf(interval.to), -1);
  return to !== null && to < from ? null : { from, to };
}

export async function getHistory({ params, deps, catalog }: HandlerInput): Promise<unknown> {
  const id = reqStr(params, 'id');
  const country = reqStr(params, 'country');
  const media = await requireMedia(catalog, id);
  const doc = await catalog.get('availability_history', linksKey(country, id));
  const isTv = media.kind === 'tv_show';
  const intervals = (doc?.intervals ?? [])
    .map((interval) => ({ interval, days: dayInterval(interval) }))
    .filter((x): x is { interval: HistoryInterval; days: { from: string; to: string | null } } => x.days !== null)
    .sort((a, b) =>
      (a.interval.offer.providerId < b.interval.offer.providerId ? -1 : a.interval.offer.providerId > b.interval.offer.providerId ? 1 : 0)
      || (a.days.from < b.days.from ? -1 : a.days.from > b.days.from ? 1 : 0)
      || compareOfferKeys(a.interval.offer, b.interval.offer)
      || a.interval.fromPosition - b.interval.fromPosition);
  return {
    media_id: id,
    country,
    intervals: intervals.map(({ interval: { offer }, days }) => ({
      provider_id: offer.providerId,
      addon_provider_id: offer.addonProviderId,
      season_number: isTv ? offer.seasonNumber : null,
      episode_number: isTv ? offer.episodeNumber : null,
      price_types: offer.priceTypes,
      formats: offer.formats,
      from: days.from,
      to: days.to,
      link_token: deps.linkTokens.encode(offer.webUrl),
    })),
  };
}

/** Each list's window of days, first and last (inclusive), from today and `days`. */
const DAY_LIST_WINDOWS: Record<DayListRequest['model'], (today: string, days: number) => [string, string]> = {
  // `new`: the last `days` days, today included.
  arrivals: (today, days) => [addDays(today, 1 - days), today],
  // `leaving`: today and the next `days` days.
  departures: (today, days) => [today, addDays(today, days)],
  // `upcoming`: the next `days` days (what starts today is new today).
  upcoming: (today, days) => [addDays(today, 1), addDays(today, days)],
};

async function dayListAnswer(input: HandlerInput, model: DayListRequest['model']): Promise<unknown> {
  const { params, deps, catalog } = input;
  const country = reqStr(params, 'country');
  const days = int(params, 'days');
  const limit = int(params, 'limit');
  const offset = int(params, 'offset');
  const kind = str(params, 'kind') as ContentType | undefined;
  const providers = listParam(params, 'provider');
  const today = deps.clock.now().toISOString().slice(0, 10);
  const [from, to] = DAY_LIST_WINDOWS[model](today, days);
  const entries = await dayList(catalog, { country, from, to, model, ...(kind ? { kind } : {}), ...(providers ? { providers } : {}) });
  const slice = page(entries, limit, offset);
  const items = await listItems(input, slice.map((e) => e.mediaId));
  const results = [];
  for (const e of slice) {
    const item = items.get(e.mediaId);
    if (item) results.push({ ...item, provider_id: e.providerId, date: e.date });
  }
  return { total: entries.length, limit, offset, country, from, to, results };
}

export const getNew = (input: HandlerInput): Promise<unknown> => dayListAnswer(input, 'arrivals');
export const getLeaving = (input: HandlerInput): Promise<unknown> => dayListAnswer(input, 'departures');
export const getUpcoming = (input: HandlerInput): Promise<unknown> => dayListAnswer(input, 'upcoming');
