/**
 * The jobs `start` runs on a schedule, on the injected clock: the daily ranking (once per UTC
 * day, idempotent per country and date) and, once the snapshot module is wired, the weekly
 * release. A check runs every minute, so a process started mid-day catches up at once.
 */
import type { Clock } from '../../contracts/ports.ts';
import { rankDay } from '../ranking/job.ts';
import type { Adapters } from '../shared/adapters.ts';
import type { Config } from '../shared/config.ts';
import type { Logger } from '../shared/logger.ts';
import type { Pipeline } from './pipeline.ts';

export interface SchedulerOptions {
  adapters: Adapters;
  pipeline: Pipeline;
  logger: Logger;
  clock: Clock;
  config: Config;
  /** How often the schedule is checked, in ms. Default 60 000. */
  intervalMs?: number;
}

export function createScheduler(options: SchedulerOptions): { stop(): Promise<void> } {
  const { adapters, logger, clock } = options;
  let lastRanked: string | null = null;
  let running: Promise<void> = Promise.resolve();
  const tick = () => {
    running = (async () => {
      const today = clock.now().toISOString().slice(0, 10);
      if (lastRanked === today) return;
      try {
        await rankDay({ date: today, readStore: adapters.readStore, eventStore: adapters.eventStore, clock });
        lastRanked = today;
        logger.info(`daily ranking computed for ${today}`);
      } catch (err) {
        logger.warn({ err }, 'daily ranking failed; trying again at the next check');
      }
    })();
  };
  tick();
  const timer = setInterval(tick, options.intervalMs ?? 60_000);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
