/**
 * A faster writer of the bytes msgpackr writes for the offer events, which are most of the log
 * (83% of a sample day's events). The event store's msgpackr encoder (shared record structures)
 * spent more main-thread CPU per event than anything else in ingest: it walks a trie of key names
 * per object and dispatches on every value's type. These events have fixed shapes (the
 * availability decider builds them), so this writes them field by field instead, after checking
 * each object has exactly the expected keys in the expected order.
 *
 * The bytes are exactly msgpackr's (the test compares them over a whole sample day), so nothing
 * about the stored format changes and every reader, old or new, decodes them alike. Anything else
 * — another type, an unexpected key or value, a record structure not yet shared — returns null
 * and the store's own encoder writes the event.
 */

/** msgpackr's shared record structures: key lists by record id - 0x40. */
export interface SharedStructures {
  readonly length: number;
  readonly [index: number]: readonly string[] | undefined;
  sharedLength?: number;
}

const STORED = ['type', 'data', 'metadata', 'streamId', 'revision', 'recordedAt'] as const;
const METADATA = ['observationId', 'observedAt', 'producer'] as const;
const OFFER_DATA = ['mediaId', 'country', 'offer'] as const;
const CHANGED_DATA = ['mediaId', 'country', 'offer', 'changedFields'] as const;
const OFFER_KEY = ['providerId', 'addonProviderId', 'seasonNumber', 'episodeNumber', 'webUrl'] as const;
const OFFER = [
  ...OFFER_KEY, 'priceTypes', 'formats', 'audioLanguages', 'subtitleLanguages', 'availableFrom', 'availableTo', 'platforms',
] as const;
const SHAPES = { STORED, METADATA, OFFER_DATA, CHANGED_DATA, OFFER_KEY, OFFER };
type ShapeName = keyof typeof SHAPES;

/** Thrown inside the writer when a value is not one it writes as msgpackr would; caught by encode. */
const UNSUPPORTED = Symbol('unsupported');

export interface OfferEventEncoder {
  /** The event's bytes (valid until the next call), or null when the store's encoder must write it. */
  encode(stored: object): Buffer | null;
}

/**
 * `structures()` returns the store encoder's structures as they are now (msgpackr loads them
 * lazily and only appends to them); they are looked up again while a shape is missing.
 */
