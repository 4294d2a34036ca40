/** Every read-model projection, for the runner, `marquee replay` and the API's collection lookup. */
import type { Projection } from '../contracts/projection.ts';
import { availabilityHistoryProjection } from './availabilityHistory.ts';
import { changesProjection } from './changes.ts';
import { collectionsProjection } from './curatedCollections.ts';
import { arrivalsProjection, departuresProjection, upcomingProjection } from './dayIndexes.ts';
import { featuredProjection } from './featured.ts';
import { genresProjection } from './genres.ts';
import { linksProjection } from './links.ts';
import { mediaProjection } from './media.ts';
import { mediaItemsProjection } from './mediaItems.ts';
import { providersProjection } from './providers.ts';
import { rankingInputsProjection } from './rankingInputs.ts';
import { rankingsProjection } from './rankings.ts';
import { searchProjection } from './search.ts';
import { seasonsProjection } from './seasons.ts';
import { trendingProjection } from './trending.ts';

export {
  arrivalsProjection,
  availabilityHistoryProjection,
  changesProjection,
  departuresProjection,
  collectionsProjection,
  featuredProjection,
  genresProjection,
  linksProjection,
  mediaItemsProjection,
  mediaProjection,
  providersProjection,
  rankingInputsProjection,
  rankingsProjection,
  searchProjection,
  seasonsProjection,
  trendingProjection,
  upcomingProjection,
};
export { defaultCollectionName } from './collections.ts';
export { foldStream, eventsUntilEndOfDay } from './fold.ts';
export { eventTime, eventDate, dateOf } from './time.ts';
export { linksKey } from './links.ts';
export { layoutRanking, rankingBlockEntries, rankingBlockKey, rankingPageRead, rankingRowPrefix, RANKING_BLOCK } from './rankings.ts';
export { rankingBlockOf, rankingFactsKey, rankingOffersPrefix } from './rankingInputs.ts';
export { trendingKey, compareTrending, changeOf } from './trending.ts';
export { collectionIdOf } from './curatedCollections.ts';
export { GENRES_KEY } from './genres.ts';
export { compareProviders } from './providers.ts';
export { compareOfferKeys } from './offerOrder.ts';
export { toSearchDocument, type SearchProjectionDoc } from './search.ts';

/** In dependency-free order; `search` last (it is also fed to the SearchIndex). */
export const ALL_PROJECTIONS: ReadonlyArray<Projection<unknown>> = [
  mediaProjection,
  mediaItemsProjection,
  seasonsProjection,
  linksProjection,
  rankingInputsProjection,
  providersProjection,
  genresProjection,
  collectionsProjection,
  featuredProjection,
  rankingsProjection,
  trendingProjection,
  // The history before the feed: the feed's `before` is read from it.
  availabilityHistoryProjection,
  changesProjection,
  arrivalsProjection,
  departuresProjection,
  upcomingProjection,
  searchProjection,
];

/** A projection by its logical name, or undefined. */
export function projectionByName(name: string): Projection<unknown> | undefined {
  return ALL_PROJECTIONS.find((p) => p.name === name);
}
