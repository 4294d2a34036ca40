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
import { ipcStreamWriter } from './arrowIpc.ts';
import { columnAccumulator, type ColumnAccumulator } from './columns.ts';

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

/**
 * Turns rows into Arrow tables of one file's schema, a chunk at a time: `append` moves a row's
 * values into the columns at once (columns.ts), `take` hands the rows appended since the last
 * take over as a table. Nulls in non-nullable columns and values of the wrong type are refused
 * by `append`, which then drops the whole pending chunk (a writer aborts its file on it anyway),
 * so the columns never disagree on their length.
 */
export interface ArrowTableMaker {
  readonly schema: Schema;
  append(row: SnapshotRow): void;
  /** Rows appended since the last `take`. */
  readonly pending: number;
  take(): Table;
  /** Rows appended since the last take, as an Arrow IPC stream of one record batch (arrowIpc.ts). */
  takeIPC(): Uint8Array;
  /** `append` of every row, then `take`. */
  make(rows: readonly SnapshotRow[]): Table;
}

/**
 * `(row, columns) => { columns[0].push(row.media_id); columns[1].push(row.kind); ... }` for one
 * file's column names, compiled once per writer. Why not a loop over the columns: its one
 * `row[names[c]]` reads a different property each turn (a megamorphic keyed load, a lookup in
 * V8's global cache per value) and its one `push` call site calls every kind of column (never
 * inlined); here each column has a load and a call of its own, which stay monomorphic. Pushing
 * the values was the largest part of the build's main thread (a quarter at 50,000 titles).
 * The names are the schema's own (contracts/snapshotSchema.ts), quoted by JSON.stringify.
 */
function rowPusher(names: readonly string[]): (row: SnapshotRow, columns: readonly ColumnAccumulator[]) => void {
  const body = names.map((name, c) => `columns[${c}].push(row[${JSON.stringify(name)}]);`).join('\n');
  return new Function('row', 'columns', body) as (row: SnapshotRow, columns: readonly ColumnAccumulator[]) => void;
}

export function arrowTableMaker(def: SnapshotFileSchema): ArrowTableMaker {
  const schema = arrowSchemaOf(def);
  const names = def.columns.map((col) => col.name);
  const columns = def.columns.map((col) => columnAccumulator(def.file, col));
  const pushAll = rowPusher(names);
  let pending = 0;
  const append = (row: SnapshotRow): void => {
    try {
      pushAll(row, columns);
    } catch (err) {
      for (const column of columns) column.take();
      pending = 0;
      throw err;
    }
    pending += 1;
  };
  const take = (): Table => {
    const children: Data[] = columns.map((column) => column.take());
    // Built from the schema itself (not inferred from the vectors), so the declared
    // nullability survives into the Parquet repetition (REQUIRED / OPTIONAL), and an empty
    // chunk still carries every column.
    const data = makeData({ type: new Struct(schema.fields), length: pending, nullCount: 0, children });
    pending = 0;
    return new Table([new RecordBatch(schema, data)]);
  };
  const ipc = ipcStreamWriter(schema);
  return {
    schema,
    append,
    get pending() {
      return pending;
    },
    take,
    takeIPC() {
      const bytes = ipc.encode(pending, columns.map((column) => column.take()));
      pending = 0;
      return bytes;
    },
    make(rows) {
      for (const row of rows) append(row);
      return take();
    },
  };
}
