/**
 * Seven of kafkajs's modules replaced by faster ones that write the same bytes (or read the same
 * records, or pick the same partitions): its record-batch checksum, its record encoder,
 * (uncompressed) its produce request's payload, its grouping of a request's messages by
 * partition, its framing of every request, its record decoder, and its default partitioner (its
 * hash and the partitioner it is made into). And one method of its cluster class, which sent a
 * request where none was needed: the transaction coordinator lookup.
 * Through the Kafka event log, ingest produces a record per event (252,681 for the sample's
 * first day, about 150 MB of JSON) on top of the observations the crawlers publish, and these
 * were the largest items of that path's profile that are not the broker's work.
 *
 * - **Checksum** (CRC32C of every record batch): `@node-rs/crc32`, the CPU's CRC32C
 *   instruction, instead of kafkajs's table loop, one byte per step in JavaScript: 0.19 ms
 *   against 3.0 ms for a 900 KB batch. The broker checks every batch's CRC, so a wrong one
 *   cannot pass unnoticed: the produce fails (CORRUPT_MESSAGE).
 * - **Record** (`recordBatch/record/v0`): kafkajs encodes each record into a zero-filled
 *   512-byte buffer of its own, its timestamp delta through 64-bit `Long` objects and each
 *   varint through an array and `Buffer.from`. This one measures the record first and writes it
 *   once: into a buffer of its size from Node's pool, or, in an uncompressed produce request,
 *   straight into the request's payload (`encodeProduce`), for the records it is sure to write as kafkajs
 *   does (integers within +-2^30, keys and values strings, Buffers or null, header values
 *   strings or Buffers); any other record goes to kafkajs's own encoder.
 * - **Produce payload** (`requests/produce/v3/request`, which v4-v7 extend): see `encodeProduce`.
 *   Its garbage, not its CPU, was the cost: kafkajs's nested encoders made ArrayBuffers 15
 *   times the size of the records they carried, and their memory outside the heap set off
 *   full collections of an ingest process's large heap (15 a sample's first day, 0.3-0.5 s of
 *   marking each), and twice as many when the produce went faster otherwise.
 * - **Grouping** (`producer/groupMessagesPerPartition`): see `groupMessagesPerPartition`.
 * - **Framing** (`protocol/request`): see `frameRequest`.
 * - **Record decoder** (`recordBatch/record/v0/decoder`, every record a consumer fetches): see
 *   `decodeRecord`.
 * - **Partitioner** (`producer/partitioners/default/murmur2` and `legacy/partitioner`, every
 *   keyed record the observation bus publishes): see `murmur2` and `partitionerFactory`.
 * - **Coordinator lookup** (`cluster/index.js`'s `findGroupCoordinator`, twice a transaction of
 *   the Kafka event log's writer): see `cachingCoordinatorLookup`. Replaced on the class's
 *   prototype, so it is ours however kafkajs was loaded.
 *
 * How: each is put in Node's module cache under kafkajs's file name before the kafkajs module
 * that requires it loads. kafkajs requires its request versions lazily, so `recordBatch/v0`
 * (the checksum) and `produce/v3/request` (the record encoder; the payload wraps it) load with
 * the first request built, and `recordBatch/v0/decoder` (the record decoder) with the first fetch
 * request; the producer (the grouping and the partitioner) and the connection (the framing)
 * load with kafkajs itself. So client.ts imports this module before kafkajs, and every other module
 * of ours takes kafkajs from client.ts. Should the native package be missing (a platform
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
/** `buf` up to `offset` as an instance of kafkajs's Encoder, which kafkajs copies from by its offset. */
function asEncoder(buf: Buffer, offset: number): EncoderLike {
  const encoder = Object.create(Encoder.prototype) as EncoderLike;
  encoder.buf = buf;
  encoder.offset = offset;
  return encoder;
}
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

/** A record measured for writing: its parts' lengths, its body's size and the whole record's. */
interface Measured {
  offsetDelta: number;
  timestampDelta: number;
  keyLength: number;
  valueLength: number;
  headers: Header[];
  body: number;
  size: number;
}

