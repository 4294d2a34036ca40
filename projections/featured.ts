/**
 * `featured` read model, key: country. The daily and weekly selections; each event replaces one
 * period's list. `updatedAt` is when the crawler saw the newest selection.
 */
import type { FeaturedItemRef } from '../contracts/domain.ts';
import type { RecordedEvent } from '../contracts/events.ts';
import { defineProjection } from '../contracts/projection.ts';
import type { FeaturedDoc } from '../contracts/readModels.ts';
import { compareStrings } from './offerOrder.ts';
import { eventTime } from './time.ts';

export const featuredProjection = defineProjection<FeaturedDoc>({
  name: 'featured',
  version: 1,
  canHandle: ['FeaturedSelectionChanged'],
  documentId(event: RecordedEvent): string | null {
    return event.type === 'FeaturedSelectionChanged' ? event.data.country : null;
  },
  evolve(doc: FeaturedDoc | null, event: RecordedEvent): FeaturedDoc | null {
    if (event.type !== 'FeaturedSelectionChanged') return doc;
    const { country, period, items } = event.data;
    const base: FeaturedDoc = doc ?? { country, updatedAt: eventTime(event), daily: [], weekly: [] };
    const sorted = sortItems(items);
    return {
      ...base,
      updatedAt: eventTime(event),
      daily: period === 'daily' ? sorted : base.daily,
      weekly: period === 'weekly' ? sorted : base.weekly,
    };
  },
});

function sortItems(items: FeaturedItemRef[]): FeaturedItemRef[] {
  return [...items].sort((a, b) => a.position - b.position || compareStrings(a.mediaId, b.mediaId));
}
