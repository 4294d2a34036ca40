/**
 * Arrow column data filled as rows are appended: each value goes straight into its column's
 * typed arrays (numbers, offsets, validity bits) or UTF-8 bytes, checked against the column's
 * type and nullability, and a chunk's worth is handed over as Arrow data.
 *
 * Why not buffer the rows and convert them per chunk: a buffered row keeps its object and the
 * strings it points to (read-model text, link tokens) alive across young-generation
 * collections, and every collection copied them, twice before they died; on a 50,000-title
 * release the scavenges cost more CPU than the Parquet encoding. Bytes written at once leave
 * the row garbage the moment it is appended, and the bytes live in ArrayBuffers, which the
 * collector does not copy.
 */
import { Bool, DateDay, Field, Float64, Int16, Int32, List, Utf8, makeData, type Data } from 'apache-arrow';
import { AppError } from '../../contracts/errors.ts';
import { digitsAt } from '../../contracts/ids.ts';
import type { SnapshotColumn } from '../../contracts/snapshotSchema.ts';

/** A value per column name, as rows.ts makes them (see arrowSchema.ts). */
type Value = string | number | boolean | readonly string[] | null | undefined;

/** One column of the rows being appended. */
export interface ColumnAccumulator {
  /** Takes one row's value (checked: a wrong type, or a null where none may be, throws). */
  push(value: Value): void;
  /**
   * The values pushed since the last take, as Arrow data; the next push starts a new chunk in
   * the same buffers, so the data is valid only until then (the writer serializes it first).
   * Reusing them keeps a file's chunks from allocating (and the collector from counting) fresh
   * ArrayBuffers every 4096 rows.
   */
  take(): Data;
}

const DAY_MS = 86_400_000;
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** `YYYY-MM-DD` -> milliseconds of that UTC midnight. */
export function dateToMs(value: string): number {
  const m = ISO_DATE.exec(value);
  if (!m) throw new AppError('internal', `not a YYYY-MM-DD date: ${value}`);
  return Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
}

/** Days since the epoch of a `YYYY-MM-DD` date (Parquet DATE). */
export function dateToDays(value: string): number {
  const days = civilDays(value);
  return days === null ? Math.round(dateToMs(value) / DAY_MS) : days;
}

/**
 * `dateToDays` by arithmetic on the characters, for what it covers: years 100-9999, months
 * 01-12 (any day 00-99, counted on from the month's first as Date.UTC does); null for anything
 * else, which takes Date.UTC (its years 0-99 are 1900-1999, its months past 12 roll over).
 * A release's dates are mostly of this shape and mostly distinct (titles' release dates), so
 * a cache of parsed days missed and each miss ran the regex, Date.UTC and a Map insert.
 * Days from the civil date as in H. Hinnant's days_from_civil (400-year eras, March-based years).
 */
export function civilDays(s: string): number | null {
  if (s.length !== 10 || s.charCodeAt(4) !== 45 || s.charCodeAt(7) !== 45) return null;
  let y = digitsAt(s, 0, 4);
  const m = digitsAt(s, 5, 7);
  const d = digitsAt(s, 8, 10);
  if (y < 100 || m < 1 || m > 12 || d < 0) return null;
  if (m <= 2) y -= 1;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (m > 2 ? m - 3 : m + 9) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}

/** Values a chunk's arrays start with room for; they double when a chunk holds more. */
const INITIAL_VALUES = 1024;
/** UTF-8 bytes a chunk's string column starts with room for. */
const INITIAL_BYTES = 16 * 1024;

/** A copy of `array` with room for `size` elements. */
function grown<T extends Int16Array | Int32Array | Float64Array | Uint8Array>(array: T, size: number): T {
  const bigger = new (array.constructor as new (n: number) => T)(size);
  bigger.set(array);
  return bigger;
}

/**
 * Validity bits of a chunk (Arrow: bit set = present), handed over only when the chunk has a
 * null: Arrow's bitmap of `n` values is (n + 7) >> 3 bytes with the padding bits clear.
 * The bits are written only from a chunk's first null on (the values before it are present):
 * most chunks have none, and setting a bit per value was a tenth of pushing a value.
 */
class Validity {
  bits = new Uint8Array(INITIAL_VALUES >> 3);
  nulls = 0;

