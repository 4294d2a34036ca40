/**
 * The embedded read store: every collection lives in the same few named databases under a key
 * prefix, so the number of read models (and their versions) never runs into LMDB's `maxDbs`.
 *
 * - `rs:docs`       `<collection>\0<key>` (raw UTF-8 bytes) -> `{ doc, position }`
 * - `rs:tombstones` same keys -> position of the deletion, so a replayed older write cannot
 *                   resurrect a deleted document; kept apart so reads and counts never see them
 * - `rs:positions`  same keys -> position of a large live document (LARGE_DOCUMENT), the copy
 *                   the position guard reads instead of decoding the whole document. A key gets
 *                   its entry on the write after one that found it large, and keeps it (updated
 *                   on each write, removed with the document) from then on; a key without one
 *                   (small, new, or written before this database existed) is guarded by the
 *                   position inside its document.
 * - `rs:meta`       `checkpoint:<name>` -> position, `alias:<name>` -> collection,
 *                   `collection:<name>` -> true (for listCollections)
 *
 * Keys are raw bytes so scans run in the byte order of the UTF-8 key, as the port promises.
 * A batch, its position guard and its checkpoint commit in one transaction, atomic across
 * processes on the same environment.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { asBinary, type Database, type RootDatabase } from 'lmdb';
import { AppError } from '../../contracts/errors.ts';
import type {
  DocumentWrite,
  ReadStore,
  ScanOptions,
  StoredDocument,
  WriteBatchResult,
} from '../../contracts/ports.ts';
import { closeLmdb, openLmdb, openLmdbHandle } from './env.ts';
import { lmdbError } from './errors.ts';
import { readModelEncoder } from './readModelEncoder.ts';
import { isRecord } from './recordRule.ts';
import { stillShared, structuresOf, type SharedStructures } from './recordWriter.ts';
import { joinUnmapGroup } from './unmapGroup.ts';

export interface LmdbReadStoreOptions {
  /** Data directory shared with the other embedded adapters (`<dataDir>/lmdb`). */
  dataDir: string;
  /**
   * For a process that reads the read models through once, such as a release build: the store
   * keeps a handle of its own on the environment, and once the file pages resident in the
   * process have grown by this many MB since it opened, it closes and reopens that handle
   * between two reads. Every page a read touches stays mapped, and counted in the process's
   * resident memory, until the map goes: a build would otherwise end with the whole file
   * resident (912 MB at 250,000 titles). The pages stay in the page cache, so reading them
   * again costs no I/O. It only helps when no other handle of the process keeps the file
   * mapped (lmdb-js shares one native environment per file): stores of several threads of a
   * process on the same file join one `unmapGroup` to close together. Linux only (/proc);
   * ignored elsewhere.
   */
  unmapAfterMb?: number;
  /**
   * With `unmapAfterMb`: the stores (of any thread) that reopen together, so the map goes
   * (unmapGroup.ts, `lmdbUnmapGroup()`). Without it the store reopens alone.
   */
  unmapGroup?: SharedArrayBuffer;
}

interface StoredValue {
  doc: unknown;
  position: number;
}

/**
 * Stored size (bytes) from which a document's position is kept in `rs:positions` too. Reading the
 * position from the document decodes all of it: for a large one that costs more than keeping a
 * copy of its position; for a small one the extra write costs more than the decode.
 */
const LARGE_DOCUMENT = 512;
/** Keys removed per transaction by dropCollection, so one drop never holds the write lock long. */
const DROP_CHUNK = 10_000;
/** Where the shared msgpack structures live: a key no `<collection>\0<key>` can equal (collections never start with NUL). */
const STRUCTURES_KEY = Buffer.from('\u0000structures');

