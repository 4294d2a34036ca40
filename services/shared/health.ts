/**
 * What every background loop and every dependency of a process is doing right now, in one
 * place: `/readyz` answers from it (and names what is not healthy), `/metrics` exports it as a
 * gauge, and `marquee status` prints it (each process publishes its report to the read store,
 * see `publishHealth`). A loop never dies silently: `supervise` restarts it with backoff and
 * records its state and last error here.
 */
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { ReadStore } from '../../contracts/ports.ts';
import type { Logger } from './logger.ts';

/**
 * - `starting`: not yet running (a loop before its first pass, a dependency before its first check);
 * - `running`: a loop doing its work / a dependency answering;
 * - `backing_off`: a loop that failed and waits before its restart;
 * - `down`: a dependency that does not answer;
 * - `stopped`: stopped on purpose (shutdown) or given up.
 */
export type ComponentState = 'starting' | 'running' | 'backing_off' | 'down' | 'stopped';
export const COMPONENT_STATES: readonly ComponentState[] = ['starting', 'running', 'backing_off', 'down', 'stopped'];

export interface ComponentStatus {
  /** e.g. `ingest`, `projections`, `scheduler`, `redis`, `opensearch`. */
  name: string;
  kind: 'loop' | 'dependency';
  state: ComponentState;
  /** When the state last changed (RFC 3339). */
  since: string;
  lastError: string | null;
  /** Restarts of a supervised loop so far. */
  restarts: number;
  /** Whether readiness depends on it: a non-critical component is reported but never makes /readyz 503. */
  critical: boolean;
  /** Anything else worth showing (counts, lag). */
  detail?: Record<string, unknown>;
}

export interface HealthReport {
  process: string;
  at: string;
  ready: boolean;
  /** What a process not ready yet is doing, when it says (loading the sample, waiting for another's load). */
  note?: string;
  components: ComponentStatus[];
}

export class Health {
  private readonly components = new Map<string, ComponentStatus>();
  private doing: string | null = null;
  /** The registries exporting this process's metrics (the API's, the ops server's) and what else each exports. */
  private readonly registries: Registry[] = [];
  private readonly exporters: Array<(registry: Registry) => void> = [];

  constructor(
    private readonly now: () => Date = () => new Date(),
    readonly processName = `${hostname()}:${process.pid}`,
  ) {}

  /** Declares a component (idempotent); its state starts as `starting`. */
  register(name: string, kind: ComponentStatus['kind'], options: { critical?: boolean } = {}): void {
    if (this.components.has(name)) return;
    this.components.set(name, {
      name,
      kind,
      state: 'starting',
      since: this.now().toISOString(),
      lastError: null,
      restarts: 0,
      critical: options.critical ?? true,
    });
  }

  /** Moves a component to `state`; `error` (when given) becomes its last error. */
  set(name: string, state: ComponentState, error?: unknown): void {
    const c = this.components.get(name);
    if (!c) throw new Error(`health: unknown component ${name}`);
    if (c.state !== state) {
      c.state = state;
      c.since = this.now().toISOString();
    }
    if (error !== undefined) c.lastError = describe(error);
  }

  /** Merges counts or lag into a component's detail. */
  detail(name: string, detail: Record<string, unknown>): void {
    const c = this.components.get(name);
    if (c) c.detail = { ...c.detail, ...detail };
  }

  restarted(name: string): void {
    const c = this.components.get(name);
    if (c) c.restarts += 1;
  }

  get(name: string): ComponentStatus | undefined {
    return this.components.get(name);
  }

  /** Critical components not `running`: what keeps the process from being ready. */
  failing(): ComponentStatus[] {
    return [...this.components.values()].filter((c) => c.critical && c.state !== 'running');
  }

  /** What the process is doing before it is ready, for `marquee status` (null: nothing to say). */
  note(text: string | null): void {
    this.doing = text;
  }

  report(ready: boolean): HealthReport {
    return {
      process: this.processName,
      at: this.now().toISOString(),
      ready,
      ...(this.doing !== null && !ready ? { note: this.doing } : {}),
      components: [...this.components.values()].map((c) => ({ ...c, ...(c.detail ? { detail: { ...c.detail } } : {}) })),
    };
  }