/** kafkajs's record v0 (length, attributes, timestamp delta, offset delta, key, value, headers) measured, or null for one kafkajs's encoder must write. */
function measureRecord(key: unknown, value: unknown, headers: unknown, offsetDelta: unknown, timestampDelta: unknown): Measured | null {
  const keyLength = lengthOf(key, true);
  const valueLength = lengthOf(value, true);
  const list = headerList(headers);
  if (!small(offsetDelta) || !small(timestampDelta) || keyLength === undefined || valueLength === undefined || list === null) return null;
  let body = 1 + varintSize(timestampDelta) + varintSize(offsetDelta) + partSize(keyLength) + partSize(valueLength) + varintSize(list.length);
  for (const h of list) body += partSize(h.keyLength) + partSize(h.valueLength);
  if (!small(body)) return null;
  return { offsetDelta, timestampDelta, keyLength, valueLength, headers: list, body, size: varintSize(body) + body };
}

/** The measured record written at `at` (every one of its bytes); returns its end. */
function writeRecord(buf: Buffer, at: number, m: Measured, key: unknown, value: unknown): number {
  at = writeVarint(buf, at, m.body);
  buf[at++] = 0; // attributes: none used per record
  at = writeVarint(buf, at, m.timestampDelta);
  at = writeVarint(buf, at, m.offsetDelta);
  at = writeBytes(buf, at, key, m.keyLength);
  at = writeBytes(buf, at, value, m.valueLength);
  at = writeVarint(buf, at, m.headers.length);
  for (const h of m.headers) {
    at = writeBytes(buf, at, h.key, h.keyLength);
    at = writeBytes(buf, at, h.value, h.valueLength);
  }
  return at;
}

/** kafkajs's record (v0), measured then written once into a buffer of its size. */
export function encodeRecord(record: RecordInput): EncoderLike {
  const { offsetDelta = 0, timestampDelta = 0, key, value, headers } = record;
  const measured = measureRecord(key, value, headers, offsetDelta, timestampDelta);
  if (measured === null) return kafkajsRecord(record);
  // From the pool: every byte is written below, and kafkajs copies a record out by its offset.
  const buf = Buffer.allocUnsafe(measured.size);
  return asEncoder(buf, writeRecord(buf, 0, measured, key, value));
}

/** kafkajs's Decoder, as the record decoder reads it: the record's own bytes and a read position. */
interface DecoderLike {
  buffer: Buffer;
  offset: number;
}
/** What kafkajs's record-batch decoder hands its record decoder (recordBatch/v0/decoder.js). */
export interface RecordBatchContext {
  firstOffset?: string;
  firstTimestamp?: string;
  magicByte?: number;
  isControlBatch?: boolean;
  timestampType?: number;
  maxTimestamp?: string;
  [more: string]: unknown;
}
/** A record as kafkajs's decoder returns it. */
export interface DecodedRecord {
  magicByte: number | undefined;
  attributes: number;
  timestamp: string;
  offset: string;
  key: Buffer | null;
  value: Buffer | null;
  headers: Record<string, unknown>;
  isControlRecord: boolean;
  batchContext: RecordBatchContext;
}
type RecordDecoder = (decoder: DecoderLike, batchContext?: RecordBatchContext) => DecodedRecord;
/** kafkajs's own record decoder, for the records ours leaves to it (and the tests). */
export const kafkajsRecordDecoder = require('kafkajs/src/protocol/recordBatch/record/v0/decoder.js') as RecordDecoder;
const LOG_APPEND_TIME = (require('kafkajs/src/protocol/timestampTypes.js') as { LOG_APPEND_TIME: number }).LOG_APPEND_TIME;

/** A 64-bit decimal whose sum with a varint of at most 4 bytes (below 2^27) stays an exact double. */
const SAFE_DECIMAL = /^-?\d{1,15}$/;
/** The batch whose first offset and timestamp were parsed last: a batch's records come one after another. */
let parsedContext: RecordBatchContext | null = null;
let parsedOffset = Number.NaN;
let parsedTimestamp = Number.NaN;

/**
 * Where the last readVarint or readPart stopped: module state rather than a result object per
 * call, which was most of the decoder's garbage (a record reads six or more of them).
 */
let cursor = 0;
/** What readPart answers when kafkajs's decoder must read the part. */
const LEAVE = Symbol('leave to kafkajs');

/**
 * A varint of at most 4 bytes at `at`, zigzag-decoded (the cursor after it), or NaN past that:
 * there kafkajs's 32-bit loop (and, for the timestamp delta, its Long loop) is left to read it as
 * it does.
 */