export function lmdbReadStore(options: LmdbReadStoreOptions): ReadStore {
  const meter = options.unmapAfterMb === undefined ? null : residentFileMeter();
  const own = meter !== null;
  let root!: RootDatabase;
  let docs!: Database<StoredValue, Buffer>;
  let tombstones!: Database<number, Buffer>;
  let positions!: Database<number, Buffer>;
  let meta!: Database<unknown, string>;
  function attach(): void {
    root = own ? openLmdbHandle({ dataDir: options.dataDir }) : openLmdb({ dataDir: options.dataDir });
    // Shared record structures: each document's field names are stored once in the database
    // instead of in every value, which makes decoding several times faster (the API decodes
    // documents on every request). lmdb keeps them consistent across processes.
    docs = root.openDB({
      name: 'rs:docs',
      keyEncoding: 'binary',
      sharedStructuresKey: STRUCTURES_KEY,
      // msgpackr's options, passed through by lmdb (absent from lmdb's types): default 32 shared
      // shapes is too few for documents with many nested record shapes; dictionaries are written
      // as maps (see isRecord), and maps read back as plain objects, as records do.
      ...({ maxSharedStructures: 500, useRecords: isRecord, mapsAsObjects: true } as object),
    });
    tombstones = root.openDB({ name: 'rs:tombstones', keyEncoding: 'binary' });
    positions = root.openDB({ name: 'rs:positions', keyEncoding: 'binary' });
    meta = root.openDB({ name: 'rs:meta' });
    // The hottest documents written as msgpackr would write them, only faster, with the
    // structures of this handle's encoder (so the bytes are the same).
    structuresNow = structuresOf(docs);
    encoder = readModelEncoder(structuresNow);
  }
  let encoder!: ReturnType<typeof readModelEncoder>;
  let structuresNow!: () => SharedStructures | undefined;
  attach();
  let closed = false;

  // unmapAfterMb: the resident file pages when the handle was (re)opened, the growth allowed,
  // the writes in flight (the handle is never closed under one) and the reopening under way.
  const unmapAfter = own ? (options.unmapAfterMb as number) * 1024 * 1024 : Infinity;
  let residentAtOpen = meter?.bytes() ?? 0;
  let writing = 0;
  let reopening: Promise<void> | null = null;

  /**
   * Before a read: reopens the handle when the pages it mapped are over `unmapAfterMb`. The
   * reads themselves are synchronous and whole (a scan returns its page), so between two of
   * them no cursor or transaction of this store is open. Null when there is nothing to wait
   * for, so that a store without the option awaits nothing more per read.
   */
  function beforeRead(): Promise<void> | null {
    if (reopening !== null || meter === null || closed || writing > 0) return reopening;
    if (group?.requested()) return reopen();
    if (meter.bytes() - residentAtOpen < unmapAfter) return null;
    group?.request();
    return reopen();
  }

  /** Closes the handle and opens it again (in a group, once every member's is closed). */
  function reopen(): Promise<void> {
    reopening = (async () => {
      try {
        await root.close();
        await group?.closed();
        attach();
      } finally {
        residentAtOpen = meter?.bytes() ?? 0;
        reopening = null;
      }
    })();
    return reopening;
  }

  // Another member's request is met at once when this store is idle (no read is ever under
  // way between two turns of the event loop), otherwise after the write in flight.
  const group =
    meter !== null && options.unmapGroup !== undefined
      ? joinUnmapGroup(options.unmapGroup, () => {
          if (!closed && reopening === null && writing === 0) reopen().catch(() => {});
        })
      : null;

  function open(): void {
    if (closed) throw new AppError('closed', 'the LMDB read store is closed');
  }

  /** Runs a synchronous LMDB read, converting what it throws at the boundary. */
  function reading<T>(what: string, read: () => T): T {
    open();
    try {
      return read();
    } catch (err) {
      throw lmdbError(err, `LMDB read store (${what})`);
    }
  }

  async function write<T>(what: string, action: () => T): Promise<T> {
    if (reopening !== null) await reopening;
    open();
    writing += 1;
    try {
      // A child transaction: a failure half-way rolls back this call alone, never leaving half
      // a batch (or a batch without its checkpoint) in the commit lmdb-js shares with others.
      return await root.childTransaction(action);
    } catch (err) {
      forgetUnsavedStructures();
      throw lmdbError(err, `LMDB read store (${what})`);
    } finally {
      writing -= 1;
      if (writing === 0 && !closed && reopening === null && group?.requested()) reopen().catch(() => {});
    }
  }

  /**
   * A transaction that fails after encoding a document of a new shape also rolls back the save
   * of its shared structure, while msgpackr keeps that structure in memory as saved. The next
   * document of that shape would then be written with a structure id the database does not
   * have, and a later new shape would take that id: decoding the first one garbles it (found
   * with a parked write: collection documents read back with the parked record's field names).
   * Marking the structures uninitialized makes the next write reload the durable ones and save
   * again, as msgpackr itself does when a save is declined.
   */
  function forgetUnsavedStructures(): void {
    const structures = structuresNow();
    if (structures) structures.uninitialized = true;
  }

  /** Bytes of the value the last `docs.get` read (lmdb-js's `lastSize`, absent from its types); 0 if unknown. */
  function lastReadSize(): number {
    return (docs as unknown as { lastSize?: number }).lastSize ?? 0;
  }

  /** Whether `db` has an entry of `collection` (inside a write transaction: as of that transaction). */
  function holds(db: Database<number, Buffer>, collection: string): boolean {
    const prefix = collectionPrefix(collection);
    // A collection prefix ends in \0, so its end always exists.
    for (const _ of db.getKeys({ start: prefix, end: prefixEnd(prefix) as Buffer, limit: 1 })) return true;
    return false;
  }

  /** LMDB's largest key, in bytes (1978 with lmdb-js's default page size). */
  const maxKeySize = (docs as unknown as { maxKeySize?: number }).maxKeySize ?? 1978;

  function stored<T>(prefixLength: number, key: Buffer, value: StoredValue): StoredDocument<T> {
    return { key: keyText(key, prefixLength), doc: value.doc as T, position: value.position };
  }

  const store: ReadStore = {
    async get<T>(collection: string, key: string) {
      const wait = beforeRead();
      if (wait !== null) await wait;
      const value = reading('get', () => docs.get(docKey(collection, key)));
      return value === undefined ? null : { key, doc: value.doc as T, position: value.position };
    },

    async getMany<T>(collection: string, keys: string[]) {
      const wait = beforeRead();
      if (wait !== null) await wait;
      const binaryKeys = docKeys(collectionPrefix(collection), keys);
      return reading('getMany', () =>
        keys.map((key, i): StoredDocument<T> | null => {
          const value = docs.get(binaryKeys[i] as Buffer);
          return value === undefined ? null : { key, doc: value.doc as T, position: value.position };
        }),
      );
    },

    async scan<T>(collection: string, scanOptions: ScanOptions = {}) {
      const wait = beforeRead();
      if (wait !== null) await wait;
      const range = scanRange(collection, scanOptions);
      if (range === null) return [];
      const prefixLength = collectionPrefix(collection).length;
      const base = { offset: scanOptions.offset ?? 0, ...(scanOptions.limit === undefined ? {} : { limit: scanOptions.limit }) };
      // LMDB walks a reverse range from `start` down to `end`; flip inclusivity so the bounds
      // stay [low, high) either way.
      return reading('scan', () => {
        const entries = scanOptions.reverse
          ? docs.getRange({ ...base, start: range.high, end: range.low, reverse: true, exclusiveStart: true, inclusiveEnd: true })
          : docs.getRange({ ...base, start: range.low, end: range.high });
        const out: Array<StoredDocument<T>> = [];
        for (const { key, value } of entries) out.push(stored<T>(prefixLength, key, value));
        return out;
      });
    },

    async count(collection, countOptions = {}) {
      const wait = beforeRead();
      if (wait !== null) await wait;
      const range = scanRange(collection, countOptions);
      return range === null ? 0 : reading('count', () => docs.getCount({ start: range.low, end: range.high }));
    },

    async writeBatch<T>(
      collection: string,
      writes: Array<DocumentWrite<T>>,
      checkpoint?: { name: string; position: number },
    ): Promise<WriteBatchResult> {
      // Keys are built before the transaction: the write lock is held only for the LMDB work.
      const keys = docKeys(collectionPrefix(collection), writes.map((w) => w.key));
      const tooLong = keys.findIndex((k) => k.length > maxKeySize);
      if (tooLong >= 0) {
        // Refused before the transaction: no write of this batch can succeed, and no retry will.
        throw new AppError(
          'internal',
          `LMDB read store (writeBatch): the key of document ${JSON.stringify(writes[tooLong]?.key.slice(0, 40))}… is ${keys[tooLong]?.length} bytes, larger than the maximum key size (${maxKeySize})`,
          { retriable: false },
        );
      }
      // Encoded before the transaction too: the environment's write lock, which ingest's appends
      // (and every other process) wait for, is then held for the lookups and puts alone. Copies,
      // since the encoder reuses its buffer. Bytes of structures msgpackr has since replaced
      // (reloaded after a failed save) are encoded again inside.
      const structuresBefore = structuresNow();
      const encoded = writes.map((w) => {
        const bytes = w.doc === null ? null : encoder.encode(w.doc, w.position);
        return bytes === null ? null : Buffer.from(bytes);
      });
      return write('writeBatch', () => {
        const structuresSame = stillShared(structuresBefore, structuresNow());
        let written = 0;
        let skipped = 0;
        if (writes.length > 0 && meta.get(collectionMetaKey(collection)) === undefined) {
          meta.putSync(collectionMetaKey(collection), true);
        }
        // Most collections hold no tombstone (over a first start only `links` and `collections`
        // get any, from its second day on), and some no kept position (`changes`, whose
        // documents are written once): one look at the collection's range in each spares that
        // lookup for every key written. A new key of the sample's first day (395,000 writes)
        // took three lookups; now two, one for a `changes` document.
        let deletions = writes.length > 0 && holds(tombstones, collection);
        let keeping = writes.length > 0 && holds(positions, collection);
        writes.forEach((w, index) => {
          const key = keys[index] as Buffer;
          // Reads inside the transaction see its earlier writes, so two writes of one key in a
          // batch are guarded against each other too.
          // The guard reads a large document's position alone: decoding each stored document
          // in full just for it was most of the projections' read time on the first start
          // (large growing documents rewritten daily).
          let storedPosition = keeping ? positions.get(key) : undefined;
          const kept = storedPosition !== undefined;
          let live = kept;
          let large = false;
          let tombstone: number | undefined;
          if (!kept) {
            const value = docs.get(key);
            if (value !== undefined) {
              storedPosition = value.position;
              live = true;
              large = lastReadSize() >= LARGE_DOCUMENT;
            } else if (deletions) {
              storedPosition = tombstone = tombstones.get(key);
            }
          }
          if (storedPosition !== undefined && storedPosition >= w.position) {
            skipped += 1;
            return;
          }
          if (w.doc === null) {
            if (live) docs.removeSync(key);
            if (kept) positions.removeSync(key);
            tombstones.putSync(key, w.position);
            deletions = true;
          } else {
            const bytes = (structuresSame ? encoded[index] : null) ?? encoder.encode(w.doc, w.position);
            // lmdb stores an asBinary value's bytes as they are (its types only allow the value type).
            docs.putSync(key, bytes === null ? { doc: w.doc, position: w.position } : (asBinary(bytes) as unknown as StoredValue));
            // Once kept, always kept: an entry left behind by a write that skipped it would be stale.
            if (kept || large) {
              positions.putSync(key, w.position);
              keeping = true;
            }
            if (tombstone !== undefined) tombstones.removeSync(key);
          }
          written += 1;
        });
        if (checkpoint) meta.putSync(checkpointKey(checkpoint.name), checkpoint.position);
        return { written, skipped };
      });
    },

    async getCheckpoint(name) {
      if (reopening !== null) await reopening;
      const value = reading('getCheckpoint', () => meta.get(checkpointKey(name)));
      return typeof value === 'number' ? value : 0;
    },

    async getCheckpoints(names) {
      if (reopening !== null) await reopening;
      return reading('getCheckpoints', () => names.map((name) => {
        const value = meta.get(checkpointKey(name));
        return typeof value === 'number' ? value : 0;
      }));
    },

    async setCheckpoint(name, position) {
      await write('setCheckpoint', () => meta.putSync(checkpointKey(name), position));
    },

    async purge(collection, keys) {
      if (keys.length === 0) return;
      const built = docKeys(collectionPrefix(collection), keys);
      await write('purge', () => {
        for (const key of built) {
          docs.removeSync(key);
          positions.removeSync(key);
          tombstones.removeSync(key);
        }
      });
    },

    async dropCollection(collection) {
      const range = scanRange(collection, {});
      if (range === null) return;
      // Each database looked up again after every await: a reopening (unmapAfterMb) replaces them.
      const databases = (): Array<Database<unknown, Buffer>> => [docs, positions, tombstones] as Array<Database<unknown, Buffer>>;
      for (let d = 0; d < 3; d += 1) {
        for (;;) {
          if (reopening !== null) await reopening;
          const keys = reading('dropCollection', () => [...(databases()[d] as Database<unknown, Buffer>).getKeys({ start: range.low, end: range.high, limit: DROP_CHUNK })]);
          if (keys.length === 0) break;
          await write('dropCollection', () => {
            const db = databases()[d] as Database<unknown, Buffer>;
            for (const key of keys) db.removeSync(key);
          });
        }
      }
      await write('dropCollection', () => meta.removeSync(collectionMetaKey(collection)));
    },

    async getAlias(name) {
      if (reopening !== null) await reopening;
      const value = reading('getAlias', () => meta.get(aliasKey(name)));
      return typeof value === 'string' ? value : null;
    },

    async setAlias(name, collection) {
      // Read inside the write transaction, which holds the environment's write lock: another
      // process switching the same alias waits for this one and then reads what it wrote.
      const previous = await write('setAlias', () => {
        const value = meta.get(aliasKey(name));
        meta.putSync(aliasKey(name), collection);
        return value;
      });
      return typeof previous === 'string' ? previous : null;
    },

    async listCollections() {
      if (reopening !== null) await reopening;
      const start = collectionMetaKey('');
      // ';' is the character after ':', so this range holds exactly the `collection:` keys.
      return reading('listCollections', () => [...meta.getKeys({ start, end: 'collection;' })].map((key) => key.slice(start.length)));
    },

    async close() {
      if (closed) return;
      closed = true;
      if (reopening !== null) await reopening;
      if (own) await root.close();
      else await closeLmdb(options.dataDir);
      group?.leave();
      meter?.close();
    },
  };
  return store;
}

