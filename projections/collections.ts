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
  return liveCollection(await readStore.getAlias(projection.name), projection);
}

/**
 * The alias when it names a collection of this version (its default one, or a rebuild of it by
 * `marquee replay`, `${name}_v${version}_r...`), else the default collection. An alias a replay
 * set before the projection's version changed names documents of the old shape: code of the new
 * version folding onto them, or reading them, would misread every one. So a new version starts
 * in its own collection, built from the first event, while processes still running the old code
 * keep following the alias.
 */
export function liveCollection(alias: string | null, projection: Pick<Projection, 'name' | 'version'>): string {
  const own = defaultCollectionName(projection);
  return alias !== null && (alias === own || alias.startsWith(`${own}_r`)) ? alias : own;
}
