/**
 * The release's Parquet encoder (services/snapshot/parquetWriterWasm.ts, arrow-rs built for
 * speed) writes the very bytes of parquet-wasm's for the same batches and properties: every
 * file schema of a release, with seeded rows (nulls, non-ASCII text, empty lists, several
 * chunks and row groups, dictionaries on, off, and off per column). Its failures are the file's
 * alone: a stream that is no Arrow IPC, or a file closed before any batch, fails that file with
 * a reason, and the next file on the thread is written as before.
 */
import assert from 'node:assert/strict';
import { SNAPSHOT_FILES, type SnapshotColumn, type SnapshotFileSchema } from '../../contracts/snapshotSchema.ts';
import { arrowTableMaker, type SnapshotRow, type SnapshotValue } from '../../services/snapshot/arrowSchema.ts';
import { encoderName, openEncoder, type EncodeProperties, type EncoderName } from '../../services/snapshot/parquetEncoder.ts';
import { NODE_ZSTD_IS_MODULES, hostZstdPages, parquetWriterWasmMemory, useHostZstd } from '../../services/snapshot/parquetWriterWasm.ts';
import { prng } from './searchQualityCatalog.ts';

const WORDS = ['a', 'tt0123456', 'Amélie', '東京物語', 'x'.repeat(300), '', 'Netflix', 'nm0000123', 'ñ', '🎬 film'];

function valueOf(col: SnapshotColumn, next: () => number): SnapshotValue {
  if (col.nullable && next() < 0.15) return null;
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)] as T;
  switch (col.type) {
    case 'UTF8':
      return `${pick(WORDS)}${next() < 0.5 ? Math.floor(next() * 50) : ''}`;
    case 'INT16':
      return Math.floor(next() * 2000) - 1000;
    case 'INT32':
      return Math.floor(next() * 4_000_000) - 2_000_000;
    case 'DOUBLE':
      return Math.round(next() * 1e6) / 100;
    case 'BOOLEAN':
      return next() < 0.5;
    case 'DATE':
      return `20${10 + Math.floor(next() * 20)}-0${1 + Math.floor(next() * 9)}-1${Math.floor(next() * 9)}`;
    case 'LIST<UTF8>':
      return Array.from({ length: Math.floor(next() * 4) }, () => pick(WORDS));
  }
}

/** IPC batches of `rows` seeded rows of `def`, `chunk` rows each (at least one batch). */
function batches(def: SnapshotFileSchema, rows: number, chunk: number, seed: number): Uint8Array[] {
  const next = prng(seed);
  const maker = arrowTableMaker(def);
  const out: Uint8Array[] = [];
  for (let i = 0; i < rows; i++) {
    const row: SnapshotRow = {};
    for (const col of def.columns) row[col.name] = valueOf(col, next);
    maker.append(row);
    // A copy: the maker writes every batch into one buffer it keeps (arrowIpc.ts).
    if (maker.pending >= chunk) out.push(maker.takeIPC().slice());
  }
  if (maker.pending > 0 || out.length === 0) out.push(maker.takeIPC().slice());
  return out;
}

/** The file one encoder writes, or its failure's message. */
function encode(name: EncoderName, props: EncodeProperties, ipcs: readonly Uint8Array[], close = true): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Uint8Array[] = [];
    const encoder = openEncoder(
      { ...props, encoder: name },
      {
        ack() {},
        bytes: (chunk) => chunks.push(chunk),
        done: () => resolve(Buffer.concat(chunks)),
        error: (message) => reject(new Error(message)),
      },
    );
    for (const ipc of ipcs) encoder.batch(ipc);
    if (close) encoder.close();
  });
}

