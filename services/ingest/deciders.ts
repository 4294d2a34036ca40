/**
 * The decider of each stream kind, and the routing of an observation to its stream and decider.
 */
import type { DomainEvent } from '../../contracts/events.ts';
import type { Observation } from '../../contracts/observations.ts';
import { availabilityDecider } from './availability.ts';
import { collectionDecider } from './collection.ts';
import type { Decider, Decision } from './decision.ts';
import { featuredDecider } from './featured.ts';
import { genresDecider } from './genres.ts';
import { mediaDecider } from './media.ts';
import { providersDecider } from './providers.ts';
import { streamOf } from './route.ts';

/** A decider with its state type erased, for code that handles every stream kind alike. */
export type AnyDecider = Decider<unknown, Observation>;

export const deciders: readonly AnyDecider[] = [
  mediaDecider,
  availabilityDecider,
  providersDecider,
  genresDecider,
  collectionDecider,
  featuredDecider,
] as unknown as readonly AnyDecider[];

const byObservationType = new Map<string, AnyDecider>();
for (const decider of deciders) for (const type of decider.observationTypes) byObservationType.set(type, decider);

export type Route = { stream: string; decider: AnyDecider } | { reject: string };

/**
 * Where an observation goes, or why it cannot go anywhere. Takes a valid observation (its
 * schema and the domain rules of contracts/observationRules.ts were checked once, by the bus
 * that decoded it): routing derives media ids from source ids and upper-cases countries.
 */
export function routeObservation(observation: Observation): Route {
  const decider = byObservationType.get(observation.type);
  if (decider === undefined) return { reject: `type: no decider for ${observation.type}` };
  return { stream: streamOf(observation), decider };
}

/** Folds events into a state with a decider. */
export function fold<S>(
  decider: Pick<Decider<S>, 'initialState' | 'evolve' | 'evolveAll'>,
  events: readonly DomainEvent[], state: S = decider.initialState()): S {
  if (decider.evolveAll) return decider.evolveAll(state, events);
  return events.reduce((s, e) => decider.evolve(s, e), state);
}

/** Convenience: the decision for one observation given the events already in its stream. */
export function decideFromHistory(history: readonly DomainEvent[], observation: Observation): Decision {
  const route = routeObservation(observation);
  if ('reject' in route) return { kind: 'reject', reason: route.reject };
  return route.decider.decide(fold(route.decider, history), observation);
}
