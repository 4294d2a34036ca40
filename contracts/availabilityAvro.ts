/**
 * Faster writers and readers of two Avro bodies made of offers: the AvailabilityObserved
 * observation and the OfferAdded event (the Kafka event log's commonest record: 209,782 of the
 * sample's first-day 252,681 events; `offerAddedWriter`, `offerAddedReader`). Below, of the first.
 *
 * A faster writer of the Avro body avsc writes for an AvailabilityObserved: most of a crawl's
 * records and bytes (of the sample week's 123,595 records, 75,975 and 45.8 of 67.6 MB). avsc
 * writes a record through generic steps per value: a union looks its branch up by the value's
 * type, an array item goes through its type's writer, and every string is measured
 * (Buffer.byteLength) before it is written byte by byte. This writes the fields in order,
 * measuring an ASCII string while it copies it: encoding the sample week took 0.6-0.8 s where
 * avsc took 1.0-1.8 s. The first start's crawl thread and a crawler publishing to Kafka encode.
 *
 * The bytes are exactly avsc's (the tests compare them, strings in every script and lone
 * surrogates included), so readers and the schema are untouched. It is built only for the
 * schema it was written for (the shape is checked field by field against the registry's
 * type); for anything else it answers null and avsc writes the record: a value of an unexpected
 * type, an enum symbol it does not know, a number out of range, a buffer too short.
 */
import type avsc from 'avsc';

/** Writes the body at `at` of `target`; the end, or null to leave the record to avsc. */
export type BodyWriter = (body: unknown, target: Buffer, at: number) => number | null;

/** The shape of an avsc type, enum symbols aside: what this writer was written for must match it. */
function shapeOf(type: avsc.Type): string {
  const t = type as unknown as {
    typeName: string;
    fields?: Array<{ name: string; type: avsc.Type }>;
    types?: avsc.Type[];
    itemsType?: avsc.Type;
  };
  if (t.typeName === 'record') return `{${(t.fields ?? []).map((f) => `${f.name}:${shapeOf(f.type)}`).join(',')}}`;
  if (t.typeName === 'union:unwrapped') return (t.types ?? []).map(shapeOf).join('|');
  if (t.typeName === 'array') return `[${shapeOf(t.itemsType as avsc.Type)}]`;
  return t.typeName;
}

const OFFER_SHAPE =
  '{providerId:string,addonProviderId:null|string,seasonNumber:null|int,episodeNumber:null|int,webUrl:string,' +
  'priceTypes:null|[enum],formats:null|[string],audioLanguages:null|[string],subtitleLanguages:null|[string],' +
  'availableFrom:null|string,availableTo:null|string,platforms:null|[enum]}';
const SHAPE = `{observationId:string,observedAt:string,data:{contentType:enum,sourceId:long,country:string,offers:[${OFFER_SHAPE}]}}`;
/** The OfferAdded event's body (`data`, `metadata`): one offer, the availability's commonest event by far. */
const OFFER_ADDED_SHAPE = `{data:{mediaId:string,country:string,offer:${OFFER_SHAPE}},metadata:{observationId:null|string,observedAt:null|string,producer:null|string}}`;

/** The records written and read here: the observation, and the event that most of its offers become. */
type Written = 'AvailabilityObserved' | 'OfferAdded';
const SHAPES: Record<Written, string> = { AvailabilityObserved: SHAPE, OfferAdded: OFFER_ADDED_SHAPE };

const NO_BUFFER: Buffer = Buffer.alloc(0);
/** The largest long avsc writes (its isSafeLong): 2^53 - 2. */
const MAX_LONG = 9007199254740990;

/** Thrown inside the writer to leave the record to avsc; never escapes it. */
const BAIL = new Error('left to avsc');

interface Fielded {
  fields: Array<{ name: string; type: avsc.Type }>;
}

function field(type: avsc.Type, name: string): avsc.Type {
  const found = (type as unknown as Fielded).fields.find((f) => f.name === name);
  if (found === undefined) throw new Error(`no field ${name}`);
  return found.type;
}

/**
 * The symbols of the record's three enums, in index order, read from the schema (so a symbol's
 * index is the schema's): the content type, and the items of the offers' price types and platforms.
 */