function readVarint(buf: Buffer, at: number): number {
  let u = 0;
  for (let shift = 0; shift < 28; shift += 7) {
    const byte = buf[at++];
    if (byte === undefined) return Number.NaN;
    u |= (byte & 0x7f) << shift;
    if (byte < 0x80) {
      cursor = at;
      return (u >>> 1) ^ -(u & 1);
    }
  }
  return Number.NaN;
}

/**
 * A varint length and that many bytes at `at` (a view, as kafkajs slices it; null for -1; the
 * cursor after them), or LEAVE where kafkajs's decoder must read it (a longer varint, a length
 * below -1).
 */
function readPart(buf: Buffer, at: number): Buffer | null | typeof LEAVE {
  const length = readVarint(buf, at);
  if (!(length >= -1)) return LEAVE;
  if (length === -1) return null;
  const from = cursor;
  cursor = from + length;
  return buf.subarray(from, from + length);
}

/**
 * kafkajs's record decoder (`recordBatch/record/v0/decoder`) for the records it reads the
 * common way: varints of at most 4 bytes, first offset and timestamp below 10^15. kafkajs
 * parses the batch's first offset and first timestamp into 64-bit `Long` objects for every
 * record, reads the timestamp delta through `Long` too, and prints both back as decimals
 * (0.7-1.9 us a record alone, `npm run bench -- kafkaEncode`, more among a busy process's
 * garbage). This sums doubles, exact in that range, and prints the same strings. Any other
 * record (or a byte short) is read again from its start by kafkajs's decoder, so it throws or
 * answers exactly as kafkajs would (a length below -1, which kafkajs reads by moving back, goes
 * there too).
 */
export function decodeRecord(decoder: DecoderLike, batchContext: RecordBatchContext = {}): DecodedRecord {
  const start = decoder.offset;
  const buf = decoder.buffer;
  if (batchContext !== parsedContext) {
    const { firstOffset, firstTimestamp } = batchContext;
    parsedOffset = typeof firstOffset === 'string' && SAFE_DECIMAL.test(firstOffset) ? Number(firstOffset) : Number.NaN;
    parsedTimestamp = typeof firstTimestamp === 'string' && SAFE_DECIMAL.test(firstTimestamp) ? Number(firstTimestamp) : Number.NaN;
    parsedContext = batchContext;
  }
  const appendTime = batchContext.timestampType === LOG_APPEND_TIME && batchContext.maxTimestamp;
  if (Number.isNaN(parsedOffset) || (!appendTime && Number.isNaN(parsedTimestamp))) return kafkajsRecordDecoder(decoder, batchContext);
  const attributes = buf[start];
  if (attributes === undefined) return kafkajsRecordDecoder(decoder, batchContext);
  const timestampDelta = readVarint(buf, start + 1);
  if (Number.isNaN(timestampDelta)) return kafkajsRecordDecoder(decoder, batchContext);
  const offsetDelta = readVarint(buf, cursor);
  if (Number.isNaN(offsetDelta)) return kafkajsRecordDecoder(decoder, batchContext);
  const key = readPart(buf, cursor);
  if (key === LEAVE) return kafkajsRecordDecoder(decoder, batchContext);
  const value = readPart(buf, cursor);
  if (value === LEAVE) return kafkajsRecordDecoder(decoder, batchContext);
  const count = readVarint(buf, cursor);
  if (!(count >= -1)) return kafkajsRecordDecoder(decoder, batchContext);
  // As kafkajs folds them: one property per key, a repeated key's values in an array (read
  // through the object, as kafkajs reads it), each an own data property even for `__proto__`.
  const headers: Record<string, unknown> = {};
  for (let i = 0; i < count; i += 1) {
    const nameLength = readVarint(buf, cursor);
    if (!(nameLength >= -1)) return kafkajsRecordDecoder(decoder, batchContext);
    // A null name is kafkajs's property "null". Decoded in place: no view of its own.
    const k = nameLength === -1 ? 'null' : buf.toString('utf8', cursor, (cursor += nameLength));
    const header = readPart(buf, cursor);
    if (header === LEAVE) return kafkajsRecordDecoder(decoder, batchContext);
    const before = headers[k];
    const folded = before === undefined ? header : Array.isArray(before) ? before.concat([header]) : [before, header];
    if (k === '__proto__') Object.defineProperty(headers, k, { value: folded, writable: true, enumerable: true, configurable: true });
    else headers[k] = folded;
  }
  decoder.offset = cursor;
  return {
    magicByte: batchContext.magicByte,
    attributes: attributes << 24 >> 24,
    timestamp: appendTime ? (batchContext.maxTimestamp as string) : String(parsedTimestamp + timestampDelta),
    offset: String(parsedOffset + offsetDelta),
    key,
    value,
    headers,
    isControlRecord: batchContext.isControlBatch ?? false,
    batchContext,
  };
}

