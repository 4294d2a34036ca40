/**
 * The pieces of a writer of the exact bytes msgpackr writes for objects of known shapes, with
 * records whose structures the store has already shared (a database opened with
 * `sharedStructuresKey` and `maxSharedStructures: 500`). msgpackr's own encoder walks a trie of
 * key names per object and dispatches on every value's type; a writer that knows the shape
 * writes field by field instead, after checking each object has exactly the expected keys in
 * the expected order. The event encoder (eventEncoder.ts) and the read-model encoder
 * (readModelEncoder.ts) are built from these.
 *
 * Since the bytes are msgpackr's, nothing about the stored format changes and every reader, old
 * or new, decodes them alike. Any value the writer does not write exactly as msgpackr would — an
 * unexpected key or type, a shape not shared yet — makes `attempt` return null, and the store's
 * own encoder writes the value.
 */

/** msgpackr's shared record structures: key lists by record id - 0x40. */
export interface SharedStructures {
  readonly length: number;
  readonly [index: number]: readonly string[] | undefined;
  sharedLength?: number;
  /** Set (by msgpackr or the read store) when the structures must be reloaded from the database. */
  uninitialized?: boolean;
}

/** The shared structures of an lmdb-js database's msgpackr encoder, read at each call (the encoder replaces them on a reload). */
export function structuresOf(db: unknown): () => SharedStructures | undefined {
  return () => (db as { encoder?: { structures?: SharedStructures } }).encoder?.structures;
}

/**
 * Whether bytes a writer encoded with the structures `before` (outside the write transaction)
 * are still what msgpackr would write inside it: the same structures, not marked for reload.
 */
export function stillShared(before: SharedStructures | undefined, now: SharedStructures | undefined): boolean {
  return before !== undefined && now === before && before.uninitialized !== true;
}

/** Thrown inside a writer when a value is not one it writes as msgpackr would; caught by attempt. */
export const UNSUPPORTED = Symbol('unsupported');

export interface RecordWriter<S extends string> {
  /** Runs `write(value)` from an empty buffer: its bytes (valid until the next call), or null when it gave up. */
  attempt<T>(write: (value: T) => void, value: T): Buffer | null;
  /** The record id of a shape, written; throws UNSUPPORTED when the store has not shared it yet. */
  record(shape: S): void;
  /**
   * Opens `o` as a record of `shape`: checks it has exactly the shape's keys, in its order (what
   * msgpackr's record would list), and writes the shape's record id; its values follow.
   */
  open(o: unknown, shape: S): asserts o is Record<string, unknown>;
  nil(): void;
  str(s: string): void;
  strOrNull(v: unknown): void;
  uint(v: unknown): void;
  uintOrNull(v: unknown): void;
  /** A number (an integer in the fewest bytes, else a float64), or null. */
  numOrNull(v: unknown): void;
  boolOrNull(v: unknown): void;
  /** An array of strings, or null. */
  strings(v: unknown): void;
  /** The header of an array of `n` items (the caller writes them), after checking it is a plain array. */
  array(v: unknown): asserts v is unknown[];
  /**
   * A plain object as msgpackr writes one it does not make a record of: a map with a 16-bit
   * size (whatever the size, as msgpackr does without its variableMapSize option), then each
   * key and its value (`value` writes it), in for-in order. Whether msgpackr makes a record of
   * it is the store's rule (recordRule.ts), for the caller to apply.
   */
  map(v: unknown, value: (item: unknown) => void): void;
  /** An array of records of `shape`, each opened (its keys checked) and its values written by `fields`. */
  records(list: unknown, shape: S, fields: (o: Record<string, unknown>) => void): void;
}

/**
 * `structures()` returns the store encoder's structures as they are now (msgpackr loads them
 * lazily and only appends to them); they are looked up again while a shape is missing, and
 * afresh when msgpackr replaced them.
 */
