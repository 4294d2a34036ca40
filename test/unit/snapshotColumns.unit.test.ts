/**
 * The Parquet writer's Arrow columns (services/snapshot/columns.ts) are filled row by row and
 * reuse their buffers from one chunk to the next. A chunk must come out exactly as it would
 * from fresh buffers: no value, bit or byte left over from a larger chunk before it (the
 * release files are compared byte for byte across builds).
 */
import assert from 'node:assert/strict';
import { tableFromIPC, tableToIPC } from 'apache-arrow';
import type { SnapshotFileSchema } from '../../contracts/snapshotSchema.ts';
import { arrowTableMaker, type SnapshotRow } from '../../services/snapshot/arrowSchema.ts';
import { civilDays, dateToDays } from '../../services/snapshot/columns.ts';

const EVERY_TYPE: SnapshotFileSchema = {
  file: 'every_type.parquet',
  description: 'one nullable column of each type',
  location: 'global',
  sorted_by: [],
  columns: [
    { name: 'text', type: 'UTF8', nullable: true, description: 'text' },
    { name: 'small', type: 'INT16', nullable: true, description: 'small' },
    { name: 'count', type: 'INT32', nullable: true, description: 'count' },
    { name: 'score', type: 'DOUBLE', nullable: true, description: 'score' },
    { name: 'flag', type: 'BOOLEAN', nullable: true, description: 'flag' },
    { name: 'day', type: 'DATE', nullable: true, description: 'day' },
    { name: 'tags', type: 'LIST<UTF8>', nullable: true, description: 'tags' },
  ],
};

/** `n` rows with every value present: long and non-ASCII text, true flags, several tags. */
function fullRows(n: number): SnapshotRow[] {
  return Array.from({ length: n }, (_, i) => ({
    text: `Überschrift ${i} ${'x'.repeat(i % 300)} 映画`,
    small: 1000 + i,
    count: 100_000 + i,
    score: i + 0.5,
    flag: true,
    day: '2026-11-21',
    tags: ['a', `tag-${i}`, 'ß'],
  }));
}

/** Fewer rows, mostly nulls, false flags and short ASCII text: what a stale buffer would show through. */
const SPARSE: SnapshotRow[] = [
  { text: null, small: null, count: null, score: null, flag: null, day: null, tags: null },
  { text: 'a', small: 1, count: 2, score: 3, flag: false, day: '1970-01-02', tags: [] },
  { text: '', small: null, count: null, score: null, flag: false, day: null, tags: ['b', null] as unknown as string[] },
  { text: null, small: 7, count: null, score: null, flag: null, day: null, tags: null },
  { text: 'z', small: null, count: 9, score: null, flag: true, day: null, tags: null },
];