  set(i: number, present: boolean): void {
    if (present) {
      if (this.nulls === 0) return;
      if (i >> 3 >= this.bits.length) this.bits = grown(this.bits, this.bits.length * 2);
      this.bits[i >> 3]! |= 1 << (i & 7);
      return;
    }
    if (i >> 3 >= this.bits.length) this.bits = grown(this.bits, Math.max(this.bits.length * 2, (i >> 3) + 1));
    // The chunk's first null: every value before it is present.
    if (this.nulls === 0) {
      this.bits.fill(0xff, 0, i >> 3);
      this.bits[i >> 3] = (1 << (i & 7)) - 1;
    }
    this.nulls += 1;
  }

  /** The bitmap of the chunk's `n` values (or undefined without nulls); then clears it for the next. */
  take(n: number): { nullCount: number; nullBitmap: Uint8Array | undefined } {
    if (this.nulls === 0) return { nullCount: 0, nullBitmap: undefined };
    const used = (n + 7) >> 3;
    const out = { nullCount: this.nulls, nullBitmap: this.bits.slice(0, used) };
    this.bits.fill(0, 0, used);
    this.nulls = 0;
    return out;
  }
}

/**
 * Strings encoded together: one UTF-8 conversion of a few hundred joined strings costs about
 * two thirds of converting each on its own, and so few rows are kept waiting that their
 * strings still die young.
 */
const STRINGS_PER_ENCODING = 256;

/** Strings of a chunk as UTF-8 bytes and offsets (a null is zero bytes). */
class StringBytes {
  /** Values pushed in this chunk (the waiting ones included). */
  n = 0;
  offsets = new Int32Array(INITIAL_VALUES + 1);
  data = Buffer.allocUnsafeSlow(INITIAL_BYTES);
  at = 0;
  readonly validity = new Validity();
  /** Values pushed but not encoded yet: the last `waiting.length` of the chunk. */
  private readonly waiting: Array<string | null> = [];
  private waitingChars = 0;

  push(value: string | null): void {
    this.validity.set(this.n, value !== null);
    this.n += 1;
    this.waiting.push(value);
    if (value !== null) this.waitingChars += value.length;
    if (this.waiting.length >= STRINGS_PER_ENCODING) this.encode();
  }

  /** Writes the waiting strings' bytes and offsets. */
  private encode(): void {
    const waiting = this.waiting;
    if (waiting.length === 0) return;
    if (this.n + 1 > this.offsets.length) this.offsets = grown(this.offsets, Math.max(this.offsets.length * 2, this.n + 1));
    // UTF-8 takes at most three bytes per UTF-16 code unit.
    const room = this.at + this.waitingChars * 3;
    if (room > this.data.length) {
      const bigger = Buffer.allocUnsafeSlow(Math.max(this.data.length * 2, room));
      this.data.copy(bigger, 0, 0, this.at);
      this.data = bigger;
    }
    const first = this.n - waiting.length;
    // Array.prototype.join writes null as ''.
    const joined = waiting.join('');
    const written = this.data.write(joined, this.at, 'utf8');
    let at = this.at;
    if (written === joined.length) {
      // ASCII only: a string's bytes are its characters.
      for (let k = 0; k < waiting.length; k++) {
        at += waiting[k]?.length ?? 0;
        this.offsets[first + k + 1] = at;
      }
    } else {
      // Non-ASCII somewhere: each string on its own (joining could pair surrogates across values).
      for (let k = 0; k < waiting.length; k++) {
        const value = waiting[k];
        if (value !== null && value !== undefined) at += this.data.write(value, at, 'utf8');
        this.offsets[first + k + 1] = at;
      }
    }
    this.at = at;
    waiting.length = 0;
    this.waitingChars = 0;
  }

  take(type: Utf8): Data<Utf8> {
    this.encode();
    const n = this.n;
    const data = makeData({
      type,
      length: n,
      ...this.validity.take(n),
      valueOffsets: this.offsets.subarray(0, n + 1),
      data: new Uint8Array(this.data.buffer, this.data.byteOffset, this.at),
    });
    this.at = 0;
    this.n = 0;
    return data;
  }
}

