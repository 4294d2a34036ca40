/**
 * The dead-letter topic of the Kafka observation bus (`<prefix>observations.dead-letter`, one
 * partition so it lists oldest first). A record keeps what was refused as bytes plus headers:
 *
 * - `dead-letter-reason`, `dead-letter-source`, `dead-letter-at` (RFC 3339);
 * - `original-topic`, `original-partition`, `original-offset` when it came from a Kafka topic;
 * - `payload-encoding`: `avro` (the record bytes as they arrived or as the observation encodes;
 *   listed as the decoded observation when they decode, else as base64) or `json` (anything
 *   else ingest refused, e.g. an observation the schemas cannot carry).
 *
 * A poison record redelivered after a crash is written again; listing keeps the first of each
 * `(source, reason)`, as the local inbox does when it writes.
 */
import { randomUUID } from 'node:crypto';
import type { Admin, IHeaders, Kafka, KafkaMessage, Message } from 'kafkajs';
import { decodeObservation, encodeObservation } from '../../contracts/codec.ts';
import type { Observation } from '../../contracts/observations.ts';
import type { DeadLetter } from '../../contracts/ports.ts';
import { kafkaError } from './client.ts';
import { parseSource } from './topics.ts';

export type PayloadEncoding = 'avro' | 'json';

/** The dead-letter message of a refused record. */
export function deadLetterMessage(input: {
  source: string;
  reason: string;
  at: string;
  value: Buffer;
  encoding: PayloadEncoding;
}): Message {
  const headers: IHeaders = {
    'dead-letter-reason': input.reason,
    'dead-letter-source': input.source,
    'dead-letter-at': input.at,
    'payload-encoding': input.encoding,
  };
  const original = parseSource(input.source);
  if (original) {
    headers['original-topic'] = original.topic;
    headers['original-partition'] = String(original.partition);
    headers['original-offset'] = original.offset;
  }
  return { key: input.source, value: input.value, headers };
}

/** The bytes and encoding a refused observation or payload is kept as. */
export function payloadBytes(payload: { observation: Observation } | { payload: unknown }): { value: Buffer; encoding: PayloadEncoding } {
  if ('observation' in payload) {
    try {
      return { value: encodeObservation(payload.observation), encoding: 'avro' };
    } catch {
      // Refused because the schemas cannot carry it: keep it readable instead.
      return { value: jsonBytes(payload.observation), encoding: 'json' };
    }
  }
  if (payload.payload instanceof Uint8Array) return { value: Buffer.from(payload.payload), encoding: 'avro' };
  return { value: jsonBytes(payload.payload ?? null), encoding: 'json' };
}

/** JSON that never throws on a BigInt (written as its digits): a dead letter must always be writable. */
function jsonBytes(value: unknown): Buffer {
  return Buffer.from(JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)) ?? 'null');
}

function header(message: KafkaMessage, name: string): string | undefined {
  const value = message.headers?.[name];
  if (value === undefined) return undefined;
  const first = Array.isArray(value) ? value[0] : value;
  return first === undefined ? undefined : first.toString();
}

export function toDeadLetter(message: KafkaMessage, partition: number): DeadLetter {
  const value = message.value ?? Buffer.alloc(0);
  let payload: unknown;
  if (header(message, 'payload-encoding') === 'json') {
    payload = JSON.parse(value.toString('utf8'));
  } else {
    try {
      payload = decodeObservation(value);
    } catch {
      payload = value.toString('base64');
    }
  }
  return {
    id: `${partition}-${message.offset}`,
    reason: header(message, 'dead-letter-reason') ?? '',
    payload,
    source: header(message, 'dead-letter-source') ?? '',
    at: header(message, 'dead-letter-at') ?? new Date(Number(message.timestamp)).toISOString(),
  };
}

/**
 * The records the dead-letter topic keeps, from its partitions' offsets alone (the topic is
 * neither compacted nor written in transactions, so every offset between low and high is one).
 * `status` read up to 100,000 of them to count them, and counted no further.
 */
export async function countDeadLetters(admin: Admin, topic: string): Promise<number> {
  try {
    const ends = await admin.fetchTopicOffsets(topic);
    return ends.reduce((sum, p) => sum + Number(BigInt(p.high) - BigInt(p.low)), 0);
  } catch (err) {
    throw kafkaError(err, `reading the offsets of ${topic}`);
  }
}

/**
 * Reads the dead-letter topic from its start up to its end as of the call, with a throwaway
 * consumer group (deleted afterwards): kafkajs has no group-less consumer.
 */
export async function readDeadLetters(input: {
  kafka: Kafka;
  admin: Admin;
  topic: string;
  limit: number;
  /** Gives up after this long, in ms. */
  timeoutMs: number;
}): Promise<DeadLetter[]> {
  const { kafka, admin, topic, limit } = input;
  let ends: Array<{ partition: number; high: string; low: string }>;
  try {
    ends = await admin.fetchTopicOffsets(topic);
  } catch (err) {
    throw kafkaError(err, `reading the offsets of ${topic}`);
  }
  const highOf = new Map<number, bigint>();
  for (const p of ends) if (BigInt(p.high) > BigInt(p.low)) highOf.set(p.partition, BigInt(p.high));
  if (highOf.size === 0 || limit <= 0) return [];

  const groupId = `${topic}.reader-${randomUUID()}`;
  const consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 100, retry: { retries: 3 } });
  const found: Array<{ letter: DeadLetter; partition: number; offset: bigint }> = [];
  const seen = new Set<string>();
  let finish: (err?: unknown) => void = () => {};
  const finished = new Promise<void>((resolve, reject) => {
    finish = (err) => (err === undefined ? resolve() : reject(err));
  });
  const timer = setTimeout(() => finish(new Error(`timed out after ${input.timeoutMs} ms`)), input.timeoutMs);
  try {
    consumer.on(consumer.events.CRASH, (e) => finish(e.payload.error));
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachBatch: async ({ batch }) => {
        const high = highOf.get(batch.partition);
        if (high === undefined) return;
        for (const message of batch.messages) {
          const offset = BigInt(message.offset);
          if (offset >= high) break;
          const letter = toDeadLetter(message, batch.partition);
          const key = `${letter.source}\u0000${letter.reason}`;
          if (!seen.has(key)) {
            seen.add(key);
            found.push({ letter, partition: batch.partition, offset });
          }
        }
        if (BigInt(batch.lastOffset()) + 1n >= high) highOf.delete(batch.partition);
        if (highOf.size === 0 || found.length >= limit) finish();
      },
    });
    await finished;
  } catch (err) {
    throw kafkaError(err, `reading the dead letters of ${topic}`);
  } finally {
    clearTimeout(timer);
    await consumer.disconnect().catch(() => {});
    // Best effort: a reader group that outlives its use only clutters the group list.
    await admin.deleteGroups([groupId]).catch(() => {});
  }
  found.sort((a, b) => a.partition - b.partition || (a.offset < b.offset ? -1 : a.offset > b.offset ? 1 : 0));
  return found.slice(0, limit).map((f) => f.letter);
}