describe('the Parquet encoder built for speed', function () {
  this.timeout(60_000);

  it('is the encoder in use, the module being in place', () => {
    assert.equal(encoderName(), 'arrow-rs');
  });

  for (const [k, def] of SNAPSHOT_FILES.entries()) {
    it(`writes the bytes parquet-wasm writes: ${def.file}`, async () => {
      const plain = def.columns.filter((_, c) => c % 2 === 0).map((col) => col.name);
      const settings: EncodeProperties[] = [
        { maxRowGroupRows: 131_072, dictionaryOff: true, plainColumns: [] },
        { maxRowGroupRows: 700, dictionaryOff: false, plainColumns: plain },
        { maxRowGroupRows: 300, dictionaryOff: false, plainColumns: [] },
      ];
      for (const [s, props] of settings.entries()) {
        const ipcs = batches(def, 50 + ((k * 397 + s * 211) % 1500), 256, 1000 * k + s);
        const ours = await encode('arrow-rs', props, ipcs);
        const theirs = await encode('parquet-wasm', props, ipcs);
        assert.ok(ours.length > 100 && ours.subarray(0, 4).toString() === 'PAR1', `${def.file}: a Parquet file`);
        assert.ok(ours.equals(theirs), `${def.file} with ${JSON.stringify(props)}: ${ours.length} bytes against parquet-wasm's ${theirs.length}`);
      }
    });
  }

  it("compresses pages with Node's zstd when it is the module's version, to the bytes of the module's own zstd", async () => {
    // Node's zstd of another version (whose bytes may differ) is left alone: the module's own compresses every page.
    // Pages of several zstd blocks (over 128 KB each: long text, no dictionary) and small ones.
    const def = SNAPSHOT_FILES.find((f) => f.columns.some((c) => c.type === 'UTF8')) as SnapshotFileSchema;
    const props: EncodeProperties = { maxRowGroupRows: 40_000, dictionaryOff: true, plainColumns: [] };
    const ipcs = batches(def, 30_000, 4096, 7);
    const before = hostZstdPages();
    const byHost = await encode('arrow-rs', props, ipcs);
    const pages = hostZstdPages() - before;
    const was = useHostZstd(false);
    try {
      const byModule = await encode('arrow-rs', props, ipcs);
      assert.equal(hostZstdPages() - before, pages, "with Node's zstd off, no page goes to it");
      if (NODE_ZSTD_IS_MODULES) assert.ok(pages >= def.columns.length, `Node's zstd compressed the pages (${pages})`);
      else assert.equal(pages, 0, `Node's zstd ${process.versions.zstd} is not the module's 1.5.7, and took no page`);
      assert.ok(byHost.equals(byModule), `${byHost.length} bytes by Node's zstd against ${byModule.length} by the module's`);
    } finally {
      useHostZstd(was);
    }
  });

  it('writes an empty file (one batch of no rows) as parquet-wasm does', async () => {
    const def = SNAPSHOT_FILES[0] as SnapshotFileSchema;
    const props: EncodeProperties = { maxRowGroupRows: 1000, dictionaryOff: true, plainColumns: [] };
    const ipcs = batches(def, 0, 10, 1);
    assert.ok((await encode('arrow-rs', props, ipcs)).equals(await encode('parquet-wasm', props, ipcs)));
  });

  it('fails a file whose batch is not Arrow IPC, with the reason, and writes the next file as before', async () => {
    const def = SNAPSHOT_FILES[0] as SnapshotFileSchema;
    const props: EncodeProperties = { maxRowGroupRows: 1000, dictionaryOff: true, plainColumns: [] };
    const good = batches(def, 40, 16, 7);
    await assert.rejects(encode('arrow-rs', props, [good[0] as Uint8Array, Uint8Array.from([1, 2, 3, 4, 5, 6, 7, 8, 9])]), /./);
    // Cut short: the stream ends inside a message.
    await assert.rejects(encode('arrow-rs', props, [(good[0] as Uint8Array).subarray(0, 200)]), /./);
    assert.ok((await encode('arrow-rs', props, good)).equals(await encode('parquet-wasm', props, good)));
  });

  it('fails a file closed before any batch (it has no schema), and leaves the others open on the thread alone', async () => {
    const def = SNAPSHOT_FILES[1] as SnapshotFileSchema;
    const props: EncodeProperties = { maxRowGroupRows: 1000, dictionaryOff: false, plainColumns: [] };
    const ipcs = batches(def, 100, 30, 3);
    const first = encode('arrow-rs', props, ipcs.slice(0, 2), false);
    await assert.rejects(encode('arrow-rs', props, []), /no record batch/);
    const whole = await encode('arrow-rs', props, ipcs);
    assert.ok(whole.equals(await encode('parquet-wasm', props, ipcs)));
    // The first file never closed: it neither finished nor failed.
    const state = await Promise.race([first.then(() => 'finished', () => 'failed'), new Promise((r) => setTimeout(() => r('open'), 50))]);
    assert.equal(state, 'open');
  });

  it('fails the files of an instance that trapped (its memory exhausted), and writes the next file on a new instance', async () => {
    const def = SNAPSHOT_FILES[0] as SnapshotFileSchema;
    const props: EncodeProperties = { maxRowGroupRows: 1000, dictionaryOff: true, plainColumns: [] };
    const ipcs = batches(def, 200, 50, 11);
    const told: string[] = [];
    const events = (name: string) => ({ ack() {}, bytes() {}, done: () => told.push(`${name} done`), error: (m: string) => told.push(`${name}: ${m}`) });
    // A file open on the instance, one batch in.
    const other = openEncoder({ ...props, encoder: 'arrow-rs' }, events('other'));
    other.batch(ipcs[0] as Uint8Array);
    // A batch larger than the whole memory now: no free space inside holds its copy, and the
    // memory grown to the most a module has cannot grow for it, so the allocation traps.
    const memory = parquetWriterWasmMemory();
    const size = memory.buffer.byteLength;
    memory.grow(65536 - size / 65536);
    const trapping = openEncoder({ ...props, encoder: 'arrow-rs' }, events('trapping'));
    trapping.batch(new Uint8Array(size + 65536));
    assert.equal(told.length, 1);
    assert.match(told[0] as string, /^trapping: the Parquet encoder trapped: /);
    // The other file learns it at its next call, and is over.
    other.batch(ipcs[1] as Uint8Array);
    other.close();
    assert.deepEqual(told.slice(1), ['other: the Parquet encoder failed on another file of this thread']);
    // The next file: a new instance, the bytes as before.
    assert.notEqual(parquetWriterWasmMemory(), memory);
    assert.ok((await encode('arrow-rs', props, ipcs)).equals(await encode('parquet-wasm', props, ipcs)));
  });
});
