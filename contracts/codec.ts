/**
 * Binary codecs of observations and domain events: the bytes the local inbox stores and Kafka
 * carries. Each record uses Avro single-object encoding (`C3 01`, the 8-byte little-endian
 * Rabin fingerprint of the writer schema, then the Avro body), so a reader finds the writer
 * schema from the record itself and resolves it to the newest version it knows.
 *
 * Mapping between the TypeScript types and the Avro records:
 * - the record name is the `type`; the body holds the other top-level fields (`observationId`,
 *   `observedAt`, `data` for observations; `data`, `metadata` for events);
 * - `T | null` is the union `["null", T]` (default null); as avsc does, an absent (undefined)
 *   nullable field is accepted and written as null, so it reads back as null;
 * - EventMetadata's optional fields are nullable in Avro: an absent field is written as null,
 *   and a null is dropped when read, so `{}` round-trips as `{}`.
 */
import type avsc from 'avsc';
import { availabilityReader, availabilityWriter, offerAddedReader, offerAddedWriter, type BodyReader } from './availabilityAvro.ts';
import { AppError } from './errors.ts';
import type { DomainEvent, EventMetadata, EventType } from './events.ts';
import { EVENT_TYPES } from './events.ts';
import type { Observation, ObservationType } from './observations.ts';
import { OBSERVATION_TYPES } from './observations.ts';
import { domainRuleViolation } from './observationRules.ts';
import { buildSchemaRegistry, type SchemaKind, type SchemaRegistry, type VersionedSchema } from './schemaRegistry.ts';
import { SCHEMA_SOURCES } from './schemas/bundle.ts';

/** First two bytes of an Avro single-object encoded record. */
export const SINGLE_OBJECT_MAGIC = Buffer.from([0xc3, 0x01]);
const HEADER_LENGTH = 10;

export interface Codec {
  readonly registry: SchemaRegistry;
  /** Throws AppError `invalid_observation` naming the bad field. */
  encodeObservation(o: Observation): Buffer;
  /**
   * Encodes without checking, into `target` from `at`: for a producer whose observations are
   * checked where they are consumed instead (the sample crawl thread, appending to the local
   * inbox, whose consumer decodes and checks every record), so each observation is validated
   * once, not twice; it packs many records into one buffer. A value that does not match its
   * schema may encode to bytes that do not decode, or decode wrongly. Returns the record's end, or
   * a negative number when `target` is too short (grow it and call again; what was written past
   * `at` is garbage).
   */
  encodeObservationInto(o: Observation, target: Buffer, at: number): number;
  /** Throws AppError `invalid_observation` for bytes that are not a known observation record. */
  decodeObservation(buf: Uint8Array): Observation;
  /** null when valid (its schema and the domain rules of observationRules.ts), otherwise a reason naming the bad field. */
  validateObservation(o: unknown): string | null;
  /** Throws AppError `invalid_schema` when the event does not match its schema (a bug in decide). */
  encodeEvent(e: DomainEvent): Buffer;
  /**
   * The event's record (header and body, the bytes `encodeEvent` gives) written at `at` of
   * `target` by a field-by-field writer, checking as it writes what `encodeEvent` checks: the
   * record's end; null when its type has no such writer (OfferAdded has), when the event does
   * not match its schema, or when `target` is too short. Never throws: the caller keeps a null's
   * event another way (the Kafka event log, as JSON).
   */
  encodeEventInto(e: DomainEvent, target: Buffer, at: number): number | null;
  /** Throws AppError `invalid_schema` for bytes that are not a known event record. */
  decodeEvent(buf: Uint8Array): DomainEvent;
  validateEvent(e: unknown): string | null;
  /** Fingerprint (16 hex characters, header byte order) of the newest schema of a type. */
  schemaFingerprint(type: ObservationType | EventType): string;
}

const OBSERVATION_SET: ReadonlySet<string> = new Set(OBSERVATION_TYPES);
const EVENT_SET: ReadonlySet<string> = new Set(EVENT_TYPES);

