/**
 * Reading the change feed of a country: the one paging loop the API (`/v1/changes`), the
 * webhook worker and the weekly `changes.parquet` share.
 *
 * The feed is the `changes` read model's blocks scanned in key (= event position) order after a
 * cursor.
 * Two rules keep "every later change exactly once":
 * - the scan stops at the position both `changes` and `availability_history` have committed
 *   (their checkpoints; a store writes documents before it moves a checkpoint), so a reader
 *   never passes a change that a slower write has not made visible yet, and every change it
 *   returns finds its `before` in the history;
 * - the cursor is the feed key of the last change examined, so the next page starts right after
 *   it, whatever was committed meanwhile (new changes only ever get higher positions).
 * Filters are applied while scanning, with a bound on the changes examined per call: a rare
 * match gives a short page with `hasMore` and a cursor past everything examined.
 */
import type { ChangeDoc, ChangeEntry, ChangeType } from '../../contracts/changeModels.ts';
import type { Offer } from '../../contracts/domain.ts';
import { AppError, asUnavailable } from '../../contracts/errors.ts';
import type { ReadStore } from '../../contracts/ports.ts';
import { stateEndedAt } from '../../projections/availabilityHistory.ts';
import { changeBlockKey, changeDocOf, changeId, changeKey, positionOfChangeKey } from '../../projections/changes.ts';
import { linksKey } from '../../projections/links.ts';
import { ALL_PROJECTIONS } from '../../projections/index.ts';
import { createCatalog, type Catalog, type ModelName } from '../api/catalog.ts';
import { linkItem } from '../api/present.ts';

/** Changes examined per call at most (a filtered scan); the page limit is at most 1000. */
export const FEED_EXAMINE_MAX = 5000;

export interface FeedFilter {
  /** Provider ids: an offer matches by its provider or its add-on provider. */
  providers?: ReadonlySet<string>;
  mediaIds?: ReadonlySet<string>;
  types?: ReadonlySet<ChangeType>;
}

export interface FeedRequest {
  country: string;
  /** Feed key of the last change already read; null = from the oldest change. */
  after: string | null;
  filter?: FeedFilter;
  limit: number;
  /** Default FEED_EXAMINE_MAX. */
  examineMax?: number;
}

export interface FeedChange {
  doc: ChangeDoc;
  /** The offer as it stood before the change; null for `new`. */
  before: Offer | null;
  /** The title's name now; null when its details are not known yet. */
  title: string | null;
}

export interface FeedPage {
  changes: FeedChange[];
  /** Feed key of the last change examined (the next call's `after`); `after` when none was. */
  lastKey: string | null;
  /** More changes (matching or not) may follow up to the committed position. */
  hasMore: boolean;
}

export interface FeedSource {
  catalog: Catalog;
  readStore: ReadStore;
}

/** A feed source over a read store, for processes without an API catalog (webhooks, releases). */
export function feedSourceOf(readStore: ReadStore): FeedSource {
  const versions: Partial<Record<ModelName, number>> = {};
  for (const p of ALL_PROJECTIONS) versions[p.name as ModelName] = p.version;
  return { catalog: createCatalog(readStore, { versions }), readStore };
}

/**
 * Cursors are opaque to clients; inside, the event position of the last change examined, as 16
 * digits. Positions are global, so every string of that form is a valid cursor of every
 * country's feed (the one the OpenAPI pattern describes): nothing the document allows is refused.
 * A position is the event log's, not a count of changes (RecordedEvent.position): on EventStoreDB
 * a commit position, a byte offset below 2^53, which 16 digits hold; so consecutive cursors
 * differ by more than one, and a cursor belongs to the event log it was read from.
 */
export const CURSOR_PATTERN = /^[0-9]{16}$/;
export function encodeCursor(key: string): string {
  const parsed = positionOfChangeKey(key);
  if (parsed === null) throw new Error(`not a change key: ${key}`);
  return String(parsed.position).padStart(16, '0');
}

/** The start of a country's feed as a cursor: before every position. */
export function feedStart(country: string): string {
  return changeKey(country, 0);
}

/** The key in `country`'s feed a cursor names; `invalid_parameter` for anything that is not a cursor. */
export function decodeCursor(cursor: string, country: string, parameter = 'since'): string {
  if (!CURSOR_PATTERN.test(cursor)) {
    throw new AppError('invalid_parameter', `Parameter '${parameter}' is not a cursor of the change feed.`, { details: { parameter } });
  }
  return changeKey(country, Number(cursor));
}

/** Whether a stored change passes the filter (read before it is made a ChangeDoc: a filtered scan examines thousands). */
function matches(doc: ChangeEntry, filter: FeedFilter | undefined): boolean {
  if (!filter) return true;
  if (filter.types && !filter.types.has(doc.type)) return false;
  if (filter.mediaIds && !filter.mediaIds.has(doc.mediaId)) return false;
  if (filter.providers) {
    const { providerId, addonProviderId } = doc.offer;
    if (!filter.providers.has(providerId) && (addonProviderId === null || !filter.providers.has(addonProviderId))) return false;
  }
  return true;
}