describe('snapshot Arrow columns', () => {
  it('make a chunk after a larger one byte for byte as fresh columns make it', () => {
    const reused = arrowTableMaker(EVERY_TYPE);
    // A first chunk big enough to grow every buffer past its initial size.
    const first = reused.make(fullRows(3000));
    assert.equal(first.numRows, 3000);
    tableToIPC(first, 'stream');
    for (const rows of [SPARSE, SPARSE.slice(0, 3), fullRows(17), SPARSE]) {
      const again = tableToIPC(reused.make(rows), 'stream');
      const fresh = tableToIPC(arrowTableMaker(EVERY_TYPE).make(rows), 'stream');
      assert.deepEqual(Buffer.from(again), Buffer.from(fresh), `${rows.length} rows`);
    }
  });

  it('keep every value, null, flag, day and list item of a chunk', () => {
    const maker = arrowTableMaker(EVERY_TYPE);
    maker.make(fullRows(2000));
    const table = tableFromIPC(tableToIPC(maker.make(SPARSE), 'stream'));
    const column = (name: string): unknown[] =>
      Array.from({ length: table.numRows }, (_, i) => {
        const v: unknown = table.getChild(name)?.get(i);
        return v !== null && typeof v === 'object' && Symbol.iterator in v ? [...(v as Iterable<unknown>)] : v;
      });
    assert.deepEqual(column('text'), [null, 'a', '', null, 'z']);
    assert.deepEqual(column('small'), [null, 1, null, 7, null]);
    assert.deepEqual(column('count'), [null, 2, null, null, 9]);
    assert.deepEqual(column('score'), [null, 3, null, null, null]);
    assert.deepEqual(column('flag'), [null, false, false, null, true]);
    assert.deepEqual(column('day').map((d) => (d === null ? null : Number(d))), [null, 86_400_000, null, null, null]);
    assert.deepEqual(column('tags'), [null, [], ['b', null], null, null]);
  });

  it('hand a chunk to the Parquet writer as the very IPC stream tableToIPC makes of it (arrowIpc.ts)', () => {
    const direct = arrowTableMaker(EVERY_TYPE);
    const viaTable = arrowTableMaker(EVERY_TYPE);
    // Full rows (every buffer grown), then sparse ones (nulls, empty lists and strings), then none.
    for (const rows of [fullRows(3000), SPARSE, fullRows(17), []]) {
      for (const row of rows) direct.append(row);
      const expected = tableToIPC(viaTable.make(rows), 'stream');
      assert.deepEqual(Buffer.from(direct.takeIPC()), Buffer.from(expected), `${rows.length} rows`);
    }
    // And with no nullable column: validity placeholders only.
    const required: SnapshotFileSchema = { ...EVERY_TYPE, columns: EVERY_TYPE.columns.map((c) => ({ ...c, nullable: false })) };
    const rows = fullRows(5);
    const maker = arrowTableMaker(required);
    for (const row of rows) maker.append(row);
    assert.deepEqual(Buffer.from(maker.takeIPC()), Buffer.from(tableToIPC(arrowTableMaker(required).make(rows), 'stream')));
  });

  it('mark the nulls of a chunk whose first null comes after thousands of present values', () => {
    // The validity bits are written from a chunk's first null on (columns.ts): here past the
    // bitmap's initial room, and in the middle of a byte.
    const rows = fullRows(3000);
    for (const i of [2501, 2502, 2999]) rows[i] = { ...(SPARSE[0] as SnapshotRow) };
    const maker = arrowTableMaker(EVERY_TYPE);
    for (const row of rows) maker.append(row);
    const ipc = Buffer.from(maker.takeIPC());
    assert.deepEqual(ipc, Buffer.from(tableToIPC(arrowTableMaker(EVERY_TYPE).make(rows), 'stream')));
    const table = tableFromIPC(ipc);
    for (const name of ['text', 'small', 'count', 'score', 'flag', 'day', 'tags']) {
      const nulls = Array.from({ length: table.numRows }, (_, i) => i).filter((i) => table.getChild(name)?.get(i) === null);
      assert.deepEqual(nulls, [2501, 2502, 2999], name);
    }
  });

  it('refuse a wrong value and drop the pending chunk, so the next chunk is whole', () => {
    const maker = arrowTableMaker(EVERY_TYPE);
    maker.append(SPARSE[1] as SnapshotRow);
    assert.throws(() => maker.append({ ...SPARSE[1], count: 2 ** 40 }), /INT32/);
    assert.throws(() => maker.append({ ...SPARSE[1], tags: ['ok', 5] as unknown as string[] }), /array of strings/);
    assert.equal(maker.pending, 0);
    const table = maker.make([SPARSE[4] as SnapshotRow]);
    assert.equal(table.numRows, 1);
    assert.equal(table.getChild('text')?.get(0), 'z');
  });

  it('read a day by arithmetic as Date.UTC reads it, and leave what it does not cover to Date.UTC', () => {
    // The days as before civilDays: Date.UTC of the parts, in days.
    const utcDays = (text: string): number => {
      const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
      if (!m) throw new Error(text);
      return Math.round(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) / 86_400_000);
    };
    const pad = (n: number, width: number): string => String(n).padStart(width, '0');
    const texts: string[] = [];
    // Every day of every month (00 and days past the month's end included) of years around
    // the eras' and centuries' turns, leap years and the epoch.
    for (const y of [100, 101, 399, 400, 401, 1600, 1699, 1700, 1899, 1900, 1969, 1970, 1971, 1999, 2000, 2001, 2024, 2100, 2400, 9999]) {
      for (let m = 1; m <= 12; m++) for (let d = 0; d <= 99; d++) texts.push(`${pad(y, 4)}-${pad(m, 2)}-${pad(d, 2)}`);
    }
    // The first of every month of every year it covers.
    for (let y = 100; y <= 9999; y++) for (let m = 1; m <= 12; m++) texts.push(`${pad(y, 4)}-${pad(m, 2)}-01`);
    for (const text of texts) assert.equal(civilDays(text), utcDays(text), text);
    // Date.UTC's own readings: years 0-99 as 1900-1999, months 00 and past 12 rolled over.
    for (const text of ['0000-01-01', '0099-12-31', '2024-00-15', '2024-13-01', '2024-99-99', '1970-00-00']) {
      assert.equal(civilDays(text), null, text);
      assert.equal(dateToDays(text), utcDays(text), text);
    }
    for (const text of ['2024-1-01', '2024/01/01', '2024-01-0a', ' 2024-01-01', '2024-01-011', '', '２０２４-01-01']) assert.equal(civilDays(text), null, text);
    assert.throws(() => dateToDays('2024/01/01'), /YYYY-MM-DD/);
    assert.equal(dateToDays('1970-01-02'), 1);
  });
});
