/**
 * `npm run bench -- kafkaEncode [--records N]`
 *
 * Three of the kafkajs modules Marquee replaces (infra/kafka/kafkajsModules.ts), each beside
 * kafkajs's own in the same run, on records shaped like the ones Marquee produces:
 * - event log records: key = the stream, value = the event's JSON (~430 bytes), no headers;
 * - observation records: key = the stream, value = Avro bytes (~550 bytes), two headers.
 * `record_us`: microseconds per record encoded (the call kafkajs's produce request makes, with its
 * spread of the message); `decode_us`: microseconds per record read back as a consumer's fetch
 * reads it (a decoder over the record's bytes, the batch's first offset and timestamp as
 * decimals); `checksum_ms_per_mb`: CRC32C of record batches of ~900 KB. Prints one
 * JSON line. Not a test: nothing here gates CI.
 */
import { createRequire } from 'node:module';
import { decodeRecord, encodeRecord, kafkajsRecord, kafkajsRecordDecoder, nativeChecksum, type RecordInput } from '../infra/kafka/kafkajsModules.ts';

const require = createRequire(import.meta.url);
const Decoder = require('kafkajs/src/protocol/decoder.js') as new (b: Buffer) => { buffer: Buffer; offset: number };
const kafkajsChecksum = require('kafkajs/src/protocol/recordBatch/crc32C/crc32C.js') as (b: Buffer) => number;

const i = process.argv.indexOf('--records');
const records = i >= 0 ? Number(process.argv[i + 1]) : 250_000;
if (!Number.isInteger(records) || records <= 0) throw new Error('--records must be a positive integer');

const event = (n: number): string =>
  JSON.stringify({
    type: 'OfferAdded',
    data: { mediaId: `m${n}`, offer: { providerId: 'netflix', url: `https://www.netflix.com/title/${81_000_000 + n}?source=marquee`, priceTypes: ['flatrate'], quality: 'HD', availableFrom: '2026-11-29', availableTo: null } },
    metadata: { producer: 'ingest', observationId: `obs-${n}` },
    streamId: `offers-m${n}-US`,
    revision: n % 7,
    recordedAt: '2026-12-06T17:00:00.000Z',
  });
const avro = Buffer.alloc(550, 7);
const shapes: Record<string, (n: number) => RecordInput & { partition?: number }> = {
  event_log: (n) => ({ key: `offers-m${n % 5000}-US`, value: event(n % 5000), partition: 0 }),
  observations: (n) => ({ key: `m${n % 5000}`, value: avro, headers: { 'schema-fingerprint': '0123456789abcdef', 'observation-type': 'AvailabilityObserved' } }),
};

/** Microseconds per record for `encode` over `records` messages, in requests of 2,000 as kafkajs calls it. */
function timeRecords(encode: (r: RecordInput) => unknown, make: (n: number) => RecordInput): number {
  const messages = Array.from({ length: 2000 }, (_, n) => make(n));
  const started = performance.now();
  for (let done = 0; done < records; done += messages.length) {
    messages.forEach((message, n) => encode({ ...message, offsetDelta: n, timestampDelta: 0 }));
  }
  return Number((((performance.now() - started) * 1000) / records).toFixed(3));
}

/** Microseconds per record for `decode` over `records` records of the shape, as a fetch of 2,000 records reads them. */
function timeDecode(decode: typeof decodeRecord, make: (n: number) => RecordInput): number {
  // Each record's bytes without its length prefix, as kafkajs's batch decoder hands them over.
  const bytes = Array.from({ length: 2000 }, (_, n) => {
    const encoded = kafkajsRecord({ ...make(n), offsetDelta: n, timestampDelta: n });
    const whole = encoded.buf.subarray(0, encoded.offset);
    return Buffer.from(whole.subarray(whole.findIndex((b) => b < 0x80) + 1));
  });
  const started = performance.now();
  for (let done = 0; done < records; done += bytes.length) {
    const context = { firstOffset: String(1_000_000 + done), firstTimestamp: '1796604625548', magicByte: 2, isControlBatch: false, timestampType: 0, maxTimestamp: '1796604627548' };
    for (const b of bytes) decode(new Decoder(b), context);
  }
  return Number((((performance.now() - started) * 1000) / records).toFixed(3));
}

function timeChecksum(sum: (b: Buffer) => number): number {
  const batch = Buffer.alloc(900_000, 42);
  const rounds = Math.max(1, Math.round(records / 2000));
  const started = performance.now();
  for (let r = 0; r < rounds; r++) sum(batch);
  return Number(((performance.now() - started) / (rounds * 0.9)).toFixed(3));
}

const result: Record<string, unknown> = { bench: 'kafkaEncode', node: process.version, records };
for (const [name, make] of Object.entries(shapes)) {
  // Warm both first, then alternate, so neither is measured cold.
  timeRecords(kafkajsRecord, make);
  timeRecords(encodeRecord, make);
  const kafkajs = [timeRecords(kafkajsRecord, make), timeRecords(kafkajsRecord, make)];
  const ours = [timeRecords(encodeRecord, make), timeRecords(encodeRecord, make)];
  result[`${name}_record_us`] = { kafkajs: Math.min(...kafkajs), ours: Math.min(...ours), ratio: Number((Math.min(...ours) / Math.min(...kafkajs)).toFixed(3)) };
  timeDecode(kafkajsRecordDecoder, make);
  timeDecode(decodeRecord, make);
  const theirReads = [timeDecode(kafkajsRecordDecoder, make), timeDecode(kafkajsRecordDecoder, make)];
  const ourReads = [timeDecode(decodeRecord, make), timeDecode(decodeRecord, make)];
  result[`${name}_decode_us`] = { kafkajs: Math.min(...theirReads), ours: Math.min(...ourReads), ratio: Number((Math.min(...ourReads) / Math.min(...theirReads)).toFixed(3)) };
}
if (nativeChecksum !== null) {
  const kafkajs = timeChecksum(kafkajsChecksum);
  const ours = timeChecksum(nativeChecksum);
  result.checksum_ms_per_mb = { kafkajs, ours, ratio: Number((ours / kafkajs).toFixed(3)) };
}
console.log(JSON.stringify(result));
