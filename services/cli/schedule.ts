/**
 * The jobs `start` runs on a schedule, on the injected clock: the daily ranking (once per UTC
 * day, idempotent per country and date) and the weekly Parquet release (once per ISO week,
 * a no-op when that week is published). A check runs every minute, so a process started
 * mid-week catches up at once; each job runs in the background and never blocks the API.
 */
import type { Clock, ReleaseStore } from '../../contracts/ports.ts';
import type { LinkTokens } from '../links/linkTokens.ts';
import { rankDay } from '../ranking/job.ts';
import { buildRelease } from '../snapshot/build.ts';
import { isoWeekLabel } from '../snapshot/week.ts';
import type { Adapters } from '../shared/adapters.ts';
import type { Config } from '../shared/config.ts';
import type { Logger } from '../shared/logger.ts';
import type { Pipeline } from './pipeline.ts';
import { cachedLinkTokens } from '../api/linkTokenCache.ts';
import { createDeliveryWorker } from '../webhooks/worker.ts';

export interface SchedulerOptions {
  adapters: Adapters;
  pipeline: Pipeline;
  logger: Logger;
  clock: Clock;
  config: Config;
  releases: ReleaseStore;
  linkTokens: LinkTokens;
  /** How often the schedule is checked, in ms. Default 60 000. */
  intervalMs?: number;
}

export function createScheduler(options: SchedulerOptions): { stop(): Promise<void> } {
  const { adapters, logger, clock, pipeline, config } = options;
  let lastRanked: string | null = null;
  let lastReleased: string | null = null;
  let running: Promise<void> = Promise.resolve();
  let busy = false;
  let stopping = false;

  async function daily(): Promise<void> {
    const today = clock.now().toISOString().slice(0, 10);
    if (lastRanked === today) return;
    // The ranking reads the read models: rank what was appended so far, not a read model that
    // is still folding it (after a restart, say). A day once ranked stays as ranked.
    await pipeline.projections.catchUp();
    const results = await rankDay({ date: today, readStore: adapters.readStore, eventStore: adapters.eventStore, clock });
    lastRanked = today;
    const appended = results.filter((r) => r.status === 'appended').length;
    if (appended > 0) logger.info(`daily ranking computed for ${today} in ${appended} countries`);
  }

  async function weekly(): Promise<void> {
    const week = isoWeekLabel(clock.now());
    if (lastReleased === week) return;
    // The release reads the read models: let them catch up with the ranking just appended.
    await pipeline.projections.catchUp();
    const started = Date.now();
    const result = await buildRelease({
      readStore: adapters.readStore,
      releases: options.releases,
      linkTokens: options.linkTokens,
      clock,
      week,
      keep: config.releasesKeep,
    });
    lastReleased = week;
    if (result.created) {
      const files = result.manifest.files.length;
      logger.info(`weekly release ${week} published: ${files} files in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    }
  }

  const tick = () => {
    if (busy) return;
    busy = true;
    running = (async () => {
      for (const [name, job] of [['daily ranking', daily], ['weekly release', weekly]] as const) {
        try {
          await job();
        } catch (err) {
          if (stopping) logger.info(`${name} interrupted by shutdown; it runs again at the next start`);
          else logger.warn({ err }, `${name} failed; trying again at the next check`);
        }
      }
    })().finally(() => {
      busy = false;
    });
  };
  tick();
  const timer = setInterval(tick, options.intervalMs ?? 60_000);
  timer.unref();
  // Webhook deliveries follow the change feed continuously (services/webhooks/worker.ts); a
  // lease per webhook keeps several scheduler processes from delivering one webhook twice.
  const tokens = cachedLinkTokens(options.linkTokens);
  const webhooks = createDeliveryWorker({ readStore: adapters.readStore, clock, encode: (url) => tokens.encode(url), logger });
  webhooks.start();
  return {
    async stop() {
      stopping = true;
      clearInterval(timer);
      await webhooks.stop();
      // A ranking finishes in seconds; a release build may take longer, and an unpublished
      // release is simply built again at the next start, so shutdown waits only briefly.
      await Promise.race([running, new Promise((r) => setTimeout(r, 3000).unref())]);
    },
  };
}
