/**
 * The records of the Kafka event log: how the writer turns an event into a record's value and
 * headers, and how every reader turns a record back into the event (docs/kafka-event-log.md,
 * "Record"). Two kinds of value, told apart by their first bytes, both read by every reader:
 *
 * - Avro (`C3 01`, then the writer schema's fingerprint and the body): the event as the
 *   contract's codec encodes it (`contracts/codec.ts`, `contracts/schemas/events`), so any Avro
 *   reader with the schemas decodes it and a later version of the type resolves it. The stream
 *   is the record's key, the revision and the time recorded are its headers `revision` and
 *   `recorded-at`. Written for the event types with a field-by-field writer that checks as it
 *   writes (OfferAdded: 209,782 of the sample's 252,681 events): avsc's generic writer, with
 *   the check the codec makes, took longer than `JSON.stringify` for every type
 *   (docs/performance.md).
 * - JSON (`{`): the event with its `streamId`, `revision` and `recordedAt`, no headers needed.
 *   Every other event, an event its type's writer refuses (one that does not match its schema
 *   keeps every field so), and every record written before the Avro records (logs from before
 *   2026-12-07 hold JSON only; their older records may carry an `event-type` header, ignored).
 */
import { codec } from '../../contracts/codec.ts';
import { AppError } from '../../contracts/errors.ts';
import type { DomainEvent } from '../../contracts/events.ts';
import type { LoggedEvent } from './eventLogIndex.ts';

export const REVISION_HEADER = 'revision';
export const RECORDED_AT_HEADER = 'recorded-at';

/** One record of the log as the writer hands it to kafkajs. */
export interface LogMessage {
  key: string;
  value: string | Buffer;
  headers?: Record<string, string>;
  partition: 0;
}

/**
 * An OfferAdded is ~250 bytes. A slab with less than the margin left is not written into: the
 * next one is taken first, so any event up to the margin's size finds room, and one that does
 * not fit where it is written is kept as JSON (the writer cannot tell a record too long for its
 * room from one it refuses, and trying again elsewhere cost a fresh slab for every event of
 * another type).
 */
const SLAB_BYTES = 1 << 20;
const SLAB_MARGIN = 64 * 1024;

/**
 * The writer's encoder. Avro values are written into slabs of 1 MB that are reused by the next
 * transaction (`reset`): a value is a view into one, so every value of a transaction must have
 * been sent before `reset` (the writer sends one transaction at a time and resets only when it
 * plans the next).
 */
export interface LogEncoder {
  /**
   * The record of `event` at `revision` of `stream`, recorded at `recordedAt`; `logged`, that
   * event as the log holds it (`loggedEvent`) when the caller has it already, is what a JSON
   * record writes.
   */
  message(stream: string, event: DomainEvent, revision: number, recordedAt: string, logged?: LoggedEvent): LogMessage;
  /** Every slab free again: the values handed out before are no longer read. */
  reset(): void;
}

export function logEncoder(): LogEncoder {
  const slabs: Buffer[] = [];
  let slab = 0;
  let at = 0;

  function current(): Buffer {
    let buf = slabs[slab];
    if (buf === undefined) {
      buf = Buffer.allocUnsafeSlow(SLAB_BYTES);
      slabs.push(buf);
    }
    return buf;
  }

  function avro(event: DomainEvent): Buffer | null {
    let buf = current();
    if (buf.length - at < SLAB_MARGIN) {
      slab += 1;
      at = 0;
      buf = current();
    }
    const end = codec.encodeEventInto(event, buf, at);
    // No writer for its type, refused by it, or longer than the room left: kept as JSON.
    if (end === null) return null;
    const value = buf.subarray(at, end);
    at = end;
    return value;
  }

  return {
    message(stream, event, revision, recordedAt, logged) {
      const value = avro(event);
      if (value !== null) {
        return { key: stream, value, headers: { [REVISION_HEADER]: String(revision), [RECORDED_AT_HEADER]: recordedAt }, partition: 0 };
      }
      return { key: stream, value: JSON.stringify(logged ?? loggedEvent(stream, event, revision, recordedAt)), partition: 0 };
    },
    reset() {
      slab = 0;
      at = 0;
    },
  };
}

/** An event as the log holds it, as a JSON record writes it and as readers answer it: its fields, then the log's. */
export function loggedEvent(stream: string, event: DomainEvent, revision: number, recordedAt: string): LoggedEvent {
  return { ...event, streamId: stream, revision, recordedAt } as LoggedEvent;
}

/** Bytes a message takes in a produce request, near enough for sizing requests. */
export function messageBytes(message: LogMessage): number {
  const value = typeof message.value === 'string' ? Buffer.byteLength(message.value) : message.value.length;
  return message.headers === undefined ? value : value + 48;
}

/** A consumed record as kafkajs hands it over. */
export interface ConsumedRecord {
  offset: string;
  key: Buffer | null;
  value: Buffer | null;
  headers?: Record<string, Buffer | string | Array<Buffer | string> | undefined>;
}

function header(record: ConsumedRecord, name: string): string | undefined {
  const value = record.headers?.[name];
  const one = Array.isArray(value) ? value[0] : value;
  return one === undefined ? undefined : one.toString();
}

function unreadable(record: ConsumedRecord, why: string, cause?: unknown): AppError {
  return new AppError('internal', `Kafka event log: the record at offset ${record.offset} is unreadable: ${why}`, cause === undefined ? {} : { cause });
}

/** The event of a record (with a value), in either kind; throws AppError `internal` naming the offset for one that is neither. */
export function decodeLogRecord(record: ConsumedRecord & { value: Buffer }): LoggedEvent {
  const { value } = record;
  if (value[0] === 0x7b) {
    try {
      return JSON.parse(value.toString('utf8')) as LoggedEvent;
    } catch (err) {
      throw unreadable(record, (err as Error).message, err);
    }
  }
  if (value[0] === 0xc3 && value[1] === 0x01) {
    let event: DomainEvent;
    try {
      event = codec.decodeEvent(value);
    } catch (err) {
      throw unreadable(record, (err as Error).message, err);
    }
    const revision = Number(header(record, REVISION_HEADER));
    const recordedAt = header(record, RECORDED_AT_HEADER);
    if (record.key === null || !Number.isSafeInteger(revision) || revision < 0 || recordedAt === undefined) {
      throw unreadable(record, `an Avro record needs its stream as the key and the headers ${REVISION_HEADER} and ${RECORDED_AT_HEADER}`);
    }
    return loggedEvent(record.key.toString(), event, revision, recordedAt);
  }
  throw unreadable(record, `its value starts with neither '{' (JSON) nor C3 01 (Avro) but ${value.subarray(0, 2).toString('hex') || 'nothing'}`);
}
