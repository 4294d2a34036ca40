/**
 * The sample catalog a newcomer gets on the first `npm start`: a week of simulated daily crawls
 * (day 0 is the full catalog, later days carry realistic churn), each ingested, projected and
 * ranked, so rankings and trending have history from the first minute.
 */
import type { Clock } from '../../contracts/ports.ts';
import { crawl } from '../crawler/crawl.ts';
import { rankDay } from '../ranking/job.ts';
import type { Adapters } from '../shared/adapters.ts';
import type { Config } from '../shared/config.ts';
import type { Logger } from '../shared/logger.ts';
import { refillSearch, type Pipeline } from './pipeline.ts';
import { progress } from './progress.ts';

export interface SampleOptions {
  adapters: Adapters;
  pipeline: Pipeline;
  logger: Logger;
  config: Pick<Config, 'sampleSeed' | 'sampleDays' | 'sampleTitles' | 'sampleCountries'>;
  clock: Clock;
}

/** The first day of the sample week: `days` days before today (UTC), so the catalog looks current. */
export function sampleStartDate(clock: Clock, days: number): string {
  const start = new Date(clock.now().getTime() - days * 86_400_000);
  return start.toISOString().slice(0, 10);
}

export function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
}

export async function loadSample({ adapters, pipeline, logger, config, clock }: SampleOptions): Promise<void> {
  const days = Math.max(1, config.sampleDays);
  const startDate = process.env.SAMPLE_START_DATE ?? sampleStartDate(clock, days);
  logger.info(`empty data directory: loading the sample catalog (seed ${config.sampleSeed}, ${days} days from ${startDate})`);
  const started = Date.now();
  pipeline.deferSearch(true);
  for (let day = 0; day < days; day += 1) {
    const date = addDays(startDate, day);
    const bar = progress(`day ${day + 1}/${days} ${date}`, 0, 'events');
    const published = await crawl({
      bus: adapters.bus,
      seed: config.sampleSeed,
      day,
      startDate,
      ...(config.sampleTitles === null ? {} : { titles: config.sampleTitles }),
      ...(config.sampleCountries === null ? {} : { countries: config.sampleCountries }),
    });
    await pipeline.drain((stage, done, total) => {
      if (stage === 'project') bar.update(done, total, 'projecting');
    });
    await rankDay({ date, readStore: adapters.readStore, eventStore: adapters.eventStore, clock });
    await pipeline.projections.catchUp();
    bar.stop();
    logger.debug({ day, date, published }, 'sample day loaded');
  }
  pipeline.deferSearch(false);
  const indexed = await refillSearch(adapters);
  const head = await adapters.eventStore.headPosition();
  logger.info(`sample catalog loaded: ${head} events, ${indexed} titles indexed for search, in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
