/** A small least-recently-used map: the ingest keeps folded stream states in one. */
export class Lru<K, V> {
  readonly #max: number;
  readonly #map = new Map<K, V>();

  /** @param max entries kept; the least recently used one is evicted beyond it (>= 1). */
  constructor(max: number) {
    this.#max = Math.max(1, Math.floor(max));
  }

  get(key: K): V | undefined {
    const value = this.#map.get(key);
    if (value === undefined) return undefined;
    // Map iteration is insertion order: re-inserting marks it as most recently used.
    this.#map.delete(key);
    this.#map.set(key, value);
    return value;
  }

  set(key: K, value: V): void {
    this.#map.delete(key);
    this.#map.set(key, value);
    if (this.#map.size > this.#max) {
      const oldest = this.#map.keys().next();
      if (!oldest.done) this.#map.delete(oldest.value);
    }
  }

  delete(key: K): void {
    this.#map.delete(key);
  }

  get size(): number {
    return this.#map.size;
  }
}
