/**
 * `featured-{country}`: the daily and the weekly featured selection of a country, kept apart:
 * a new daily list says nothing about the weekly one.
 */
import type { FeaturedItemRef, FeaturedPeriod } from '../../contracts/domain.ts';
import type { DomainEvent, FeaturedEvent } from '../../contracts/events.ts';
import { mediaIdOf, streams } from '../../contracts/ids.ts';
import type { FeaturedObserved } from '../../contracts/observations.ts';
import {
  alreadySeen,
  deepEqual,
  emptySeen,
  metadataOf,
  noteEvent,
  skip,
  type Decider,
  type Decision,
  type Seen,
} from './decision.ts';
import { normalizeCountry } from './route.ts';

export interface FeaturedState {
  /** Staleness is tracked per period (aspects `daily`, `weekly`). */
  seen: Seen;
  daily: FeaturedItemRef[];
  weekly: FeaturedItemRef[];
}

function initialState(): FeaturedState {
  return { seen: emptySeen(), daily: [], weekly: [] };
}

function evolve(state: FeaturedState, event: DomainEvent): FeaturedState {
  const e = event as FeaturedEvent;
  if (e.type !== 'FeaturedSelectionChanged') return state;
  const period: FeaturedPeriod = e.data.period;
  return { ...state, seen: noteEvent(state.seen, period, e.metadata), [period]: e.data.items };
}

function decide(state: FeaturedState, o: FeaturedObserved): Decision {
  const { period } = o.data;
  const seen = alreadySeen(state.seen, o, [period]);
  if (seen !== null) return seen;

  const country = normalizeCountry(o.data.country);
  const items: FeaturedItemRef[] = o.data.items.map((item) => ({
    mediaId: mediaIdOf(item.contentType, item.sourceId),
    position: item.position,
  }));
  if (deepEqual(state[period], items)) return skip(`unchanged ${period} selection`);
  return {
    kind: 'append',
    stream: streams.featured(country),
    events: [{ type: 'FeaturedSelectionChanged', data: { country, period, items }, metadata: metadataOf(o) }],
  };
}

export const featuredDecider: Decider<FeaturedState, FeaturedObserved> = {
  kind: 'featured',
  observationTypes: ['FeaturedObserved'],
  initialState,
  evolve,
  decide,
};
