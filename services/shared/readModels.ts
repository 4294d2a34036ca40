/**
 * Finding a read model's live physical collection. A read model is read through its alias
 * (switched by `marquee replay` after a rebuild); before any alias is set, the projection's
 * default `${name}_v${version}` collection is the live one. The rule lives with the projection
 * runner (projections/collections.ts), which follows the alias too.
 */
import type { ReadStore } from '../../contracts/ports.ts';
import { liveCollection, resolveCollection } from '../../projections/collections.ts';
import { ALL_PROJECTIONS } from '../../projections/index.ts';

export { liveCollection, resolveCollection };

/** The checkpoint of each live read model, in the order of ALL_PROJECTIONS (one read of them all). */
export async function projectionCheckpoints(readStore: ReadStore): Promise<number[]> {
  const collections = await Promise.all(ALL_PROJECTIONS.map((p) => resolveCollection(readStore, p)));
  return readStore.getCheckpoints(collections);
}
