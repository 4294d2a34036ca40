/**
 * Rate limiting with koa-ratelimit: per API key, per client address for keyless calls (and
 * always per address for the `/go` redirect, in a bucket of its own).
 * Headers are the IETF draft names `RateLimit-Limit`, `RateLimit-Remaining` and
 * `RateLimit-Reset` (seconds until the window resets) on every /v1 response; over the limit
 * the request fails with AppError `rate_limited` (429) and `Retry-After` in seconds.
 *
 * koa-ratelimit's memory driver never deletes an entry (an expired one is only re-initialised
 * when the same id calls again), so one entry per client address would live forever. The
 * memory driver is therefore given an ExpiringMap that drops entries whose window is over.
 *
 * With Redis the limit fails open to the per-process memory counters: while Redis is down (or
 * does not answer a count within the client's command timeout), each API process counts in its
 * own memory, so the limit still applies, per process, instead of refusing every client with an
 * error. The outage shows on `/readyz` and `/metrics` (component `redis`, not critical); the
 * shared counters take over again as soon as Redis answers.
 */
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

function secondsUntil(resetHeader: unknown, now: number): number | null {
  const raw = Number(resetHeader);
  if (!Number.isFinite(raw) || raw <= 0) return null;
  // The memory driver reports unix seconds, the Redis driver unix milliseconds.
  const resetMs = raw > 1e11 ? raw : raw * 1000;
  return Math.max(0, Math.ceil((resetMs - now) / 1000));
}

export function rateLimiter(options: RateLimiterOptions): Koa.Middleware {
  const windowMs = options.windowMs ?? 60_000;
  const limiterOf = (driver: 'redis' | 'memory', db: unknown) =>
    ratelimit({
      driver,
      db: db as Map<unknown, unknown>,
      duration: windowMs,
      max: options.max,
      namespace: options.namespace ?? 'marquee-ratelimit',
      id: (ctx: Koa.Context) => {
        const auth = options.byAddress ? undefined : (ctx.state.auth as AuthState | undefined);
        return auth?.key ? `key:${auth.key.id}` : `ip:${ctx.ip}`;
      },
      headers: { remaining: 'RateLimit-Remaining', reset: 'RateLimit-Reset', total: 'RateLimit-Limit' },
      throw: false,
    } as ratelimit.MiddlewareOptions);
  const memory = limiterOf('memory', options.memory ?? new ExpiringMap());
  const shared = options.redis ? limiterOf('redis', options.redis) : null;
  const dependency = options.redisDependency;

  /** The shared counters when Redis answers, else this process's own (fail open, see the header). */
  const limit: Koa.Middleware = async (ctx, next) => {
    if (!shared || dependency?.available === false) return memory(ctx, next);
    let counted = false;
    try {
      // koa-ratelimit calls `next` only once Redis has answered the count.
      return await shared(ctx, () => {
        counted = true;
        return next();
      });
    } catch (err) {
      // An error from the handlers downstream is theirs; one before them is Redis failing.
      if (counted) throw err;
      dependency?.failed(err);
      return memory(ctx, next);
    }
  };

  return async (ctx, next) => {
    try {
      await limit(ctx, next);
    } finally {
      const seconds = secondsUntil(ctx.response.get('RateLimit-Reset'), Date.now());
      // The drivers keep their own clocks (hrtime from module load), which drift a little
      // from Date.now(): never report more than one window.
      if (seconds !== null) ctx.set('RateLimit-Reset', String(Math.min(seconds, Math.ceil(windowMs / 1000))));
    }
    if (ctx.status === 429 && ctx.state.rateLimit) {
      // RateLimit-Reset holds the seconds left in the window by now; wait at least one.
      const after = Math.max(1, Number(ctx.response.get('RateLimit-Reset')) || 1);
      throw new AppError('rate_limited', `Rate limit exceeded: ${options.max} requests per ${windowMs / 1000} s. Retry in ${after} s.`, {
        details: { retry_after: after },
      });
    }
  };
}
