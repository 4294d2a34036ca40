/**
 * Physical read-model collections. A projection's documents live in `${name}_v${version}` so a
 * rebuild of a new version writes beside the live one; the alias `name` points at whichever
 * physical collection is live (switched by `marquee replay` once the rebuild has caught up).
 */
import type { ReadStore } from '../contracts/ports.ts';
import type { Projection } from '../contracts/projection.ts';

/** The physical collection a projection version writes to: `links` v1 -> `links_v1`. */
export function defaultCollectionName(projection: Pick<Projection, 'name' | 'version'>): string {
  return `${projection.name}_v${projection.version}`;
}

/** The live physical collection of a read model: its alias, else the default collection. */
export async function resolveCollection(readStore: ReadStore, projection: Pick<Projection, 'name' | 'version'>): Promise<string> {
  const alias = await readStore.getAlias(projection.name);
  return alias ?? defaultCollectionName(projection);
}
