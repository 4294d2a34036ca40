/**
 * The release's Parquet encoder: arrow-rs's ArrowWriter, the writer parquet-wasm wraps, at the
 * same versions, built for speed (native/parquet-writer, scripts/build-wasm.sh) into
 * ./parquetWriter.wasm. parquet-wasm is built for size: the same files took it ~1.4x the wasm
 * time, most of it in zstd compiled without inlining (docs/architecture.md, "The Parquet encoder").
 *
 * Loaded by parquetEncoder.ts, so only erasable TypeScript and Node's own modules here (a pool
 * thread loads it through Node's type stripping). One instance per thread, made at its first
 * file; the module is compiled once per process (V8 shares it between threads by its bytes).
 *
 * Calls are synchronous: the encoder's events (ack, bytes, done, error) are told within
 * `batch` and `close`. A trap (a panic, memory exhausted) leaves the instance's allocator in an
 * unknown state: the instance is dropped, the file reports the error, and so does every other
 * file still open on it at its next call; the next file gets a new instance.
 */
import { constants, createZstdCompress, zstdCompressSync } from 'node:zlib';
import { isWasmTrap, wasmModule, type WasmMemory } from '../shared/wasmModule.ts';

/** What this encoder needs of parquetEncoder.ts's types (declared here: that file imports this one). */
interface EncodeProperties {
  maxRowGroupRows: number;
  dictionaryOff: boolean;
  plainColumns: readonly string[];
}
interface EncoderEvents {
  ack(): void;
  bytes(chunk: Uint8Array): void;
  done(): void;
  error(message: string): void;
}
interface Encoder {
  batch(ipc: Uint8Array): void;
  close(): void;
  abort(): void;
}

/** The module's exports (native/parquet-writer/src/lib.rs). */
interface Exports {
  memory: WasmMemory;
  mq_alloc(len: number): number;
  mq_free(ptr: number, len: number): void;
  mq_open(ptr: number, len: number): number;
  mq_batch(session: number, ptr: number, len: number): number;
  mq_close(session: number): number;
  mq_out_ptr(session: number): number;
  mq_out_len(session: number): number;
  mq_out_clear(session: number): void;
  mq_error_ptr(session: number): number;
  mq_error_len(session: number): number;
  mq_drop(session: number): void;
}

const MODULE = wasmModule<Exports>(new URL('./parquetWriter.wasm', import.meta.url));
/** An instance, and a flag that turns false when it traps. */
interface Instance {
  exports: Exports;
  alive: { value: boolean };
}

/** This thread's instance. */
let current: Instance | null = null;

/** Whether the module is there (a checkout always has it; scripts/build-wasm.sh makes it). */
export function parquetWriterWasmPresent(): boolean {
  return MODULE.present;
}

/**
 * The zstd built into the module (zstd-sys 2.1.0+zstd.1.5.7, native/zstd-shim). Node's own zstd
 * of this version writes the same frame for a page given in one call with room for its bound
 * (every page of a 250,000-title release compared), in native code rather than WebAssembly; zstd
 * promises no such thing across versions, so any other leaves the pages to the module's.
 */
const MODULE_ZSTD = '1.5.7';
/** Whether this Node's zstd is the module's version, so that its frames are the module's. */
export const NODE_ZSTD_IS_MODULES = (process.versions as Record<string, string | undefined>).zstd === MODULE_ZSTD && typeof createZstdCompress === 'function';
/** Whether pages go to Node's zstd (settable for the tests, which compare both). */
let hostZstd = NODE_ZSTD_IS_MODULES;

/** Pages this thread gave to Node's zstd so far (the tests check that the path is taken). */
let hostPages = 0;
export function hostZstdPages(): number {
  return hostPages;
}

/** Routes new instances' pages to Node's zstd (when it is the module's version) or to the module's own; returns the previous choice. */
export function useHostZstd(on: boolean): boolean {
  const before = hostZstd;
  hostZstd = on && NODE_ZSTD_IS_MODULES;
  current = null;
  return before;
}

