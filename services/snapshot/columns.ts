/**
 * Arrow column data built straight from a column's values into typed arrays: one pass per
 * column reads the value of every row, checks it against the column's type and nullability, and fills the
 * values, offsets and validity bitmap. No per-value intermediate arrays or Arrow builders
 * (apache-arrow's generic builders cost ~30 us per links row; this is well under 1 us).
 *
 * Strings: the UTF-8 bytes of a whole chunk come from one encoding of the joined strings; when
 * that has as many bytes as characters (ASCII, nearly every id, slug, token and date-free text)
 * the offsets are the string lengths. Otherwise each string is measured and written on its own.
 */
import { Bool, DateDay, Field, Float64, Int16, Int32, List, Utf8, makeData, type Data } from 'apache-arrow';
import { AppError } from '../../contracts/errors.ts';
import type { SnapshotColumn } from '../../contracts/snapshotSchema.ts';

/** A value of a column, as rows.ts makes them (see arrowSchema.ts). */
type Value = string | number | boolean | readonly string[] | null | undefined;

/** Builds one column of a chunk of rows from that column's values (arrowSchema.ts takes them out of the rows). */
export type ColumnBuilder = (values: readonly Value[]) => Data;

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
  return Math.round(dateToMs(value) / DAY_MS);
}

/** Validity bitmap of `n` values with the listed positions null, or undefined when none is. */
function bitmap(n: number, nulls: number, isNull: Uint8Array): Uint8Array | undefined {
  if (nulls === 0) return undefined;
  const bits = new Uint8Array((n + 7) >> 3);
  for (let i = 0; i < n; i++) if (isNull[i] === 0) bits[i >> 3]! |= 1 << (i & 7);
  return bits;
}

/** Offsets and UTF-8 bytes of strings (null = zero bytes). */
function utf8Parts(values: ReadonlyArray<string | null>): { valueOffsets: Int32Array; data: Uint8Array } {
  const n = values.length;
  const valueOffsets = new Int32Array(n + 1);
  // Array.prototype.join writes null as ''.
  const joined = values.join('');
  const bytes = Buffer.from(joined, 'utf8');
  if (bytes.length === joined.length) {
    let total = 0;
    for (let i = 0; i < n; i++) {
      const v = values[i];
      if (v !== null && v !== undefined) total += v.length;
      valueOffsets[i + 1] = total;
    }
    return { valueOffsets, data: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength) };
  }
  // Non-ASCII somewhere: measure each string (joining could also pair surrogates across values).
  let total = 0;
  for (let i = 0; i < n; i++) {
    const v = values[i];
    if (v !== null && v !== undefined) total += Buffer.byteLength(v, 'utf8');
    valueOffsets[i + 1] = total;
  }
  const data = Buffer.allocUnsafe(total);
  for (let i = 0; i < n; i++) {
    const v = values[i];
    if (v !== null && v !== undefined) data.write(v, valueOffsets[i]!, 'utf8');
  }
  return { valueOffsets, data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength) };
}

