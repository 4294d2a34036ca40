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

export function metaCollectionName(prefix: string): string {
  return `${prefix}%meta`;
}

/** The read-model collection of a Mongo collection name, or null when it is not one of ours. */
export function readModelCollectionName(prefix: string, mongoName: string): string | null {
  if (!mongoName.startsWith(prefix) || mongoName === metaCollectionName(prefix)) return null;
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
