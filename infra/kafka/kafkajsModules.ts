/**
 * Two of kafkajs's producer modules replaced by faster ones that write the same bytes: its
 * record-batch checksum and its record encoder. Through the Kafka event log, ingest produces a
 * record per event (252,681 for the sample's first day, about 75 MB of JSON) on top of the
 * observations the crawlers publish, and these two were the largest items of that path's
 * profile that are not the broker's work.
 *
 * - **Checksum** (CRC32C of every record batch): `@node-rs/crc32`, the CPU's CRC32C
 *   instruction, instead of kafkajs's table loop, one byte per step in JavaScript: 0.19 ms
 *   against 3.0 ms for a 900 KB batch. The broker checks every batch's CRC, so a wrong one
 *   cannot pass unnoticed: the produce fails (CORRUPT_MESSAGE).
 * - **Record** (`recordBatch/record/v0`): kafkajs encodes each record into a zero-filled
 *   512-byte buffer of its own, its timestamp delta through 64-bit `Long` objects and each
 *   varint through an array and `Buffer.from`. This one measures the record first and writes it
 *   into a buffer of its size from Node's pool, for the records it is sure to write as kafkajs
 *   does (integers within +-2^30, keys and values strings, Buffers or null, header values
 *   strings or Buffers); any other record goes to kafkajs's own encoder.
 *
 * How: kafkajs requires its request versions lazily, so `recordBatch/v0` (which holds the
 * checksum function) and `produce/v3/request` (which holds the record encoder) load the first
 * time a produce or fetch request is built. Putting our modules in Node's module cache under
 * kafkajs's file names before then is all it takes; client.ts imports this module first, and
 * every Kafka client of ours is made there. Should the native package be missing (a platform
 * without a prebuilt binary) or kafkajs already hold its own functions, kafkajs's stay in use:
 * `kafkajsModules()` says which are ours.
 */
import { Module, createRequire } from 'node:module';

const require = createRequire(import.meta.url);

type Checksum = (buffer: Buffer) => number;

/** `@node-rs/crc32`'s CRC32C; null without a prebuilt binary for this platform. */
function loadNative(): ((input: Uint8Array) => number) | null {
  try {
    return (require('@node-rs/crc32') as { crc32c: (input: Uint8Array) => number }).crc32c;
  } catch {
    return null;
  }
}

const crc32c = loadNative();

/** The checksum put in kafkajs's place, unsigned as kafkajs's own returns it; null without the native package. */
export const nativeChecksum: Checksum | null = crc32c === null ? null : (buffer) => crc32c(buffer) >>> 0;

/** What kafkajs's record encoder takes (produce/v3/request.js). */
export interface RecordInput {
  offsetDelta?: number;
  timestampDelta?: number;
  key?: unknown;
  value?: unknown;
  headers?: unknown;
}

/** kafkajs's Encoder class: ours hands back instances of it, which kafkajs copies from. */
interface EncoderLike {
  buf: Buffer;
  offset: number;
}
const Encoder = require('kafkajs/src/protocol/encoder.js') as { prototype: EncoderLike };
/** kafkajs's own record encoder, for the records ours leaves to it (and the tests). */
export const kafkajsRecord = require('kafkajs/src/protocol/recordBatch/record/v0/index.js') as (record: RecordInput) => EncoderLike;

const SMALL = 2 ** 30;
/** An integer whose zigzag form kafkajs's 32-bit arithmetic and its Long arithmetic give alike. */
const small = (n: unknown): n is number => typeof n === 'number' && Number.isInteger(n) && n >= -SMALL && n < SMALL;
/** Zigzag: 0, -1, 1, -2 ... -> 0, 1, 2, 3 ... (below 2^31 for a `small` integer). */
const zigzag = (n: number): number => (n >= 0 ? n * 2 : -n * 2 - 1);
function varintSize(n: number): number {
  let u = zigzag(n);
  let size = 1;
  while (u >= 0x80) {
    u >>>= 7;
    size += 1;
  }
  return size;
}
function writeVarint(buf: Buffer, at: number, n: number): number {
  let u = zigzag(n);
  while (u >= 0x80) {
    buf[at++] = (u & 0x7f) | 0x80;
    u >>>= 7;
  }
  buf[at++] = u;
  return at;
}