/**
 * The file-backed memory resident in this process, in bytes: the `shared` field of
 * /proc/self/statm (file pages and shared memory), read through a descriptor kept open, ~1.5 µs
 * a read where parsing /proc/self/status took ~13 (a build reads some 50,000 times). Null
 * without /proc.
 */
function residentFileMeter(): { bytes(): number; close(): void } | null {
  let fd: number;
  try {
    fd = openSync('/proc/self/statm', 'r');
  } catch {
    return null;
  }
  const buffer = Buffer.alloc(256);
  const pages = (field: number): number => {
    const length = readSync(fd, buffer, 0, buffer.length, 0);
    return Number(buffer.toString('latin1', 0, length).split(' ')[field]);
  };
  // statm counts pages; their size is what the resident set in bytes makes of its page count.
  const pageBytes = 2 ** Math.round(Math.log2(process.memoryUsage.rss() / pages(1)));
  return {
    bytes: () => pages(2) * pageBytes,
    close: () => closeSync(fd),
  };
}

/** Keys of at most this many bytes come from lmdb-js inside the JS heap (V8 keeps typed arrays up to 64 bytes there). */
const SHORT_KEY = 64;

/**
 * The text of `key` from byte `from` on. A scan's keys come from lmdb-js as small typed arrays
 * held inside the JS heap, and Buffer#toString must first move such an array's bytes into an
 * ArrayBuffer of their own (malloc'd, later swept and freed): per document, that cost more
 * than the rest of reading its key. An ASCII key (ids, countries, slugs) is read byte by byte
 * instead; scanning the links of a 250,000-title catalog (549,437 documents) took 1.01 s of CPU
 * rather than 1.36 s. Anything else is decoded as UTF-8, as before.
 */