/**
 * What zlib's own sync functions use of a stream (`zlibBufferSync`): its native handle, whose
 * `writeSync(flush, in, inOffset, inLength, out, outOffset, outLength)` leaves the room and the
 * input it did not use in `_writeState`. Internal to Node, so checked on each stream (zstdInto
 * below), and `zstdCompressSync` used without it.
 */
interface ZstdStreamInternals {
  _handle?: { writeSync?(flush: number, input: Uint8Array, inOff: number, inLen: number, out: Uint8Array, outOff: number, outLen: number): void };
  _writeState?: Uint32Array;
}

/**
 * Compresses `input` into `out` at `at` (room: `capacity`, the bound) as one frame at `level`;
 * returns its length, or -1. A stream per page, its frame written straight into the module's
 * memory and the stream closed at once: `zstdCompressSync` returns each frame in a new buffer
 * the size of the bound, which V8 counts as external memory until a collection frees it, and
 * the ~750 MB of them over a 250,000-title release set off full collections (1-1.5 s of CPU each
 * in the write bench's threads, which hold every row). Same bytes either way, the same one-pass
 * path of zstd (every page of such a release compared, and the tests compare files).
 */
function zstdInto(level: number, input: Uint8Array, out: Uint8Array, at: number, capacity: number): number {
  const params = { [constants.ZSTD_c_compressionLevel]: level };
  const stream = createZstdCompress({ params });
  // An error of the handle destroys the stream with an 'error' event: heard here, not thrown later.
  stream.on('error', () => {});
  try {
    const { _handle: handle, _writeState: state } = stream as unknown as ZstdStreamInternals;
    if (typeof handle?.writeSync !== 'function' || !(state instanceof Uint32Array)) {
      const frame = zstdCompressSync(input, { chunkSize: Math.max(capacity, 64), params });
      if (frame.length > capacity) return -1;
      out.set(frame, at);
      return frame.length;
    }
    handle.writeSync(constants.ZSTD_e_end, input, 0, input.length, out, at, capacity);
    // All of the page taken, and room left over: the frame is complete.
    if (stream.destroyed || state[1] !== 0 || state[0] === 0) return -1;
    return capacity - (state[0] as number);
  } finally {
    stream.close();
  }
}

/**
 * The module's import `marquee.zstd_compress` (native/zstd-shim/src/lib.rs): the page at
 * `src` as one zstd frame at `dst`, its length returned; -1 leaves the page to the module's zstd.
 * `capacity` is the page's compress bound, so zstd takes its one-pass path, as the module's
 * `ZSTD_compress2` does.
 */
function zstdImport(memory: () => WasmMemory, useHost: boolean): (level: number, src: number, srcLen: number, dst: number, capacity: number) => number {
  return (level, src, srcLen, dst, capacity) => {
    if (!useHost) return -1;
    let written: number;
    try {
      const bytes = new Uint8Array(memory().buffer);
      written = zstdInto(level, bytes.subarray(src, src + srcLen), bytes, dst, capacity);
    } catch {
      return -1;
    }
    if (written >= 0) hostPages += 1;
    return written;
  };
}

function instance(): Instance {
  if (current === null || !current.alive.value) {
    let exports: Exports | null = null;
    const memory = (): WasmMemory => (exports as Exports).memory;
    exports = MODULE.instantiate({ marquee: { zstd_compress: zstdImport(memory, hostZstd) } });
    current = { exports, alive: { value: true } };
  }
  return current;
}

/**
 * The memory of this thread's instance (made if there is none), for the tests: grown to the
 * most a module can have, it leaves the next large allocation nowhere to go, which is how they
 * make the module trap.
 */
export function parquetWriterWasmMemory(): WasmMemory {
  return instance().exports.memory;
}

