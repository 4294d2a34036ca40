/** HTTP details of serving release files: content types, `Range` and `If-None-Match`. */

export function contentTypeOf(path: string): string {
  if (path.endsWith('.parquet')) return 'application/vnd.apache.parquet';
  if (path.endsWith('.tar.gz')) return 'application/gzip';
  return 'application/octet-stream';
}

/**
 * One byte range of a `Range` header (RFC 9110 14.1.2) for a file of `size` bytes:
 * `{ start, end }` inclusive, `'unsatisfiable'` (answer 416), or null to serve the whole file
 * (no header, another unit, a malformed value, or several ranges, which we do not combine).
 */
export function parseRange(header: string, size: number): { start: number; end: number } | 'unsatisfiable' | null {
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m) return null;
  const [, first = '', last = ''] = m;
  if (first === '' && last === '') return null;
  if (first === '') {
    // Suffix range: the last N bytes.
    const length = Number(last);
    if (length === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - length), end: size - 1 };
  }
  const start = Number(first);
  const end = last === '' ? size - 1 : Number(last);
  if (last !== '' && end < start) return null;
  if (start >= size) return 'unsatisfiable';
  return { start, end: Math.min(end, size - 1) };
}

/** Whether an `If-None-Match` header names `etag` (weak comparison, `*` matches anything). */
export function matchesEtag(header: string, etag: string): boolean {
  if (header.trim() === '') return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}