export function offerEventEncoder(structures: () => SharedStructures | undefined): OfferEventEncoder {
  /** Record id (0x40 + index) of each shape found among the shared structures so far. */
  let ids: Partial<Record<ShapeName, number>> = {};
  let seenLength = -1;
  let buf = Buffer.allocUnsafe(8192);
  let pos = 0;

  function lookUp(): void {
    const s = structures();
    const shared = s?.sharedLength ?? 0;
    if (s === undefined || shared === seenLength) return;
    seenLength = shared;
    ids = {};
    for (let i = 0; i < shared; i += 1) {
      const keys = s[i];
      if (keys === undefined) continue;
      for (const [name, shape] of Object.entries(SHAPES) as Array<[ShapeName, readonly string[]]>) {
        if (ids[name] === undefined && keys.length === shape.length && shape.every((k, j) => keys[j] === k)) ids[name] = i + 0x40;
      }
    }
  }

  /** The shape's record id; a shape not shared yet is left to msgpackr, which shares it. */
  function idOf(name: ShapeName): number {
    let id = ids[name];
    if (id === undefined) {
      lookUp();
      id = ids[name];
      if (id === undefined) throw UNSUPPORTED;
    }
    return id;
  }

  function room(n: number): void {
    if (pos + n <= buf.length) return;
    const bigger = Buffer.allocUnsafe(Math.max(buf.length * 2, pos + n));
    buf.copy(bigger, 0, 0, pos);
    buf = bigger;
  }

  /** Exactly the keys of `shape`, in its order (what msgpackr's record would list). */
  function checkKeys(o: unknown, shape: readonly string[]): asserts o is Record<string, unknown> {
    if (typeof o !== 'object' || o === null || (o as object).constructor !== Object) throw UNSUPPORTED;
    let i = 0;
    for (const key in o) {
      if (!Object.hasOwn(o, key)) continue;
      if (shape[i] !== key) throw UNSUPPORTED;
      i += 1;
    }
    if (i !== shape.length) throw UNSUPPORTED;
  }

  // msgpackr uses two-byte record ids from 0x60 on when more than 32 structures may be shared.
  function record(id: number): void {
    room(2);
    if (id < 0x60) buf[pos++] = id;
    else {
      buf[pos++] = ((id - 0x60) & 0x1f) + 0x60;
      buf[pos++] = (id - 0x60) >> 5;
    }
  }

  function str(s: string): void {
    const n = s.length;
    room(n * 3 + 5);
    const header = n < 0x20 ? 1 : n < 0x100 ? 2 : n < 0x10000 ? 3 : 5;
    let at = pos + header;
    if (n < 0x40) {
      // msgpackr writes a short string with its own loop, which differs from utf8Write on a lone
      // surrogate: past ASCII, leave the event to msgpackr.
      for (let i = 0; i < n; i += 1) {
        const c = s.charCodeAt(i);
        if (c >= 0x80) throw UNSUPPORTED;
        buf[at++] = c;
      }
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

  function strOrNull(v: unknown): void {
    if (v === null) {
      room(1);
      buf[pos++] = 0xc0;
    } else if (typeof v === 'string') str(v);
    else throw UNSUPPORTED;
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

  function uintOrNull(v: unknown): void {
    if (v === null) {
      room(1);
      buf[pos++] = 0xc0;
    } else uint(v);
  }

  /** An array of strings, or null. */
  function strings(v: unknown): void {
    if (v === null) {
      room(1);
      buf[pos++] = 0xc0;
      return;
    }
    if (!Array.isArray(v) || v.constructor !== Array || v.length >= 0x10000) throw UNSUPPORTED;
    room(3);
    if (v.length < 0x10) buf[pos++] = 0x90 | v.length;
    else {
      buf[pos++] = 0xdc;
      buf[pos++] = v.length >> 8;
      buf[pos++] = v.length & 0xff;
    }
    for (let i = 0; i < v.length; i += 1) {
      const s: unknown = v[i];
      if (typeof s !== 'string') throw UNSUPPORTED;
      str(s);
    }
  }

  function offerKeyFields(o: Record<string, unknown>): void {
    strOrNull(o['providerId']);
    strOrNull(o['addonProviderId']);
    uintOrNull(o['seasonNumber']);
    uintOrNull(o['episodeNumber']);
    strOrNull(o['webUrl']);
  }

  function writeEvent(stored: object): void {
    checkKeys(stored, STORED);
    const type = stored['type'];
    const data = stored['data'];
    // encode() lets only the three offer events through: the others are OfferRemoved.
    const full = type === 'OfferAdded' || type === 'OfferChanged';
    record(idOf('STORED'));
    str(type as string);
    checkKeys(data, type === 'OfferChanged' ? CHANGED_DATA : OFFER_DATA);
    record(idOf(type === 'OfferChanged' ? 'CHANGED_DATA' : 'OFFER_DATA'));
    strOrNull(data['mediaId']);
    strOrNull(data['country']);
    const offer = data['offer'];
    checkKeys(offer, full ? OFFER : OFFER_KEY);
    record(idOf(full ? 'OFFER' : 'OFFER_KEY'));
    offerKeyFields(offer);
    if (full) {
      strings(offer['priceTypes']);
      strings(offer['formats']);
      strings(offer['audioLanguages']);
      strings(offer['subtitleLanguages']);
      strOrNull(offer['availableFrom']);
      strOrNull(offer['availableTo']);
      strings(offer['platforms']);
    }
    if (type === 'OfferChanged') strings(data['changedFields']);
    const metadata = stored['metadata'];
    checkKeys(metadata, METADATA);
    record(idOf('METADATA'));
    strOrNull(metadata['observationId']);
    strOrNull(metadata['observedAt']);
    strOrNull(metadata['producer']);
    strOrNull(stored['streamId']);
    uint(stored['revision']);
    strOrNull(stored['recordedAt']);
  }

  return {
    encode(stored) {
      const type = (stored as { type?: unknown }).type;
      if (type !== 'OfferAdded' && type !== 'OfferChanged' && type !== 'OfferRemoved') return null;
      pos = 0;
      try {
        writeEvent(stored);
      } catch (err) {
        if (err === UNSUPPORTED) return null;
        throw err;
      }
      return buf.subarray(0, pos);
    },
  };
}
