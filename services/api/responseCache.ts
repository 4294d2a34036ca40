/**
 * Rendered answers (JSON text and ETag) kept per state of the read models they were made from,
 * so a repeated lookup does no decode, no JSON.stringify and no hash.
 *
 * Freshness without a TTL: an answer is stored with a stamp, the live collection and the
 * checkpoint of every read model its endpoint reads, taken BEFORE it was rendered. A request
 * reuses it only when the stamp read now is the same. The projection runner moves a collection's
 * checkpoint in the same write as its documents (one LMDB transaction; on MongoDB right after
 * them), so a document written by a projection changes the stamp, and the next request renders
 * again: never a stale answer, in any number of API processes, each with its own cache. A stamp
 * costs one read of a tiny record per model (a few microseconds on LMDB). Taken before the
 * render, a stamp can only be older than what the answer shows, which costs a render, never
 * freshness. The price: while projections are catching up every checkpoint moves with each
 * batch, so the cache helps once the catalog is quiet (the normal case between crawls).
 *
 * Writes outside the runner do not move a checkpoint (`marquee parked retry`); an answer is
 * therefore also dropped after `maxAgeMs` (default 10 s), the bound on how long such a rare
 * repair can go unseen.
 *
 * The models an endpoint reads are learned: a render that read a model outside the stamp is
 * served but not kept, and the model joins the endpoint's stamp from then on.
 */
import { createHash, hash, type Hash } from 'node:crypto';
import { performance } from 'node:perf_hooks';

export interface RenderedBody {
  /** The JSON text as UTF-8: a hit writes these bytes, with no encoding per request. */
  bytes: Buffer;
  /** The strong ETag of the JSON text, quoted. */
  tag: string;
  /** For a timed answer completed per request: the kept head and this request's tail (compression.ts gzips the head once). */
  completed?: { timed: TimedBody; tail: Buffer };
}

/**
 * JSON text of frozen objects, made once per object. Why: a search answer is mostly a page of
 * list items, and list items are kept decoded between requests (handlers/common.ts listItems),
 * where they are frozen; a page of them is then joined rather than serialized again. Frozen, an
 * object cannot change after its text was taken.
 */
const frozenJson = new WeakMap<object, string>();

function isFrozenObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null && Object.isFrozen(value);
}

function textOfFrozen(value: object): string {
  let text = frozenJson.get(value);
  if (text === undefined) {
    text = JSON.stringify(value);
    frozenJson.set(value, text);
  }
  return text;
}

/**
 * JSON.stringify(body), the same text: when the body's last field is a list of frozen objects,
 * the list is joined from their kept texts.
 */
function stringifyBody(body: unknown): string {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return JSON.stringify(body);
  const record = body as Record<string, unknown>;
  const keys = Object.keys(record);
  const last = keys[keys.length - 1];
  const list = last === undefined ? undefined : record[last];
  if (!Array.isArray(list) || list.length === 0 || !list.every(isFrozenObject)) return JSON.stringify(body);
  // The same fields in the same order, the list left empty: the text ends `[]}`.
  const head = JSON.stringify({ ...record, [last as string]: [] });
  return `${head.slice(0, -3)}[${list.map(textOfFrozen).join(',')}]}`;
}

/** JSON text and ETag of a body: a strong hash of the serialized body. */
export function renderJson(body: unknown): RenderedBody {
  const bytes = Buffer.from(stringifyBody(body), 'utf8');
  // The one-shot hash gives the same digest as createHash without a Hash object per response;
  // SHA-256 stays (it is hardware-accelerated, as fast as SHA-1 or MD5 here), so tags are unchanged.
  return { bytes, tag: `"${hash('sha256', bytes, 'base64url').slice(0, 32)}"` };
}

/**
 * An answer whose last field is the time the request took (search's `processing_time_ms`): kept
 * as the JSON text up to that value, with the hash of that text, so that an answer served again
 * reports the time of the request it answers, and completing it costs the hash of a few bytes,
 * not of the whole body. The bytes and tag it completes to are what renderJson gives for the
 * body with that time.
 */
export interface TimedBody {
  /** The JSON text up to the time's value (`{...,"processing_time_ms":`). */
  head: Buffer;
  /** SHA-256 state after `head`, copied for each completion. */
  hashed: Hash;
}

/** The body without its `field`, rendered to be completed with a time per request (completeTimed). */
export function renderTimed(body: Record<string, unknown>, field: string): TimedBody {
  const { [field]: _time, ...rest } = body;
  const text = stringifyBody(rest);
  const head = Buffer.from(`${text.length > 2 ? `${text.slice(0, -1)},` : '{'}${JSON.stringify(field)}:`, 'utf8');
  return { head, hashed: createHash('sha256').update(head) };
}

/** Milliseconds with at most three decimals: the unit and precision of a reported time. */
export function roundMs(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}

