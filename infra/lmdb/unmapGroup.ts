/**
 * Read stores of several threads that drop their memory map of the LMDB file together.
 *
 * lmdb-js shares one native environment, and so one memory map, between every handle of a
 * process on the same file, whatever the thread; the map, with every page read through it
 * counted in the process's resident memory, goes only when the last handle closes. A store
 * reading through once (`unmapAfterMb`, readStore.ts) reopens its handle to drop the pages it
 * read, which works only if it holds the last handle: with a release built on several threads
 * (services/snapshot/buildThreads.ts) each thread has its own. The stores of a group therefore
 * close together: the first to see the resident pages grown past its limit asks; every member
 * closes its handle at its next read, or at once if idle (each listens for the request), and
 * waits until all have closed — the map is gone then — before it opens again.
 *
 * The group is a few integers in shared memory (a SharedArrayBuffer handed to every thread).
 */

/** Int32 slots of the group's memory. */
const MEMBERS = 0;
const CLOSED = 1;
const REQUEST = 2;
const GENERATION = 3;

/** The shared memory of a new group, to give each member store (`unmapGroup`). */
export function lmdbUnmapGroup(): SharedArrayBuffer {
  return new SharedArrayBuffer(4 * Int32Array.BYTES_PER_ELEMENT);
}

export interface UnmapMember {
  /** Whether the members are asked to close. */
  requested(): boolean;
  /** Asks every member to close its handle. */
  request(): void;
  /** Tells this member's handle is closed; resolves once every member's is (the map is gone). */
  closed(): Promise<void>;
  /** Leaves the group (the store is closed). */
  leave(): void;
}

/** Joins a group; `onRequest` runs (on this thread) when a member asks every member to close. */
export function joinUnmapGroup(buffer: SharedArrayBuffer, onRequest: () => void): UnmapMember {
  const slots = new Int32Array(buffer);
  Atomics.add(slots, MEMBERS, 1);
  let left = false;

  /** The last member to close (or to leave) ends the request and wakes the others. */
  const settle = (): void => {
    if (Atomics.load(slots, REQUEST) !== 1 || Atomics.load(slots, CLOSED) < Atomics.load(slots, MEMBERS)) return;
    if (Atomics.compareExchange(slots, REQUEST, 1, 0) !== 1) return;
    Atomics.store(slots, CLOSED, 0);
    Atomics.add(slots, GENERATION, 1);
    Atomics.notify(slots, GENERATION);
    Atomics.notify(slots, REQUEST);
  };

  void (async () => {
    // Not before the member is set up: a request already pending is met on a later turn.
    await Promise.resolve();
    while (!left) {
      const asked = Atomics.waitAsync(slots, REQUEST, 0);
      if (asked.async) await asked.value;
      if (left) return;
      if (Atomics.load(slots, REQUEST) === 1) onRequest();
      // Until this request is over.
      const over = Atomics.waitAsync(slots, REQUEST, 1);
      if (over.async) await over.value;
    }
  })();

  return {
    requested: () => Atomics.load(slots, REQUEST) === 1,
    request() {
      if (Atomics.compareExchange(slots, REQUEST, 0, 1) === 0) Atomics.notify(slots, REQUEST);
    },
    async closed() {
      const generation = Atomics.load(slots, GENERATION);
      Atomics.add(slots, CLOSED, 1);
      settle();
      for (;;) {
        const next = Atomics.waitAsync(slots, GENERATION, generation);
        if (!next.async) return;
        await next.value;
      }
    },
    leave() {
      if (left) return;
      left = true;
      Atomics.sub(slots, MEMBERS, 1);
      settle();
      // Wakes this member's listener, which ends (the others' wait again).
      Atomics.notify(slots, REQUEST);
    },
  };
}
