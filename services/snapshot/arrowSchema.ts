/**
 * From the column definitions of contracts/snapshotSchema.ts to Arrow: the schema the Parquet
 * files are written with, and the conversion of plain rows into Arrow tables. Keeping this the
 * only mapping is what makes `GET /v1/schemas` describe the files exactly.
 */
import {
  Bool,
  DateDay,
  Field,
  Float64,
  Int16,
  Int32,
  List,
  RecordBatch,
  Schema,
  Struct,
  Table,
  Utf8,
  makeData,
  type Data,
  type DataType,
} from 'apache-arrow';
import { AppError } from '../../contracts/errors.ts';
import type { SnapshotColumnType, SnapshotFileSchema } from '../../contracts/snapshotSchema.ts';
import { columnData } from './columns.ts';

/** A value per column name: strings, numbers, booleans, `YYYY-MM-DD` for DATE, string arrays for LIST<UTF8>. */
export type SnapshotValue = string | number | boolean | readonly string[] | null | undefined;
export type SnapshotRow = Record<string, SnapshotValue>;

export function arrowTypeOf(type: SnapshotColumnType): DataType {
  switch (type) {
    case 'UTF8':
      return new Utf8();
    case 'INT16':
      return new Int16();
    case 'INT32':
      return new Int32();
    case 'DOUBLE':
      return new Float64();
    case 'BOOLEAN':
      return new Bool();
    case 'DATE':
      return new DateDay();
    case 'LIST<UTF8>':
      return new List(new Field('item', new Utf8(), true));
  }
}

export function arrowSchemaOf(def: SnapshotFileSchema): Schema {
  return new Schema(def.columns.map((col) => new Field(col.name, arrowTypeOf(col.type), col.nullable)));
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
  return Math.round(dateToMs(value) / DAY_MS);
}

function converter(file: string, name: string, type: SnapshotColumnType, nullable: boolean): (v: SnapshotValue) => unknown {
  const refuse = (v: SnapshotValue, why: string): never => {
    throw new AppError('internal', `${file}: column ${name} ${why} (got ${JSON.stringify(v)})`);
  };
  const check = (v: SnapshotValue): boolean => {
    if (v === null || v === undefined) {
      if (!nullable) refuse(v, 'is not nullable');
      return false;
    }
    return true;
  };
  switch (type) {
    case 'UTF8':
      return (v) => (check(v) ? (typeof v === 'string' ? v : refuse(v, 'needs a string')) : null);
    case 'INT16':
    case 'INT32': {
      const [min, max] = type === 'INT16' ? [-32768, 32767] : [-2147483648, 2147483647];
      return (v) => {
        if (!check(v)) return null;
        if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) refuse(v, `needs an ${type} integer`);
        return v;
      };
    }
    case 'DOUBLE':
      return (v) => (check(v) ? (typeof v === 'number' ? v : refuse(v, 'needs a number')) : null);
    case 'BOOLEAN':
      return (v) => (check(v) ? (typeof v === 'boolean' ? v : refuse(v, 'needs a boolean')) : null);
    case 'DATE': {
      // A release has few distinct days and many rows: parse each day once.
      const days = new Map<string, number>();
      return (v) => {
        if (!check(v)) return null;
        if (typeof v !== 'string') return refuse(v, 'needs a YYYY-MM-DD date');
        let d = days.get(v);
        if (d === undefined) {
          if (days.size >= 4096) days.clear();
          d = dateToDays(v);
          days.set(v, d);
        }
        return d;
      };
    }
    case 'LIST<UTF8>':
      return (v) => (check(v) ? (Array.isArray(v) ? v : refuse(v, 'needs an array of strings')) : null);
  }
}

/** Converts rows into Arrow tables of one file's schema; nulls in non-nullable columns are refused. */
export interface ArrowTableMaker {
  readonly schema: Schema;
  make(rows: readonly SnapshotRow[]): Table;
}

export function arrowTableMaker(def: SnapshotFileSchema): ArrowTableMaker {
  const schema = arrowSchemaOf(def);
  const converters = def.columns.map((col) => converter(def.file, col.name, col.type, col.nullable));
  return {
    schema,
    make(rows) {
      const children: Data[] = def.columns.map((col, i) => {
        const convert = converters[i];
        if (!convert) throw new AppError('internal', `schema of ${def.file} lost column ${col.name}`);
        return columnData(col.type, rows.map((row) => convert(row[col.name])));
      });
      // Built from the schema itself (not inferred from the vectors), so the declared
      // nullability survives into the Parquet repetition (REQUIRED / OPTIONAL), and an empty
      // chunk still carries every column.
      const data = makeData({ type: new Struct(schema.fields), length: rows.length, nullCount: 0, children });
      return new Table([new RecordBatch(schema, data)]);
    },
  };
}
