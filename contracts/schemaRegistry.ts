/**
 * The Avro schema registry of Marquee, built from the `.avsc` sources under contracts/schemas
 * (pure: the caller hands in parsed JSON; infra/avro/loadSchemas.ts reads the files, and
 * contracts/schemas/bundle.ts carries the same sources for code that must not touch the disk).
 *
 * Source layout (paths relative to contracts/schemas, POSIX separators):
 * - `types/<Name>.avsc`: a shared named type (`marquee.<Name>`), referenced by full name;
 * - `observations/<Type>/v<N>.avsc`, `events/<Type>/v<N>.avsc`: one record per type and version,
 *   record name = the type name, namespace `marquee`, versions numbered from 1 without gaps.
 *
 * Each versioned schema is made self-contained by inlining the shared types it references, so
 * its fingerprint identifies the exact writer schema. A shared type is never changed in place:
 * a version that needs a different shape defines the record inline under a new name.
 */
import avsc from 'avsc';
import { AppError } from './errors.ts';

export type SchemaKind = 'observation' | 'event';

export interface SchemaSource {
  /** Path relative to the schemas directory, e.g. `events/OfferAdded/v1.avsc`. */
  path: string;
  /** The parsed JSON of the file. */
  schema: unknown;
  /** How errors name the file (an absolute path when loaded from disk). Default `path`. */
  file?: string;
}

export interface VersionedSchema {
  kind: SchemaKind;
  /** The observation or event type, which is also the record name. */
  typeName: string;
  version: number;
  /** The source it was built from, for messages. */
  file: string;
  avro: avsc.Type;
  /** Parsing Canonical Form of the schema, what the fingerprint is computed over. */
  canonical: string;
  /** CRC-64-AVRO (Rabin) fingerprint, 8 bytes little-endian as in the single-object header. */
  fingerprint: Buffer;
  /** `fingerprint` as 16 lower-case hex characters (the lookup key). */
  fingerprintHex: string;
}

export interface SchemaRegistry {
  /** Every version of every type. */
  readonly all: readonly VersionedSchema[];
  /** Versions of one type, oldest first; [] when unknown. */
  versions(kind: SchemaKind, typeName: string): readonly VersionedSchema[];
  /** The newest version of a type: what is written, and what older data is resolved to. */
  latest(kind: SchemaKind, typeName: string): VersionedSchema | undefined;
  byFingerprint(hex: string): VersionedSchema | undefined;
}

export const AVRO_NAMESPACE = 'marquee';

const VERSIONED = /^(observations|events)\/([A-Za-z][A-Za-z0-9]*)\/v([1-9][0-9]*)\.avsc$/;
const SHARED = /^types\/([A-Za-z][A-Za-z0-9]*)\.avsc$/;