function keyText(key: Buffer, from: number): string {
  if (key.length > SHORT_KEY) return key.toString('utf8', from);
  let text = '';
  for (let i = from; i < key.length; i++) {
    const byte = key[i] as number;
    if (byte >= 0x80) return key.toString('utf8', from);
    text += String.fromCharCode(byte);
  }
  return text;
}

/** The two-letter field names of stored documents; any other two-letter key is a language code. */

const checkpointKey = (name: string) => `checkpoint:${name}`;
const aliasKey = (name: string) => `alias:${name}`;
const collectionMetaKey = (name: string) => `collection:${name}`;

function collectionPrefix(collection: string): Buffer {
  if (collection.length === 0 || collection.includes('\0')) {
    throw new AppError('internal', `invalid collection name ${JSON.stringify(collection)}`);
  }
  return Buffer.from(`${collection}\0`, 'utf8');
}

function docKey(collection: string, key: string): Buffer {
  return Buffer.concat([collectionPrefix(collection), Buffer.from(key, 'utf8')]);
}

/**
 * `docKey` of each key under one collection's prefix, as views of one buffer: a projection
 * batch reads and writes thousands of documents, and three buffers a key (the prefix, the key,
 * their concatenation) were a good part of the projection thread's garbage.
 */
function docKeys(prefix: Buffer, keys: readonly string[]): Buffer[] {
  // Room for the longest UTF-8 a key can take: 3 bytes per UTF-16 code unit.
  let room = 0;
  for (const key of keys) room += prefix.length + 3 * key.length;
  const all = Buffer.allocUnsafeSlow(room);
  let at = 0;
  return keys.map((key) => {
    const start = at;
    at += prefix.copy(all, at);
    at += all.write(key, at, 'utf8');
    return all.subarray(start, at);
  });
}

