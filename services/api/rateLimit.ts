/**
 * Rate limiting: per API key, per client address for keyless calls (and always per address for
 * the `/go` redirect, in a bucket of its own). In memory by MemoryLimiter below (synchronous,
 * as koa-ratelimit's memory driver counted), shared through Redis by koa-ratelimit's driver.
 * Headers are the IETF draft names `RateLimit-Limit`, `RateLimit-Remaining` and
 * `RateLimit-Reset` (seconds until the window resets) on every /v1 response; over the limit
 * the request fails with AppError `rate_limited` (429) and `Retry-After` in seconds.
 *
 * An entry is only re-initialised when the same id calls again, so one entry per client address
 * would live forever: the counters live in an ExpiringMap that drops entries whose window is over.
 *
 * With Redis the limit fails open to the per-process memory counters: while Redis is down (or
 * does not answer a count within the client's command timeout), each API process counts in its
 * own memory, so the limit still applies, per process, instead of refusing every client with an
 * error. The outage shows on `/readyz` and `/metrics` (component `redis`, not critical); the
 * shared counters take over again as soon as Redis answers.
 */
import { createRequire } from 'node:module';
import type Koa from 'koa';
import ratelimit from 'koa-ratelimit';
import { AppError } from '../../contracts/errors.ts';
import type { Dependency } from '../shared/dependencies.ts';
import type { AuthState } from './auth.ts';

interface LimiterEntry {
  /** End of the window, unix seconds (fractional), as koa-ratelimit's memory driver stores it. */
  reset: number;
}

/**
 * A Map whose entries disappear once their window has ended. Sweeps on write, at most once per
 * `sweepEveryMs`, so a write stays O(1) amortised and the map never outgrows the clients of
 * one window (plus one sweep interval).
 */
export class ExpiringMap<V extends LimiterEntry = LimiterEntry> extends Map<string, V> {
  #lastSweep = 0;
  readonly #now: () => number;
  readonly #sweepEveryMs: number;

  /**
   * @param now ms clock. Default Date.now.
   * @param sweepEveryMs least time between two sweeps. Default 1000.
   */
  constructor(now: () => number = Date.now, sweepEveryMs = 1000) {
    super();
    this.#now = now;
    this.#sweepEveryMs = sweepEveryMs;
  }

  override set(key: string, value: V): this {
    const now = this.#now();
    if (now - this.#lastSweep >= this.#sweepEveryMs) this.sweep(now);
    return super.set(key, value);
  }

  /** Drops every entry whose window ended before `now` (ms); returns how many. */
  sweep(now = this.#now()): number {
    this.#lastSweep = now;
    let dropped = 0;
    for (const [key, entry] of this) {
      if (entry.reset * 1000 <= now) {
        this.delete(key);
        dropped += 1;
      }
    }
    return dropped;
  }
}

export interface RateLimiterOptions {
  /** Requests allowed per window. */
  max: number;
  /** Window length in ms. Default 60000. */
  windowMs?: number;
  /**
   * ioredis client: counters shared by every API process. Default: in memory. Give it a
   * command timeout and no offline queue (infra/redis/client.ts), so an outage fails fast.
   */
  redis?: unknown;
  /**
   * Redis's breaker: while it is open the memory counters answer without trying Redis, and a
   * failed count opens it. Default: Redis is tried on every request.
   */
  redisDependency?: Dependency;
  /** The memory driver's store (tests inspect it). Default a new ExpiringMap. */
  memory?: ExpiringMap;
  /** Counters' key prefix: limiters with different namespaces count separately. Default `marquee-ratelimit`. */
  namespace?: string;
  /** Count per client address even when the request carries an API key. Default false (per key). */
  byAddress?: boolean;
}

/**
 * The clock koa-ratelimit's Redis driver (async-ratelimiter) stamps each request with: the wall
 * time when it was loaded plus the monotonic time since. Its reset is on that clock, so the
 * seconds left are counted on it too. Counted against Date.now() they were off by however far
 * the wall clock had moved since the driver loaded: an NTP step, or a virtual machine paused
 * and resumed (a CI run saw a reset of 37 s for a fresh 60 s window). Resolved from
 * koa-ratelimit's own dependency, so it is the very module instance the driver uses.
 */
const driverNow = (
  createRequire(createRequire(import.meta.url).resolve('koa-ratelimit'))('async-ratelimiter/src/microtime') as { now(): number }
).now;

function secondsUntil(resetHeader: unknown, now: number): number | null {
  const raw = Number(resetHeader);
  if (!Number.isFinite(raw) || raw <= 0) return null;
  // Unix seconds, as both drivers report it; a value past 1e11 can only be milliseconds.
  const resetMs = raw > 1e11 ? raw : raw * 1000;
  return Math.max(0, Math.ceil((resetMs - now) / 1000));
}

/** One request counted: whether it may go on, and the values of its RateLimit headers. */
export interface Counted {
  allowed: boolean;
  /** RateLimit-Remaining: requests left in the window after this one. */
  remaining: number;
  /** RateLimit-Reset: whole seconds until the window ends, at most one window. */
  reset: number;
}

interface MemoryEntry extends LimiterEntry {
  remaining: number;
}

/**
 * This process's counters, synchronous: a count is a Map lookup and a decrement, with no
 * promise per request (the API's hot path counts with it directly). The same fixed-window
 * semantics and entry shape as koa-ratelimit's memory driver, which it replaces: a window
 * starts at a client's first request and allows `max`; a refused request changes nothing.
 */
export class MemoryLimiter {
  readonly #store: ExpiringMap;
  readonly #max: number;
  readonly #windowMs: number;
  readonly #namespace: string;

