/**
 * How a read-model document is stored in MongoDB: its fields as BSON fields beside the store's
 * own, so an operator can query, index and `mongosh` a read model like any collection.
 *
 *   { _id: key, _position: 42, title: 'Dune', offers: [...] }      a document (a JSON object)
 *   { _id: key, _position: 42, _value: 7 }                          any other JSON value
 *   { _id: key, _position: 42, _deleted: true }                     a deletion (a tombstone)
 *
 * Field names are escaped reversibly where MongoDB or FerretDB would refuse or misread them, and
 * so that no field of a read model can collide with the store's own (which all start with `_`):
 * `%` -> `%25`, `.` -> `%2E`, NUL -> `%00`, a leading `$` -> `%24`, a leading `_` -> `%5F`, and the
 * empty name -> `%` (no escaped name is a lone `%`). Most names (`title`, `offers`) are unchanged.
 *
 * FerretDB 1.24 refuses arrays of arrays, so an array inside an array is stored as the object
 * `{ '%a': [...] }`; `%a` cannot be an escaped name (an escaped `%` is followed by two hex
 * digits), so the decoding is unambiguous. The same shape is written to MongoDB 7 and FerretDB.
 *
 * Values follow JSON, the read models' contract: undefined fields are dropped, non-finite numbers
 * become null and a value with `toJSON` (a Date) is stored as what it returns, so a document reads
 * back exactly as `JSON.parse(JSON.stringify(doc))`.
 */
import { AppError } from '../../contracts/errors.ts';

export interface StoredRecord {
  _id: string;
  _position: number;
  _deleted?: true;
  _value?: unknown;
  /** The key's bucket in the key directory (keys.ts). */
  _b?: string;
  [field: string]: unknown;
}

const NESTED_ARRAY = '%a';

export function escapeField(name: string): string {
  if (name === '') return '%';
  const escaped = name.replace(/[%.\0]/g, (c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0').toUpperCase()}`);
  const first = escaped.charAt(0);
  return first === '$' ? `%24${escaped.slice(1)}` : first === '_' ? `%5F${escaped.slice(1)}` : escaped;
}

export function unescapeField(name: string): string {
  if (name === '%') return '';
  if (!name.includes('%')) return name;
  return name.replace(/%([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
}

function encodeValue(value: unknown, inArray: boolean): unknown {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value !== 'object') {
    throw new AppError('internal', `a read-model document holds a ${typeof value}, which JSON cannot represent`, { retriable: false });
  }
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return encodeValue((value as { toJSON(): unknown }).toJSON(), inArray);
  if (Array.isArray(value)) {
    // JSON writes undefined and functions in an array as null.
    const items = value.map((item) => (item === undefined || typeof item === 'function' ? null : encodeValue(item, true)));
    return inArray ? { [NESTED_ARRAY]: items } : items;
  }
  return encodeObject(value as Record<string, unknown>);
}

function encodeObject(object: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(object)) {
    if (field === undefined || typeof field === 'function' || typeof field === 'symbol') continue;
    out[escapeField(name)] = encodeValue(field, false);
  }
  return out;
}

function decodeValue(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(decodeValue);
  const object = value as Record<string, unknown>;
  const nested = object[NESTED_ARRAY];
  if (Array.isArray(nested) && Object.keys(object).length === 1) return nested.map(decodeValue);
  const out: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(object)) out[unescapeField(name)] = decodeValue(field);
  return out;
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value) && typeof (value as { toJSON?: unknown }).toJSON !== 'function';

/** The stored record of a write; a null document is a deletion. */
export function recordOf(key: string, doc: unknown, position: number): StoredRecord {
  if (doc === null) return { _id: key, _position: position, _deleted: true };
  if (doc === undefined) {
    throw new AppError('internal', `the document of ${JSON.stringify(key)} is undefined`, { retriable: false });
  }
  if (isPlainObject(doc)) return { _id: key, _position: position, ...encodeObject(doc) };
  return { _id: key, _position: position, _value: encodeValue(doc, false) };
}

/** The read-model document of a stored (live) record. */
export function documentOf(record: StoredRecord): unknown {
  if ('_value' in record) return decodeValue(record._value);
  const out: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(record)) {
    if (name.charCodeAt(0) === 95 /* _ */) continue; // the store's own fields
    out[unescapeField(name)] = decodeValue(field);
  }
  return out;
}