/** The bytes and ETag of a timed body completed with `ms`, the same as renderJson's of the whole body. */
export function completeTimed(timed: TimedBody, ms: number): RenderedBody {
  const tail = Buffer.from(`${JSON.stringify(roundMs(ms))}}`, 'latin1');
  return {
    bytes: Buffer.concat([timed.head, tail], timed.head.length + tail.length),
    tag: `"${timed.hashed.copy().update(tail).digest('base64url').slice(0, 32)}"`,
    completed: { timed, tail },
  };
}

/** What a cache keeps of an answer: its bytes, or for a timed one the head to complete. */
export type KeptBody = RenderedBody | TimedBody;

/** The bytes and ETag to send for a kept body; a timed one reports the time since `started` (performance.now()). */
export function sendable(body: KeptBody, started: number): RenderedBody {
  return 'head' in body ? completeTimed(body, performance.now() - started) : body;
}

/** Where a kept answer came from: what its stamp covers and how metrics name it. */
export interface AnswerOrigin {
  operationId: string;
  /** The route template (`/v1/media/:id`), the metrics label. */
  route: string;
}

export interface KeptAnswer extends AnswerOrigin {
  body: KeptBody;
}

/** ResponseCacheOptions.maxAgeMs unless given. */
export const DEFAULT_MAX_AGE_MS = 10_000;

interface Entry extends KeptAnswer {
  stamp: string;
  until: number;
  size: number;
}

export interface ResponseCacheOptions {
  /** Answers kept. Default 10,000. */
  maxEntries?: number;
  /** Total bytes of JSON kept. Default 64 MiB. */
  maxBytes?: number;
  /** Age after which an answer is rendered again even with an unchanged stamp. Default 10,000 ms. */
  maxAgeMs?: number;
  now?: () => number;
}

/** A bounded LRU of rendered answers by request key, each valid for one stamp. */
export class ResponseCache {
  readonly #entries = new Map<string, Entry>();
  /** Request URL -> key of the answer it was given (hotPath.ts looks answers up by URL). */
  readonly #aliases = new Map<string, string>();
  readonly #maxEntries: number;
  readonly #maxBytes: number;
  readonly #maxAgeMs: number;
  readonly #now: () => number;
  #bytes = 0;
  hits = 0;
  misses = 0;

  constructor(options: ResponseCacheOptions = {}) {
    this.#maxEntries = options.maxEntries ?? 10_000;
    this.#maxBytes = options.maxBytes ?? 64 * 1024 * 1024;
    this.#maxAgeMs = options.maxAgeMs ?? DEFAULT_MAX_AGE_MS;
    this.#now = options.now ?? Date.now;
  }

  get size(): number {
    return this.#entries.size;
  }

  /**
   * Remembers that `url` is answered by the answer kept under `key`. Answers are kept by their
   * parsed parameters, so URLs spelled differently (parameter order, ignored extras) share one
   * answer and cannot be used to render it again and again; the aliases are bounded like the
   * answers, the oldest dropped first.
   */
  alias(url: string, key: string): void {
    if (this.#aliases.get(url) === key) return;
    this.#aliases.delete(url);
    if (this.#aliases.size >= this.#maxEntries) {
      const oldest = this.#aliases.keys().next();
      if (!oldest.done) this.#aliases.delete(oldest.value);
    }
    this.#aliases.set(url, key);
  }

  get aliases(): number {
    return this.#aliases.size;
  }

  /** The key and origin of the answer kept for a URL under any stamp: which stamp to read for it. */
  byUrl(url: string): { key: string; origin: AnswerOrigin } | undefined {
    const key = this.#aliases.get(url);
    const entry = key === undefined ? undefined : this.#entries.get(key);
    return entry === undefined || key === undefined ? undefined : { key, origin: entry };
  }

  /** The answer kept for `key` under exactly this `stamp`, or undefined. */
  get(key: string, stamp: string): KeptAnswer | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined || entry.stamp !== stamp || entry.until <= this.#now()) {
      this.misses += 1;
      return undefined;
    }
    // Most recently used last: eviction takes from the front.
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    this.hits += 1;
    return entry;
  }

  set(key: string, stamp: string, body: KeptBody, origin: AnswerOrigin): void {
    const size = ('head' in body ? body.head : body.bytes).length + key.length;
    if (size > this.#maxBytes / 16) return; // one huge answer must not flush the rest
    this.#drop(key);
    this.#entries.set(key, { body, operationId: origin.operationId, route: origin.route, stamp, until: this.#now() + this.#maxAgeMs, size });
    this.#bytes += size;
    for (const oldest of this.#entries.keys()) {
      if (this.#entries.size <= this.#maxEntries && this.#bytes <= this.#maxBytes) break;
      this.#drop(oldest);
    }
  }

  #drop(key: string): void {
    const entry = this.#entries.get(key);
    if (entry === undefined) return;
    this.#entries.delete(key);
    this.#bytes -= entry.size;
  }
}