/** Bytes of a key, value or header part (-1: null), or undefined for what kafkajs's encoder must write. */
function lengthOf(v: unknown, nullable: boolean): number | undefined {
  if (typeof v === 'string') return Buffer.byteLength(v, 'utf8');
  if (Buffer.isBuffer(v)) return v.length;
  return nullable && (v === null || v === undefined) ? -1 : undefined;
}
function writeBytes(buf: Buffer, at: number, v: unknown, length: number): number {
  at = writeVarint(buf, at, length);
  if (length <= 0) return at;
  if (typeof v === 'string') buf.write(v, at, length, 'utf8');
  else (v as Buffer).copy(buf, at);
  return at + length;
}

/** Bytes of a key, value or header part as written: its varint length, then the bytes (none for null). */
const partSize = (length: number): number => varintSize(length) + Math.max(length, 0);

interface Header {
  key: string;
  value: string | Buffer;
  keyLength: number;
  valueLength: number;
}

/** The headers as kafkajs lays them out (a value array is one header per value), or null when kafkajs must write them. */
function headerList(headers: unknown): Header[] | null {
  if (headers === undefined) return [];
  if (headers === null || typeof headers !== 'object') return null;
  const out: Header[] = [];
  for (const key of Object.keys(headers)) {
    const value = (headers as Record<string, unknown>)[key];
    for (const one of Array.isArray(value) ? value : [value]) {
      const valueLength = lengthOf(one, false);
      if (valueLength === undefined) return null;
      out.push({ key, value: one as string | Buffer, keyLength: Buffer.byteLength(key, 'utf8'), valueLength });
    }
  }
  return out;
}

/** kafkajs's record (v0: length, attributes, timestamp delta, offset delta, key, value, headers), measured then written once. */
export function encodeRecord(record: RecordInput): EncoderLike {
  const { offsetDelta = 0, timestampDelta = 0, key, value, headers } = record;
  const keyLength = lengthOf(key, true);
  const valueLength = lengthOf(value, true);
  const list = headerList(headers);
  if (!small(offsetDelta) || !small(timestampDelta) || keyLength === undefined || valueLength === undefined || list === null) {
    return kafkajsRecord(record);
  }
  let body = 1 + varintSize(timestampDelta) + varintSize(offsetDelta) + partSize(keyLength) + partSize(valueLength) + varintSize(list.length);
  for (const h of list) body += partSize(h.keyLength) + partSize(h.valueLength);
  if (!small(body)) return kafkajsRecord(record);
  const size = varintSize(body) + body;
  // From the pool: every byte is written below, and kafkajs copies a record out by its offset.
  const buf = Buffer.allocUnsafe(size);
  let at = writeVarint(buf, 0, body);
  buf[at++] = 0; // attributes: none used per record
  at = writeVarint(buf, at, timestampDelta);
  at = writeVarint(buf, at, offsetDelta);
  at = writeBytes(buf, at, key, keyLength);
  at = writeBytes(buf, at, value, valueLength);
  at = writeVarint(buf, at, list.length);
  for (const h of list) {
    at = writeBytes(buf, at, h.key, h.keyLength);
    at = writeBytes(buf, at, h.value, h.valueLength);
  }
  const encoder = Object.create(Encoder.prototype) as EncoderLike;
  encoder.buf = buf;
  encoder.offset = at;
  return encoder;
}

/** Puts `exports` in Node's module cache as kafkajs's `file`, unless `user` (which requires it) is loaded already. */
function replace(file: string, user: string, exports: unknown): boolean {
  const path = require.resolve(`kafkajs/src/${file}`);
  if (require.cache[require.resolve(`kafkajs/src/${user}`)] !== undefined) return false;
  const cached = new Module(path);
  cached.filename = path;
  cached.loaded = true;
  cached.exports = exports;
  require.cache[path] = cached;
  return true;
}

const installed = {
  checksum: nativeChecksum !== null && replace('protocol/recordBatch/crc32C/index.js', 'protocol/recordBatch/v0/index.js', nativeChecksum),
  record: replace('protocol/recordBatch/record/v0/index.js', 'protocol/requests/produce/v3/request.js', encodeRecord),
};

/** Which of kafkajs's modules are ours in this process. */
export function kafkajsModules(): { checksum: boolean; record: boolean } {
  return { ...installed };
}