type Murmur2 = (key: unknown) => number;
/** kafkajs's own murmur2 (its default partitioner's), for the tests. */
export const kafkajsMurmur2 = require('kafkajs/src/producer/partitioners/default/murmur2.js') as Murmur2;

const MURMUR_M = 0x5bd1e995;

/**
 * Kafka's murmur2 (the Java client's `Utils.murmur2`, which the default partitioner hashes a
 * record's key with), in 32-bit integers: kafkajs computes it with its 64-bit `Long`, a BigInt
 * that is never wrapped, so each of a key's four-byte words multiplies a larger one. Only the
 * low 32 bits are ever read, and they are the same. The sample's first day (88,925 keys): 16-36
 * ms with the partitioner below against 269-300 ms with kafkajs's, the same partitions.
 */
export function murmur2(key: unknown): number {
  const data = Buffer.isBuffer(key) ? key : Buffer.from(String(key));
  const length = data.length;
  let h = 0x9747b28c ^ length;
  const words = length >>> 2;
  for (let i = 0; i < words; i++) {
    const at = i * 4;
    let k = (data[at] as number) | ((data[at + 1] as number) << 8) | ((data[at + 2] as number) << 16) | ((data[at + 3] as number) << 24);
    k = Math.imul(k, MURMUR_M);
    k ^= k >>> 24;
    k = Math.imul(k, MURMUR_M);
    h = Math.imul(h, MURMUR_M) ^ k;
  }
  // The last one to three bytes, as the Java client's switch falls through its cases.
  const rest = length & 3;
  if (rest > 0) {
    const tail = length - rest;
    if (rest === 3) h ^= (data[tail + 2] as number) << 16;
    if (rest >= 2) h ^= (data[tail + 1] as number) << 8;
    h ^= data[tail] as number;
    h = Math.imul(h, MURMUR_M);
  }
  h ^= h >>> 13;
  h = Math.imul(h, MURMUR_M);
  return h ^ (h >>> 15);
}

interface PartitionerArgs {
  topic: string;
  partitionMetadata: Array<{ partitionId: number; leader: number }>;
  message: { key?: unknown; partition?: number | null };
}
type PartitionerFactory = (hash: Murmur2) => () => (args: PartitionerArgs) => number;
/** kafkajs's own partitioner factory (legacy/partitioner.js, which its default partitioner is made with), for the tests. */
export const kafkajsPartitionerFactory = require('kafkajs/src/producer/partitioners/legacy/partitioner.js') as PartitionerFactory;
const randomBytes = require('kafkajs/src/producer/partitioners/legacy/randomBytes.js') as (size: number) => Buffer;

/**
 * kafkajs's partitioner (the Java client 0.10.2's): a message's own partition, else its key's
 * hash, else round robin over the partitions that have a leader. kafkajs filters those
 * partitions into a new array for every message, keyed or not; this one only when it needs them.
 */