function enumsOf(type: avsc.Type, written: Written): { contentTypes: string[]; priceTypes: string[]; platforms: string[] } {
  const symbols = (t: avsc.Type) => (t as unknown as { symbols: string[] }).symbols;
  const items = (t: avsc.Type) => (t as unknown as { itemsType: avsc.Type }).itemsType;
  // The non-null branch of a `["null", array]`.
  const listed = (union: avsc.Type) => symbols(items((union as unknown as { types: avsc.Type[] }).types[1] as avsc.Type));
  const data = field(type, 'data');
  const offer = written === 'OfferAdded' ? field(data, 'offer') : items(field(data, 'offers'));
  const contentTypes = written === 'OfferAdded' ? [] : symbols(field(data, 'contentType'));
  return { contentTypes, priceTypes: listed(field(offer, 'priceTypes')), platforms: listed(field(offer, 'platforms')) };
}

/** symbol -> index. */
const indexOf = (symbols: readonly string[]) => new Map(symbols.map((s, i) => [s, i]));

/** The declared fields of a record: what an object written as one may hold (`type`: the observation's, besides). */
const OBSERVATION_KEYS: ReadonlySet<string> = new Set(['type', 'observationId', 'observedAt', 'data']);
const DATA_KEYS: ReadonlySet<string> = new Set(['contentType', 'sourceId', 'country', 'offers']);
/** The event's keys (its `type` besides), and those of its data and metadata. */
const EVENT_KEYS: ReadonlySet<string> = new Set(['type', 'data', 'metadata']);
const OFFER_ADDED_DATA_KEYS: ReadonlySet<string> = new Set(['mediaId', 'country', 'offer']);
const METADATA_KEYS: ReadonlySet<string> = new Set(['observationId', 'observedAt', 'producer']);
const OFFER_KEYS: ReadonlySet<string> = new Set([
  'providerId', 'addonProviderId', 'seasonNumber', 'episodeNumber', 'webUrl', 'priceTypes', 'formats', 'audioLanguages',
  'subtitleLanguages', 'availableFrom', 'availableTo', 'platforms',
]);

/**
 * The writer for `type` when it is the AvailabilityObserved this was written for, else null.
 *
 * `checked`: a record it writes is one avsc's `isValid(body, { noUndeclaredFields: true })`
 * accepts, so a publish need not run that check too (it took as long as the writing). Then it
 * also refuses (answers null for, leaving the record to the full check and avsc) an object with
 * a key its record does not declare (the observation's `type` aside), and an absent value
 * (undefined) where it would write null: avsc writes one as null but its check refuses it,
 * unless the field has a default. It is never looser than avsc's check, only sometimes
 * stricter (an array or an enum symbol inherited from Object.prototype, which avsc's check
 * lets through), and what it refuses takes the path every record took before.
 */
export function availabilityWriter(type: avsc.Type, checked = false): BodyWriter | null {
  return offersWriter(type, 'AvailabilityObserved', checked);
}

/**
 * The writer of an OfferAdded event's body (`data`, `metadata`) for `type` when it is the
 * schema this was written for, else null: the same bytes as avsc's, as `availabilityWriter`.
 * Metadata's optional fields are written as the codec writes them: an absent one as null (read
 * back, a null is dropped, so absent again). `checked` as `availabilityWriter`'s; it also
 * refuses a metadata field that is null, which would read back absent.
 */
export function offerAddedWriter(type: avsc.Type, checked = false): BodyWriter | null {
  return offersWriter(type, 'OfferAdded', checked);
}

