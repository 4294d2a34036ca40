/**
 * `/v1/new`, `/v1/leaving` and `/v1/upcoming`: titles by the day they arrived on a provider, the
 * day an offer announced it leaves, or the day an offer listed ahead announced it starts, read
 * from the `arrivals` / `departures` / `upcoming` day indexes and confirmed against the current
 * `links` (an index entry a later event made obsolete is dropped here).
 */
import type { DayIndexDoc } from '../../contracts/changeModels.ts';
import type { ContentType } from '../../contracts/domain.ts';
import type { LinksDoc } from '../../contracts/readModels.ts';
import { dayIndexKey } from '../../projections/dayIndexes.ts';
import { linksKey } from '../../projections/links.ts';
import type { Catalog } from '../api/catalog.ts';
import type { StoredDocument } from '../../contracts/ports.ts';
import { dateOfEpochDay, epochDayOf } from '../crawler/dates.ts';

/** Index documents examined per request at most: the window of a busy country stays bounded. */
export const DAY_LIST_EXAMINE_MAX = 20_000;
const PAGE = 1000;

export function addDays(date: string, days: number): string {
  return dateOfEpochDay(epochDayOf(date) + days);
}

export interface DayListEntry {
  mediaId: string;
  providerId: string;
  date: string;
}

export interface DayListRequest {
  country: string;
  /** First and last day of the window, inclusive. */
  from: string;
  to: string;
  providers?: ReadonlySet<string>;
  kind?: ContentType;
  /** `arrivals`: newest first; `departures` and `upcoming`: soonest first. */
  model: 'arrivals' | 'departures' | 'upcoming';
}

/**
 * Whether the entry still holds: for an arrival, the title's current uninterrupted run on the
 * provider began that day (the earliest `startedOn` of its offers there); for a departure, an
 * offer on the provider still announces that day as its availableTo; for an upcoming start, as
 * its availableFrom.
 */
function holds(model: DayListRequest['model'], links: LinksDoc | null, providerId: string, date: string): boolean {
  const offers = (links?.offers ?? []).filter((o) => o.providerId === providerId);
  if (offers.length === 0) return false;
  if (model === 'departures') return offers.some((o) => o.availableTo === date);
  if (model === 'upcoming') return offers.some((o) => o.availableFrom === date);
  let first: string | null = null;
  for (const o of offers) {
    const start = o.startedOn;
    if (first === null || start < first) first = start;
  }
  return first === date;
}

export async function dayList(catalog: Catalog, request: DayListRequest): Promise<DayListEntry[]> {
  const { country, model } = request;
  if (request.from > request.to) return [];
  const newestFirst = model === 'arrivals';
  const range = { start: dayIndexKey(country, request.from, ''), end: `${country}:${request.to};` };
  const out: DayListEntry[] = [];
  let examined = 0;
  let cursor: string | null = null;
  while (examined < DAY_LIST_EXAMINE_MAX) {
    const limit = Math.min(PAGE, DAY_LIST_EXAMINE_MAX - examined);
    // Key order is day order; paging moves the bound on the side the scan walks from.
    const bounds: { start: string; end: string } = cursor === null ? range : newestFirst ? { ...range, end: cursor } : { ...range, start: `${cursor}\u0000` };
    const rows: Array<StoredDocument<DayIndexDoc>> = await catalog.scan(model, { ...bounds, limit, reverse: newestFirst });
    if (rows.length === 0) break;
    examined += rows.length;
    cursor = rows[rows.length - 1]?.key ?? null;
    const docs = rows.map((r) => r.doc).filter((d) => request.kind === undefined || d.kind === request.kind);
    const links = await catalog.getMany('links', docs.map((d) => linksKey(country, d.mediaId)));
    docs.forEach((doc, i) => {
      for (const providerId of doc.providers) {
        if (request.providers && !request.providers.has(providerId)) continue;
        if (holds(model, links[i] ?? null, providerId, doc.date)) out.push({ mediaId: doc.mediaId, providerId, date: doc.date });
      }
    });
    if (rows.length < limit) break;
  }
  return out;
}
