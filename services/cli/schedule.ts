/**
 * The jobs the scheduler role runs on the injected clock: the daily ranking (once per UTC day)
 * and the weekly Parquet release (once per ISO week). A check runs every minute, so a process
 * started mid-week catches up at once; each job runs in the background and never blocks the API.
 *
 * Exactly once per period across every scheduler process: only the holder of the `scheduler`
 * lease (services/shared/lease.ts) runs jobs, and a job that completed leaves a durable record
 * of its period (`_schedule`, `ranking:<date>`, `release:<week>`), so a restarted scheduler or a
 * standby that took over does not run it again. A holder killed mid-job leaves no record: the
 * next holder runs the job again, which the jobs make harmless (a ranking is appended with an
 * expected revision per country and date, a release is a no-op when its week is published).
 *
 * Each job reads the read models, so it waits until every projection has folded everything
 * appended up to the moment the job is due: the end of its period as far as this log knows.
 * The scheduler never folds them itself (that would make it a second writer of the projections).
 */
import type { Clock, EventStore, ReadStore, ReleaseStore } from '../../contracts/ports.ts';
import { projectionCheckpoints } from '../shared/readModels.ts';
import type { LinkTokens } from '../links/linkTokens.ts';
import { rankDay } from '../ranking/job.ts';
import { isoWeekLabel } from '../snapshot/week.ts';
import type { Adapters } from '../shared/adapters.ts';
import type { Config } from '../shared/config.ts';
import { insertNew, type LeaseKeeper } from '../shared/lease.ts';
import { supervise, type Health } from '../shared/health.ts';
import type { Logger } from '../shared/logger.ts';
import { pause } from '../roles/context.ts';
import { cachedLinkTokens } from '../api/linkTokenCache.ts';
import { createDeliveryWorker } from '../webhooks/worker.ts';

/** Durable records of the periods whose job completed. */
export const SCHEDULE_COLLECTION = '_schedule';

export interface SchedulerOptions {
  adapters: Adapters;
  logger: Logger;
  clock: Clock;
  config: Config;
  releases: ReleaseStore;
  linkTokens: LinkTokens;
  health: Health;
  /** The `scheduler` lease of this process: jobs run only while it is held. */
  lease: LeaseKeeper;
  /** How often the schedule is checked, in ms. Default 60 000. */
  intervalMs?: number;
  /** How long a job waits for the projections before trying again at the next check. Default 10 min. */
  projectionsTimeoutMs?: number;
}

/** The lowest checkpoint of the live read models: every event up to it is folded into all of them. */
export async function projectionsPosition(readStore: ReadStore): Promise<number> {
  return Math.min(...(await projectionCheckpoints(readStore)));
}