  /**
   * Exports `marquee_component_state{component,state}` (1 for the current state, 0 for the
   * others), `marquee_component_restarts_total{component}`, and what `exportMetrics` added,
   * into `registry`. Read at each scrape, so any number of registries (the API's, the ops
   * server's) show the same.
   */
  registerMetrics(registry: Registry): void {
    const components = this.components;
    new Gauge({
      name: 'marquee_component_state',
      help: 'State of each background loop and dependency of this process: 1 for its current state.',
      labelNames: ['component', 'state'] as const,
      registers: [registry],
      collect() {
        for (const c of components.values()) {
          for (const state of COMPONENT_STATES) this.labels(c.name, state).set(state === c.state ? 1 : 0);
        }
      },
    });
    new Counter({
      name: 'marquee_component_restarts_total',
      help: 'Restarts of each supervised loop of this process after a failure: a count that keeps growing is a crash loop.',
      labelNames: ['component'] as const,
      registers: [registry],
      collect() {
        this.reset();
        for (const c of components.values()) if (c.kind === 'loop') this.labels(c.name).inc(c.restarts);
      },
    });
    this.registries.push(registry);
    for (const exporter of this.exporters) exporter(registry);
  }

  /**
   * Adds metrics of a part of the process (ingest's counts) to every registry that exports this
   * process's health, now and later: the part need not know which servers expose them.
   */
  exportMetrics(exporter: (registry: Registry) => void): void {
    this.exporters.push(exporter);
    for (const registry of this.registries) exporter(registry);
  }
}

function describe(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  return String(error);
}

/** A pause that something else can cut short: a loop's sleep that a stop or an event ends at once. */
export class Alarm {
  private ring: (() => void) | null = null;

  /** Resolves after `ms`, or as soon as `wake()` is called. */
  sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => this.settle(resolve), ms);
      this.ring = () => {
        clearTimeout(timer);
        this.settle(resolve);
      };
    });
  }

  /** Ends the sleep in progress, if any. */
  wake(): void {
    this.ring?.();
  }

  private settle(resolve: () => void): void {
    this.ring = null;
    resolve();
  }
}

export interface SuperviseOptions {
  /** First pause after a failure, in ms; doubles per consecutive failure. Default 500. */
  minBackoffMs?: number;
  /** Longest pause, in ms. Default 30000. */
  maxBackoffMs?: number;
  /** A run that lasted this long resets the backoff. Default 60000. */
  healthyAfterMs?: number;
  critical?: boolean;
}

export interface Supervised {
  stop(): Promise<void>;
}

/**
 * Runs `run(signal)` under supervision: `running` while it runs; if it throws (or returns while
 * not stopped), `backing_off` with the error, then a restart after an exponential pause. `stop()`
 * aborts the signal, waits for the run in flight and leaves the state `stopped`. Never throws.
 */
export function supervise(
  health: Health,
  name: string,
  logger: Logger,
  run: (signal: AbortSignal, markRunning: () => void) => Promise<void>,
  options: SuperviseOptions = {},
): Supervised {
  const { minBackoffMs = 500, maxBackoffMs = 30_000, healthyAfterMs = 60_000 } = options;
  health.register(name, 'loop', { critical: options.critical ?? true });
  const abort = new AbortController();
  const alarm = new Alarm();
  const loop = (async () => {
    let failures = 0;
    while (!abort.signal.aborted) {
      const startedAt = Date.now();
      try {
        health.set(name, 'running');
        await run(abort.signal, () => health.set(name, 'running'));
        if (abort.signal.aborted) break;
        throw new Error(`${name} stopped by itself`);
      } catch (err) {
        if (abort.signal.aborted) break;
        failures = Date.now() - startedAt >= healthyAfterMs ? 1 : failures + 1;
        const pause = Math.min(maxBackoffMs, minBackoffMs * 2 ** (failures - 1));
        health.set(name, 'backing_off', err);
        health.restarted(name);
        logger.error({ err, component: name, retryInMs: pause }, `${name} failed; restarting in ${(pause / 1000).toFixed(1)} s`);
        await alarm.sleep(pause);
      }
    }
    health.set(name, 'stopped');
  })();
  return {
    async stop() {
      abort.abort();
      alarm.wake();
      await loop;
    },
  };
}

/**
 * Supervises a bus consumer: `start()` begins one; when its `done` rejects (its batch is then
 * redelivered) a new one is started after the backoff. `stop()` stops the one running.
 */
export function superviseConsumer(
  health: Health,
  name: string,
  logger: Logger,
  start: () => { stop(): Promise<void>; readonly done: Promise<void> },
  options: SuperviseOptions = {},
): Supervised {
  return supervise(health, name, logger, async (signal) => {
    const consumer = start();
    const stop = () => void consumer.stop();
    signal.addEventListener('abort', stop, { once: true });
    try {
      await consumer.done;
    } finally {
      signal.removeEventListener('abort', stop);
    }
  }, options);
}

/** Collection where each process publishes its health report, for `marquee status`. */
export const HEALTH_COLLECTION = '_health';

/** A report older than this comes from a process that was killed or hangs (it publishes every few seconds). */
export const HEALTH_STALE_AFTER_MS = 30_000;