function invalid(file: string, message: string, cause?: unknown): AppError {
  return new AppError('invalid_schema', `${file}: ${message}`, cause === undefined ? {} : { cause });
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Builds the registry; throws AppError `invalid_schema` naming the offending file. */
export function buildSchemaRegistry(sources: readonly SchemaSource[]): SchemaRegistry {
  const shared = new Map<string, unknown>();
  const versioned: Array<{ source: SchemaSource; kind: SchemaKind; typeName: string; version: number }> = [];

  for (const source of sources) {
    const file = source.file ?? source.path;
    const sharedMatch = SHARED.exec(source.path);
    const versionMatch = VERSIONED.exec(source.path);
    if (sharedMatch) {
      const name = sharedMatch[1] as string;
      const s = source.schema;
      if (!isObject(s) || s['name'] !== name || s['namespace'] !== AVRO_NAMESPACE) {
        throw invalid(file, `a shared type must be a named type "${name}" in namespace "${AVRO_NAMESPACE}"`);
      }
      shared.set(`${AVRO_NAMESPACE}.${name}`, s);
    } else if (versionMatch) {
      versioned.push({
        source,
        kind: versionMatch[1] === 'observations' ? 'observation' : 'event',
        typeName: versionMatch[2] as string,
        version: Number(versionMatch[3]),
      });
    } else {
      throw invalid(file, 'not a schema path: expected types/<Name>.avsc or {observations,events}/<Type>/v<N>.avsc');
    }
  }

  const byType = new Map<string, VersionedSchema[]>();
  const byFingerprint = new Map<string, VersionedSchema>();
  const all: VersionedSchema[] = [];

  for (const { source, kind, typeName, version } of versioned) {
    const file = source.file ?? source.path;
    const s = source.schema;
    if (!isObject(s) || s['type'] !== 'record' || s['name'] !== typeName || s['namespace'] !== AVRO_NAMESPACE) {
      throw invalid(file, `must be a record named "${typeName}" in namespace "${AVRO_NAMESPACE}"`);
    }
    let avro: avsc.Type;
    try {
      avro = avsc.Type.forSchema(inlineShared(s, shared, new Set()) as avsc.Schema, { wrapUnions: false, registry: {}, omitRecordMethods: true });
      decodeIntoPlainObjects(avro, new Set());
    } catch (err) {
      throw invalid(file, (err as Error).message, err);
    }
    const canonical = JSON.stringify(avro.schema());
    const fingerprint = rabinFingerprint(canonical);
    const entry: VersionedSchema = {
      kind, typeName, version, file, avro, canonical, fingerprint, fingerprintHex: fingerprint.toString('hex'),
    };
    const clash = byFingerprint.get(entry.fingerprintHex);
    if (clash) throw invalid(file, `has the same canonical form as ${clash.file}`);
    byFingerprint.set(entry.fingerprintHex, entry);
    const key = `${kind}:${typeName}`;
    byType.set(key, [...(byType.get(key) ?? []), entry]);
    all.push(entry);
  }

  for (const list of byType.values()) {
    list.sort((a, b) => a.version - b.version);
    list.forEach((entry, i) => {
      if (entry.version !== i + 1) throw invalid(entry.file, `version ${entry.version} leaves a gap: versions start at v1 and go up by one`);
      const previous = list[i - 1];
      if (!previous) return;
      // A new version must read everything the previous one wrote (contracts/schemas/README.md).
      try {
        entry.avro.createResolver(previous.avro);
      } catch (err) {
        throw invalid(entry.file, `cannot read data written with ${previous.file}: ${(err as Error).message}`, err);
      }
    });
  }

  return {
    all,
    versions: (kind, typeName) => byType.get(`${kind}:${typeName}`) ?? [],
    latest: (kind, typeName) => byType.get(`${kind}:${typeName}`)?.at(-1),
    byFingerprint: (hex) => byFingerprint.get(hex),
  };
}

const PRIMITIVES = new Set(['null', 'boolean', 'int', 'long', 'float', 'double', 'bytes', 'string']);

/**
 * Replaces the first reference to each shared type with its definition (later references stay
 * names, as Avro requires), walking only type positions, never defaults or docs.
 */
function inlineShared(node: unknown, shared: Map<string, unknown>, defined: Set<string>): unknown {
  if (typeof node === 'string') {
    if (PRIMITIVES.has(node)) return node;
    const full = node.includes('.') ? node : `${AVRO_NAMESPACE}.${node}`;
    const definition = shared.get(full);
    if (definition === undefined || defined.has(full)) return node;
    return inlineShared(definition, shared, defined);
  }
  if (Array.isArray(node)) return node.map((branch) => inlineShared(branch, shared, defined));
  if (!isObject(node)) return node;
  const out: Record<string, unknown> = { ...node };
  if (typeof node['name'] === 'string' && ['record', 'error', 'enum', 'fixed'].includes(node['type'] as string)) {
    const name = node['name'];
    const namespace = typeof node['namespace'] === 'string' ? node['namespace'] : AVRO_NAMESPACE;
    defined.add(name.includes('.') ? name : `${namespace}.${name}`);
  }
  switch (node['type']) {
    case 'record':
    case 'error':
      if (Array.isArray(node['fields'])) {
        out['fields'] = node['fields'].map((field: unknown) =>
          isObject(field) ? { ...field, type: inlineShared(field['type'], shared, defined) } : field);
      }
      break;
    case 'array':
      out['items'] = inlineShared(node['items'], shared, defined);
      break;
    case 'map':
      out['values'] = inlineShared(node['values'], shared, defined);
      break;
    default:
      // `{ "type": "marquee.Offer" }` or `{ "type": [..] }`: a wrapped type reference.
      if (typeof node['type'] !== 'string' || !PRIMITIVES.has(node['type'])) {
        out['type'] = inlineShared(node['type'], shared, defined);
      }
  }
  return out;
}

// CRC-64-AVRO, as specified in the Avro specification ("Schema Fingerprints").
const EMPTY = 0xc15d213aa4d7a795n;
const MASK = 0xffffffffffffffffn;
const TABLE: bigint[] = Array.from({ length: 256 }, (_, i) => {
  let fp = BigInt(i);
  for (let j = 0; j < 8; j += 1) fp = (fp >> 1n) ^ (EMPTY & -(fp & 1n) & MASK);
  return fp;
});

/** The 64-bit Rabin fingerprint of a string, 8 bytes little-endian. */
export function rabinFingerprint(text: string): Buffer {
  let fp = EMPTY;
  for (const byte of Buffer.from(text, 'utf8')) {
    fp = (fp >> 8n) ^ (TABLE[Number((fp ^ BigInt(byte)) & 0xffn)] as bigint);
  }
  const out = Buffer.alloc(8);
  out.writeBigUInt64LE(fp);
  return out;
}

/**
 * Makes avsc decode records straight into plain objects: it builds each record with `new` of a
 * generated class, and with that class's prototype set to Object.prototype the instances are
 * plain objects (no methods, `constructor === Object`), what callers compare, spread and store.
 * Copying every decoded value instead cost a second allocation of each observation and event
 * (a second of CPU and its garbage per sample day).
 */
function decodeIntoPlainObjects(type: avsc.Type, seen: Set<avsc.Type>): void {
  if (seen.has(type)) return;
  seen.add(type);
  const t = type as avsc.Type & {
    recordConstructor?: { prototype: object };
    fields?: Array<{ type: avsc.Type }>;
    itemsType?: avsc.Type;
    valuesType?: avsc.Type;
    types?: avsc.Type[];
  };
  if (t.recordConstructor) t.recordConstructor.prototype = Object.prototype;
  for (const field of t.fields ?? []) decodeIntoPlainObjects(field.type, seen);
  if (t.itemsType) decodeIntoPlainObjects(t.itemsType, seen);
  if (t.valuesType) decodeIntoPlainObjects(t.valuesType, seen);
  for (const branch of t.types ?? []) decodeIntoPlainObjects(branch, seen);
}