export function createCodec(registry: SchemaRegistry): Codec {
  const resolvers = new Map<string, avsc.Resolver | null>();

  function latestOf(kind: SchemaKind, type: string): VersionedSchema {
    const schema = registry.latest(kind, type);
    if (!schema) throw new AppError('invalid_schema', `no schema for ${kind} type ${type}`);
    return schema;
  }

  /** The Avro body of a value, or a reason; extra properties count as errors (they would be lost). */
  function check(schema: VersionedSchema, body: unknown): string | null {
    // The common case first: avsc checks a valid value several times faster without an error
    // hook (no path kept per field); the hook runs only to name the bad field of an invalid one.
    if (schema.avro.isValid(body, { noUndeclaredFields: true })) return null;
    let reason: string | null = null;
    const hook = (prefix: string[]) => (path: string[], value: unknown, type: avsc.Type): void => {
      if (reason !== null) return;
      // A nullable field holding a wrong non-null value: look inside its one non-null branch,
      // so the reason names the innermost bad field (`offers[0].priceTypes[1]`).
      const branches = (type as avsc.Type & { types?: avsc.Type[] }).types;
      const inner = branches?.filter((b) => (b as avsc.Type & { typeName: string }).typeName !== 'null');
      const only = inner?.length === 1 ? inner[0] : undefined;
      const complex = ['record', 'array', 'map'].includes((only as { typeName?: string } | undefined)?.typeName ?? '');
      if (value !== null && value !== undefined && only && complex) {
        only.isValid(value, { noUndeclaredFields: true, errorHook: hook([...prefix, ...path]) });
        if (reason !== null) return;
      }
      reason = describeInvalid([...prefix, ...path], value, type);
    };
    const ok = schema.avro.isValid(body, { noUndeclaredFields: true, errorHook: hook([]) });
    return ok ? null : (reason ?? 'does not match its schema');
  }

  // The newest AvailabilityObserved (most records by far) is written and read field by field:
  // avsc's bytes and objects, faster (availabilityAvro.ts). Null when that schema is not the one
  // they were written for.
  const availability = registry.latest('observation', 'AvailabilityObserved') ?? null;
  const availabilityWrite = availability && availabilityWriter(availability.avro);
  // The same, checking as it writes what avsc's check would (see availabilityWriter): a
  // publish then writes such a record once instead of checking it, then writing it.
  const availabilityChecked = availability && availabilityWriter(availability.avro, true);
  const availabilityRead = availability && availabilityReader(availability.avro);
  const availabilityHeader = availability && Buffer.concat([SINGLE_OBJECT_MAGIC, availability.fingerprint]);
  // The newest OfferAdded likewise (most of the events ingest appends): checked as it is
  // written, for encodeEventInto, and read field by field.
  const offerAdded = registry.latest('event', 'OfferAdded') ?? null;
  const offerAddedChecked = offerAdded && offerAddedWriter(offerAdded.avro, true);
  const offerAddedRead = offerAdded && offerAddedReader(offerAdded.avro);
  const offerAddedHeader = offerAdded && Buffer.concat([SINGLE_OBJECT_MAGIC, offerAdded.fingerprint]);

  /** The body at `at`: the end, or a negative count of the bytes missing, as avsc's encode answers. */
  function encodeBody(schema: VersionedSchema, body: unknown, target: Buffer, at: number): number {
    return (schema === availability && availabilityWrite !== null ? availabilityWrite(body, target, at) : null) ?? schema.avro.encode(body, target, at);
  }

  /** Reused by encode: a record is written once, into it, and copied out once. */
  let scratch = Buffer.allocUnsafeSlow(64 * 1024);
  /**
   * The single-object record `write` writes after `schema`'s header; null when it gives up.
   * `write` answers the body's end, a negative count of the bytes missing (avsc: then the
   * buffer grows and it writes again), or null. A field-by-field writer gives up on a buffer
   * too short too; the record is then left to avsc, which grows it.
   */
  function encodeWith(schema: VersionedSchema, write: (target: Buffer, at: number) => number | null): Buffer | null {
    for (;;) {
      scratch.set(SINGLE_OBJECT_MAGIC, 0);
      scratch.set(schema.fingerprint, 2);
      const end = write(scratch, HEADER_LENGTH);
      if (end === null) return null;
      if (end >= 0) return Buffer.from(scratch.subarray(0, end));
      scratch = Buffer.allocUnsafeSlow(Math.max(scratch.length * 2, scratch.length - end));
    }
  }
  function encode(schema: VersionedSchema, body: unknown): Buffer {
    return encodeWith(schema, (target, at) => encodeBody(schema, body, target, at)) as Buffer;
  }

  /**
   * The record read by a field-by-field reader when its header is `header` (that reader's schema):
   * null when there is no such reader, the header is another, or the reader leaves it to avsc.
   */
  function readFast(read: BodyReader | null, header: Buffer | null, buf: Uint8Array, typeName: string): object | null {
    if (read === null || header === null || buf.length < HEADER_LENGTH) return null;
    const bytes = Buffer.isBuffer(buf) ? buf : Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
    if (bytes.compare(header, 0, HEADER_LENGTH, 0, HEADER_LENGTH) !== 0) return null;
    return read(bytes, HEADER_LENGTH, bytes.length, typeName);
  }

  /** Decodes with the writer schema named in the header, resolved to the newest reader version. */
  function decode(buf: Uint8Array, kind: SchemaKind): { type: string; body: Record<string, unknown> } {
    const bytes = Buffer.isBuffer(buf) ? buf : Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
    if (bytes.length < HEADER_LENGTH || bytes[0] !== 0xc3 || bytes[1] !== 0x01) {
      throw new Error('not an Avro single-object record (missing the C3 01 header)');
    }
    const hex = bytes.toString('hex', 2, HEADER_LENGTH);
    const writer = registry.byFingerprint(hex);
    if (!writer) throw new Error(`unknown writer schema fingerprint ${hex}`);
    if (writer.kind !== kind) throw new Error(`record is the ${writer.kind} ${writer.typeName}, not an ${kind}`);
    const reader = latestOf(kind, writer.typeName);
    let resolver = resolvers.get(hex);
    if (resolver === undefined) {
      resolver = reader === writer ? null : reader.avro.createResolver(writer.avro);
      resolvers.set(hex, resolver);
    }
    const payload = bytes.subarray(HEADER_LENGTH);
    let value: unknown;
    try {
      value = resolver ? reader.avro.fromBuffer(payload, resolver) : reader.avro.fromBuffer(payload);
    } catch (err) {
      throw new Error(`cannot decode the ${writer.typeName} v${writer.version} body: ${(err as Error).message}`);
    }
    // Plain objects already (schemaRegistry.ts decodeIntoPlainObjects).
    return { type: writer.typeName, body: value as Record<string, unknown> };
  }

  function observationBody(o: Observation): unknown {
    const { type: _type, ...body } = o;
    return body;
  }

  function validateObservation(o: unknown): string | null {
    if (typeof o !== 'object' || o === null) return 'observation: not an object';
    const type = (o as { type?: unknown }).type;
    if (typeof type !== 'string' || !OBSERVATION_SET.has(type)) return `type: unknown observation type ${JSON.stringify(type)}`;
    const observation = o as Observation;
    const reason = check(latestOf('observation', type), observationBody(observation));
    if (reason) return `${type}.${reason}`;
    return validateDecodedObservation(observation);
  }

  function eventBody(e: DomainEvent): unknown {
    const { type: _type, metadata, ...rest } = e;
    const m = metadata as EventMetadata | undefined;
    // Absent optional metadata is written as null (see the header comment).
    const normalized = typeof m === 'object' && m !== null
      ? { ...m, observationId: m.observationId ?? null, observedAt: m.observedAt ?? null, producer: m.producer ?? null }
      : m;
    return { ...rest, metadata: normalized };
  }

  function validateEvent(e: unknown): string | null {
    if (typeof e !== 'object' || e === null) return 'event: not an object';
    const type = (e as { type?: unknown }).type;
    if (typeof type !== 'string' || !EVENT_SET.has(type)) return `type: unknown event type ${JSON.stringify(type)}`;
    const reason = check(latestOf('event', type), eventBody(e as DomainEvent));
    return reason ? `${type}.${reason}` : null;
  }

  return {
    registry,
    encodeObservation(o) {
      if (availabilityChecked !== null && availability !== null && (o as { type?: unknown } | null)?.type === 'AvailabilityObserved') {
        const bytes = encodeWith(availability, (target, at) => availabilityChecked(o, target, at));
        if (bytes !== null) {
          // Written, so it is what the schema's check accepts: only the domain rules are left.
          const reason = validateDecodedObservation(o);
          if (reason) throw new AppError('invalid_observation', reason, { details: { reason } });
          return bytes;
        }
      }
      const reason = validateObservation(o);
      if (reason) throw new AppError('invalid_observation', reason, { details: { reason } });
      return encode(latestOf('observation', o.type), observationBody(o));
    },
    encodeObservationInto(o, target, at) {
      const schema = latestOf('observation', o.type);
      if (target.length < at + HEADER_LENGTH) return -1;
      target.set(SINGLE_OBJECT_MAGIC, at);
      target.set(schema.fingerprint, at + 2);
      // The observation itself, not a copy without its `type`: no observation schema declares a
      // `type` field, and avsc writes the declared fields only. It returns the end, or a negative
      // count of the bytes missing.
      return encodeBody(schema, o, target, at + HEADER_LENGTH);
    },
    decodeObservation(buf) {
      // The newest AvailabilityObserved, most records by far, without the fingerprint's hex.
      const read = readFast(availabilityRead, availabilityHeader, buf, 'AvailabilityObserved');
      if (read !== null) return read as Observation;
      let decoded: { type: string; body: Record<string, unknown> };
      try {
        decoded = decode(buf, 'observation');
      } catch (err) {
        throw new AppError('invalid_observation', (err as Error).message, { cause: err });
      }
      return { type: decoded.type, ...decoded.body } as Observation;
    },
    validateObservation,
    encodeEvent(e) {
      const reason = validateEvent(e);
      if (reason) throw new AppError('invalid_schema', reason, { details: { reason } });
      return encode(latestOf('event', e.type), eventBody(e));
    },
    encodeEventInto(e, target, at) {
      if (offerAddedChecked === null || offerAddedHeader === null || (e as { type?: unknown } | null)?.type !== 'OfferAdded') return null;
      if (target.length < at + HEADER_LENGTH) return null;
      offerAddedHeader.copy(target, at);
      return offerAddedChecked(e, target, at + HEADER_LENGTH);
    },
    decodeEvent(buf) {
      // The newest OfferAdded, most events by far, as decodeObservation reads an AvailabilityObserved.
      const read = readFast(offerAddedRead, offerAddedHeader, buf, 'OfferAdded');
      if (read !== null) return read as DomainEvent;
      let decoded: { type: string; body: Record<string, unknown> };
      try {
        decoded = decode(buf, 'event');
      } catch (err) {
        throw new AppError('invalid_schema', (err as Error).message, { cause: err });
      }
      const metadata: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(decoded.body['metadata'] as Record<string, unknown>)) {
        if (value !== null) metadata[key] = value;
      }
      return { type: decoded.type, data: decoded.body['data'], metadata } as DomainEvent;
    },
    validateEvent,
    schemaFingerprint(type) {
      return latestOf(OBSERVATION_SET.has(type) ? 'observation' : 'event', type).fingerprintHex;
    },
  };
}