/**
 * A report this old is removed by the processes still reporting: a killed process never removes
 * its own, and one whose host name changes with every restart (a container's) would otherwise
 * leave one more STALE entry in `marquee status` at every kill, for good. A day keeps a crash in
 * view long enough to be looked into.
 */
export const HEALTH_FORGET_AFTER_MS = 24 * 3600 * 1000;
const HEALTH_FORGET_EVERY_MS = 10 * 60 * 1000;

/**
 * Publishes this process's report to the read store, keyed by process name, for `marquee
 * status` in another process: at once when a state changes (checked every 250 ms), else every
 * `intervalMs` (default 5 s) so its age shows the process is alive. Supervised, so a read store
 * that is briefly away does not end it. `stop()` removes the report: a process that stopped
 * cleanly is gone, while one that was killed leaves a report that ages and is shown as stale.
 */
export function publishHealth(
  health: Health,
  readStore: ReadStore,
  logger: Logger,
  options: { ready: () => boolean; intervalMs?: number; forgetAfterMs?: number },
): Supervised {
  const intervalMs = options.intervalMs ?? 5000;
  const forgetAfterMs = options.forgetAfterMs ?? HEALTH_FORGET_AFTER_MS;
  let position = 0;
  // Positions only go up (a write not ahead of the stored one is skipped); the clock's ms keep
  // them ahead of an earlier process of the same name.
  const write = (doc: HealthReport | null) => {
    position = Math.max(Date.now(), position + 1);
    return readStore.writeBatch(HEALTH_COLLECTION, [{ key: health.processName, doc, position }]);
  };
  /** Removes the reports of processes silent for `forgetAfterMs`; resolves to how many. */
  const forget = async (): Promise<number> => {
    const now = Date.now();
    const gone = (await readStore.scan<HealthReport>(HEALTH_COLLECTION))
      .filter(({ key, doc }) => key !== health.processName && !(now - Date.parse(doc.at) < forgetAfterMs));
    if (gone.length === 0) return 0;
    // Purged, not deleted: a tombstone would stay for good, and would refuse the reports of a
    // process of that name whose clock runs behind this one's.
    await readStore.purge(HEALTH_COLLECTION, gone.map(({ key }) => key));
    logger.info({ processes: gone.map((g) => g.key) }, `removed the health reports of ${gone.length} process(es) silent for over ${Math.round(forgetAfterMs / 3_600_000)} h`);
    return gone.length;
  };
  const loop = supervise(health, 'health-report', logger, async (signal) => {
    let written = '';
    let writtenAt = 0;
    let forgotAt = -Infinity;
    while (!signal.aborted) {
      if (Date.now() - forgotAt >= HEALTH_FORGET_EVERY_MS) {
        forgotAt = Date.now();
        await forget();
      }
      const report = health.report(options.ready() && health.failing().length === 0);
      // Counts and lag in `detail` change all the time; states (and what a process not ready is
      // doing) are what a reader waits for.
      const states = JSON.stringify([report.ready, report.note ?? null, report.components.map((c) => [c.name, c.state, c.restarts, c.lastError])]);
      if (states !== written || Date.now() - writtenAt >= intervalMs) {
        await write(report);
        written = states;
        writtenAt = Date.now();
      }
      await sleep(Math.min(250, intervalMs), undefined, { signal }).catch(() => undefined);
    }
  }, { critical: false });
  return {
    async stop() {
      await loop.stop();
      await write(null).catch((err: unknown) => logger.warn({ err }, 'could not remove the health report of this process'));
    },
  };
}

/** What `marquee status` prints of the published reports: each process, then each component. */
export function describeHealthReports(reports: readonly HealthReport[], now: Date): string[] {
  if (reports.length === 0) return ['no running process reports its health (`marquee start` does, every few seconds)'];
  const lines: string[] = [];
  for (const report of reports) {
    const age = now.getTime() - Date.parse(report.at);
    const state = age > HEALTH_STALE_AFTER_MS
      ? `STALE: last report ${Math.round(age / 1000)} s ago (killed, or hanging)`
      : report.ready ? 'ready' : report.note ? `not ready: ${report.note}` : 'not ready';
    lines.push(`${report.process}  ${state}  (reported ${report.at})`);
    for (const c of report.components) {
      const extra = `${c.kind === 'loop' ? `  restarts ${c.restarts}` : ''}${c.critical ? '' : '  (not critical)'}`;
      lines.push(`  ${c.name.padEnd(20)} ${c.state.padEnd(12)} since ${c.since}${extra}`);
      if (c.lastError !== null) lines.push(`    last error: ${c.lastError}`);
    }
  }
  return lines;
}
