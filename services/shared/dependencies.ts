/**
 * The servers a process depends on (MongoDB, OpenSearch, Kafka, Redis), each behind a small
 * circuit breaker, so that an outage costs a request at most `callTimeoutMs` and, once known,
 * nothing at all: while a dependency is down, calls through it fail at once with `unavailable`
 * (503) instead of each waiting for a driver timeout, and a background check (one cheap round
 * trip every `checkEveryMs`) notices when the server answers again and lets calls through. The
 * state of each is kept in the process's `Health` (kind `dependency`), so `/readyz`, `/metrics`
 * and `marquee status` name what is down.
 *
 * Errors are not mapped here: the adapters convert driver errors at their boundary (an outage is
 * AppError `unavailable`); the breaker only reads that code. It adds one error of its own, the
 * `unavailable` of a call that outlived its deadline or met an open breaker.
 */
import { AppError, isAppError } from '../../contracts/errors.ts';
import { Alarm, supervise, type Health, type Supervised } from './health.ts';
import type { Logger } from './logger.ts';

export interface DependencyCheck {
  /** Health component name: `mongodb`, `opensearch`, `kafka`, `redis`. */
  name: string;
  /**
   * Whether readiness needs it. Redis is not critical: the rate limit fails open to the
   * per-process counters (services/api/rateLimit.ts), so an outage is reported, not refused.
   */
  critical: boolean;
  /** One cheap round trip to the server; rejects when it does not answer. */
  check(): Promise<unknown>;
}

export interface DependencyOptions {
  /**
   * Longest a call through the breaker may take, in ms; past it the caller gets `unavailable`
   * and the dependency counts as down. Default 1500: an API answer within 2 s, with room for
   * the rest of the request.
   */
  callTimeoutMs?: number;
  /**
   * How long a background check may take before it counts as missed, in ms. Default 1000. One
   * missed check leaves the dependency as it was; a check still unanswered at the next tick (a
   * second miss) marks it down. A check that answers with an error marks it down at once.
   */
  checkTimeoutMs?: number;
  /** Pause between two background checks, in ms. Default 1000. */
  checkEveryMs?: number;
  /**
   * A check without an answer for this long is given up (left to settle on its own) and a new
   * one starts: a request lost without a reset, on a driver without a socket timeout, must not
   * keep the breaker open forever. Default 30000.
   */
  abandonCheckAfterMs?: number;
}

/** A dependency with its breaker: closed (calls go through) while up, open (calls fail fast) while down. */
export class Dependency {
  readonly name: string;
  readonly critical: boolean;
  private isDown = false;
  /** The check in flight, if any: never more than one per dependency, however slow the server. */
  private checking: Promise<void> | null = null as Promise<void> | null;
  private checkStartedAt = 0;
  private readonly abandonCheckAfterMs: number;
  private readonly callTimeoutMs: number;
  private readonly checkTimeoutMs: number;
  /** Asks the background loop for a check now (after a failed call) instead of at its next tick. */
  onFailure: () => void = () => {};

  constructor(
    private readonly source: DependencyCheck,
    private readonly health: Health,
    private readonly logger: Logger,
    options: DependencyOptions = {},
  ) {
    this.name = source.name;
    this.critical = source.critical;
    this.callTimeoutMs = options.callTimeoutMs ?? 1500;
    this.checkTimeoutMs = options.checkTimeoutMs ?? 1000;
    this.abandonCheckAfterMs = options.abandonCheckAfterMs ?? 30_000;
    health.register(this.name, 'dependency', { critical: this.critical });
  }

  /** False while the dependency is known to be down (the breaker is open). */
  get available(): boolean {
    return !this.isDown;
  }

