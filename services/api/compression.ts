/**
 * gzip for the JSON answers of /v1, decided in one place for both paths that write them (Koa's
 * etag middleware and the hot path): the answer is gzipped when the client's Accept-Encoding
 * takes gzip (as Koa's own `acceptsEncodings` reads it, with q-values) and its JSON text is at
 * least `GZIP_MIN_BYTES`. A search page is several kilobytes of repetitive JSON and a chart page
 * tens, which gzip makes three times smaller (the OpenAPI document nine); a client that asks for
 * nothing gets the same bytes as before.
 *
 * The gzip representation has a tag of its own (the identity tag with `-gzip` inside the quotes,
 * as Apache does), since a strong ETag names one representation; `If-None-Match` with either tag
 * is a match, the content being the same. Every answer that could be compressed says
 * `Vary: Accept-Encoding`, so a shared cache never hands gzip to a client that did not ask.
 *
 * A kept answer (responseCache.ts) is compressed once: its gzip bytes are remembered with its
 * rendered body, and live as long as the kept answer does. A timed answer (search, whose last
 * field is the request's own time) is kept as the JSON text up to that time: that head is
 * deflated once, ending on a byte boundary, and each request appends its few bytes of tail as a
 * stored (uncompressed) final block with the gzip trailer, so a search answered again costs no
 * compression either. A search answered for the first time pays the deflate of its head. What
 * is remembered is at most about a third of the bytes the cache keeps (gzip makes JSON 3-6
 * times smaller) and goes when they go.
 */
import type { IncomingMessage } from 'node:http';
import { constants, crc32, deflateRawSync, gzipSync } from 'node:zlib';
import accepts from 'accepts';
import type { RenderedBody, TimedBody } from './responseCache.ts';

/**
 * Smaller answers go as they are: the gzip header and trailer alone are 18 bytes, and an error
 * or a single provider saves too little to be worth a client's inflate.
 */
export const GZIP_MIN_BYTES = 1024;

/**
 * zlib's level 1, nginx's default: most answers are made for one request (a search is new more
 * often than not), so the level is paid per request. On the sample's answers, level 1 took
 * 26 us for a 6 KB search page against 40-48 us at levels 4-6, and made 220 KB of answers
 * 5.3 times smaller against 5.8 at level 4 and 6.1 at level 6.
 */
export const GZIP_LEVEL = 1;

/** What is written for one answer: its bytes, its tag and its headers beyond the JSON type. */
export interface EncodedBody {
  bytes: Buffer;
  tag: string;
  /** `gzip` when `bytes` are gzipped. */
  encoding: 'gzip' | undefined;
}

const gzipped = new WeakMap<RenderedBody, EncodedBody>();
/** A timed answer's head, deflated up to a byte boundary (not final), and the CRC-32 of its bytes. */
const deflatedHeads = new WeakMap<TimedBody, { deflated: Buffer; crc: number }>();

/** The gzip member header (RFC 1952): deflate, no flags, no time, no extra flags, OS unknown. */
const GZIP_HEADER = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255]);

/** The longest tail a stored block holds. */
const STORED_MAX = 0xffff;

/** Whether the request's Accept-Encoding prefers gzip to no encoding at all (q-values, `*`, `identity;q=0` as Koa reads them). */
export function wantsGzip(req: IncomingMessage): boolean {
  // A client that sends nothing takes no encoding: no parse for it.
  if (req.headers['accept-encoding'] === undefined) return false;
  return accepts(req).encoding(['gzip', 'identity']) === 'gzip';
}

/** Whether an answer of this size is ever sent gzipped (and so varies on Accept-Encoding). */
export function compressible(body: RenderedBody): boolean {
  return body.bytes.length >= GZIP_MIN_BYTES;
}

/** The gzip tag of an identity tag: `"abc"` -> `"abc-gzip"`. */
export function gzipTag(tag: string): string {
  return `${tag.slice(0, -1)}-gzip"`;
}

/** The bytes and tag to send for `body` to a client that does (or does not) take gzip. */
export function encodedBody(body: RenderedBody, gzip: boolean): EncodedBody {
  if (!gzip || !compressible(body)) return { bytes: body.bytes, tag: body.tag, encoding: undefined };
  const { completed } = body;
  if (completed !== undefined && completed.tail.length <= STORED_MAX) {
    return { bytes: gzipCompleted(completed.timed, completed.tail), tag: gzipTag(body.tag), encoding: 'gzip' };
  }
  let encoded = gzipped.get(body);
  if (encoded === undefined) {
    encoded = { bytes: gzipSync(body.bytes, { level: GZIP_LEVEL }), tag: gzipTag(body.tag), encoding: 'gzip' };
    gzipped.set(body, encoded);
  }
  return encoded;
}

/**
 * A gzip member of `timed.head` + `tail` from the head deflated once: its deflate stream ends on
 * a sync flush (an empty stored block, byte-aligned, not final), so a final stored block of the
 * tail can follow it (RFC 1951 3.2.4: BFINAL 1, BTYPE 00, LEN, NLEN, the bytes), then the
 * CRC-32 of all the bytes and their length (RFC 1952).
 */
function gzipCompleted(timed: TimedBody, tail: Buffer): Buffer {
  let head = deflatedHeads.get(timed);
  if (head === undefined) {
    head = { deflated: deflateRawSync(timed.head, { level: GZIP_LEVEL, finishFlush: constants.Z_SYNC_FLUSH }), crc: crc32(timed.head) };
    deflatedHeads.set(timed, head);
  }
  const { deflated, crc } = head;
  const out = Buffer.allocUnsafe(GZIP_HEADER.length + deflated.length + 5 + tail.length + 8);
  let at = GZIP_HEADER.copy(out, 0);
  at += deflated.copy(out, at);
  out[at] = 1;
  out.writeUInt16LE(tail.length, at + 1);
  out.writeUInt16LE(~tail.length & 0xffff, at + 3);
  at += 5;
  at += tail.copy(out, at);
  out.writeUInt32LE(crc32(tail, crc), at);
  out.writeUInt32LE((timed.head.length + tail.length) % 2 ** 32, at + 4);
  return out;
}
