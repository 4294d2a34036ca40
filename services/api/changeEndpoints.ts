/** The endpoints of the availability history (docs/api.md, and the README's "Changes, history and alerts"). */
import { CHANGE_TYPES } from '../../contracts/changeModels.ts';
import { MEDIA_ID_PATTERN } from '../../contracts/ids.ts';
import { CURSOR_PATTERN, FEED_EXAMINE_MAX } from '../changes/feed.ts';
import { DAY_LIST_EXAMINE_MAX } from '../changes/dayLists.ts';
import { getChanges, getHistory, getLeaving, getNew, getUpcoming } from './handlers/changes.ts';
import { p, type ParamDef } from './params.ts';
import type { Endpoint } from './types.ts';

const days = (def: number): ParamDef => ({
  name: 'days', in: 'query', type: 'integer', default: def, max: 90,
  description: `Days of the window (default ${def}, maximum 90; larger values are clamped to 90).`,
});

/**
 * A comma-separated list of at most LIST_MAX items of one form, as one pattern: the document then
 * says exactly what the handler accepts (no blanks, no empty items, no more than LIST_MAX).
 */
const LIST_MAX = 100;
const listOf = (item: string): RegExp => new RegExp(`^${item}(?:,${item}){0,${LIST_MAX - 1}}$`);
const PROVIDER_ID = '[A-Za-z0-9._-]{1,64}';

const providerList = (description: string): ParamDef => ({
  name: 'provider', in: 'query', type: 'string', pattern: listOf(PROVIDER_ID), example: 'netflix', description,
});

export function changeEndpoints(): Endpoint[] {
  return [
    {
      path: '/v1/changes', operationId: 'getChanges', tag: 'Changes', summary: 'The change feed of a country',
      description: 'Every offer that appeared (`new`), disappeared (`removed`) or changed (`updated`) in the country, oldest first, '
        + 'with the link objects before and after and the link fields that changed. History is unbounded. '
        + 'Follow `next_cursor` with `since`: it yields every later change exactly once, including changes committed while paging; '
        + 'a cursor stays valid forever (and across rebuilds of the feed). '
        + `Filters are applied while scanning at most ${FEED_EXAMINE_MAX} changes per request: when a filter matches rarely, `
        + 'a page may hold fewer than `limit` results (even none) with `has_more: true` and a `next_cursor` past everything examined; '
        + 'keep following it. `has_more: false` means the feed has nothing further for now; poll the same cursor later.',
      params: [
        p.country(),
        {
          name: 'since', in: 'query', type: 'string', pattern: CURSOR_PATTERN, example: '0000000000000000',
          description: 'A `next_cursor` from an earlier answer; absent = from the oldest change. Opaque: pass it back as given.',
        },
        providerList('Comma-separated provider ids: changes of offers on these providers (as provider or add-on provider).'),
        {
          name: 'media_id', in: 'query', type: 'string', pattern: listOf(MEDIA_ID_PATTERN.source.slice(1, -1)), example: 'mv00001340',
          description: `Comma-separated media ids (at most ${LIST_MAX}): changes of these titles only.`,
        },
        {
          name: 'type', in: 'query', type: 'string', pattern: listOf(`(?:${CHANGE_TYPES.join('|')})`), example: 'new,removed',
          description: `Comma-separated change types: ${CHANGE_TYPES.join(', ')}.`,
        },
        p.limit(100, 1000),
      ],
      response: 'Changes', errors: [400], auth: 'required', needsCatalog: true, handler: getChanges,
    },
    {
      path: '/v1/media/:id/history', operationId: 'getMediaHistory', tag: 'Changes', summary: 'Availability history of a title in a country',
      description: 'Each stretch of days an offer stood unchanged, ordered by provider, then `from`. `from` and `to` are the first and last day '
        + '(UTC, inclusive) at whose end the offer stood in that state, so an interval covers day D exactly when '
        + '`/v1/media/{id}/links?at=D` lists the offer with those values; `to` is null while it still stands. '
        + 'A state that began and ended within one day is not listed. `link_token` tells apart offers of one provider.',
      params: [p.mediaId(), p.country()],
      response: 'History', errors: [400, 404], auth: 'required', needsCatalog: true, handler: getHistory,
    },
    {
      path: '/v1/new', operationId: 'getNew', tag: 'Changes', summary: 'Titles new on a provider',
      description: 'Titles that became available on a provider within the last `days` days (today, UTC, included) and still are, newest first '
        + '(then by media id, descending). `date` is the day the current uninterrupted availability on that provider began: the day it was '
        + 'first observed, or its `available_from` when it was listed ahead of it (see `/v1/upcoming`). '
        + 'One item per title and provider. '
        + `At most the ${DAY_LIST_EXAMINE_MAX} newest arrival records of the window are considered.`,
      params: [p.country(), providerList('Comma-separated provider ids.'), p.kind(), days(7), p.limit(50, 200), p.offset()],
      response: 'DayList', errors: [400], auth: 'required', needsCatalog: true, handler: getNew,
    },
    {
      path: '/v1/leaving', operationId: 'getLeaving', tag: 'Changes', summary: 'Titles leaving a provider soon',
      description: 'Offers whose `available_to` falls today or within the next `days` days, soonest first (then by media id). '
        + '`date` is that `available_to`. One item per title, provider and day. '
        + `At most the ${DAY_LIST_EXAMINE_MAX} soonest departure records of the window are considered.`,
      params: [p.country(), providerList('Comma-separated provider ids.'), p.kind(), days(30), p.limit(50, 200), p.offset()],
      response: 'DayList', errors: [400], auth: 'required', needsCatalog: true, handler: getLeaving,
    },
    {
      path: '/v1/upcoming', operationId: 'getUpcoming', tag: 'Changes', summary: 'Titles coming to a provider soon',
      description: 'Offers listed ahead of their start: their `available_from` falls within the next `days` days (tomorrow, UTC, '
        + 'to today + `days`), soonest first (then by media id). `date` is that `available_from`; on that day the title is in '
        + '`/v1/new`. One item per title, provider and day. '
        + `At most the ${DAY_LIST_EXAMINE_MAX} soonest announcement records of the window are considered.`,
      params: [p.country(), providerList('Comma-separated provider ids.'), p.kind(), days(30), p.limit(50, 200), p.offset()],
      response: 'DayList', errors: [400], auth: 'required', needsCatalog: true, handler: getUpcoming,
    },
  ];
}