  /**
   * Runs `fn` against the dependency: fails at once with `unavailable` while it is down, and
   * after `callTimeoutMs` when it does not answer. An `unavailable` outcome (the adapter's
   * verdict: unreachable, timed out, overloaded) opens the breaker; any other error is the
   * request's own and passes through untouched.
   */
  async call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    if (this.isDown) throw this.downError(what);
    let timer: NodeJS.Timeout | undefined;
    const running = (async () => fn())();
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new AppError('unavailable', `${this.name} did not answer ${what} within ${this.callTimeoutMs} ms`, { retriable: true })),
        this.callTimeoutMs,
      );
    });
    // The abandoned call settles later on its own (the driver's timeouts bound it): observe it.
    running.catch(() => undefined);
    try {
      return await Promise.race([running, deadline]);
    } catch (err) {
      if (isAppError(err, 'unavailable')) this.failed(err);
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Records a failed real call: the dependency is down until a check says otherwise. */
  failed(err: unknown): void {
    this.markDown(err);
    this.onFailure();
  }

  /** One background check, bounded by `checkTimeoutMs`; a check still in flight is not doubled. */
  async check(): Promise<void> {
    if (this.checking && Date.now() - this.checkStartedAt >= this.abandonCheckAfterMs) this.checking = null;
    if (this.checking) {
      // The previous check has not answered yet: wait for it a little, never start a second.
      await Promise.race([this.checking, sleep(this.checkTimeoutMs)]);
      if (this.checking !== null) this.markDown(new Error(`${this.name} has not answered a check for ${Date.now() - this.checkStartedAt} ms`));
      return;
    }
    let answered = false;
    this.checkStartedAt = Date.now();
    const checking: Promise<void> = Promise.resolve()
      .then(() => this.source.check())
      .then(
        () => this.markUp(),
        (err: unknown) => this.markDown(err),
      )
      .finally(() => {
        answered = true;
        if (this.checking === checking) this.checking = null;
      });
    this.checking = checking;
    await Promise.race([checking, sleep(this.checkTimeoutMs)]);
    // Missed once: left as it is until the next tick, which marks it down if the check is still
    // unanswered then (the branch above). One slow answer is not an outage: on a loaded machine
    // (a real-server first start, both cores busy) one check in a few hundred answered late, by
    // the server or by this process's own busy event loop, and each took the dependency out for
    // a second, a 503 for every request through it. A hung server is still down within about
    // two timeouts and a tick, and the requests themselves open the breaker at their deadline.
    if (!answered) this.logger.info({ dependency: this.name }, `${this.name} did not answer a check within ${this.checkTimeoutMs} ms; down if the next tick finds it unanswered`);
  }

  private markUp(): void {
    if (this.isDown) this.logger.info({ dependency: this.name }, `${this.name} answers again`);
    this.isDown = false;
    this.health.set(this.name, 'running');
  }

  private markDown(err: unknown): void {
    if (!this.isDown) this.logger.warn({ dependency: this.name, err }, `${this.name} is down`);
    this.isDown = true;
    this.health.set(this.name, 'down', err);
  }

  private downError(what: string): AppError {
    const last = this.health.get(this.name)?.lastError;
    return new AppError('unavailable', `${this.name} is down (${what})${last ? `: ${last}` : ''}`, { retriable: true });
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

export interface WatchedDependencies extends Supervised {
  /** The dependency called `name`, or undefined when this process does not use that server. */
  get(name: string): Dependency | undefined;
}

/**
 * Registers each dependency in `health` and checks them all every `checkEveryMs` (at once after
 * a failed call), in one supervised loop. The checks start before this returns, so the first
 * state is known within about `checkTimeoutMs`.
 */
export function watchDependencies(
  health: Health,
  checks: readonly DependencyCheck[],
  logger: Logger,
  options: DependencyOptions = {},
): WatchedDependencies {
  const checkEveryMs = options.checkEveryMs ?? 1000;
  const dependencies = new Map(checks.map((c) => [c.name, new Dependency(c, health, logger, options)]));
  const alarm = new Alarm();
  for (const d of dependencies.values()) d.onFailure = () => alarm.wake();
  const loop =
    dependencies.size === 0
      ? { stop: async () => {} }
      : supervise(
          health,
          'dependency-checks',
          logger,
          async (signal) => {
            signal.addEventListener('abort', () => alarm.wake(), { once: true });
            while (!signal.aborted) {
              await Promise.all([...dependencies.values()].map((d) => d.check()));
              if (signal.aborted) break;
              await alarm.sleep(checkEveryMs);
            }
          },
          // Reported, but a dead check loop alone does not take the process out of rotation.
          { critical: false },
        );
  return {
    get: (name) => dependencies.get(name),
    stop: () => loop.stop(),
  };
}

/**
 * The port `target` with every method called through `dependency`'s breaker (except `close`).
 * Meant for the API's view of a store: calls that must answer quickly. Background writers keep
 * the bare adapter, whose long batches must not be cut by a request deadline.
 */
export function guarded<T extends object>(target: T, dependency: Dependency | undefined): T {
  if (!dependency) return target;
  return new Proxy(target, {
    get(obj, prop, receiver) {
      const value = Reflect.get(obj, prop, receiver) as unknown;
      if (typeof value !== 'function' || prop === 'close') return value;
      return (...args: unknown[]) =>
        dependency.call(String(prop), () => Promise.resolve((value as (...a: unknown[]) => unknown).apply(obj, args)));
    },
  });
}
