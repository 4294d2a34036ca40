/**
 * kafkajs's record-batch checksum (CRC32C) computed by `@node-rs/crc32`, which uses the CPU's
 * CRC32C instruction, instead of kafkajs's own table loop, one byte per step in JavaScript.
 *
 * Why: every produce request checksums its whole record batch. Through the Kafka event log,
 * ingest produces a record per event (252,681 for the sample's first day, about 75 MB of JSON)
 * on top of the observations the crawlers publish, and kafkajs's loop was the largest single
 * item of that path's profile (1.6 s of an 11 s consume); on a 900 KB batch it takes 3.0 ms,
 * the instruction 0.19 ms. The broker checks every batch's CRC, so a wrong one cannot pass
 * unnoticed: the produce fails (CORRUPT_MESSAGE).
 *
 * How: kafkajs reads the checksum function from its module `recordBatch/crc32C/index.js`, which
 * `recordBatch/v0` loads the first time a produce or fetch request is built (kafkajs requires
 * its request versions lazily). Putting our function in Node's module cache under that file's
 * name before then is all it takes; client.ts imports this module first, and every Kafka
 * client of ours is made there. Should the native package be missing (a platform without a
 * prebuilt binary) or kafkajs already hold its own function, kafkajs's stays in use:
 * `kafkaChecksum()` says which.
 */
import { Module, createRequire } from 'node:module';

const require = createRequire(import.meta.url);

type Checksum = (buffer: Buffer) => number;

/** `@node-rs/crc32`'s CRC32C; null without a prebuilt binary for this platform (kafkajs keeps its own loop). */
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

function install(): 'native' | 'kafkajs' {
  if (nativeChecksum === null) return 'kafkajs';
  const file = require.resolve('kafkajs/src/protocol/recordBatch/crc32C/index.js');
  const user = require.resolve('kafkajs/src/protocol/recordBatch/v0/index.js');
  // Too late: the record batch module already holds kafkajs's function.
  if (require.cache[user] !== undefined) return 'kafkajs';
  const cached = new Module(file);
  cached.filename = file;
  cached.loaded = true;
  cached.exports = nativeChecksum;
  require.cache[file] = cached;
  return 'native';
}

const installed = install();

/** Which checksum kafkajs's producer uses in this process. */
export function kafkaChecksum(): 'native' | 'kafkajs' {
  return installed;
}