/** The highest position every change up to which is readable with its before state. */
export async function committedPosition(source: FeedSource): Promise<number> {
  try {
    const [changes, history] = await Promise.all([source.catalog.collectionOf('changes'), source.catalog.collectionOf('availability_history')]);
    const [a, b] = await Promise.all([source.readStore.getCheckpoint(changes), source.readStore.getCheckpoint(history)]);
    return Math.min(a, b);
  } catch (err) {
    throw asUnavailable(err, 'The change feed');
  }
}

/**
 * Blocks read by the first scan of a feed read, doubled for each next one up to the last: a
 * block holds 16 changes on average on the sample (65 at most) and CHANGE_BLOCK at most
 * anywhere (one busy country), so a page reads little more than it returns either way.
 */
const BLOCKS_FIRST_READ = 2;
const BLOCKS_MAX_READ = 16;

/** A stored change with its feed key. */
export interface KeyedEntry {
  key: string;
  entry: ChangeEntry;
}

/**
 * The changes of `country` after the feed key `after` (null: from the first) up to position
 * `upTo` included, in feed order: the `changes` blocks read a few at a time, the one holding
 * `after` first, as stored (`changeDocOf` makes a ChangeDoc of one). Stops reading once its
 * consumer stops.
 */
export async function* changesAfter(catalog: Catalog, country: string, after: string | null, upTo: number): AsyncGenerator<KeyedEntry> {
  const from = after === null ? 0 : positionOfChangeKey(after)?.position;
  if (from === undefined) throw new AppError('internal', `not a key of the change feed: ${after}`);
  const end = changeKey(country, upTo + 1);
  let start = after === null ? `${country}:` : changeBlockKey(country, from);
  for (let limit = BLOCKS_FIRST_READ; ; limit = Math.min(limit * 2, BLOCKS_MAX_READ)) {
    const blocks = await catalog.scan('changes', { start, end, limit });
    for (const block of blocks) {
      for (const entry of block.doc.changes) {
        if (entry.position <= from) continue;
        if (entry.position > upTo) return;
        yield { key: changeKey(country, entry.position), entry };
      }
    }
    const last = blocks[blocks.length - 1];
    if (last === undefined || blocks.length < limit) return;
    start = `${last.key}\u0000`;
  }
}

export async function readFeed(source: FeedSource, request: FeedRequest): Promise<FeedPage> {
  const { catalog } = source;
  const { country, filter, limit } = request;
  const examineMax = Math.max(request.examineMax ?? FEED_EXAMINE_MAX, limit + 1);
  const committed = await committedPosition(source);
  const docs: ChangeDoc[] = [];
  let lastKey = request.after;
  let examined = 0;
  let hasMore = false;
  for await (const { key, entry } of changesAfter(catalog, country, request.after, committed)) {
    // Past the bound or the page, one more change is enough to tell that more follow.
    if (examined >= examineMax || (docs.length >= limit && matches(entry, filter))) {
      hasMore = true;
      break;
    }
    if (matches(entry, filter)) docs.push(changeDocOf(country, entry));
    lastKey = key;
    examined += 1;
  }
  return { changes: await withBeforeAndTitle(catalog, docs), lastKey, hasMore };
}

/** Joins each change with the state it ended (from the history) and the title's name. */
async function withBeforeAndTitle(catalog: Catalog, docs: ChangeDoc[]): Promise<FeedChange[]> {
  if (docs.length === 0) return [];
  const historyKeys = [...new Set(docs.filter((d) => d.type !== 'new').map((d) => linksKey(d.country, d.mediaId)))];
  const mediaIds = [...new Set(docs.map((d) => d.mediaId))];
  const [histories, items] = await Promise.all([catalog.getMany('availability_history', historyKeys), catalog.getMany('media_items', mediaIds)]);
  const historyOf = new Map(historyKeys.map((k, i) => [k, histories[i] ?? null]));
  const titleOf = new Map(mediaIds.map((id, i) => [id, items[i]?.title ?? null]));
  return docs.map((doc) => ({
    doc,
    before: doc.type === 'new' ? null : stateEndedAt(historyOf.get(linksKey(doc.country, doc.mediaId)) ?? null, doc.offer, doc.position),
    title: titleOf.get(doc.mediaId) ?? null,
  }));
}

/** Offer field names as the link objects of `/v1/media/{id}/links` name them. */
const LINK_FIELD: Record<string, string> = {
  priceTypes: 'price_types',
  formats: 'formats',
  audioLanguages: 'audio_languages',
  subtitleLanguages: 'subtitle_languages',
  availableFrom: 'available_from',
  availableTo: 'available_to',
  platforms: 'platforms',
};

/** The change object of `/v1/changes` (docs/api.md), with link objects as `/v1/media/{id}/links` gives them. */
export function presentChange(change: FeedChange, encode: (url: string) => string): Record<string, unknown> {
  const { doc, before } = change;
  const isTv = doc.kind === 'tv_show';
  const link = (o: Offer | null) => (o === null ? null : linkItem(o, isTv, encode(o.webUrl)));
  return {
    id: changeId(doc.position),
    type: doc.type,
    at: doc.at,
    country: doc.country,
    media_id: doc.mediaId,
    kind: doc.kind,
    title: change.title,
    provider_id: doc.offer.providerId,
    addon_provider_id: doc.offer.addonProviderId,
    season_number: doc.offer.seasonNumber,
    episode_number: doc.offer.episodeNumber,
    before: link(before),
    after: link(doc.after),
    changed: doc.changed.map((f) => LINK_FIELD[f] ?? f),
  };
}