/** The smallest byte string greater than every string starting with `bytes`; null if none. */
function prefixEnd(bytes: Buffer): Buffer | null {
  let end = bytes.length;
  while (end > 0 && bytes[end - 1] === 0xff) end -= 1;
  if (end === 0) return null;
  const out = Buffer.from(bytes.subarray(0, end));
  out[end - 1] = (out[end - 1] as number) + 1;
  return out;
}

/** The byte range [low, high) of a scan inside a collection, or null when it is empty. */
function scanRange(collection: string, options: ScanOptions): { low: Buffer; high: Buffer } | null {
  const prefix = collectionPrefix(collection);
  let low = Buffer.concat([prefix, Buffer.from(options.prefix ?? '', 'utf8')]);
  // A collection prefix ends in \0, so its end always exists.
  let high = prefixEnd(low) ?? prefixEnd(prefix) as Buffer;
  if (options.start !== undefined) {
    const start = Buffer.concat([prefix, Buffer.from(options.start, 'utf8')]);
    if (Buffer.compare(start, low) > 0) low = start;
  }
  if (options.end !== undefined) {
    const end = Buffer.concat([prefix, Buffer.from(options.end, 'utf8')]);
    if (Buffer.compare(end, high) < 0) high = end;
  }
  return Buffer.compare(low, high) < 0 ? { low, high } : null;
}
