/**
 * Runs the sample crawler against an ObservationBus: streams the generator's observations and
 * publishes them in batches, waiting for each batch to be acknowledged before generating the
 * next (so memory stays flat and a slow bus slows the crawl instead of piling up records).
 */
import { AppError } from '../../contracts/errors.ts';
import type { Observation, ObservationType } from '../../contracts/observations.ts';
import type { ObservationBus } from '../../contracts/ports.ts';
import { emptyCounts, generateCrawl } from './catalog.ts';
import type { CrawlOptions } from './catalog.ts';

export interface CrawlRunOptions extends CrawlOptions {
  bus: ObservationBus;
  /** Observations per `publish` call. Default 1000. */
  batchSize?: number;
  /**
   * Called after each acknowledged batch with the number of observations published so far and
   * the counts per type. Default: none.
   */
  onProgress?: (published: number, counts: Readonly<Record<ObservationType, number>>) => void;
}

/** Publishes one crawl; resolves to the number of observations published per type. */
export async function crawl(options: CrawlRunOptions): Promise<Record<ObservationType, number>> {
  const { bus, batchSize = 1000, onProgress, ...crawlOptions } = options;
  if (!Number.isInteger(batchSize) || batchSize < 1) {
    throw new AppError('invalid_parameter', `batchSize must be a positive integer, got ${batchSize}`, { details: { batchSize } });
  }
  const counts = emptyCounts();
  let total = 0;
  let batch: Observation[] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    const sending = batch;
    batch = [];
    await bus.publish(sending);
    for (const o of sending) counts[o.type]++;
    total += sending.length;
    onProgress?.(total, counts);
  };
  for (const observation of generateCrawl(crawlOptions)) {
    batch.push(observation);
    if (batch.length >= batchSize) await flush();
  }
  await flush();
  return counts;
}