function offersWriter(type: avsc.Type, written: Written, checked: boolean): BodyWriter | null {
  if (shapeOf(type) !== SHAPES[written]) return null;
  const enums = enumsOf(type, written);
  const contentTypes = indexOf(enums.contentTypes);
  const priceTypes = indexOf(enums.priceTypes);
  const platforms = indexOf(enums.platforms);

  let buf: Buffer = NO_BUFFER;
  let pos = 0;

  function room(n: number): void {
    if (pos + n > buf.length) throw BAIL;
  }

  /** A long as avsc writes it: zigzag, then 7 bits a byte (avsc's arithmetic past 2^30). */
  function long(n: number): void {
    room(10);
    if (n >= -0x40000000 && n < 0x40000000) {
      let m = n >= 0 ? n << 1 : (~n << 1) | 1;
      while (m & ~0x7f) {
        buf[pos++] = (m & 0x7f) | 0x80;
        m >>>= 7;
      }
      buf[pos++] = m;
      return;
    }
    let f = n >= 0 ? n * 2 : -n * 2 - 1;
    while (f >= 0x80) {
      buf[pos++] = (f & 0x7f) | 0x80;
      f /= 128;
    }
    buf[pos++] = f | 0;
  }

  function int(v: unknown): void {
    if (typeof v !== 'number' || (v | 0) !== v) throw BAIL;
    long(v);
  }

  /** A string as avsc's Tap.writeString writes it. */
  function str(v: unknown): void {
    if (typeof v !== 'string') throw BAIL;
    const n = v.length;
    // ASCII, the usual case: n bytes, so the length (1 byte under 64, 2 under 8,192) is known
    // before the bytes, which are checked while they are copied.
    if (n < 64) {
      room(n + 1);
      const start = pos;
      let at = pos + 1;
      let i = 0;
      for (; i < n; i += 1) {
        const c = v.charCodeAt(i);
        if (c >= 0x80) break;
        buf[at++] = c;
      }
      if (i === n) {
        buf[start] = n << 1;
        pos = at;
        return;
      }
    } else if (n < 8192) {
      // Room for any string of n units (3 bytes a unit at most), so the write is whole and
      // stops nowhere early: n bytes written means n ASCII characters, no more, no fewer.
      room(3 * n + 2);
      if (buf.write(v, pos + 2) === n) {
        buf[pos] = ((n << 1) & 0x7f) | 0x80;
        buf[pos + 1] = n >> 6;
        pos += n + 2;
        return;
      }
    }
    other(v);
  }

  /** Any other string, as avsc writes it: utf8Write past 64 bytes, its own loop up to 64. */
  function other(s: string): void {
    const len = Buffer.byteLength(s);
    long(len);
    room(len);
    if (len > 64) {
      buf.write(s, pos, len);
      pos += len;
      return;
    }
    // avsc's loop runs to the byte length, past the string's end: what it writes there lies
    // past the string's bytes, where the next field overwrites it. Its bytes are these.
    for (let i = 0; i < s.length; i += 1) {
      let c1 = s.charCodeAt(i);
      let c2: number;
      if (c1 < 0x80) buf[pos++] = c1;
      else if (c1 < 0x800) {
        buf[pos++] = (c1 >> 6) | 0xc0;
        buf[pos++] = (c1 & 0x3f) | 0x80;
      } else if ((c1 & 0xfc00) === 0xd800 && ((c2 = s.charCodeAt(i + 1)) & 0xfc00) === 0xdc00) {
        c1 = 0x10000 + ((c1 & 0x03ff) << 10) + (c2 & 0x03ff);
        i += 1;
        buf[pos++] = (c1 >> 18) | 0xf0;
        buf[pos++] = ((c1 >> 12) & 0x3f) | 0x80;
        buf[pos++] = ((c1 >> 6) & 0x3f) | 0x80;
        buf[pos++] = (c1 & 0x3f) | 0x80;
      } else {
        buf[pos++] = (c1 >> 12) | 0xe0;
        buf[pos++] = ((c1 >> 6) & 0x3f) | 0x80;
        buf[pos++] = (c1 & 0x3f) | 0x80;
      }
    }
  }

  /** The branch of `["null", T]`: avsc takes undefined for null too. */
  function present(v: unknown): boolean {
    room(1);
    if (v === undefined && checked) throw BAIL;
    if (v === null || v === undefined) {
      buf[pos++] = 0;
      return false;
    }
    buf[pos++] = 2;
    return true;
  }

  function nullableStr(v: unknown): void {
    if (present(v)) str(v);
  }

  function nullableInt(v: unknown): void {
    if (present(v)) int(v);
  }

  /** `["null", {array of string or enum}]`: blocks of one count, then the 0 that ends them. */
  function nullableList(v: unknown, symbols: Map<string, number> | null): void {
    if (!present(v)) return;
    if (!Array.isArray(v)) throw BAIL;
    if (v.length > 0) {
      long(v.length);
      for (const item of v) {
        if (symbols === null) str(item);
        else {
          const index = symbols.get(item as string);
          if (index === undefined) throw BAIL;
          long(index);
        }
      }
    }
    room(1);
    buf[pos++] = 0;
  }

  /** `o` as a record of `keys`: an object (checked: not an array, and no key it does not declare). */
  function record(o: unknown, keys: ReadonlySet<string>): Record<string, unknown> {
    if (typeof o !== 'object' || o === null) throw BAIL;
    if (checked) {
      if (Array.isArray(o)) throw BAIL;
      // for-in sees the own keys avsc's check looks at (Object.keys), and any inherited
      // enumerable one besides: stricter, never looser.
      for (const key in o) if (!keys.has(key)) throw BAIL;
    }
    return o as Record<string, unknown>;
  }

  function writeOffer(o: unknown): void {
    const r = record(o, OFFER_KEYS);
    str(r['providerId']);
    nullableStr(r['addonProviderId']);
    nullableInt(r['seasonNumber']);
    nullableInt(r['episodeNumber']);
    str(r['webUrl']);
    nullableList(r['priceTypes'], priceTypes);
    nullableList(r['formats'], null);
    nullableList(r['audioLanguages'], null);
    nullableList(r['subtitleLanguages'], null);
    nullableStr(r['availableFrom']);
    nullableStr(r['availableTo']);
    nullableList(r['platforms'], platforms);
  }

  /** A metadata field: absent is null, as the codec writes it; a null (which would read back absent) is refused when checked. */
  function metadataStr(v: unknown): void {
    if (v === null && checked) throw BAIL;
    room(1);
    if (v === undefined || v === null) {
      buf[pos++] = 0;
      return;
    }
    buf[pos++] = 2;
    str(v);
  }

  function writeOfferAdded(body: unknown): void {
    const r = record(body, EVENT_KEYS);
    const data = record(r['data'], OFFER_ADDED_DATA_KEYS);
    str(data['mediaId']);
    str(data['country']);
    writeOffer(data['offer']);
    const metadata = record(r['metadata'], METADATA_KEYS);
    metadataStr(metadata['observationId']);
    metadataStr(metadata['observedAt']);
    metadataStr(metadata['producer']);
  }

  return (body, target, at) => {
    buf = target;
    pos = at;
    try {
      if (written === 'OfferAdded') {
        writeOfferAdded(body);
        return pos;
      }
      const r = record(body, OBSERVATION_KEYS);
      str(r['observationId']);
      str(r['observedAt']);
      const dr = record(r['data'], DATA_KEYS);
      const kind = contentTypes.get(dr['contentType'] as string);
      if (kind === undefined) throw BAIL;
      long(kind);
      const sourceId = dr['sourceId'];
      if (typeof sourceId !== 'number' || !Number.isInteger(sourceId) || Math.abs(sourceId) > MAX_LONG) throw BAIL;
      long(sourceId);
      str(dr['country']);
      const offers = dr['offers'];
      if (!Array.isArray(offers)) throw BAIL;
      if (offers.length > 0) {
        long(offers.length);
        for (const o of offers) writeOffer(o);
      }
      room(1);
      buf[pos++] = 0;
      return pos;
    } catch (err) {
      if (err === BAIL) return null;
      throw err;
    } finally {
      // Not kept past the call: the caller's buffer is its own.
      buf = NO_BUFFER;
    }
  };
}