function describeInvalid(path: string[], value: unknown, type: avsc.Type): string {
  const where = path.map((p) => (/^\d+$/.test(p) ? `[${p}]` : `.${p}`)).join('').replace(/^\./, '') || '(record)';
  if (value === undefined) return `${where}: missing`;
  const shown = JSON.stringify(value)?.slice(0, 80) ?? String(value);
  const t = type as avsc.Type & { typeName: string; types?: avsc.Type[]; symbols?: string[]; fields?: Array<{ name: string }> };
  if (t.typeName === 'record' && typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const declared = new Set((t.fields ?? []).map((f) => f.name));
    const extra = Object.keys(value).filter((k) => !declared.has(k));
    if (extra.length > 0) return `${where}: unknown field ${extra.join(', ')}`;
  }
  let expected: string = t.typeName;
  if (t.symbols) expected = `one of ${t.symbols.join(', ')}`;
  else if (t.types) expected = t.types.map((b) => b.name ?? (b as avsc.Type & { typeName: string }).typeName).join(' or ');
  else if (t.typeName === 'record') expected = `a ${t.name ?? 'record'}`;
  return `${where}: ${shown} is not ${expected === 'int' || expected === 'long' ? `an ${expected}` : expected}`;
}

/** The codec of the checked-in schemas. */
export const codec: Codec = createCodec(buildSchemaRegistry(SCHEMA_SOURCES));

export const encodeObservation = (o: Observation): Buffer => codec.encodeObservation(o);
export const encodeObservationInto = (o: Observation, target: Buffer, at: number): number => codec.encodeObservationInto(o, target, at);
export const decodeObservation = (buf: Uint8Array): Observation => codec.decodeObservation(buf);
export const validateObservation = (o: unknown): string | null => codec.validateObservation(o);
/**
 * The check left for a decoded observation: decoding it proved its schema, so only the domain
 * rules remain (the buses run this once per record; nothing downstream checks again).
 */
export function validateDecodedObservation(o: Observation): string | null {
  const reason = domainRuleViolation(o);
  return reason === null ? null : `${o.type}.${reason}`;
}
export const encodeEvent = (e: DomainEvent): Buffer => codec.encodeEvent(e);
export const decodeEvent = (buf: Uint8Array): DomainEvent => codec.decodeEvent(buf);
export const validateEvent = (e: unknown): string | null => codec.validateEvent(e);
export const schemaFingerprint = (type: ObservationType | EventType): string => codec.schemaFingerprint(type);