  constructor(options: { max: number; windowMs?: number; store?: ExpiringMap; namespace?: string }) {
    this.#store = options.store ?? new ExpiringMap();
    this.#max = options.max;
    this.#windowMs = options.windowMs ?? 60_000;
    this.#namespace = options.namespace ?? 'marquee-ratelimit';
  }

  /** Counts one request of `id` (`key:<key id>` or `ip:<address>`) at `now` (ms). */
  take(id: string, now = Date.now()): Counted {
    const key = `${this.#namespace}:${id}`;
    let entry = this.#store.get(key) as MemoryEntry | undefined;
    let left: number;
    if (entry === undefined || entry.reset * 1000 < now) {
      entry = { reset: (now + this.#windowMs) / 1000, remaining: this.#max };
      this.#store.set(key, entry);
      left = entry.remaining;
    } else {
      entry.remaining = entry.remaining > 0 ? entry.remaining - 1 : 0;
      left = entry.remaining;
    }
    const reset = Math.min(Math.max(0, Math.ceil((entry.reset * 1000 - now) / 1000)), Math.ceil(this.#windowMs / 1000));
    return { allowed: left > 0, remaining: left > 0 ? left - 1 : 0, reset };
  }
}

/** The counter id of a request: its key's, else its client address's (always the address with `byAddress`). */
function idOf(ctx: Koa.Context, byAddress: boolean | undefined): string {
  const auth = byAddress ? undefined : (ctx.state.auth as AuthState | undefined);
  return auth?.key ? `key:${auth.key.id}` : `ip:${ctx.ip}`;
}

/** The refusal of a request over the limit: `reset` seconds left in the window, at least one. */
function limited(options: RateLimiterOptions, windowMs: number, reset: number): AppError {
  const after = Math.max(1, reset);
  return new AppError('rate_limited', `Rate limit exceeded: ${options.max} requests per ${windowMs / 1000} s. Retry in ${after} s.`, {
    details: { retry_after: after },
  });
}

export function rateLimiter(options: RateLimiterOptions): Koa.Middleware {
  const windowMs = options.windowMs ?? 60_000;
  const namespace = options.namespace ?? 'marquee-ratelimit';
  const counters = new MemoryLimiter({ max: options.max, windowMs, store: options.memory, namespace });
  const total = String(options.max);
  /** This process's counters: no promise until the handlers run. */
  const memory: Koa.Middleware = (ctx, next) => {
    const counted = counters.take(idOf(ctx, options.byAddress));
    ctx.set('RateLimit-Remaining', String(counted.remaining));
    ctx.set('RateLimit-Reset', String(counted.reset));
    ctx.set('RateLimit-Limit', total);
    if (!counted.allowed) throw limited(options, windowMs, counted.reset);
    return next();
  };
  if (!options.redis) return memory;

  const shared = ratelimit({
    driver: 'redis',
    db: options.redis as Map<unknown, unknown>,
    duration: windowMs,
    max: options.max,
    namespace,
    id: (ctx: Koa.Context) => idOf(ctx, options.byAddress),
    headers: { remaining: 'RateLimit-Remaining', reset: 'RateLimit-Reset', total: 'RateLimit-Limit' },
    throw: false,
  } as ratelimit.MiddlewareOptions);
  const dependency = options.redisDependency;

  /** RateLimit-Reset as seconds left: the Redis driver reports the end of the window as a time. */
  const resetInSeconds = (ctx: Koa.Context): void => {
    const seconds = secondsUntil(ctx.response.get('RateLimit-Reset'), driverNow());
    if (seconds !== null) ctx.set('RateLimit-Reset', String(Math.min(seconds, Math.ceil(windowMs / 1000))));
  };

  /** The shared counters when Redis answers, else this process's own (fail open, see the header). */
  return async (ctx, next) => {
    if (dependency?.available === false) return memory(ctx, next);
    let counted = false;
    try {
      // koa-ratelimit calls `next` only once Redis has answered the count.
      await shared(ctx, () => {
        counted = true;
        resetInSeconds(ctx);
        return next();
      });
    } catch (err) {
      // An error from the handlers downstream is theirs; one before them is Redis failing.
      if (counted) throw err;
      dependency?.failed(err);
      return memory(ctx, next);
    }
    if (counted) return;
    resetInSeconds(ctx);
    if (ctx.status === 429 && ctx.state.rateLimit) throw limited(options, windowMs, Number(ctx.response.get('RateLimit-Reset')) || 1);
  };
}
