/**
 * Finding a read model's live physical collection. A read model is read through its alias
 * (switched by `marquee replay` after a rebuild); before any alias is set, the projection's
 * default `${name}_v${version}` collection is the live one.
 */
import type { Projection } from '../../contracts/projection.ts';
import type { ReadStore } from '../../contracts/ports.ts';
import { defaultCollectionName } from '../../projections/collections.ts';

export async function resolveCollection(
  readStore: ReadStore,
  projection: Pick<Projection, 'name' | 'version'>,
): Promise<string> {
  const alias = await readStore.getAlias(projection.name);
  return alias ?? defaultCollectionName(projection);
}