/** The accumulator of one column of `file`; it refuses values of the wrong type or a null where none may be. */
export function columnAccumulator(file: string, column: SnapshotColumn): ColumnAccumulator {
  const { name, type, nullable } = column;
  const refuse = (v: Value, why: string): never => {
    throw new AppError('internal', `${file}: column ${name} ${why} (got ${JSON.stringify(v)})`);
  };
  /** True for a present value; a null is recorded (or refused) here. */
  const present = (v: Value): v is string | number | boolean | readonly string[] => {
    if (v !== null && v !== undefined) return true;
    if (!nullable) refuse(v, 'is not nullable');
    return false;
  };

  /** Numbers (and dates) in a typed array; a null leaves a zero. */
  const numbers = <A extends Int16Array | Int32Array | Float64Array>(
    make: (n: number) => A,
    arrowType: Int16 | Int32 | Float64 | DateDay,
    value: (v: string | number | boolean | readonly string[]) => number,
  ): ColumnAccumulator => {
    let values = make(INITIAL_VALUES);
    let n = 0;
    const validity = new Validity();
    return {
      push(v) {
        if (n >= values.length) values = grown(values, values.length * 2);
        const has = present(v);
        // A null's slot is zeroed: the buffer holds the previous chunk's values.
        values[n] = has ? value(v) : 0;
        validity.set(n, has);
        n += 1;
      },
      take() {
        const data = makeData({ type: arrowType, length: n, ...validity.take(n), data: values.subarray(0, n) } as never) as Data;
        n = 0;
        return data;
      },
    };
  };

  switch (type) {
    case 'UTF8': {
      const arrowType = new Utf8();
      const strings = new StringBytes();
      return {
        push(v) {
          if (typeof v === 'string') strings.push(v);
          else if (present(v)) refuse(v, 'needs a string');
          else strings.push(null);
        },
        take: () => strings.take(arrowType),
      };
    }
    case 'INT16':
    case 'INT32': {
      const [min, max] = type === 'INT16' ? [-32768, 32767] : [-2147483648, 2147483647];
      const integer = (v: unknown): number => {
        if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) refuse(v as Value, `needs an ${type} integer`);
        return v as number;
      };
      return type === 'INT16'
        ? numbers((n) => new Int16Array(n), new Int16(), integer)
        : numbers((n) => new Int32Array(n), new Int32(), integer);
    }
    case 'DOUBLE':
      return numbers((n) => new Float64Array(n), new Float64(), (v) => (typeof v === 'number' ? v : refuse(v, 'needs a number')));
    case 'DATE': {
      // Rows in a row often share the day (a title's links, a chart): the last one is checked
      // first. Others are parsed (dateToDays, by civilDays), which costs less than looking them up among the
      // days seen (a release's titles have hundreds of thousands of distinct release dates).
      let lastText: string | null = null;
      let lastDay = 0;
      return numbers((n) => new Int32Array(n), new DateDay(), (v) => {
        if (v === lastText) return lastDay;
        if (typeof v !== 'string') return refuse(v, 'needs a YYYY-MM-DD date');
        lastDay = dateToDays(v);
        lastText = v;
        return lastDay;
      });
    }
    case 'BOOLEAN': {
      const arrowType = new Bool();
      let bits = new Uint8Array(INITIAL_VALUES >> 3);
      let n = 0;
      const validity = new Validity();
      return {
        push(v) {
          if (n >> 3 >= bits.length) bits = grown(bits, bits.length * 2);
          const has = present(v);
          if (has && typeof v !== 'boolean') refuse(v, 'needs a boolean');
          // Every bit is written (a null's cleared): the buffer holds the previous chunk's bits.
          if (v === true) bits[n >> 3]! |= 1 << (n & 7);
          else bits[n >> 3]! &= ~(1 << (n & 7));
          validity.set(n, has);
          n += 1;
        },
        take() {
          // The padding bits after the last value are clear, as in a fresh buffer.
          if ((n & 7) !== 0) bits[n >> 3]! &= (1 << (n & 7)) - 1;
          const data = makeData({ type: arrowType, length: n, ...validity.take(n), data: bits.subarray(0, (n + 7) >> 3) });
          n = 0;
          return data;
        },
      };
    }
    case 'LIST<UTF8>': {
      const arrowType = new List(new Field('item', new Utf8(), true));
      const itemType = new Utf8();
      const items = new StringBytes();
      let offsets = new Int32Array(INITIAL_VALUES + 1);
      let n = 0;
      const validity = new Validity();
      return {
        push(v) {
          if (n + 2 > offsets.length) offsets = grown(offsets, offsets.length * 2);
          const has = present(v);
          if (has) {
            if (!Array.isArray(v)) refuse(v, 'needs an array of strings');
            for (const item of v as readonly unknown[]) {
              if (typeof item === 'string') items.push(item);
              else if (item === null) items.push(null);
              else refuse(v, 'needs an array of strings');
            }
          }
          // A null list is an empty slot: it keeps the previous offset.
          offsets[n + 1] = items.n;
          validity.set(n, has);
          n += 1;
        },
        take() {
          const data = makeData({
            type: arrowType,
            length: n,
            ...validity.take(n),
            valueOffsets: offsets.subarray(0, n + 1),
            child: items.take(itemType),
          });
          n = 0;
          return data;
        },
      };
    }
  }
}
