/**
 * Rows of `country=<cc>/changes.parquet`: the changes of the release week, read with the same
 * feed reader as `GET /v1/changes` (so the file holds exactly what the API answers for that
 * week), in feed order.
 */
import type { ReadStore } from '../../contracts/ports.ts';
import { dateOf } from '../../projections/time.ts';
import { changesAfter, feedSourceOf, presentChange, readFeed, type FeedSource } from '../changes/feed.ts';
import type { SnapshotRow, SnapshotValue } from './arrowSchema.ts';
import type { LinkTokenEncoder } from './rows.ts';

const PAGE = 1000;
const LINK_FIELDS = ['price_types', 'formats', 'audio_languages', 'subtitle_languages', 'available_from', 'available_to', 'platforms'];

/**
 * The key before the first change observed at or after `from`: everything before it was
 * observed earlier (a scan without joins, so the weeks before cost little). Later changes may
 * still carry an earlier time (a late observation); the caller filters by time anyway.
 */
async function keyBefore(source: FeedSource, country: string, from: number): Promise<string | null> {
  let after: string | null = null;
  for await (const { key, entry } of changesAfter(source.catalog, country, null, Number.MAX_SAFE_INTEGER)) {
    if (Date.parse(entry.at) >= from) return after;
    after = key;
  }
  return after;
}

/** Rows of the changes observed in [from, to) (unix ms). */
export async function* changeRows(
  readStore: ReadStore,
  country: string,
  window: { from: number; to: number },
  tokens: LinkTokenEncoder,
): AsyncGenerator<SnapshotRow> {
  const source = feedSourceOf(readStore);
  let after = await keyBefore(source, country, window.from);
  for (;;) {
    const page = await readFeed(source, { country, after, limit: PAGE });
    for (const change of page.changes) {
      const at = Date.parse(change.doc.at);
      if (at < window.from || at >= window.to) continue;
      const c = presentChange(change, (url) => tokens.encode(url)) as Record<string, any>;
      const row: SnapshotRow = {
        change_id: c.id,
        at: c.at,
        date: dateOf(c.at),
        type: c.type,
        media_id: c.media_id,
        kind: c.kind,
        provider_id: c.provider_id,
        addon_provider_id: c.addon_provider_id,
        season_number: c.season_number,
        episode_number: c.episode_number,
        link_token: ((c.after ?? c.before) as { link_token: string }).link_token,
        changed: c.changed,
      };
      for (const field of LINK_FIELDS) {
        row[`before_${field}`] = (c.before?.[field] ?? null) as SnapshotValue;
        row[`after_${field}`] = (c.after?.[field] ?? null) as SnapshotValue;
      }
      yield row;
    }
    if (!page.hasMore) return;
    after = page.lastKey;
  }
}
