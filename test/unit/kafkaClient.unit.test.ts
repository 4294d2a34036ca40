import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { createKafka, type KafkaLogger } from '../../infra/kafka/client.ts';
import { kafkaChecksum, nativeChecksum } from '../../infra/kafka/crc32c.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));

describe('the kafkajs client logs', function () {
  it('sends broker errors kafkajs retries by itself to debug, and any other error to error', function () {
    const seen: Array<[string, string | undefined]> = [];
    const logger: KafkaLogger = {
      debug: (_o, msg) => seen.push(['debug', msg]),
      info: (_o, msg) => seen.push(['info', msg]),
      warn: (_o, msg) => seen.push(['warn', msg]),
      error: (_o, msg) => seen.push(['error', msg]),
    };
    // No broker is contacted: only the client's logger is used.
    const log = createKafka({ brokers: ['127.0.0.1:9'], logger }).logger();
    log.error('Response ListOffsets(key: 2, version: 3)', { error: 'This server is not the leader for that topic-partition' });
    log.error('Response InitProducerId(key: 22, version: 1)', { error: "The coordinator is loading and hence can't process requests for this group" });
    log.error('Response Produce(key: 0, version: 7)', { error: 'The request included a message larger than the max message size the server will accept' });
    log.error('Connection error: connect ECONNREFUSED', { error: 'connect ECONNREFUSED 127.0.0.1:9' });
    log.warn('Crash: group rebalancing', {});
    assert.deepEqual(seen, [
      ['debug', 'Response ListOffsets(key: 2, version: 3)'],
      ['debug', 'Response InitProducerId(key: 22, version: 1)'],
      ['error', 'Response Produce(key: 0, version: 7)'],
      ['error', 'Connection error: connect ECONNREFUSED'],
      ['warn', 'Crash: group rebalancing'],
    ]);
  });
});

describe('the record-batch checksum kafkajs uses', function () {
  const require = createRequire(import.meta.url);

  it('is the native CRC32C on this platform, and the function kafkajs loads for its record batches', function () {
    assert.equal(kafkaChecksum(), 'native');
    const used = require('kafkajs/src/protocol/recordBatch/crc32C/index.js') as (b: Buffer) => number;
    const theirs = require('kafkajs/src/protocol/recordBatch/crc32C/crc32C.js') as (b: Buffer) => number;
    assert.equal(used, nativeChecksum);
    // The record batch module, loaded now as a produce would load it, checksums with ours: its
    // encoded batch carries the CRC that kafkajs's own loop gives over the same bytes.
    const { RecordBatch } = require('kafkajs/src/protocol/recordBatch/v0/index.js') as {
      RecordBatch: (o: { records: unknown[] }) => Promise<{ buffer: Buffer }>;
    };
    return RecordBatch({ records: [] }).then(({ buffer }) => {
      // firstOffset(8) length(4) epoch(4) magic(1) crc(4) then the checksummed body.
      assert.equal(buffer.readUInt32BE(17), theirs(buffer.subarray(21)));
    });
  });

  it('is put in place by the client module alone, before kafkajs builds a request', function () {
    this.timeout(20_000);
    // A process of its own: in this one the test above imports crc32c.ts itself.
    const code = [
      "import('./infra/kafka/client.ts').then(() => {",
      "  const { createRequire } = require('node:module');",
      "  const r = createRequire(process.cwd() + '/');",
      "  const used = r('kafkajs/src/protocol/recordBatch/crc32C/index.js');",
      "  return import('./infra/kafka/crc32c.ts').then((m) => process.stdout.write(String(used === m.nativeChecksum)));",
      '});',
    ].join('\n');
    const out = execFileSync(process.execPath, ['--import', 'tsx', '-e', code], { cwd: root, encoding: 'utf8' });
    assert.equal(out, 'true');
  });

  it('gives kafkajs’s own checksum for any bytes (unsigned, as its loop returns it)', function () {
    const used = require('kafkajs/src/protocol/recordBatch/crc32C/index.js') as (b: Buffer) => number;
    const theirs = require('kafkajs/src/protocol/recordBatch/crc32C/crc32C.js') as (b: Buffer) => number;
    const lengths = [0, 1, 2, 7, 8, 9, 63, 64, 65, 1000, 4096, 70_001];
    for (const length of lengths) {
      const bytes = randomBytes(length);
      assert.equal(used(bytes), theirs(bytes), `${length} bytes`);
    }
    // A checksum with the high bit set stays positive, as writeUInt32 needs it.
    const high = Buffer.from('123456789');
    assert.equal(used(high), 0xe3069283);
  });
});