/** The properties as lib.rs `properties` reads them. */
function encodeProperties(props: EncodeProperties, createdBy: string): Uint8Array {
  const utf8 = new TextEncoder();
  const strings = [createdBy, ...props.plainColumns].map((s) => utf8.encode(s));
  const size = 4 + 1 + 4 + strings.reduce((sum, s) => sum + 4 + s.length, 0);
  const bytes = new Uint8Array(size);
  const view = new DataView(bytes.buffer);
  let at = 0;
  const string = (s: Uint8Array): void => {
    view.setUint32(at, s.length, true);
    bytes.set(s, at + 4);
    at += 4 + s.length;
  };
  view.setUint32(at, props.maxRowGroupRows, true);
  bytes[at + 4] = props.dictionaryOff ? 1 : 0;
  at += 5;
  string(strings[0] as Uint8Array);
  view.setUint32(at, props.plainColumns.length, true);
  at += 4;
  for (const s of strings.slice(1)) string(s);
  return bytes;
}

/** Starts one file; `createdBy` is written into its footer. */
export function openWasmEncoder(props: EncodeProperties, createdBy: string, events: EncoderEvents): Encoder {
  const used = instance();
  try {
    return openOn(used, props, createdBy, events);
  } catch (err) {
    if (!isWasmTrap(err)) throw err;
    // Trapped opening the file: the instance goes, and the file is tried once on a new one.
    used.alive.value = false;
    return openOn(instance(), props, createdBy, events);
  }
}

function openOn(
  { exports: m, alive }: Instance,
  props: EncodeProperties,
  createdBy: string,
  events: EncoderEvents,
): Encoder {
  /** Copies `bytes` into module memory, runs `use` on them, frees them (not after a trap: the instance is done). */
  const withBytes = <T>(bytes: Uint8Array, use: (ptr: number) => T): T => {
    const ptr = m.mq_alloc(bytes.length);
    new Uint8Array(m.memory.buffer, ptr, bytes.length).set(bytes);
    const result = use(ptr);
    m.mq_free(ptr, bytes.length);
    return result;
  };
  let session = 0;
  let over = false;
  /** Runs a call into the module; a trap kills the instance and fails the file. */
  const call = (body: () => void): void => {
    if (over) return;
    if (!alive.value) {
      over = true;
      events.error('the Parquet encoder failed on another file of this thread');
      return;
    }
    try {
      body();
    } catch (err) {
      // Only a trap is the module's; anything else (an event handler's throw) is the caller's.
      if (!isWasmTrap(err)) throw err;
      alive.value = false;
      over = true;
      events.error(`the Parquet encoder trapped: ${err.message}`);
    }
  };
  const failed = (): void => {
    const message = new TextDecoder().decode(new Uint8Array(m.memory.buffer, m.mq_error_ptr(session), m.mq_error_len(session)));
    over = true;
    m.mq_drop(session);
    events.error(message);
  };
  /** Hands the bytes written so far to the caller, in a buffer of their own. */
  const take = (): void => {
    const n = m.mq_out_len(session);
    if (n === 0) return;
    const chunk = new Uint8Array(n);
    chunk.set(new Uint8Array(m.memory.buffer, m.mq_out_ptr(session), n));
    m.mq_out_clear(session);
    events.bytes(chunk);
  };
  const encoded = encodeProperties(props, createdBy);
  session = withBytes(encoded, (ptr) => m.mq_open(ptr, encoded.length));
  if (session === 0) throw new Error('the Parquet encoder refused the writer properties');
  return {
    batch(ipc) {
      call(() => {
        if (withBytes(ipc, (ptr) => m.mq_batch(session, ptr, ipc.length)) !== 0) return failed();
        take();
        events.ack();
      });
    },
    close() {
      call(() => {
        if (m.mq_close(session) !== 0) return failed();
        take();
        over = true;
        m.mq_drop(session);
        events.done();
      });
    },
    abort() {
      if (over) return;
      over = true;
      if (alive.value) m.mq_drop(session);
    },
  };
}
