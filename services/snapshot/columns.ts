/**
 * Arrow column data built straight from the rows into typed arrays: one pass per column reads
 * the value of every row, checks it against the column's type and nullability, and fills the
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

/** A value per column name, as rows.ts makes them (see arrowSchema.ts). */
type Value = string | number | boolean | readonly string[] | null | undefined;
type Row = Record<string, Value>;

/** Builds one column of a chunk of rows. */
export type ColumnBuilder = (rows: readonly Row[]) => Data;

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
  const scan = (rows: readonly Row[], each: (v: Value, i: number) => void): { nulls: number; isNull: Uint8Array } => {
    const n = rows.length;
    const isNull = new Uint8Array(n);
    let nulls = 0;
    for (let i = 0; i < n; i++) {
      const v = (rows[i] as Row)[name];
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
      return (rows) => {
        const n = rows.length;
        const strings = new Array<string | null>(n);
        let nulls = 0;
        let isNull: Uint8Array | null = null;
        for (let i = 0; i < n; i++) {
          const v = (rows[i] as Row)[name];
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
      return (rows) => {
        const data = type === 'INT16' ? new Int16Array(rows.length) : new Int32Array(rows.length);
        const { nulls, isNull } = scan(rows, (v, i) => {
          if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) refuse(v, `needs an ${type} integer`);
          data[i] = v as number;
        });
        return makeData({ type: arrowType, length: rows.length, nullCount: nulls, nullBitmap: bitmap(rows.length, nulls, isNull), data } as never);
      };
    }
    case 'DOUBLE': {
      const arrowType = new Float64();
      return (rows) => {
        const data = new Float64Array(rows.length);
        const { nulls, isNull } = scan(rows, (v, i) => {
          if (typeof v !== 'number') refuse(v, 'needs a number');
          data[i] = v as number;
        });
        return makeData({ type: arrowType, length: rows.length, nullCount: nulls, nullBitmap: bitmap(rows.length, nulls, isNull), data });
      };
    }
    case 'BOOLEAN': {
      const arrowType = new Bool();
      return (rows) => {
        const data = new Uint8Array((rows.length + 7) >> 3);
        const { nulls, isNull } = scan(rows, (v, i) => {
          if (typeof v !== 'boolean') refuse(v, 'needs a boolean');
          if (v === true) data[i >> 3]! |= 1 << (i & 7);
        });
        return makeData({ type: arrowType, length: rows.length, nullCount: nulls, nullBitmap: bitmap(rows.length, nulls, isNull), data });
      };
    }
    case 'DATE': {
      const arrowType = new DateDay();
      // A release has few distinct days and many rows: parse each day once.
      const days = new Map<string, number>();
      return (rows) => {
        const data = new Int32Array(rows.length);
        const { nulls, isNull } = scan(rows, (v, i) => {
          if (typeof v !== 'string') return refuse(v, 'needs a YYYY-MM-DD date');
          let d = days.get(v);
          if (d === undefined) {
            if (days.size >= 4096) days.clear();
            d = dateToDays(v);
            days.set(v, d);
          }
          data[i] = d;
        });
        return makeData({ type: arrowType, length: rows.length, nullCount: nulls, nullBitmap: bitmap(rows.length, nulls, isNull), data });
      };
    }
    case 'LIST<UTF8>': {
      const arrowType = new List(new Field('item', new Utf8(), true));
      const itemType = new Utf8();
      return (rows) => {
        const n = rows.length;
        const valueOffsets = new Int32Array(n + 1);
        const items: Array<string | null> = [];
        let itemNulls = 0;
        const { nulls, isNull } = scan(rows, (v, i) => {
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