/** Reads the body from `start` to `end` of `buf` into the observation of `type`; null to leave the record to avsc. */
export type BodyReader = (buf: Buffer, start: number, end: number, type: string) => object | null;

/**
 * Node's own string makers of a Buffer, which `toString(encoding, start, end)` calls after
 * checking its arguments: undocumented but what avsc itself reads strings with (utf8Slice), so
 * the strings are avsc's.
 */
type Slicing = Buffer & { utf8Slice(start: number, end: number): string; latin1Slice(start: number, end: number): string };

/** Strings this short are looked up in the reader's table before one is made. */
const INTERNED_BYTES = 16;
const TABLE_SIZE = 4096;

/**
 * The reader of an AvailabilityObserved written with the schema this was written for, else
 * null. It makes the very objects avsc makes (fields in the schema's order, null for a null
 * branch, arrays and strings alike) with the observation's `type` first, as the codec answers
 * it. Short ASCII strings (countries, providers, languages, formats, days) come from a table
 * of the last string each hash slot saw rather than a new string each time: most values of a
 * crawl repeat, and decoding made more garbage than anything else ingest does. Anything avsc
 * would refuse or read otherwise (a branch or an enum index out of range, a length past the
 * end, bytes left over, a long past 2^53) answers null, and avsc reads it, with its own error.
 */
export function availabilityReader(type: avsc.Type): BodyReader | null {
  return offersReader(type, 'AvailabilityObserved');
}

/**
 * The reader of an OfferAdded event's body for `type` when it is the schema this was written
 * for, else null: the event as the codec answers it (`type`, `data`, `metadata` without its null
 * fields), the objects avsc makes otherwise alike.
 */
export function offerAddedReader(type: avsc.Type): BodyReader | null {
  return offersReader(type, 'OfferAdded');
}

