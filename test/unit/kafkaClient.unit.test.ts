import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { createKafka, type KafkaLogger } from '../../infra/kafka/client.ts';
import {
  cachingCoordinatorLookup,
  decodeRecord,
  encodeProduce,
  encodeRecord,
  frameRequest,
  groupMessagesPerPartition,
  kafkajsFindCoordinator,
  kafkajsFrame,
  kafkajsGrouping,
  kafkajsModules,
  kafkajsMurmur2,
  kafkajsPartitionerFactory,
  kafkajsProduce,
  kafkajsRecord,
  kafkajsRecordDecoder,
  murmur2,
  nativeChecksum,
  partitionerFactory,
  TRANSACTION_COORDINATOR,
  type CoordinatorBroker,
  type CoordinatorQuery,
  type FrameInput,
  type GroupingInput,
  type ProduceInput,
  type RecordBatchContext,
  type RecordInput,
} from '../../infra/kafka/kafkajsModules.ts';

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

describe('kafkajs modules replaced by ours (kafkajsModules.ts)', function () {
  const require = createRequire(import.meta.url);
  const bytes = (encoder: { buf: Buffer; offset: number }): Buffer => encoder.buf.subarray(0, encoder.offset);
  /** kafkajs's own checksum loop, which its index module wraps. */
  const theirs = require('kafkajs/src/protocol/recordBatch/crc32C/crc32C.js') as (b: Buffer) => number;
  /** Stdout of `lines` run as a script of its own process (with tsx), from the repository root. */
  const isolated = (lines: string[]): string => execFileSync(process.execPath, ['--import', 'tsx', '-e', lines.join('\n')], { cwd: root, encoding: 'utf8' });

  it('are in place on this platform, as the modules kafkajs loads for its requests', function () {
    // The test runner imports kafkajsModules.ts before any test file (.mocharc.json), as client.ts does in a process of ours.
    assert.deepEqual(kafkajsModules(), { checksum: true, record: true, recordDecoder: true, produce: true, grouping: true, framing: true, partitioner: true, coordinator: true });
    assert.equal(require('kafkajs/src/producer/groupMessagesPerPartition.js'), groupMessagesPerPartition);
    assert.equal(require('kafkajs/src/protocol/request.js'), frameRequest);
    assert.equal(require('kafkajs/src/protocol/recordBatch/crc32C/index.js'), nativeChecksum);
    assert.equal(require('kafkajs/src/protocol/recordBatch/record/v0/index.js'), encodeRecord);
    assert.equal(require('kafkajs/src/protocol/recordBatch/record/v0/decoder.js'), decodeRecord);
    assert.equal(require('kafkajs/src/producer/partitioners/default/murmur2.js'), murmur2);
    assert.equal(require('kafkajs/src/producer/partitioners/legacy/partitioner.js'), partitionerFactory);
    // The record batch module, loaded now as a produce would load it, checksums with ours: its
    // encoded batch carries the CRC that kafkajs's own loop gives over the same bytes.
    const { RecordBatch } = require('kafkajs/src/protocol/recordBatch/v0/index.js') as {
      RecordBatch: (o: { records: unknown[] }) => Promise<{ buffer: Buffer }>;
    };
    return RecordBatch({ records: [encodeRecord({ key: 'k', value: 'v' })] }).then(({ buffer }) => {
      // firstOffset(8) length(4) epoch(4) magic(1) crc(4) then the checksummed body.
      assert.equal(buffer.readUInt32BE(17), theirs(buffer.subarray(21)));
    });
  });

  it('are put in place by the client module alone, before kafkajs builds a request', function () {
    this.timeout(20_000);
    // A process of its own: in this one the test file imports kafkajsModules.ts itself.
    const out = isolated([
      "import('./infra/kafka/client.ts').then(() => {",
      "  const { createRequire } = require('node:module');",
      "  const r = createRequire(process.cwd() + '/');",
      "  const crc = r('kafkajs/src/protocol/recordBatch/crc32C/index.js');",
      "  const record = r('kafkajs/src/protocol/recordBatch/record/v0/index.js');",
      "  const grouping = r('kafkajs/src/producer/groupMessagesPerPartition.js');",
      "  return import('./infra/kafka/kafkajsModules.ts').then((m) => process.stdout.write(String(crc === m.nativeChecksum && record === m.encodeRecord && grouping === m.groupMessagesPerPartition)));",
      '});',
    ]);
    assert.equal(out, 'true');
  });

  it('are in place through the observation bus too, the only other module of ours that uses kafkajs (it takes kafkajs from client.ts)', function () {
    this.timeout(20_000);
    const out = isolated([
      "import('./infra/kafka/observationBus.ts').then(() => import('./infra/kafka/kafkajsModules.ts')).then((m) => process.stdout.write(JSON.stringify(m.kafkajsModules())));",
    ]);
    assert.deepEqual(JSON.parse(out), { checksum: true, record: true, recordDecoder: true, produce: true, grouping: true, framing: true, partitioner: true, coordinator: true });
  });

  it('leave kafkajs’s grouping in use when kafkajs itself was loaded first, the rest being ours', function () {
    this.timeout(20_000);
    const out = isolated([
      "require('kafkajs');",
      "import('./infra/kafka/kafkajsModules.ts').then((m) => process.stdout.write(JSON.stringify(m.kafkajsModules())));",
    ]);
    assert.deepEqual(JSON.parse(out), { checksum: true, record: true, recordDecoder: true, produce: true, grouping: false, framing: false, partitioner: false, coordinator: true });
  });

  it('leave kafkajs’s own in use, and say so (in the log once), when kafkajs built a request before they could be put in place', function () {
    this.timeout(20_000);
    // kafkajs's produce request (and with it the record batch module) loaded first: replacing
    // the modules now would leave kafkajs holding its own functions, so nothing is replaced.
    const out = JSON.parse(isolated([
      "const { createRequire } = require('node:module');",
      "const r = createRequire(process.cwd() + '/');",
      "r('kafkajs/src/protocol/requests/produce/v3/request.js');",
      'const told = [];',
      'const logger = { debug() {}, warn() {}, error() {}, info: (o, msg) => told.push(msg) };',
      "import('./infra/kafka/client.ts').then((c) => { c.createKafka({ brokers: ['127.0.0.1:9'], logger }); c.createKafka({ brokers: ['127.0.0.1:9'], logger }); return import('./infra/kafka/kafkajsModules.ts'); }).then((m) => {",
      "  const crc = r('kafkajs/src/protocol/recordBatch/crc32C/index.js');",
      "  process.stdout.write(JSON.stringify({ ...m.kafkajsModules(), ownChecksum: crc !== m.nativeChecksum, ownRecord: r('kafkajs/src/protocol/recordBatch/record/v0/index.js') === m.kafkajsRecord, told }));",
      '});',
    ])) as unknown;
    // Said once, by the first client made with a logger.
    assert.deepEqual(out, {
      checksum: false,
      record: false,
      // The fetch's record decoder loads with the first fetch request, not with the produce request.
      recordDecoder: true,
      produce: false,
      // kafkajs's producer and connection were not loaded: its grouping, framing and partitioner are still ours.
      grouping: true,
      framing: true,
      // A method of kafkajs's cluster class, replaced on its prototype: ours however kafkajs was loaded.
      coordinator: true,
      partitioner: true,
      ownChecksum: true,
      ownRecord: true,
      told: ["Kafka: some of kafkajs's own modules in use (slower; see docs/kafka-event-log.md, sizing)"],
    });
  });

  it('checksum: kafkajs’s own for any bytes (unsigned, as its loop returns it)', function () {
    for (const length of [0, 1, 2, 7, 8, 9, 63, 64, 65, 1000, 4096, 70_001]) {
      const input = randomBytes(length);
      assert.equal(nativeChecksum?.(input), theirs(input), `${length} bytes`);
    }
    // A checksum with the high bit set stays positive, as writeUInt32 needs it.
    assert.equal(nativeChecksum?.(Buffer.from('123456789')), 0xe3069283);
  });

  it('record: the bytes of kafkajs’s own encoder for any record', function () {
    // A seeded walk over the shapes a producer sends: keys and values as strings (ASCII and
    // not), Buffers, null or absent; headers absent, empty, strings, Buffers, arrays of them;
    // deltas at the edges of each varint length and of the range ours writes itself.
    let seed = 7;
    const next = (n: number): number => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed % n;
    };
    const texts = ['', 'a', 'marquee.events', 'é', '日本語のタイトル', '\u{1F3AC} film', 'caf\u00e9 \u00ff', 'x\ud83d', 'x'.repeat(200), 'y'.repeat(5000)];
    const part = (): unknown => {
      const pick = next(5);
      if (pick === 0) return null;
      if (pick === 1) return undefined;
      const text = texts[next(texts.length)] as string;
      return pick === 2 ? Buffer.from(text) : text;
    };
    const deltas = [0, 1, 63, 64, 65, -1, -64, -65, 8191, 8192, -8193, 2 ** 20, 2 ** 30 - 1, -(2 ** 30), 2 ** 30, -(2 ** 30) - 1, 2 ** 40, 1.5, Number.NaN];
    let ours = 0;
    for (let i = 0; i < 3000; i++) {
      const headerPick = next(5);
      const headers =
        headerPick === 0 ? undefined
          : headerPick === 1 ? {}
            : headerPick === 2 ? { 'schema-fingerprint': 'abcdef0123456789', type: 'AvailabilityObserved' }
              : headerPick === 3 ? { tags: ['a', Buffer.from('b')], 'é': 'ü' }
                : { bad: 42 };
      const record: RecordInput = {
        offsetDelta: next(4) === 0 ? (deltas[next(deltas.length)] as number) : i,
        timestampDelta: deltas[next(deltas.length)] as number,
        key: part(),
        value: part(),
        ...(headers === undefined ? {} : { headers }),
      };
      let expected: Buffer | Error;
      try {
        expected = Buffer.from(bytes(kafkajsRecord(record)));
      } catch (err) {
        expected = err as Error;
      }
      if (expected instanceof Error) {
        assert.throws(() => encodeRecord(record), `record ${i}`);
        continue;
      }
      const encoder = encodeRecord(record);
      assert.deepEqual(bytes(encoder), expected, `record ${i}: ${JSON.stringify(record)}`);
      // kafkajs reads a record back through its Encoder's getter.
      assert.deepEqual((encoder as unknown as { buffer: Buffer }).buffer, expected);
      if (encoder.buf.length === encoder.offset) ours += 1;
    }
    // Most records are written by ours (kafkajs's own leaves 512 bytes or more of room).
    assert.ok(ours > 1000, `${ours} of 3000 written by ours`);
  });

  it('record decoder: what kafkajs’s own decoder returns for any record, and where it leaves the read (seeded)', function () {
    const Decoder = require('kafkajs/src/protocol/decoder.js') as new (b: Buffer) => { buffer: Buffer; offset: number };
    let seed = 11;
    // The generator's high bits: its low ones repeat within a few calls.
    const next = (n: number): number => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return Math.floor((seed / 2 ** 31) * n);
    };
    const texts = ['', 'a', 'é', '日本語のタイトル', '\u{1F3AC} film', 'x'.repeat(200), 'y'.repeat(20_000)];
    const part = (): unknown => {
      const pick = next(4);
      if (pick === 0) return null;
      const text = texts[next(texts.length)] as string;
      return pick === 1 ? Buffer.from(text) : text;
    };
    const headerSets: Array<Record<string, unknown> | undefined> = [
      undefined,
      { 'schema-fingerprint': 'abcdef0123456789', 'observation-type': 'AvailabilityObserved' },
      { tags: ['a', Buffer.from('b'), 'c'], 'é': 'ü' },
      // Names kafkajs's fold reads through the object's prototype, and one it defines as its own.
      { toString: 'x', constructor: ['y', 'z'], ['__proto__']: 'p' },
    ];
    const deltas = [0, 1, 63, 64, -1, -65, 8191, 8192, 2 ** 20, 2 ** 27 - 1, -(2 ** 27), 2 ** 27, 2 ** 30 - 1, -(2 ** 30)];
    const contexts: RecordBatchContext[] = [
      { firstOffset: '0', firstTimestamp: '1796604625548', magicByte: 2, isControlBatch: false, timestampType: 0, maxTimestamp: '1796604625600' },
      { firstOffset: '123456789012345', firstTimestamp: '-1', magicByte: 2, isControlBatch: true, timestampType: 0, maxTimestamp: '-1' },
      // Past ours: 16 digits, so kafkajs's Long arithmetic reads these.
      { firstOffset: '9007199254740993', firstTimestamp: '1796604625548', magicByte: 2, timestampType: 0, maxTimestamp: '0' },
      { firstOffset: '42', firstTimestamp: '9223372036854775807', magicByte: 2, timestampType: 0, maxTimestamp: '1' },
      { firstOffset: '42', firstTimestamp: '100', magicByte: 2, timestampType: 1, maxTimestamp: '1796604625600' },
      { firstOffset: '42', firstTimestamp: 'x', magicByte: 2, timestampType: 1, maxTimestamp: '' },
      {},
    ];
    const outcome = (decode: typeof decodeRecord, bytes: Buffer, context: RecordBatchContext | undefined): unknown => {
      const decoder = new Decoder(bytes);
      try {
        const record = decode(decoder, context);
        return { record, headerNames: Object.getOwnPropertyNames(record.headers), offset: decoder.offset };
      } catch (err) {
        return { threw: (err as Error).name, offset: decoder.offset };
      }
    };
    let fast = 0;
    for (let i = 0; i < 4000; i++) {
      const encoded = kafkajsRecord({
        offsetDelta: next(3) === 0 ? (deltas[next(deltas.length)] as number) : i,
        timestampDelta: deltas[next(deltas.length)] as number,
        key: part(),
        value: part(),
        ...(next(2) === 0 ? {} : { headers: headerSets[next(headerSets.length)] }),
      });
      // As kafkajs's batch decoder hands it over: the record without its length prefix.
      const whole = Buffer.from(encoded.buf.subarray(0, encoded.offset));
      const lengthBytes = whole.findIndex((b) => b < 0x80) + 1;
      let bytes = whole.subarray(lengthBytes);
      // Now and then a record cut short.
      if (next(8) === 0) bytes = bytes.subarray(0, next(bytes.length + 1));
      const context = next(10) === 0 ? undefined : contexts[next(contexts.length)];
      const theirs = outcome(kafkajsRecordDecoder, bytes, context);
      const ours = outcome(decodeRecord, bytes, context);
      assert.deepEqual(ours, theirs, `record ${i} (${bytes.toString('hex').slice(0, 80)}, ${JSON.stringify(context)})`);
      if (!('threw' in (theirs as object)) && (theirs as { record: { value: unknown } }).record.value !== null) fast += 1;
    }
    assert.ok(fast > 800, `${fast} of 4000 decoded`);
    // Records no producer of kafkajs writes (a broker refuses most): varints longer than they
    // need, lengths negative or past the end. Not a header count past the end: kafkajs's own
    // decoder believes any, and runs out of memory reading 2^27 headers that are not there.
    const crafted = [
      '00 80808080 00 02 02 6b 02 76 00', // a 5-byte timestamp delta for 0
      '00 02 8080808000 02 6b 02 76 00', // a 5-byte offset delta
      '00 02 02 03 6b 02 76 00', // key length -2: kafkajs reads it by moving back
      '00 02 02 7e 6b', // key length 63, past the end
      '00 02 02 01 05 76 00', // value length -3
      '00 02 02 01 01 01', // header count -1: none
      '00 02 02 01 01 02 03 6b 02 76', // a header name of length -2
      'ff 02 02 01 01 00', // attributes -1
      '00 ffffffff0f 02 01 01 00', // the largest 5-byte varint
      '',
    ];
    for (const hex of crafted) {
      const bytes = Buffer.from(hex.replaceAll(' ', ''), 'hex');
      for (const context of contexts) {
        assert.deepEqual(outcome(decodeRecord, bytes, context), outcome(kafkajsRecordDecoder, bytes, context), `${hex} ${JSON.stringify(context)}`);
      }
    }
  });

  it('grouping: kafkajs’s own partitions, in its order, each with its messages in order (seeded)', function () {
    let seed = 5;
    const next = (n: number): number => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed % n;
    };
    for (let i = 0; i < 500; i++) {
      const partitions = next(6);
      const input: GroupingInput = {
        topic: 't',
        partitionMetadata: Array.from({ length: partitions }, (_p, partitionId) => ({ partitionId })),
        messages: Array.from({ length: next(60) }, (_m, k) => ({ key: `k${k}` })),
        // Numbers, and now and then a string key, as a custom partitioner may answer.
        partitioner: ({ message }) => (next(10) === 0 ? `p${(message as { key: string }).key.length}` : next(Math.max(partitions, 1))),
      };
      const before = seed;
      const theirs = kafkajsGrouping(input);
      seed = before;
      const ours = groupMessagesPerPartition(input);
      assert.deepEqual(ours, theirs, `grouping ${i}`);
      assert.deepEqual(Object.keys(ours), Object.keys(theirs), `grouping ${i}: key order`);
      for (const key of Object.keys(ours)) for (const [k, m] of (ours[key] as unknown[]).entries()) assert.equal(m, (theirs[key] as unknown[])[k]);
    }
  });

  it('murmur2: the Java client’s hashes, and kafkajs’s own for any key (seeded)', function () {
    // Kafka's own test vectors (the Java client's UtilsTest): a key is partitioned as every other client does.
    const java: Array<[string, number]> = [
      ['21', -973932308],
      ['foobar', -790332482],
      ['a-little-bit-long-string', -985981536],
      ['a-little-bit-longer-string', -1486304829],
      ['lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8', -58897971],
      ['abc', 479470107],
    ];
    for (const [key, hash] of java) {
      assert.equal(murmur2(key), hash, key);
      assert.equal(murmur2(Buffer.from(key)), hash, `${key} as bytes`);
    }
    let seed = 11;
    const next = (n: number): number => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed % n;
    };
    // Every length's tail (0-3 bytes after the words), bytes above 0x7f (the sign of a word), and
    // keys as kafkajs takes them: Buffers, strings (non-ASCII too), numbers.
    for (let i = 0; i < 3000; i++) {
      const key = Buffer.from(Array.from({ length: i % 67 }, () => next(256)));
      assert.equal(murmur2(key), kafkajsMurmur2(key), key.toString('hex'));
    }
    for (const key of ['', 'é', 'availability-mv00001234-US', '日本語のキー', 12345, -7]) assert.equal(murmur2(key), kafkajsMurmur2(key), String(key));
  });

  it('partitioner: kafkajs’s own partition for any message; round robin over the partitions with a leader when there is no key', function () {
    let seed = 13;
    const next = (n: number): number => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed % n;
    };
    const ours = partitionerFactory(murmur2)();
    const theirs = kafkajsPartitionerFactory(kafkajsMurmur2)();
    for (let i = 0; i < 2000; i++) {
      const partitionMetadata = Array.from({ length: 1 + next(20) }, (_p, partitionId) => ({ partitionId, leader: next(4) === 0 ? -1 : 1 }));
      const key = next(3) === 0 ? Buffer.from(Array.from({ length: next(40) }, () => next(256))) : `stream-${next(100_000)}`;
      const message = next(10) === 0 ? { key, partition: next(partitionMetadata.length) } : { key };
      const args = { topic: `t${next(3)}`, partitionMetadata, message };
      assert.equal(ours(args), theirs(args), JSON.stringify(args));
    }
    // No key: each partition with a leader in turn (the start is random, as kafkajs's), never one without.
    const partitionMetadata = [0, 1, 2, 3, 4].map((partitionId) => ({ partitionId, leader: partitionId === 2 ? -1 : 1 }));
    const picked = Array.from({ length: 8 }, () => ours({ topic: 'keyless', partitionMetadata, message: { key: null } }));
    assert.equal(new Set(picked.slice(0, 4)).size, 4, picked.join());
    assert.ok(!picked.includes(2), picked.join());
    assert.deepEqual(picked.slice(4), picked.slice(0, 4));
    // No partition has a leader: one of them all the same.
    assert.ok([0, 1].includes(ours({ topic: 'leaderless', partitionMetadata: [0, 1].map((partitionId) => ({ partitionId, leader: -1 })), message: {} })));
  });

  it('framing: the bytes of kafkajs’s own for any request, in one buffer of its size; a payload that is no encoder refused alike', async function () {
    const Encoder = require('kafkajs/src/protocol/encoder.js') as new () => { writeBuffer(b: Buffer): unknown };
    for (const [i, clientId] of ['marquee', '', 'é-client', null].entries()) {
      for (const size of [0, 1, 100, 5000, 70_000]) {
        const payload = new Encoder();
        payload.writeBuffer(randomBytes(size));
        const input: FrameInput = { correlationId: 7 + i * size, clientId, request: { apiKey: i, apiVersion: size % 13, encode: async () => payload } };
        const ours = await frameRequest(input);
        assert.deepEqual((ours as unknown as { buffer: Buffer }).buffer, (await kafkajsFrame(input) as unknown as { buffer: Buffer }).buffer, `${clientId} ${size}`);
        // Exactly its size (kafkajs's encoders are powers of two, or the pool's slice of one).
        assert.equal(ours.buf.length, ours.offset);
      }
    }
    const bad: FrameInput = { correlationId: 1, clientId: 'c', request: { apiKey: 0, apiVersion: 0, encode: async () => ({ not: 'an encoder' }) } };
    await assert.rejects(frameRequest(bad), { message: 'value should be an instance of Encoder' });
    await assert.rejects(kafkajsFrame(bad), { message: 'value should be an instance of Encoder' });
  });

  describe('produce request', function () {
    const NOW = 1_765_000_000_123;
    let realNow: () => number;
    // kafkajs stamps each partition's batch with Date.now(): the same instant on both sides.
    beforeEach(() => {
      realNow = Date.now;
      Date.now = () => NOW;
    });
    afterEach(() => {
      Date.now = realNow;
    });
    const theirsOf = async (input: ProduceInput): Promise<Buffer> => Buffer.from((await (kafkajsProduce as unknown as (i: ProduceInput) => { encode(): Promise<{ buffer: Buffer }> })(input).encode()).buffer);

    it('the payload kafkajs’s own encoder gives, for any request (seeded)', async function () {
      let seed = 11;
      const next = (n: number): number => {
        seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
        return seed % n;
      };
      // ASCII (written as Latin-1), Latin-1 beyond ASCII, other scripts and a lone surrogate (written as UTF-8).
      const texts = ['', 'k', 'media:movie:42', '{"type":"MediaObserved"}', 'é', 'caf\u00e9 \u00ff', '日本語', 'x\ud83d', 'z'.repeat(3000)];
      const Long = createRequire(import.meta.url)('kafkajs/src/utils/long.js') as { fromValue(v: unknown): unknown };
      for (let i = 0; i < 300; i++) {
        const message = () => ({
          key: next(4) === 0 ? null : (texts[next(texts.length)] as string),
          value: next(3) === 0 ? Buffer.from(texts[next(texts.length)] as string) : (texts[next(texts.length)] as string),
          ...(next(3) === 0 ? { headers: { 'observation-type': 'AvailabilityObserved', extra: [Buffer.from('a'), 'b'] } } : {}),
          // Absent (the batch takes now), numbers, and strings as a caller may pass them.
          ...[{}, { timestamp: NOW - next(100_000) }, { timestamp: String(NOW + next(1000)) }][next(3)],
        });
        const input: ProduceInput = {
          acks: [-1, 0, 1][next(3)] as number,
          timeout: 30_000,
          ...(next(2) === 0 ? {} : { transactionalId: next(2) === 0 ? null : `marquee-events-${next(9)}` }),
          ...(next(2) === 0 ? {} : { producerId: Long.fromValue(next(1_000_000)), producerEpoch: next(5) }),
          topicData: Array.from({ length: 1 + next(3) }, (_t, t) => ({
            topic: `marquee.events.${t}${'é'.repeat(next(2))}`,
            partitions: Array.from({ length: 1 + next(4) }, (_p, p) => ({
              partition: p,
              ...(next(2) === 0 ? {} : { firstSequence: next(100_000) }),
              messages: Array.from({ length: next(40) }, message),
            })),
          })),
        };
        const ours = encodeProduce(input, nativeChecksum as (b: Buffer) => number);
        assert.ok(ours !== null);
        // One buffer of exactly the payload's size (kafkajs's own are powers of two).
        assert.equal(ours.buf.length, ours.offset, `request ${i}`);
        assert.deepEqual(bytes(ours), await theirsOf(input), `request ${i}`);
      }
    });

    it('is what kafkajs’s produce requests (v3 to v7) encode with, uncompressed; compressed ones stay kafkajs’s', async function () {
      const input: ProduceInput = { acks: -1, timeout: 1000, topicData: [{ topic: 't', partitions: [{ partition: 0, messages: [{ key: 'a', value: 'b' }] }] }] };
      const r = createRequire(import.meta.url);
      const expected = await theirsOf(input);
      for (const version of [3, 5, 7]) {
        const request = r(`kafkajs/src/protocol/requests/produce/v${version}/request.js`) as (i: ProduceInput) => { apiVersion: number; encode(): Promise<{ buf: Buffer; offset: number }> };
        const encoded = await request(input).encode();
        assert.equal(request(input).apiVersion, version);
        assert.deepEqual(bytes(encoded), expected);
        assert.equal(encoded.buf.length, encoded.offset, `v${version}: our exact-size payload`);
      }
      // GZIP: kafkajs compresses the records itself, so its encoder writes the request.
      const gzip = { ...input, compression: 1 };
      const v7 = r('kafkajs/src/protocol/requests/produce/v7/request.js') as (i: ProduceInput) => { encode(): Promise<{ buffer: Buffer }> };
      assert.deepEqual((await v7(gzip).encode()).buffer, await theirsOf(gzip));
    });

    it('hands a record it cannot write to kafkajs’s record encoder, and the request to kafkajs when that gives no encoder', function () {
      // A number is no key or value this encoder writes (kafkajs's own turns it into bytes, or refuses it).
      const input: ProduceInput = { acks: 1, timeout: 1000, topicData: [{ topic: 't', partitions: [{ partition: 0, messages: [{ value: 'x' }, { value: 42 }] }] }] };
      const handed: RecordInput[] = [];
      const fallback = (r: RecordInput) => {
        handed.push(r);
        return {} as { buf: Buffer; offset: number };
      };
      assert.equal(encodeProduce(input, nativeChecksum as (b: Buffer) => number, fallback), null);
      assert.deepEqual(handed.map((r) => [r.value, r.offsetDelta]), [[42, 1]]);
    });
  });
});

