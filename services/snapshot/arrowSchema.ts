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
import type { SnapshotColumnType, SnapshotFileSchema } from '../../contracts/snapshotSchema.ts';
import { columnBuilder } from './columns.ts';

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

// Date parsing lives beside the column builders; re-exported for existing callers.
export { dateToDays, dateToMs } from './columns.ts';

/** Converts rows into Arrow tables of one file's schema; nulls in non-nullable columns are refused. */
export interface ArrowTableMaker {
  readonly schema: Schema;
  make(rows: readonly SnapshotRow[]): Table;
}

export function arrowTableMaker(def: SnapshotFileSchema): ArrowTableMaker {
  const schema = arrowSchemaOf(def);
  const builders = def.columns.map((col) => columnBuilder(def.file, col));
  return {
    schema,
    make(rows) {
      const children: Data[] = builders.map((build) => build(rows));
      // Built from the schema itself (not inferred from the vectors), so the declared
      // nullability survives into the Parquet repetition (REQUIRED / OPTIONAL), and an empty
      // chunk still carries every column.
      const data = makeData({ type: new Struct(schema.fields), length: rows.length, nullCount: 0, children });
      return new Table([new RecordBatch(schema, data)]);
    },
  };
}