/** The column builder of one column of `file`; it refuses values of the wrong type or a null where none may be. */
export function columnBuilder(file: string, column: SnapshotColumn): ColumnBuilder {
  const { name, type, nullable } = column;
  const refuse = (v: Value, why: string): never => {
    throw new AppError('internal', `${file}: column ${name} ${why} (got ${JSON.stringify(v)})`);
  };
  const notNullable = (v: Value): never => refuse(v, 'is not nullable');

  /** Runs `each(value, i)` for present values and records nulls; returns the null count and flags. */
  const scan = (values: readonly Value[], each: (v: Value, i: number) => void): { nulls: number; isNull: Uint8Array } => {
    const n = values.length;
    const isNull = new Uint8Array(n);
    let nulls = 0;
    for (let i = 0; i < n; i++) {
      const v = values[i];
      if (v === null || v === undefined) {
        if (!nullable) notNullable(v);
        isNull[i] = 1;
        nulls += 1;
      } else {
        each(v, i);
      }
    }
    return { nulls, isNull };
  };

  switch (type) {
    case 'UTF8': {
      const arrowType = new Utf8();
      return (values) => {
        const n = values.length;
        const strings = new Array<string | null>(n);
        let nulls = 0;
        let isNull: Uint8Array | null = null;
        for (let i = 0; i < n; i++) {
          const v = values[i];
          if (typeof v === 'string') strings[i] = v;
          else if (v === null || v === undefined) {
            if (!nullable) notNullable(v);
            strings[i] = null;
            isNull ??= new Uint8Array(n);
            isNull[i] = 1;
            nulls += 1;
          } else refuse(v, 'needs a string');
        }
        const nullBitmap = isNull === null ? undefined : bitmap(n, nulls, isNull);
        return makeData({ type: arrowType, length: n, nullCount: nulls, nullBitmap, ...utf8Parts(strings) });
      };
    }
    case 'INT16':
    case 'INT32': {
      const [min, max] = type === 'INT16' ? [-32768, 32767] : [-2147483648, 2147483647];
      const arrowType = type === 'INT16' ? new Int16() : new Int32();
      return (values) => {
        const data = type === 'INT16' ? new Int16Array(values.length) : new Int32Array(values.length);
        const { nulls, isNull } = scan(values, (v, i) => {
          if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) refuse(v, `needs an ${type} integer`);
          data[i] = v as number;
        });
        return makeData({ type: arrowType, length: values.length, nullCount: nulls, nullBitmap: bitmap(values.length, nulls, isNull), data } as never);
      };
    }
    case 'DOUBLE': {
      const arrowType = new Float64();
      return (values) => {
        const data = new Float64Array(values.length);
        const { nulls, isNull } = scan(values, (v, i) => {
          if (typeof v !== 'number') refuse(v, 'needs a number');
          data[i] = v as number;
        });
        return makeData({ type: arrowType, length: values.length, nullCount: nulls, nullBitmap: bitmap(values.length, nulls, isNull), data });
      };
    }
    case 'BOOLEAN': {
      const arrowType = new Bool();
      return (values) => {
        const data = new Uint8Array((values.length + 7) >> 3);
        const { nulls, isNull } = scan(values, (v, i) => {
          if (typeof v !== 'boolean') refuse(v, 'needs a boolean');
          if (v === true) data[i >> 3]! |= 1 << (i & 7);
        });
        return makeData({ type: arrowType, length: values.length, nullCount: nulls, nullBitmap: bitmap(values.length, nulls, isNull), data });
      };
    }
    case 'DATE': {
      const arrowType = new DateDay();
      // A release has few distinct days and many rows: parse each day once.
      const days = new Map<string, number>();
      return (values) => {
        const data = new Int32Array(values.length);
        const { nulls, isNull } = scan(values, (v, i) => {
          if (typeof v !== 'string') return refuse(v, 'needs a YYYY-MM-DD date');
          let d = days.get(v);
          if (d === undefined) {
            if (days.size >= 4096) days.clear();
            d = dateToDays(v);
            days.set(v, d);
          }
          data[i] = d;
        });
        return makeData({ type: arrowType, length: values.length, nullCount: nulls, nullBitmap: bitmap(values.length, nulls, isNull), data });
      };
    }
    case 'LIST<UTF8>': {
      const arrowType = new List(new Field('item', new Utf8(), true));
      const itemType = new Utf8();
      return (values) => {
        const n = values.length;
        const valueOffsets = new Int32Array(n + 1);
        const items: Array<string | null> = [];
        let itemNulls = 0;
        const { nulls, isNull } = scan(values, (v, i) => {
          if (!Array.isArray(v)) return refuse(v, 'needs an array of strings');
          for (const item of v as readonly unknown[]) {
            if (typeof item === 'string') items.push(item);
            else if (item === null) {
              items.push(null);
              itemNulls += 1;
            } else refuse(v, 'needs an array of strings');
          }
          valueOffsets[i + 1] = items.length;
        });
        // A null list keeps the previous offset (an empty slot).
        for (let i = 0; i < n; i++) if (isNull[i] === 1) valueOffsets[i + 1] = valueOffsets[i]!;
        const itemIsNull = itemNulls === 0 ? null : Uint8Array.from(items, (item) => (item === null ? 1 : 0));
        const child = makeData({
          type: itemType,
          length: items.length,
          nullCount: itemNulls,
          nullBitmap: itemIsNull === null ? undefined : bitmap(items.length, itemNulls, itemIsNull),
          ...utf8Parts(items),
        });
        return makeData({ type: arrowType, length: n, nullCount: nulls, nullBitmap: bitmap(n, nulls, isNull), valueOffsets, child });
      };
    }
  }
}