export function partitionerFactory(hash: Murmur2): () => (args: PartitionerArgs) => number {
  return () => {
    const counters: Record<string, number> = {};
    return ({ topic, partitionMetadata, message }) => {
      if (!(topic in counters)) counters[topic] = randomBytes(32).readUInt32BE(0);
      if (message.partition !== null && message.partition !== undefined) return message.partition;
      if (message.key !== null && message.key !== undefined) return (hash(message.key) & 0x7fffffff) % partitionMetadata.length;
      const turn = (counters[topic] = (counters[topic] as number) + 1) & 0x7fffffff;
      const available = partitionMetadata.filter((p) => p.leader >= 0);
      // No partition has a leader: any partition (the send fails or waits for one).
      return available.length > 0 ? (available[turn % available.length] as { partitionId: number }).partitionId : turn % partitionMetadata.length;
    };
  };
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

/** What kafkajs's produce request (v3, which v4-v7 extend) takes. */
export interface ProduceInput {
  acks: number;
  timeout: number;
  transactionalId?: string | null;
  producerId?: unknown;
  producerEpoch?: number;
  compression?: number;
  topicData: Array<{ topic: string; partitions: Array<{ partition: number; firstSequence?: number; messages: ProduceMessage[] }> }>;
}
interface ProduceMessage {
  key?: unknown;
  value?: unknown;
  headers?: unknown;
  timestamp?: number | string | null;
}
/** kafkajs's Encoder, for the few fields whose encoding (64-bit Longs, nullable strings) is kept as kafkajs writes it. */
interface KafkajsEncoder extends EncoderLike {
  readonly buffer: Buffer;
  writeInt16(v: unknown): KafkajsEncoder;
  writeInt32(v: unknown): KafkajsEncoder;
  writeInt64(v: unknown): KafkajsEncoder;
  writeString(v: string | null): KafkajsEncoder;
}
type ProduceRequest = { encode(): Promise<EncoderLike> };

const KafkajsEncoderClass = Encoder as unknown as new () => KafkajsEncoder;
const Long = require('kafkajs/src/utils/long.js') as { fromInt(n: number): unknown };
const NO_COMPRESSION = (require('kafkajs/src/protocol/message/compression/index.js') as { Types: { None: number } }).Types.None;
/** Record batch v2's magic byte, and the attributes bit of a transactional batch. */
const MAGIC_BYTE = 2;
const TRANSACTIONAL_MASK = 16;

/**
 * The payload of an uncompressed produce request (v3) in one buffer of its exact size, with
 * the bytes kafkajs's own encoder gives (its field values are worked out as kafkajs works them
 * out, line by line). kafkajs builds each record batch, partition and topic in an encoder of
 * its own that starts at 512 zeroed bytes and doubles, each copied into the next: about 11 MB
 * of ArrayBuffers for a 600 KB request (2.7 GB for the sample's first day into the Kafka event
 * log), memory outside the heap that brings full collections nearer. Here each record is
 * measured as the record encoder measures it and written straight into the payload (the bytes
 * `encodeRecord` gives), its checksum computed in place; the framing (`frameRequest`) copies
 * the payload once more. A record the measure refuses goes to `fallback` (kafkajs's record
 * encoder) and is copied in. Null (kafkajs's encoder then) when the fallback gives no encoder.
 */
export function encodeProduce(input: ProduceInput, checksum: Checksum, fallback: (r: RecordInput) => EncoderLike = kafkajsRecord): EncoderLike | null {
  const { acks, timeout, transactionalId = null, producerId = Long.fromInt(-1), producerEpoch = 0, topicData } = input;
  const head = new KafkajsEncoderClass().writeString(transactionalId).writeInt16(acks).writeInt32(timeout).buffer;
  let size = head.length + 4;
  const topics = topicData.map(({ topic, partitions }) => {
    const name = new KafkajsEncoderClass().writeString(topic).buffer;
    size += name.length + 4;
    return {
      name,
      partitions: partitions.map(({ partition, firstSequence = 0, messages }) => {
        // As produce/v3/request.js: the batch's time is now, or its messages' own (sorted as strings).
        const dateNow = Date.now();
        const messageTimestamps = messages.map((m) => m.timestamp).filter((t) => t != null).sort();
        const timestamps = messageTimestamps.length === 0 ? [dateNow] : messageTimestamps;
        const firstTimestamp = timestamps[0] as number;
        const maxTimestamp = timestamps[timestamps.length - 1];
        // Each record measured here and written straight into the payload below: a buffer of
        // its own per record (what encodeRecord hands kafkajs) cost a slice of Node's 8 KB pool,
        // a new pool every dozen records of the Kafka event log, and a copy more of its bytes.
        // A record it cannot write is the fallback's (kafkajs's encoder), copied in.
        const parts = messages.map((message, i): Measured | EncoderLike => {
          const timestampDelta = ((message.timestamp || dateNow) as number) - firstTimestamp;
          const measured = measureRecord(message.key, message.value, message.headers, i, timestampDelta);
          return measured ?? fallback({ ...message, offsetDelta: i, timestampDelta });
        });
        // Attributes (no compression, create time), last offset delta, timestamps, producer, sequence: recordBatch/v0.
        const batchHead = new KafkajsEncoderClass()
          .writeInt16(transactionalId ? TRANSACTIONAL_MASK : 0)
          .writeInt32(parts.length - 1)
          .writeInt64(firstTimestamp)
          .writeInt64(maxTimestamp)
          .writeInt64(producerId)
          .writeInt16(producerEpoch)
          .writeInt32(firstSequence).buffer;
        let body = batchHead.length + 4;
        for (const r of parts) body += 'size' in r ? r.size : Buffer.isBuffer(r?.buf) ? r.offset : Number.NaN;
        // Partition, batch size; first offset, batch length, leader epoch, magic, checksum; the body.
        size += 4 + 4 + 8 + 4 + 4 + 1 + 4 + body;
        return { partition, batchHead, messages, parts, body };
      }),
    };
  });
  if (Number.isNaN(size)) return null;
  // Every byte is written below (nothing is skipped), so the pool's leftovers never show.
  const buf = Buffer.allocUnsafe(size);
  buf.set(head, 0);
  let at = buf.writeInt32BE(topics.length, head.length);
  for (const topic of topics) {
    buf.set(topic.name, at);
    at = buf.writeInt32BE(topic.partitions.length, at + topic.name.length);
    for (const { partition, batchHead, messages, parts, body } of topic.partitions) {
      const batchLength = 4 + 1 + 4 + body;
      at = buf.writeInt32BE(partition, at);
      at = buf.writeInt32BE(8 + 4 + batchLength, at);
      at = buf.writeInt32BE(0, buf.writeInt32BE(0, at)); // first offset: an int64 0
      at = buf.writeInt32BE(batchLength, at);
      at = buf.writeInt32BE(0, at); // partition leader epoch
      at = buf.writeInt8(MAGIC_BYTE, at);
      const crcAt = at;
      const bodyAt = at + 4;
      buf.set(batchHead, bodyAt);
      at = buf.writeInt32BE(parts.length, bodyAt + batchHead.length);
      parts.forEach((r, i) => {
        if ('size' in r) {
          const { key, value } = messages[i] as ProduceMessage;
          at = writeRecord(buf, at, r, key, value);
        } else {
          buf.set(r.buf.subarray(0, r.offset), at);
          at += r.offset;
        }
      });
      buf.writeUInt32BE(checksum(buf.subarray(bodyAt, at)), crcAt);
    }
  }
  return asEncoder(buf, at);
}

/** What kafkajs's producer hands its grouping (producer/sendMessages.js). */
export interface GroupingInput {
  topic: string;
  partitionMetadata: readonly unknown[];
  messages: readonly unknown[];
  partitioner: (args: { topic: string; partitionMetadata: readonly unknown[]; message: unknown }) => number | string;
}
/** kafkajs's own grouping of a request's messages by partition, for the tests. */
export const kafkajsGrouping = require('kafkajs/src/producer/groupMessagesPerPartition.js') as (input: GroupingInput) => Record<string, unknown[]>;

/**
 * A topic's messages by partition, as kafkajs's grouping gives them (the same partitions in
 * the same order, each with its messages in order), in one pass. kafkajs's copies the
 * partition's array for every message it adds: for the Kafka event log's requests (one
 * partition, about 1,300 events a request) that is 0.85 million element copies each, 0.8 s of
 * the 7.7 s it took to consume the sample into the log.
 */
export function groupMessagesPerPartition({ topic, partitionMetadata, messages, partitioner }: GroupingInput): Record<string, unknown[]> {
  if (partitionMetadata.length === 0) return {};
  const result: Record<string, unknown[]> = {};
  for (const message of messages) {
    const partition = partitioner({ topic, partitionMetadata, message });
    const current = result[partition];
    if (current === undefined) result[partition] = [message];
    else current.push(message);
  }
  return result;
}

/** What kafkajs's connection hands its framing (protocol/request.js) for every request. */
export interface FrameInput {
  correlationId: number;
  clientId: string | null;
  request: { apiKey: number; apiVersion: number; encode(): Promise<unknown> };
}
/** kafkajs's own framing of a request, for the tests. */
export const kafkajsFrame = require('kafkajs/src/protocol/request.js') as (input: FrameInput) => Promise<EncoderLike>;

/**
 * A request as kafkajs frames it (its size, then api key and version, correlation id, client id,
 * then the payload), in one buffer of its exact size. kafkajs's copied the payload twice, into
 * two encoders growing from 512 bytes: for a produce request of 600 KB, two 1 MB buffers more
 * and the copies into them, the most of what was left of its produce path's garbage.
 */
export async function frameRequest({ correlationId, clientId, request: { apiKey, apiVersion, encode } }: FrameInput): Promise<EncoderLike> {
  const payload = (await encode()) as { buf?: unknown; buffer: Buffer } | null | undefined;
  const head = new KafkajsEncoderClass().writeInt16(apiKey).writeInt16(apiVersion).writeInt32(correlationId).writeString(clientId).buffer;
  // As kafkajs's writeEncoder checks the payload.
  if (payload == null || !Buffer.isBuffer(payload.buf)) throw new Error('value should be an instance of Encoder');
  const body = payload.buffer;
  const buf = Buffer.allocUnsafe(4 + head.length + body.length);
  buf.writeInt32BE(head.length + body.length, 0);
  buf.set(head, 4);
  buf.set(body, 4 + head.length);
  return asEncoder(buf, buf.length);
}

// kafkajs's producer requires the grouping when kafkajs itself is first required, not at its
// first request: this one is in place only where this module is imported before kafkajs (every
// Kafka client of ours comes from client.ts, which imports it first; the test runner imports it
// before any test file: .mocharc.json).
const groupingInstalled = replace('producer/groupMessagesPerPartition.js', 'producer/sendMessages.js', groupMessagesPerPartition);
// The framing likewise: kafkajs's connection module requires it when kafkajs loads.
const framingInstalled = replace('protocol/request.js', 'network/connection.js', frameRequest);
const checksumInstalled = nativeChecksum !== null && replace('protocol/recordBatch/crc32C/index.js', 'protocol/recordBatch/v0/index.js', nativeChecksum);
const recordInstalled = replace('protocol/recordBatch/record/v0/index.js', 'protocol/requests/produce/v3/request.js', encodeRecord);
// kafkajs's fetch requires the record-batch decoder (and with it the record decoder) lazily, with its first request.
const recordDecoderInstalled = replace('protocol/recordBatch/record/v0/decoder.js', 'protocol/recordBatch/v0/decoder.js', decodeRecord);
// The partitioners load with kafkajs (its producer requires them): the hash and the factory both
// kafkajs's default partitioner and its legacy one are made with (the legacy keeps its own hash).
const partitionerInstalled =
  replace('producer/partitioners/default/murmur2.js', 'producer/partitioners/default/index.js', murmur2) &&
  replace('producer/partitioners/legacy/partitioner.js', 'producer/partitioners/default/index.js', partitionerFactory);
/**
 * kafkajs's produce request, with our payload when uncompressed: loaded here (so it holds our
 * record encoder and kafkajs's batch module our checksum), then replaced in the module cache by
 * a wrapper. Only when the record encoder went in, which says kafkajs had not loaded it yet.
 */
function installProduce(): ((input: ProduceInput) => ProduceRequest) | null {
  if (!recordInstalled) return null;
  const path = require.resolve('kafkajs/src/protocol/requests/produce/v3/request.js');
  const original = require(path) as (input: ProduceInput) => ProduceRequest;
  const checksum = require('kafkajs/src/protocol/recordBatch/crc32C/index.js') as Checksum;
  const wrapped = (input: ProduceInput): ProduceRequest => {
    const request = original(input);
    if ((input.compression ?? NO_COMPRESSION) !== NO_COMPRESSION) return request;
    const theirs = request.encode;
    request.encode = async () => encodeProduce(input, checksum) ?? theirs();
    return request;
  };
  (require.cache[path] as NodeJS.Module).exports = wrapped;
  return original;
}
/** The broker a coordinator lookup finds (kafkajs's Broker): only what the cache needs. */
export interface CoordinatorBroker {
  isConnected(): boolean;
}
export interface CoordinatorQuery {
  groupId: string;
  coordinatorType?: number;
}
type FindCoordinator = (this: object, query: CoordinatorQuery) => Promise<CoordinatorBroker>;
/** kafkajs's coordinator type of a transactional id (protocol/coordinatorTypes). */
export const TRANSACTION_COORDINATOR = (require('kafkajs/src/protocol/coordinatorTypes.js') as { TRANSACTION: number }).TRANSACTION;

/**
 * kafkajs's `cluster.findGroupCoordinator`, remembering a transactional id's coordinator per
 * cluster (each producer has its own). kafkajs asks the cluster for it before every
 * AddPartitionsToTxn and every EndTxn: two FindCoordinator round trips per transaction, in the
 * Kafka event log's writer, whose transactions follow one another (172 requests, 0.55 s, for
 * the sample's first day). Kafka's own Java producer keeps the coordinator until a request to
 * it says it is no longer the coordinator, and so does this: a request through the broker it
 * returns that fails so (or fails with no answer: a lost connection, a timeout), or a broker no
 * longer connected, has the next call ask again. An answer that only the coordinator gives
 * keeps it: CONCURRENT_TRANSACTIONS, which the first send of a transaction gets while the last
 * one's markers are being written, made it ask again for nothing. Other coordinator types
 * (consumer groups keep theirs themselves) pass through.
 */
export function cachingCoordinatorLookup(find: FindCoordinator): FindCoordinator {
  const caches = new WeakMap<object, Map<string, Promise<CoordinatorBroker>>>();
  return function findCoordinator(this: object, query: CoordinatorQuery): Promise<CoordinatorBroker> {
    if (query.coordinatorType !== TRANSACTION_COORDINATOR) return find.call(this, query);
    let cache = caches.get(this);
    if (cache === undefined) caches.set(this, (cache = new Map()));
    const known = cache;
    const hit = known.get(query.groupId);
    if (hit !== undefined) {
      return hit.then((broker) => {
        if (broker.isConnected()) return broker;
        if (known.get(query.groupId) === hit) known.delete(query.groupId);
        return findCoordinator.call(this, query);
      });
    }
    const forget = (): void => {
      if (known.get(query.groupId) === found) known.delete(query.groupId);
    };
    const found: Promise<CoordinatorBroker> = find.call(this, query).then((broker) => forgettingOnFailure(broker, forget));
    known.set(query.groupId, found);
    found.catch(forget);
    return found;
  };
}

/**
 * The broker answers (kafkajs's names, protocol/error.js) that say it is no longer the
 * coordinator of the id asked about. One that is still loading the id's state
 * (GROUP_LOAD_IN_PROGRESS) is the coordinator: asked again, it answers.
 */
const NOT_THE_COORDINATOR = new Set(['NOT_COORDINATOR_FOR_GROUP', 'GROUP_COORDINATOR_NOT_AVAILABLE', 'TRANSACTION_COORDINATOR_FENCED']);

/** Whether a request's failure leaves its broker in doubt as the coordinator: no answer, or an answer saying it is not. */
function coordinatorInDoubt(err: unknown): boolean {
  const type = (err as { type?: unknown } | null)?.type;
  return typeof type !== 'string' || NOT_THE_COORDINATOR.has(type);
}

/** `broker` whose requests, when one fails so that the coordinator is in doubt, call `forget` (the error still reaches the caller). */
function forgettingOnFailure(broker: CoordinatorBroker, forget: () => void): CoordinatorBroker {
  return new Proxy(broker, {
    get(target, key) {
      const value = Reflect.get(target, key, target) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const result = (value as (...a: unknown[]) => unknown).apply(target, args);
        if (result instanceof Promise) {
          result.catch((err: unknown) => {
            if (coordinatorInDoubt(err)) forget();
          });
        }
        return result;
      };
    },
  });
}

const KafkajsCluster = require('kafkajs/src/cluster/index.js') as { prototype: { findGroupCoordinator: FindCoordinator } };
/** kafkajs's own coordinator lookup, for the tests. */
export const kafkajsFindCoordinator = KafkajsCluster.prototype.findGroupCoordinator;
// Every cluster kafkajs makes, made before or after this line, looks its coordinators up through
// the class's prototype: no load order can leave kafkajs's own in use.
KafkajsCluster.prototype.findGroupCoordinator = cachingCoordinatorLookup(kafkajsFindCoordinator);
const coordinatorInstalled = true;

/** kafkajs's own produce request (with our record encoder and checksum), for the tests; null when ours is not in place. */
export const kafkajsProduce = installProduce();
const installed = { checksum: checksumInstalled, record: recordInstalled, recordDecoder: recordDecoderInstalled, produce: kafkajsProduce !== null, grouping: groupingInstalled, framing: framingInstalled, partitioner: partitionerInstalled, coordinator: coordinatorInstalled };

/** Which of kafkajs's modules are ours in this process. */
export function kafkajsModules(): typeof installed {
  return { ...installed };
}
