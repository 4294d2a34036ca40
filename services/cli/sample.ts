/**
 * The sample catalog a newcomer gets on the first `npm start`: a week of simulated daily crawls
 * (day 0 is the full catalog, later days carry realistic churn), each ingested, projected and
 * ranked, so rankings and trending have history from the first minute.
 */
import type { Clock } from '../../contracts/ports.ts';
import { crawlDate } from '../crawler/catalog.ts';
import { crawl } from '../crawler/crawl.ts';
import { dateOfEpochDay, epochDayOf } from '../crawler/dates.ts';
import { rankDay } from '../ranking/job.ts';
import type { Adapters } from '../shared/adapters.ts';
import type { Config } from '../shared/config.ts';
import type { Logger } from '../shared/logger.ts';
import type { Pipeline } from './pipeline.ts';
import { startProjectionThread } from './projectionThread.ts';
import { progress } from './progress.ts';

export interface SampleOptions {
  adapters: Adapters;
  pipeline: Pipeline;
  logger: Logger;
  config: Config;
  clock: Clock;
  /** Aborted on shutdown: the load stops between steps and leaves what it appended consistent. */
  signal?: AbortSignal;
}

/** The first day of the sample week: `days` days before today (UTC), so the catalog looks current. */
export function sampleStartDate(clock: Clock, days: number): string {
  return crawlDate(-days, clock.now().toISOString().slice(0, 10));
}

/** Checkpoint name recording how many sample days are loaded, so an interrupted first start resumes. */
export const SAMPLE_DAYS_CHECKPOINT = 'sample-days-loaded';
/** The sample's first day, as days since 1970-01-01. */
const SAMPLE_START_CHECKPOINT = 'sample-start-day';

/** Whether `start` should (continue to) load the sample: an empty store, or a load cut short. */
export async function sampleDaysToLoad(adapters: Adapters, days: number): Promise<number | null> {
  const loaded = await adapters.readStore.getCheckpoint(SAMPLE_DAYS_CHECKPOINT);
  if (loaded > 0) return loaded < days ? loaded : null;
  return (await adapters.eventStore.headPosition()) === 0 ? 0 : null;
}

export async function loadSample({ adapters, pipeline, logger, config, clock, signal, fromDay = 0 }: SampleOptions & { fromDay?: number }): Promise<void> {
  const days = Math.max(1, config.sampleDays);
  // The first day is kept, so a load resumed on another day continues the same week.
  const storedStart = await adapters.readStore.getCheckpoint(SAMPLE_START_CHECKPOINT);
  const startDate =
    fromDay > 0 && storedStart > 0
      ? dateOfEpochDay(storedStart)
      : (process.env.SAMPLE_START_DATE ?? sampleStartDate(clock, days));
  await adapters.readStore.setCheckpoint(SAMPLE_START_CHECKPOINT, epochDayOf(startDate));
  if (fromDay === 0) logger.info(`empty data directory: loading the sample catalog (seed ${config.sampleSeed}, ${days} days from ${startDate})`);
  const started = Date.now();
  pipeline.deferSearch(true);
  if (fromDay > 0) logger.info(`resuming the sample load at day ${fromDay + 1} of ${days}`);
  // Projections fold on the other core while this thread crawls and ingests; each day waits
  // for them only where the ranking needs the read models up to date.
  const projecting = await startProjectionThread(config, adapters.readStore);
  try {
    for (let day = fromDay; day < days; day += 1) {
      if (signal?.aborted) return;
      const date = crawlDate(day, startDate);
      const bar = progress(`day ${day + 1}/${days} ${date}`, 0, 'events');
      const published = await crawl({
        bus: adapters.bus,
        seed: config.sampleSeed,
        day,
        startDate,
        ...(config.sampleTitles === null ? {} : { titles: config.sampleTitles }),
        ...(config.sampleCountries === null ? {} : { countries: config.sampleCountries }),
      });
      await pipeline.ingestUntilIdle();
      if (signal?.aborted) return;
      const ingested = await adapters.eventStore.headPosition();
      await projecting.waitFor(ingested, (lowest) => bar.update(lowest, ingested, 'projecting'));
      await rankDay({ date, readStore: adapters.readStore, eventStore: adapters.eventStore, clock });
      await projecting.waitFor(await adapters.eventStore.headPosition());
      await adapters.readStore.setCheckpoint(SAMPLE_DAYS_CHECKPOINT, day + 1);
      bar.stop();
      logger.debug({ day, date, published }, 'sample day loaded');
    }
  } finally {
    await projecting.stop();
  }
  if (signal?.aborted) return;
  pipeline.deferSearch(false);
  const indexed = await pipeline.refillSearch();
  const head = await adapters.eventStore.headPosition();
  logger.info(`sample catalog loaded: ${head} events, ${indexed} titles indexed for search, in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
