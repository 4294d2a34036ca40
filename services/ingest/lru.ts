/**
 * A small least-recently-used map: the ingest keeps folded stream states in one.
 *
 * A map of nodes in a doubly linked list, most recently used last. The simpler form (a Map
 * re-inserted on every use, evicting `keys().next()`) was one of the ingest's top costs: V8
 * leaves a deleted Map entry as a hole that iteration skips until the table is rehashed, so
 * finding the oldest entry walked past thousands of holes on every eviction.
 */
interface Node<K, V> {
  key: K;
  value: V;
  prev: Node<K, V> | null;
  next: Node<K, V> | null;
}

export class Lru<K, V> {
  readonly #max: number;
  readonly #map = new Map<K, Node<K, V>>();
  /** Least recently used. */
  #head: Node<K, V> | null = null;
  /** Most recently used. */
  #tail: Node<K, V> | null = null;

  /** @param max entries kept; the least recently used one is evicted beyond it (>= 1). */
  constructor(max: number) {
    this.#max = Math.max(1, Math.floor(max));
  }

  get(key: K): V | undefined {
    const node = this.#map.get(key);
    if (node === undefined) return undefined;
    this.#unlink(node);
    this.#append(node);
    return node.value;
  }

  set(key: K, value: V): void {
    const existing = this.#map.get(key);
    if (existing !== undefined) {
      existing.value = value;
      this.#unlink(existing);
      this.#append(existing);
      return;
    }
    const node: Node<K, V> = { key, value, prev: null, next: null };
    this.#map.set(key, node);
    this.#append(node);
    if (this.#map.size > this.#max && this.#head !== null) this.delete(this.#head.key);
  }

  delete(key: K): void {
    const node = this.#map.get(key);
    if (node === undefined) return;
    this.#map.delete(key);
    this.#unlink(node);
  }

  get size(): number {
    return this.#map.size;
  }

  #unlink(node: Node<K, V>): void {
    if (node.prev) node.prev.next = node.next;
    else this.#head = node.next;
    if (node.next) node.next.prev = node.prev;
    else this.#tail = node.prev;
    node.prev = null;
    node.next = null;
  }

  #append(node: Node<K, V>): void {
    node.prev = this.#tail;
    if (this.#tail) this.#tail.next = node;
    else this.#head = node;
    this.#tail = node;
  }
}
