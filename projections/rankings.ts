/**
 * `rankings` read model, key: country. Only the newest day's full ranking: a RankingComputed
 * for an older day (a backfill, or a replay racing nothing) never replaces a newer one. The
 * same day computed again replaces it, which keeps a replay idempotent.
 */
import type { RecordedEvent } from '../contracts/events.ts';
import { defineProjection } from '../contracts/projection.ts';
import type { RankingDoc } from '../contracts/readModels.ts';

export const rankingsProjection = defineProjection<RankingDoc>({
  name: 'rankings',
  version: 1,
  canHandle: ['RankingComputed'],
  documentId(event: RecordedEvent): string | null {
    return event.type === 'RankingComputed' ? event.data.country : null;
  },
  evolve(doc: RankingDoc | null, event: RecordedEvent): RankingDoc | null {
    if (event.type !== 'RankingComputed') return doc;
    const { country, date, formulaVersion, entries } = event.data;
    // `YYYY-MM-DD` strings order like the dates they name.
    if (doc !== null && date < doc.date) return doc;
    return { country, date, formulaVersion, entries: [...entries].sort((a, b) => a.position - b.position) };
  },
});
