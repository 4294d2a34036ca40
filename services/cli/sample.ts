/**
 * The sample catalog a newcomer gets on the first `npm start`: a week of simulated daily crawls
 * (day 0 is the full catalog, later days carry realistic churn), each ingested, projected and
 * ranked, so rankings and trending have history from the first minute.
 */
import type { Clock } from '../../contracts/ports.ts';
import { searchProjection } from '../../projections/search.ts';
import { crawlDate } from '../crawler/catalog.ts';
import { crawl } from '../crawler/crawl.ts';
import { dateOfEpochDay, epochDayOf } from '../crawler/dates.ts';
import { RANKING_READS, rankDay } from '../ranking/job.ts';
import type { Adapters } from '../shared/adapters.ts';
import type { Config } from '../shared/config.ts';
import type { Logger } from '../shared/logger.ts';
import type { Pipeline } from './pipeline.ts';
import { publishWhileIngesting, startCrawlThread, type CrawlThread } from './crawlThread.ts';
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

/*
 * The load's progress, kept as read-store checkpoints so that a load cut short at any point,
 * SIGKILL included, resumes where it stopped instead of passing a partial catalog for a whole
 * one:
 * - `sample-start-day` is written BEFORE anything is published: from then on the data directory
 *   holds a sample load, complete or not (a non-empty event store alone says nothing);
 * - `sample-days-loaded` counts the days crawled, ingested and ranked, the ranking's read
 *   models projected (the other read models, and the rankings from a day's own ranking events,
 *   may lag: they fold while later days are loaded, and the load ends only once every read
 *   model has caught up);
 * - `sample-indexed` is set once the search index holds the loaded catalog: the last step.
 * Redoing a day is safe: its crawl is deterministic and ingest skips an observation id it has
 * folded already, the ranking of a country and day is a no-op once appended, and the read models
 * commit each batch with its checkpoint (a fold cut short is folded again, guarded by position).
 */
/** Checkpoint name recording how many sample days are fully loaded. */
export const SAMPLE_DAYS_CHECKPOINT = 'sample-days-loaded';
/** The sample's first day, as days since 1970-01-01; set = a sample load has begun here. */
const SAMPLE_START_CHECKPOINT = 'sample-start-day';
/** 1 once the search index was filled from the loaded sample. */
const SAMPLE_INDEXED_CHECKPOINT = 'sample-indexed';

export type SampleLoadState =
  /** Nothing stored yet: `start --sample` loads the sample from day 0. */
  | { kind: 'empty' }
  /** A sample load began and stopped before its end: resume at `fromDay` (== days: only the index is left). */
  | { kind: 'partial'; fromDay: number; days: number }
  /** The sample is loaded. */
  | { kind: 'complete' }
  /** Data that no sample load wrote (a deployment's own crawls). */
  | { kind: 'other' };

/** Where the data directory stands with respect to the sample (see the checkpoints above). */
export async function sampleLoadState(adapters: Adapters, days: number): Promise<SampleLoadState> {
  const { readStore } = adapters;
  if ((await readStore.getCheckpoint(SAMPLE_START_CHECKPOINT)) > 0) {
    const loaded = await readStore.getCheckpoint(SAMPLE_DAYS_CHECKPOINT);
    const indexed = await readStore.getCheckpoint(SAMPLE_INDEXED_CHECKPOINT);
    const wanted = Math.max(1, days);
    return loaded >= wanted && indexed > 0 ? { kind: 'complete' } : { kind: 'partial', fromDay: Math.min(loaded, wanted), days: wanted };
  }
  return (await adapters.eventStore.headPosition()) === 0 ? { kind: 'empty' } : { kind: 'other' };
}

/** `rest` with the result already taken from it in front. */
async function* prepend<T>(first: IteratorResult<T>, rest: AsyncGenerator<T>): AsyncGenerator<T> {
  if (first.done) return;
  yield first.value;
  yield* rest;
}