/** Waits until every projection has folded the log up to its head as read now. */
export async function awaitProjections(eventStore: EventStore, readStore: ReadStore, timeoutMs: number, signal?: AbortSignal): Promise<void> {
  const head = await eventStore.headPosition();
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const position = await projectionsPosition(readStore);
    if (position >= head) return;
    if (signal?.aborted) throw new Error('stopped while waiting for the projections');
    if (Date.now() > deadline) throw new Error(`the projections are at ${position}, not yet at ${head} (is a projector running?)`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

let builder: Promise<typeof import('../snapshot/build.ts')> | undefined;

/**
 * The release build's modules (Apache Arrow, the Parquet writer), imported once. Loading them
 * holds the event loop for 0.1-0.2 s: `start` awaits this before it reports ready, so that
 * pause falls while /readyz still answers 503 rather than on live requests when the first
 * release is due (on an empty catalog that is the first check, right after ready).
 */
export function releaseBuilder(): Promise<typeof import('../snapshot/build.ts')> {
  builder ??= import('../snapshot/build.ts');
  return builder;
}

export function createScheduler(options: SchedulerOptions): { stop(): Promise<void> } {
  const { adapters, logger, clock, config, lease, health } = options;
  const { readStore, eventStore } = adapters;
  const abort = new AbortController();
  const timeoutMs = options.projectionsTimeoutMs ?? 600_000;
  /**
   * Runs `job` for `period` unless a scheduler completed it; records it once done. Sets
   * `waiting` when the period is still open because another scheduler holds the lease (it may
   * be running the job, or may have died: its lease then expires and this one looks again soon).
   */
  let waiting = false;
  async function once(period: string, job: () => Promise<void>): Promise<void> {
    if ((await readStore.get(SCHEDULE_COLLECTION, period)) !== null) return;
    if (!(await lease.take())) {
      waiting = true;
      return;
    }
    // Again under the lease: another holder may have completed it since the look above.
    if ((await readStore.get(SCHEDULE_COLLECTION, period)) !== null) return;
    // Renewed while the job waits and runs (a release build may outlast the lease).
    const renew = setInterval(() => void lease.take().catch(() => undefined), lease.ms / 4);
    try {
      await awaitProjections(eventStore, readStore, timeoutMs, abort.signal);
      lease.check();
      await job();
    } finally {
      clearInterval(renew);
    }
    await insertNew(readStore, SCHEDULE_COLLECTION, period, { by: lease.holder, at: clock.now().toISOString() });
  }

  async function daily(): Promise<void> {
    const today = clock.now().toISOString().slice(0, 10);
    // A day once ranked stays as ranked.
    await once(`ranking:${today}`, async () => {
      const results = await rankDay({ date: today, readStore, eventStore, clock });
      const appended = results.filter((r) => r.status === 'appended').length;
      if (appended > 0) logger.info(`daily ranking computed for ${today} in ${appended} countries`);
    });
  }

  async function weekly(): Promise<void> {
    const week = isoWeekLabel(clock.now());
    // The release reads the rankings too: `once` waits for the ranking just appended to be folded.
    await once(`release:${week}`, async () => {
      const started = Date.now();
      const { buildRelease } = await releaseBuilder();
      const result = await buildRelease({ readStore, releases: options.releases, linkTokens: options.linkTokens, clock, week, keep: config.releasesKeep });
      if (result.created) {
        const files = result.manifest.files.length;
        logger.info(`weekly release ${week} published: ${files} files in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      }
    });
  }

  // Supervised (`scheduler` in Health): a job that fails is logged and tried again at the next
  // check; a read store that fails the loop itself restarts it with backoff.
  const loop = supervise(
    health,
    'scheduler',
    logger,
    async (signal) => {
      while (!signal.aborted) {
        waiting = false;
        for (const [name, job] of [['daily ranking', daily], ['weekly release', weekly]] as const) {
          try {
            await job();
          } catch (err) {
            if (signal.aborted) logger.info(`${name} interrupted by shutdown; it runs again at the next start`);
            else logger.warn({ err }, `${name} failed; trying again at the next check`);
          }
        }
        // An open period held by another scheduler is looked at again soon: if that one died,
        // its lease expires and this one runs the job (a restart after a kill does so at once).
        await pause(waiting ? Math.min(2000, options.intervalMs ?? 60_000) : (options.intervalMs ?? 60_000), signal);
      }
    },
    { critical: false },
  );
  // Webhook deliveries follow the change feed continuously (services/webhooks/worker.ts); a
  // lease per webhook keeps several scheduler processes from delivering one webhook twice.
  const tokens = cachedLinkTokens(options.linkTokens);
  const webhooks = createDeliveryWorker({ readStore, clock, encode: (url) => tokens.encode(url), logger });
  webhooks.start();
  return {
    async stop() {
      abort.abort();
      await webhooks.stop();
      // A ranking finishes in seconds; a release build may take longer, and an unpublished
      // release is simply built again at the next start, so shutdown waits only briefly.
      await Promise.race([loop.stop(), new Promise((r) => setTimeout(r, 3000).unref())]);
      await lease.release().catch((err: unknown) => logger.warn({ err }, 'could not release the scheduler lease'));
    },
  };
}