function offersReader(type: avsc.Type, written: Written): BodyReader | null {
  if (shapeOf(type) !== SHAPES[written]) return null;
  const { contentTypes, priceTypes, platforms } = enumsOf(type, written);
  const table: Array<string | undefined> = new Array(TABLE_SIZE);

  let buf: Slicing = NO_BUFFER as Slicing;
  let pos = 0;
  let end = 0;

  /** avsc's readLong, the same arithmetic: its 4-byte fast path, then floats. */
  function long(): number {
    let n = 0;
    let k = 0;
    let b: number;
    let h: number;
    do {
      if (pos >= end) throw BAIL;
      b = buf[pos++] as number;
      h = b & 0x80;
      n |= (b & 0x7f) << k;
      k += 7;
    } while (h && k < 28);
    if (!h) return (n >> 1) ^ -(n & 1);
    let f = n;
    let fk = 268435456;
    do {
      if (pos >= end) throw BAIL;
      b = buf[pos++] as number;
      f += (b & 0x7f) * fk;
      fk *= 128;
    } while (b & 0x80);
    return (f % 2 ? -(f + 1) : f) / 2;
  }

  function str(): string {
    const len = long();
    if (len < 0 || pos + len > end) throw BAIL;
    const at = pos;
    pos += len;
    if (len > INTERNED_BYTES) return buf.utf8Slice(at, pos);
    let hash = len;
    for (let i = at; i < pos; i += 1) {
      const c = buf[i] as number;
      // Not ASCII: made as avsc makes it (utf8Slice replaces bad sequences alike).
      if (c >= 0x80) return buf.utf8Slice(at, pos);
      hash = Math.imul(hash ^ c, 0x01000193);
    }
    const slot = (hash >>> 0) & (TABLE_SIZE - 1);
    const kept = table[slot];
    if (kept !== undefined && kept.length === len) {
      let same = true;
      for (let i = 0; i < len; i += 1) {
        if (kept.charCodeAt(i) !== buf[at + i]) {
          same = false;
          break;
        }
      }
      if (same) return kept;
    }
    const made = buf.latin1Slice(at, pos);
    table[slot] = made;
    return made;
  }

  function symbol(list: readonly string[]): string {
    const s = list[long()];
    if (s === undefined) throw BAIL;
    return s;
  }

  /** The branch of `["null", T]`: false for null. */
  function present(): boolean {
    const index = long();
    if (index === 0) return false;
    if (index !== 1) throw BAIL;
    return true;
  }

  /** An array as avsc reads it: blocks until a 0 count, a negative count followed by its size. */
  function list<T>(read: () => T): T[] {
    let out: T[] | undefined;
    let i = 0;
    for (let n = long(); n !== 0; n = long()) {
      if (n < 0) {
        n = -n;
        long();
      }
      out ??= new Array<T>(n);
      while (n-- > 0) out[i++] = read();
    }
    return out ?? [];
  }

  const readPriceType = () => symbol(priceTypes);
  const readPlatform = () => symbol(platforms);

  function readOffer(): object {
    return {
      providerId: str(),
      addonProviderId: present() ? str() : null,
      seasonNumber: present() ? long() : null,
      episodeNumber: present() ? long() : null,
      webUrl: str(),
      priceTypes: present() ? list(readPriceType) : null,
      formats: present() ? list(str) : null,
      audioLanguages: present() ? list(str) : null,
      subtitleLanguages: present() ? list(str) : null,
      availableFrom: present() ? str() : null,
      availableTo: present() ? str() : null,
      platforms: present() ? list(readPlatform) : null,
    };
  }

  function readOfferAdded(typeName: string): object {
    const mediaId = str();
    const country = str();
    const offer = readOffer();
    // As the codec reads an event's metadata: its null fields dropped, the others in order.
    const metadata: Record<string, string> = {};
    if (present()) metadata['observationId'] = str();
    if (present()) metadata['observedAt'] = str();
    if (present()) metadata['producer'] = str();
    if (pos !== end) throw BAIL;
    return { type: typeName, data: { mediaId, country, offer }, metadata };
  }

  return (source, start, stop, typeName) => {
    buf = source as Slicing;
    pos = start;
    end = stop;
    try {
      if (written === 'OfferAdded') return readOfferAdded(typeName);
      const observationId = str();
      const observedAt = str();
      const contentType = symbol(contentTypes);
      const sourceId = long();
      if (Math.abs(sourceId) > MAX_LONG) throw BAIL;
      const country = str();
      const offers = list(readOffer);
      if (pos !== end) throw BAIL;
      return { type: typeName, observationId, observedAt, data: { contentType, sourceId, country, offers } };
    } catch (err) {
      if (err === BAIL) return null;
      throw err;
    } finally {
      buf = NO_BUFFER as Slicing;
    }
  };
}