export async function loadSample({ adapters, pipeline, logger, config, clock, signal, fromDay = 0, onDay }: SampleOptions & { fromDay?: number; onDay?: (day: number, days: number) => void }): Promise<void> {
  const days = Math.max(1, config.sampleDays);
  // The first day is kept from the load that began, so a load resumed on another day (or with
  // another SAMPLE_START_DATE) continues the same week; it is durable before the first publish.
  const storedStart = await adapters.readStore.getCheckpoint(SAMPLE_START_CHECKPOINT);
  const startDate = storedStart > 0 ? dateOfEpochDay(storedStart) : (config.sampleStartDate ?? sampleStartDate(clock, days));
  if (storedStart === 0) await adapters.readStore.setCheckpoint(SAMPLE_START_CHECKPOINT, epochDayOf(startDate));
  if (storedStart === 0) logger.info(`empty data directory: loading the sample catalog (seed ${config.sampleSeed}, ${days} days from ${startDate})`);
  else logger.info(`resuming the sample load at day ${Math.min(fromDay + 1, days)} of ${days} (${days} days from ${startDate})`);
  const started = Date.now();
  pipeline.deferSearch(true);
  // Projections fold in a thread of their own while this one ingests; each day waits for them
  // only where the ranking needs the read models up to date.
  const crawlOptions = {
    seed: config.sampleSeed,
    startDate,
    ...(config.sampleTitles === null ? {} : { titles: config.sampleTitles }),
    ...(config.sampleCountries === null ? {} : { countries: config.sampleCountries }),
  };
  // On the local inbox, each day's crawl is generated and encoded on a thread of its own while
  // the day before is ingested, projected and ranked (other buses crawl here, as `crawl` does).
  const { localInbox } = adapters;
  const crawling: CrawlThread | null = localInbox ? startCrawlThread(crawlOptions) : null;
  crawling?.prepare(fromDay);
  // Not awaited here: the first day is ingested while the worker boots (its modules take about
  // a second to load), and only the first wait for the read models needs it.
  const booting = startProjectionThread(config, adapters.readStore, { rankingFirst: true });
  booting.catch(() => undefined);
  let indexed: number | undefined;
  /** The log's head once the last day loaded here was ingested, before its ranking. */
  let crawled = 0;
  const fillIndex = () => {
    pipeline.deferSearch(false);
    return pipeline.refillSearch();
  };
  try {
    for (let day = fromDay; day < days; day += 1) {
      if (signal?.aborted) return;
      const date = crawlDate(day, startDate);
      const bar = progress(`day ${day + 1}/${days} ${date}`, 0, 'events');
      logger.debug(`sample day ${day + 1}/${days} ${date}: crawling`);
      onDay?.(day + 1, days);
      let published: number | Record<string, number>;
      if (crawling && localInbox) {
        const chunks = crawling.take(day);
        const first = await chunks.next();
        // The next day is generated while this one is ingested, projected and ranked.
        if (day + 1 < days) crawling.prepare(day + 1);
        published = await publishWhileIngesting(localInbox, prepend(first, chunks), () => pipeline.ingestUntilIdle(), signal);
        // Every later day too, now that this one is in: the crawl thread then generates them
        // while the projection thread finishes folding the first day, when the main thread
        // only waits (a later day is about 5,500 records, its crawl most of a CPU second).
        // Generated one day after the other, they waited each for the day before to be loaded
        // and took that second from the ingest and the projections of days 2-7.
        for (let later = day + 2; later < days; later += 1) crawling.prepare(later);
      } else {
        published = await crawl({ bus: adapters.bus, day, ...crawlOptions });
        await pipeline.ingestUntilIdle();
      }
      if (signal?.aborted) return;
      const ingested = await adapters.eventStore.headPosition();
      crawled = ingested;
      // Only what the ranking reads: the other read models fold days 2-7 in a few large batches
      // (on MongoDB a document changed on several days is then written once per batch, not once
      // a day); the wait after the loop covers them.
      await (await booting).waitFor(ingested, (lowest) => bar.update(lowest, ingested, 'projecting'), signal, RANKING_READS);
      if (signal?.aborted) return;
      logger.debug(`sample day ${day + 1}/${days} ${date}: ranking`);
      // A shutdown stops the ranking between countries and the wait at once (on FerretDB each
      // takes minutes); the day is redone at the next start, as the header says.
      await rankDay({ date, readStore: adapters.readStore, eventStore: adapters.eventStore, clock, signal });
      if (signal?.aborted) return;
      // No wait for the ranking's events to be folded here: the next day's ranking reads no
      // model they feed (rankings, trending), and the wait after the loop covers them. Folding them
      // while the next day is crawled and ingested took a serial second a day off the load.
      await adapters.readStore.setCheckpoint(SAMPLE_DAYS_CHECKPOINT, day + 1);
      bar.stop();
      logger.debug({ day, date, published }, 'sample day loaded');
    }
    // Once the `search` read model has folded the last day's crawl, its documents are final:
    // the ranking's events feed none. So this thread fills the index while the projection
    // thread folds the rest, instead of after it. (The day's wait above covered only what the
    // ranking reads.) A resumed load that ranked no day here has a backlog of unknown events:
    // it fills the index after the wait below.
    if (fromDay < days) {
      await (await booting).waitFor(crawled, undefined, signal, [searchProjection]);
      if (signal?.aborted) return;
      indexed = await fillIndex();
    }
    // The last ranking's events, or a resumed load's backlog, folded before the load ends.
    await (await booting).waitFor(await adapters.eventStore.headPosition(), undefined, signal);
  } finally {
    await Promise.all([booting.then((thread) => thread.stop(), () => undefined), crawling?.stop()]);
  }
  if (signal?.aborted) return;
  indexed ??= await fillIndex();
  await adapters.readStore.setCheckpoint(SAMPLE_INDEXED_CHECKPOINT, 1);
  const head = await adapters.eventStore.headPosition();
  logger.info(`sample catalog loaded: ${head} events, ${indexed} titles indexed for search, in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