describe("kafkajs's transaction coordinator lookup, remembered (kafkajsModules.ts)", function () {
  /** A broker as kafkajs's: its requests answer or fail as `fail` says, and it may drop its connection. */
  class FakeBroker implements CoordinatorBroker {
    connected = true;
    /** What its requests fail with; null: they answer. */
    failure: Error | null = null;
    constructor(readonly id: number) {}
    isConnected(): boolean {
      return this.connected;
    }
    async endTxn(): Promise<number> {
      if (this.failure !== null) throw this.failure;
      return this.id;
    }
  }
  /** A lookup that hands out a new broker each time it is asked, as after a coordinator moved. */
  function fakeFind() {
    const asked: CoordinatorQuery[] = [];
    const brokers: FakeBroker[] = [];
    const find = async function (this: object, query: CoordinatorQuery): Promise<CoordinatorBroker> {
      asked.push(query);
      const broker = new FakeBroker(brokers.length);
      brokers.push(broker);
      return broker;
    };
    return { asked, brokers, lookup: cachingCoordinatorLookup(find) };
  }
  const txn = (groupId = 'events-writer-0'): CoordinatorQuery => ({ groupId, coordinatorType: TRANSACTION_COORDINATOR });
  const endTxn = (b: CoordinatorBroker) => (b as FakeBroker).endTxn();

  it("is in place of kafkajs's, for every cluster kafkajs makes", function () {
    const cluster = createRequire(import.meta.url)('kafkajs/src/cluster/index.js') as { prototype: { findGroupCoordinator: unknown } };
    assert.notEqual(cluster.prototype.findGroupCoordinator, kafkajsFindCoordinator);
    assert.equal(typeof kafkajsFindCoordinator, 'function');
  });

  it("asks once for a transactional id's coordinator, per cluster", async function () {
    const { asked, lookup } = fakeFind();
    const [a, b] = [{}, {}];
    const first = await lookup.call(a, txn());
    assert.equal(await endTxn(await lookup.call(a, txn())), await endTxn(first));
    await lookup.call(a, txn());
    assert.equal(asked.length, 1);
    await lookup.call(b, txn());
    await lookup.call(a, txn('another-writer'));
    assert.equal(asked.length, 3);
  });

  /** A broker's answer as kafkajs throws it: an error with the protocol's type. */
  const answer = (type: string) => Object.assign(new Error(type), { name: 'KafkaJSProtocolError', type });

  for (const failure of [answer('NOT_COORDINATOR_FOR_GROUP'), answer('TRANSACTION_COORDINATOR_FENCED'), Object.assign(new Error('Connection closed'), { name: 'KafkaJSConnectionClosedError' })]) {
    it(`asks again after a request to the coordinator failed with ${failure.message}, and the failure still reaches the caller`, async function () {
      const { asked, brokers, lookup } = fakeFind();
      const cluster = {};
      const broker = await lookup.call(cluster, txn());
      (brokers[0] as FakeBroker).failure = failure;
      await assert.rejects(endTxn(broker), (err) => err === failure);
      const next = await lookup.call(cluster, txn());
      assert.equal(asked.length, 2);
      assert.equal(await endTxn(next), 1);
    });
  }

  it('keeps the coordinator after an answer only the coordinator gives (CONCURRENT_TRANSACTIONS, a fenced epoch)', async function () {
    const { asked, brokers, lookup } = fakeFind();
    const cluster = {};
    const broker = await lookup.call(cluster, txn());
    for (const type of ['CONCURRENT_TRANSACTIONS', 'INVALID_PRODUCER_EPOCH', 'GROUP_LOAD_IN_PROGRESS']) {
      (brokers[0] as FakeBroker).failure = answer(type);
      await assert.rejects(endTxn(broker), new RegExp(type));
    }
    (brokers[0] as FakeBroker).failure = null;
    assert.equal(await endTxn(await lookup.call(cluster, txn())), 0);
    assert.equal(asked.length, 1);
  });

  it('asks again once the coordinator it knows is no longer connected', async function () {
    const { asked, brokers, lookup } = fakeFind();
    const cluster = {};
    await lookup.call(cluster, txn());
    (brokers[0] as FakeBroker).connected = false;
    assert.equal(await endTxn(await lookup.call(cluster, txn())), 1);
    assert.equal(await endTxn(await lookup.call(cluster, txn())), 1);
    assert.equal(asked.length, 2);
  });

  it('remembers no failed lookup', async function () {
    let calls = 0;
    const lookup = cachingCoordinatorLookup(async function () {
      calls += 1;
      if (calls === 1) throw new Error('COORDINATOR_NOT_AVAILABLE');
      return new FakeBroker(calls);
    });
    const cluster = {};
    await assert.rejects(lookup.call(cluster, txn()), /COORDINATOR_NOT_AVAILABLE/);
    assert.equal(await endTxn(await lookup.call(cluster, txn())), 2);
    await lookup.call(cluster, txn());
    assert.equal(calls, 2);
  });

  it("leaves a consumer group's coordinator to kafkajs: asked every time", async function () {
    const { asked, lookup } = fakeFind();
    const cluster = {};
    await lookup.call(cluster, { groupId: 'g' });
    await lookup.call(cluster, { groupId: 'g', coordinatorType: 0 });
    assert.equal(asked.length, 2);
  });
});
