/**
 * Names and key ranges of the MongoDB read store. Pure functions, unit-testable without a server.
 */
import { AppError } from '../../contracts/errors.ts';
import type { ScanOptions } from '../../contracts/ports.ts';

/**
 * The Mongo collection name of a read-model collection: `prefix` + the name, with `%`, `$` and
 * NUL written as `%XX` (MongoDB refuses `$` and NUL in collection names; `%` is escaped so the
 * encoding stays reversible). The meta collection is `prefix` + `%meta`, which no encoded name
 * can equal: an encoded `%` is always followed by two hex digits, and `m` is not one.
 */
export function mongoCollectionName(prefix: string, collection: string): string {
  if (collection.length === 0) throw new AppError('internal', 'a read-model collection name must not be empty');
  return prefix + collection.replace(/[%$\0]/g, (c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0').toUpperCase()}`);
}

/** Suffix of a key directory's Mongo collection (see BUCKET_STRIDE). */
const DIRECTORY_SUFFIX = '%dir';

export function metaCollectionName(prefix: string): string {
  return `${prefix}%meta`;
}

/** The read-model collection of a Mongo collection name, or null when it is not one of ours. */
export function readModelCollectionName(prefix: string, mongoName: string): string | null {
  if (!mongoName.startsWith(prefix) || mongoName === metaCollectionName(prefix) || mongoName.endsWith(DIRECTORY_SUFFIX)) return null;
  const encoded = mongoName.slice(prefix.length);
  if (encoded.length === 0) return null;
  return encoded.replace(/%([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
}

/** Compares two strings in the byte order of their UTF-8 encodings, as MongoDB compares `_id`s. */
export function compareUtf8(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/**
 * The smallest string greater than every string starting with `prefix`, or null when there is
 * none (an empty prefix, or one made only of U+10FFFF). UTF-8 byte order equals code point
 * order, so incrementing the last code point is enough; the surrogate block is skipped.
 */
export function prefixEnd(prefix: string): string | null {
  const points = Array.from(prefix);
  while (points.length > 0) {
    const last = (points.pop() as string).codePointAt(0) as number;
    if (last < 0x10ffff) {
      points.push(String.fromCodePoint(last === 0xd7ff ? 0xe000 : last + 1));
      return points.join('');
    }
  }
  return null;
}

export interface KeyRange {
  /** Inclusive lower bound; '' means unbounded (every string is >= ''). */
  low: string;
  /** Exclusive upper bound; null means unbounded. */
  high: string | null;
}

/** The `_id` range [low, high) of a scan or count, or null when it is empty. */
export function keyRange(options: Pick<ScanOptions, 'prefix' | 'start' | 'end'>): KeyRange | null {
  let low = options.prefix ?? '';
  let high = prefixEnd(low);
  if (options.start !== undefined && compareUtf8(options.start, low) > 0) low = options.start;
  if (options.end !== undefined && (high === null || compareUtf8(options.end, high) < 0)) high = options.end;
  if (high !== null && compareUtf8(low, high) >= 0) return null;
  return { low, high };
}

/** The `_id` condition of a range, for a find or count filter. */
export function idCondition(range: KeyRange): { $gte?: string; $lt?: string } {
  return {
    ...(range.low === '' ? {} : { $gte: range.low }),
    ...(range.high === null ? {} : { $lt: range.high }),
  };
}

/**
 * The key directory that lets a scan read only its page on servers that cannot push a key range
 * down (FerretDB 1.24 pushes only equality to PostgreSQL: `{ _id: { $gte } }` and any sort are
 * answered by reading and sorting the whole collection in FerretDB, so paging a collection cost
 * time quadratic in its size). Every key is stored with its bucket (`_b`): the key cut to a
 * multiple of BUCKET_STRIDE code points, strictly shorter than the key. Every bucket but the
 * root '' is a node of the directory collection, `{ _id: bucket, _b: parent }`, its parent being
 * the bucket one stride shorter. The children of a node (its keys, one to BUCKET_STRIDE code
 * points longer, and its buckets, exactly one stride longer) are found by equality on `_b`, and
 * visiting them in key order, each bucket expanded where it sorts, lists the keys in key order:
 * a key shorter than a sibling bucket either is its prefix (so sorts before all it holds) or
 * differs from it within the bucket's length (so sorts on the same side of all it holds).
 *
 * A stride of 2 bounds a node's children by the square of the keys' alphabet (100 for digits)
 * while a 20-character key is only 10 levels deep.
 */
export const BUCKET_STRIDE = 2;

const SURROGATE = /[\uD800-\uDFFF]/;

/** The first `n` code points of `s` (code units when `s` has no surrogate pair, the usual case). */
function codePoints(s: string): { length: number; head(n: number): string } {
  if (!SURROGATE.test(s)) return { length: s.length, head: (n) => s.slice(0, n) };
  const points = Array.from(s);
  return { length: points.length, head: (n) => points.slice(0, n).join('') };
}

/** The bucket of a key: its longest prefix of a multiple of BUCKET_STRIDE code points, shorter than the key. */
export function bucketOf(key: string): string {
  const points = codePoints(key);
  return points.head(Math.max(0, Math.floor((points.length - 1) / BUCKET_STRIDE)) * BUCKET_STRIDE);
}

/** The directory nodes a key needs, from its own bucket up to (not including) the root ''. */
export function bucketChain(key: string): Array<{ bucket: string; parent: string }> {
  const chain: Array<{ bucket: string; parent: string }> = [];
  let bucket = bucketOf(key);
  while (bucket !== '') {
    const parent = bucketOf(bucket);
    chain.push({ bucket, parent });
    bucket = parent;
  }
  return chain;
}

/** The longest common prefix of two strings, never ending inside a surrogate pair. */
export function commonPrefix(a: string, b: string): string {
  let i = 0;
  while (i < a.length && i < b.length && a.charCodeAt(i) === b.charCodeAt(i)) i += 1;
  // A common high surrogate whose low halves differ is not a common code point.
  if (i > 0 && /[\uD800-\uDBFF]/.test(a.charAt(i - 1))) i -= 1;
  return a.slice(0, i);
}

/** The Mongo collection of a read-model collection's key directory: `%di` is never an escape of an encoded name. */
export function directoryCollectionName(prefix: string, collection: string): string {
  return `${mongoCollectionName(prefix, collection)}${DIRECTORY_SUFFIX}`;
}