/** Validity bits of the pieces, end to end (undefined when none is null); bits past the end stay 0, as bitmap() leaves them. */
function concatBits(pieces: ReadonlyArray<{ length: number; bits: Uint8Array | null }>, total: number): Uint8Array {
  const out = new Uint8Array((total + 7) >> 3);
  let at = 0;
  for (const { length, bits } of pieces) {
    if (bits === null) {
      for (let i = 0; i < length; i++, at++) out[at >> 3]! |= 1 << (at & 7);
    } else if ((at & 7) === 0) {
      // Byte-aligned (every piece but the last has a multiple of 8 rows): copy, then clear
      // what lies past the piece in its last byte.
      const bytes = (length + 7) >> 3;
      out.set(bits.subarray(0, bytes), at >> 3);
      if ((length & 7) !== 0) out[(at + length) >> 3]! &= (1 << ((at + length) & 7)) - 1;
      at += length;
    } else {
      for (let i = 0; i < length; i++, at++) if ((bits[i >> 3]! >> (i & 7)) & 1) out[at >> 3]! |= 1 << (at & 7);
    }
  }
  return out;
}

function concatValidity(pieces: readonly Data[]): { nullCount: number; nullBitmap: Uint8Array | undefined } {
  let nullCount = 0;
  let total = 0;
  for (const p of pieces) {
    nullCount += p.nullCount;
    total += p.length;
  }
  if (nullCount === 0) return { nullCount, nullBitmap: undefined };
  const bits = pieces.map((p) => ({ length: p.length, bits: p.nullCount > 0 ? (p.nullBitmap as Uint8Array) : null }));
  return { nullCount, nullBitmap: concatBits(bits, total) };
}

function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  let total = 0;
  for (const p of parts) total += p.byteLength;
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}

/** Offsets of the pieces end to end, each piece's shifted by what came before it. */
function concatOffsets(pieces: readonly Data[], total: number): Int32Array {
  const out = new Int32Array(total + 1);
  let row = 0;
  let base = 0;
  for (const p of pieces) {
    const offsets = p.valueOffsets as Int32Array;
    for (let i = 1; i <= p.length; i++) out[row + i] = base + offsets[i]!;
    row += p.length;
    base += offsets[p.length]!;
  }
  return out;
}

/**
 * One column's Data made of `pieces` of it built one after another (columnBuilder's output),
 * equal to the Data columnBuilder would build from all their rows at once. The writer builds
 * small pieces as rows arrive so the rows die young (parquet.ts), then sends whole chunks.
 */
export function concatColumn(column: SnapshotColumn, pieces: readonly Data[]): Data {
  if (pieces.length === 1) return pieces[0] as Data;
  const length = pieces.reduce((n, p) => n + p.length, 0);
  const first = pieces[0] as Data;
  const { nullCount, nullBitmap } = concatValidity(pieces);
  switch (column.type) {
    case 'UTF8':
      return makeData({
        type: first.type as Utf8,
        length,
        nullCount,
        nullBitmap,
        valueOffsets: concatOffsets(pieces, length),
        data: concatBytes(pieces.map((p) => p.values as Uint8Array)),
      });
    case 'INT16':
    case 'INT32':
    case 'DOUBLE':
    case 'DATE': {
      const Typed = (first.values as Int16Array | Int32Array | Float64Array).constructor as Int16ArrayConstructor | Int32ArrayConstructor | Float64ArrayConstructor;
      const data = new Typed(length);
      let at = 0;
      for (const p of pieces) {
        data.set(p.values as ArrayLike<number>, at);
        at += p.length;
      }
      return makeData({ type: first.type, length, nullCount, nullBitmap, data } as never);
    }
    case 'BOOLEAN': {
      const data = concatBits(pieces.map((p) => ({ length: p.length, bits: p.values as Uint8Array })), length);
      return makeData({ type: first.type as Bool, length, nullCount, nullBitmap, data });
    }
    case 'LIST<UTF8>': {
      const children = pieces.map((p) => p.children[0] as Data);
      const child = concatColumn({ ...column, type: 'UTF8', nullable: true }, children);
      return makeData({ type: first.type, length, nullCount, nullBitmap, valueOffsets: concatOffsets(pieces, length), child } as never);
    }
  }
}