export function recordWriter<S extends string>(
  shapes: Readonly<Record<S, readonly string[]>>,
  structures: () => SharedStructures | undefined,
): RecordWriter<S> {
  /** Record id (0x40 + index) of each shape found among the shared structures so far. */
  let ids: Partial<Record<S, number>> = {};
  let seen: SharedStructures | undefined;
  let seenLength = -1;
  let buf = Buffer.allocUnsafe(8192);
  let pos = 0;

  function lookUp(): void {
    const s = structures();
    const shared = s?.sharedLength ?? 0;
    if (s === undefined || (s === seen && shared === seenLength)) return;
    seen = s;
    seenLength = shared;
    ids = {};
    for (let i = 0; i < shared; i += 1) {
      const keys = s[i];
      if (keys === undefined) continue;
      for (const [name, shape] of Object.entries(shapes) as Array<[S, readonly string[]]>) {
        if (ids[name] === undefined && keys.length === shape.length && shape.every((k, j) => keys[j] === k)) ids[name] = i + 0x40;
      }
    }
  }

  function room(n: number): void {
    if (pos + n <= buf.length) return;
    const bigger = Buffer.allocUnsafe(Math.max(buf.length * 2, pos + n));
    buf.copy(bigger, 0, 0, pos);
    buf = bigger;
  }

  function nil(): void {
    room(1);
    buf[pos++] = 0xc0;
  }

  function str(s: string): void {
    const n = s.length;
    room(n * 3 + 5);
    const header = n < 0x20 ? 1 : n < 0x100 ? 2 : n < 0x10000 ? 3 : 5;
    let at = pos + header;
    if (n < 0x40) {
      // From 16 characters on, one native write costs less than msgpackr's loop; it wrote what
      // the loop writes when it wrote ASCII, which is exactly when it wrote n bytes.
      if (n >= 16 && buf.write(s, at) === n) at += n;
      else at = shortString(s, at);
    } else at += buf.write(s, at);
    const length = at - pos - header;
    // The smallest header for the byte length, the bytes moved when it is larger than guessed.
    if (length < 0x20) {
      buf[pos++] = 0xa0 | length;
    } else if (length < 0x100) {
      if (header < 2) buf.copyWithin(pos + 2, pos + 1, pos + 1 + length);
      buf[pos++] = 0xd9;
      buf[pos++] = length;
    } else if (length < 0x10000) {
      if (header < 3) buf.copyWithin(pos + 3, pos + header, pos + header + length);
      buf[pos++] = 0xda;
      buf[pos++] = length >> 8;
      buf[pos++] = length & 0xff;
    } else {
      if (header < 5) buf.copyWithin(pos + 5, pos + header, pos + header + length);
      buf[pos++] = 0xdb;
      buf.writeUInt32BE(length, pos);
      pos += 4;
    }
    pos += length;
  }

  /**
   * A string under 64 characters as msgpackr writes it, with its own loop rather than utf8Write
   * (they differ on a lone surrogate, which the loop writes as three bytes of its own where
   * utf8Write writes U+FFFD): titles and overviews in other scripts (translations) are written
   * here too. Returns the position after its bytes.
   */
  function shortString(s: string, at: number): number {
    const b = buf;
    const n = s.length;
    for (let i = 0; i < n; i += 1) {
      let c = s.charCodeAt(i);
      if (c < 0x80) {
        b[at++] = c;
      } else if (c < 0x800) {
        b[at++] = (c >> 6) | 0xc0;
        b[at++] = (c & 0x3f) | 0x80;
      } else {
        const next = s.charCodeAt(i + 1);
        if ((c & 0xfc00) === 0xd800 && (next & 0xfc00) === 0xdc00) {
          c = 0x10000 + ((c & 0x03ff) << 10) + (next & 0x03ff);
          i += 1;
          b[at++] = (c >> 18) | 0xf0;
          b[at++] = ((c >> 12) & 0x3f) | 0x80;
        } else b[at++] = (c >> 12) | 0xe0;
        b[at++] = ((c >> 6) & 0x3f) | 0x80;
        b[at++] = (c & 0x3f) | 0x80;
      }
    }
    return at;
  }

  /** Unsigned 32-bit integers as msgpackr writes them with records on (0x40-0x7f are record ids). */
  function uint(v: unknown): void {
    if (typeof v !== 'number' || v >>> 0 !== v) throw UNSUPPORTED;
    room(5);
    if (v < 0x40) buf[pos++] = v;
    else if (v < 0x100) {
      buf[pos++] = 0xcc;
      buf[pos++] = v;
    } else if (v < 0x10000) {
      buf[pos++] = 0xcd;
      buf[pos++] = v >> 8;
      buf[pos++] = v & 0xff;
    } else {
      buf[pos++] = 0xce;
      buf.writeUInt32BE(v, pos);
      pos += 4;
    }
  }

  /** Any number as msgpackr writes it (no float32 option set): an integer in the fewest bytes, else a float64. */
  function num(v: unknown): void {
    if (typeof v !== 'number') throw UNSUPPORTED;
    if (v >>> 0 === v) return uint(v);
    room(9);
    if (v >> 0 === v) {
      if (v >= -0x20) buf[pos++] = 0x100 + v;
      else if (v >= -0x80) {
        buf[pos++] = 0xd0;
        buf[pos++] = v + 0x100;
      } else if (v >= -0x8000) {
        buf[pos++] = 0xd1;
        buf.writeInt16BE(v, pos);
        pos += 2;
      } else {
        buf[pos++] = 0xd2;
        buf.writeInt32BE(v, pos);
        pos += 4;
      }
      return;
    }
    buf[pos++] = 0xcb;
    buf.writeDoubleBE(v, pos);
    pos += 8;
  }

  function array(v: unknown): asserts v is unknown[] {
    if (!Array.isArray(v) || v.constructor !== Array || v.length >= 0x10000) throw UNSUPPORTED;
    room(3);
    if (v.length < 0x10) buf[pos++] = 0x90 | v.length;
    else {
      buf[pos++] = 0xdc;
      buf[pos++] = v.length >> 8;
      buf[pos++] = v.length & 0xff;
    }
  }

  function map(v: unknown, value: (item: unknown) => void): void {
    if (typeof v !== 'object' || v === null || Object.getPrototypeOf(v) !== Object.prototype) throw UNSUPPORTED;
    room(3);
    buf[pos++] = 0xde;
    const sizeAt = pos;
    pos += 2;
    let size = 0;
    // A plain object's for-in keys are its own (as in `open`).
    for (const key in v) {
      str(key);
      value((v as Record<string, unknown>)[key]);
      size += 1;
    }
    if (size > 0xffff) throw UNSUPPORTED;
    buf[sizeAt] = size >> 8;
    buf[sizeAt + 1] = size & 0xff;
  }

  const writer: RecordWriter<S> = {
    attempt(write, value) {
      const s = structures();
      // Structures msgpackr is to reload (a failed save): its next encode re-reads them.
      if (s === undefined || s.uninitialized) return null;
      pos = 0;
      try {
        write(value);
      } catch (err) {
        if (err === UNSUPPORTED) return null;
        throw err;
      }
      return buf.subarray(0, pos);
    },

    // msgpackr uses two-byte record ids from 0x60 on when more than 32 structures may be shared.
    record(shape) {
      let id = seen === structures() ? ids[shape] : undefined;
      if (id === undefined) {
        lookUp();
        id = ids[shape];
        // A shape not shared yet is left to msgpackr, which shares it.
        if (id === undefined) throw UNSUPPORTED;
      }
      room(2);
      if (id < 0x60) buf[pos++] = id;
      else {
        buf[pos++] = ((id - 0x60) & 0x1f) + 0x60;
        buf[pos++] = (id - 0x60) >> 5;
      }
    },

    open(o, shape) {
      const keys = shapes[shape];
      // A plain object: its for-in keys are its own (Object.prototype has no enumerable ones),
      // which spares a hasOwn lookup per key.
      if (typeof o !== 'object' || o === null || Object.getPrototypeOf(o) !== Object.prototype) throw UNSUPPORTED;
      let i = 0;
      for (const key in o) {
        if (keys[i] !== key) throw UNSUPPORTED;
        i += 1;
      }
      if (i !== keys.length) throw UNSUPPORTED;
      writer.record(shape);
    },

    nil,
    str,
    strOrNull(v) {
      if (v === null) nil();
      else if (typeof v === 'string') str(v);
      else throw UNSUPPORTED;
    },
    uint,
    uintOrNull(v) {
      if (v === null) nil();
      else uint(v);
    },
    numOrNull(v) {
      if (v === null) nil();
      else num(v);
    },
    boolOrNull(v) {
      if (v !== null && typeof v !== 'boolean') throw UNSUPPORTED;
      room(1);
      buf[pos++] = v === null ? 0xc0 : v ? 0xc3 : 0xc2;
    },
    strings(v) {
      if (v === null) return nil();
      array(v);
      for (let i = 0; i < v.length; i += 1) {
        const s: unknown = v[i];
        if (typeof s !== 'string') throw UNSUPPORTED;
        str(s);
      }
    },
    array,
    map,
    records(list, shape, fields) {
      array(list);
      for (let i = 0; i < list.length; i += 1) {
        const o = list[i];
        writer.open(o, shape);
        fields(o);
      }
    },
  };
  return writer;
}
