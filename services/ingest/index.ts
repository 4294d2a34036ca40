/** The ingest role's public surface: the service, the deciders and the observation checks. */
export { createIngest, emptyStats, type Ingest, type IngestLogger, type IngestOptions, type IngestStats } from './ingest.ts';
export { deciders, decideFromHistory, fold, routeObservation, type AnyDecider, type Route } from './deciders.ts';
export type { Decider, Decision } from './decision.ts';
export { streamOf } from './route.ts';
export { mediaDecider } from './media.ts';
export { availabilityDecider } from './availability.ts';
export { providersDecider } from './providers.ts';
export { genresDecider } from './genres.ts';
export { collectionDecider } from './collection.ts';
export { featuredDecider } from './featured.ts';
