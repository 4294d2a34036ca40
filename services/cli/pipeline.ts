/**
 * The write and read sides wired together in one process: ingest from the bus, every projection
 * off one read of the log, the search index fed from the search projection. Used by `start`,
 * by the one-shot CLI commands and by the ingest benchmark.
 */
import type { Clock, Consumer, DocumentWrite, SearchDocument } from '../../contracts/ports.ts';
import type { GenresDoc } from '../../contracts/readModels.ts';
import { ALL_PROJECTIONS, GENRES_KEY, genresProjection, searchProjection, toSearchDocument, type SearchProjectionDoc } from '../../projections/index.ts';
import { createIngest, type Ingest, type IngestOptions } from '../ingest/ingest.ts';
import type { Adapters } from '../shared/adapters.ts';
import type { Config } from '../shared/config.ts';
import { superviseConsumer, type Health, type Supervised } from '../shared/health.ts';
import type { Logger } from '../shared/logger.ts';
import { ProjectionGroup, type ProjectionTarget } from '../shared/projectionGroup.ts';
import { resolveCollection } from '../shared/readModels.ts';

export interface Pipeline {
  ingest: Ingest;
  projections: ProjectionGroup;
  /**
   * While deferred, the search projection's writes are not pushed to the index one batch at a
   * time (a bulk load rewrites a title's document many times); `refillSearch` then indexes the
   * final documents once.
   */
  deferSearch(deferred: boolean): void;
  /** Consumes everything published so far, then projects everything appended so far. */
  drain(onProgress?: (stage: 'ingest' | 'project', done: number, total: number) => void): Promise<void>;
  /** Consumes everything published so far (ingest only); `onProgress(observations)`. */
  ingestUntilIdle(onProgress?: (observations: number) => void): Promise<void>;
  /**
   * Consumes the bus live under supervision (`ingest` in `health`): a consumer that fails (its
   * batch is redelivered) is restarted with backoff, its state and last error recorded.
   */
  superviseIngest(health: Health): Supervised;
  /** Stops a drain in progress (ingest consumer and projections). */
  stop(): Promise<void>;
}

/** What the configuration says about ingest, with the process's clock. */
export function ingestSettings(config: Config, clock: Clock): Pick<IngestOptions, 'clock' | 'maxFutureSkewMs'> {
  return { clock, maxFutureSkewMs: config.ingestMaxFutureSkewHours * 3600_000 };
}

export function createPipeline(
  adapters: Adapters,
  logger: Logger,
  ingestOptions: Pick<IngestOptions, 'clock' | 'maxFutureSkewMs'> = {},
): Pipeline {
  const { eventStore, bus, readStore, search } = adapters;
  const ingest = createIngest({ eventStore, bus, logger, ...ingestOptions });
  let searchDeferred = false;
  let draining: Consumer | null = null;
  let stopped = false;
  const feed = async (writes: Array<DocumentWrite<unknown>>) => {
    if (!searchDeferred) await feedSearch(adapters, writes as Array<DocumentWrite<SearchProjectionDoc>>);
  };
  const targets: ProjectionTarget[] = ALL_PROJECTIONS.map((projection) =>
    projection.name === searchProjection.name ? { projection, afterWrite: feed } : { projection },
  );
  // Large batches: a document touched by many events of a batch is loaded and written once.
  const projections = new ProjectionGroup({ eventStore, readStore, targets, logger, batchSize: 5000 });
  return {
    ingest,
    projections,
    deferSearch(deferred) {
      searchDeferred = deferred;
    },
    async stop() {
      stopped = true;
      await draining?.stop();
      await projections.stop();
    },
    superviseIngest(health) {
      return superviseConsumer(health, 'ingest', logger, () =>
        ingest.run({ untilIdle: false, batchSize: 2000, group: adapters.ingestGroup ?? 'ingest' }));
    },
    async ingestUntilIdle(onProgress) {
      if (stopped) return;
      const consumer = ingest.run({ untilIdle: true, batchSize: 2000, group: adapters.ingestGroup ?? 'ingest' });
      draining = consumer;
      const ticker = setInterval(() => onProgress?.(ingest.totals().observations), 500);
      try {
        await consumer.done;
      } finally {
        clearInterval(ticker);
        draining = null;
      }
    },
    async drain(onProgress) {
      await this.ingestUntilIdle((n) => onProgress?.('ingest', n, n));
      if (stopped) return;
      await projections.catchUp((position, head) => onProgress?.('project', position, head));
    },
  };
}

/** Genre slugs for the index come from the genres read model (a separate stream). */
async function genreTable(adapters: Adapters) {
  const collection = await resolveCollection(adapters.readStore, genresProjection);
  const stored = await adapters.readStore.get<GenresDoc>(collection, GENRES_KEY);
  return stored?.doc.genres ?? [];
}

async function feedSearch(adapters: Adapters, writes: Array<DocumentWrite<SearchProjectionDoc>>): Promise<void> {
  const genres = await genreTable(adapters);
  const upserts: SearchDocument[] = [];
  const removals: string[] = [];
  for (const write of writes) {
    const doc = write.doc === null ? null : toSearchDocument(write.doc, genres);
    if (doc === null) removals.push(write.key);
    else upserts.push(doc);
  }
  if (upserts.length > 0) await adapters.search.upsert(upserts);
  if (removals.length > 0) await adapters.search.remove(removals);
}

/**
 * Refills an in-process index from the search read model at start-up (the index lives in
 * memory; the read model is durable). Returns the number of documents indexed.
 */
export async function refillSearch(adapters: Adapters, onProgress?: (done: number, total: number) => void): Promise<number> {
  const { readStore } = adapters;
  const collection = await resolveCollection(readStore, searchProjection);
  const total = await readStore.count(collection);
  const genres = await genreTable(adapters);
  const chunk = 5000;
  let done = 0;
  let after: string | undefined;
  for (;;) {
    const page = await readStore.scan<SearchProjectionDoc>(collection, {
      ...(after === undefined ? {} : { start: `${after}\u0000` }),
      limit: chunk,
    });
    if (page.length === 0) break;
    const docs = page.map((d) => toSearchDocument(d.doc, genres)).filter((d): d is SearchDocument => d !== null);
    await adapters.search.upsert(docs);
    done += page.length;
    after = page[page.length - 1]?.key;
    onProgress?.(done, total);
    if (page.length < chunk) break;
  }
  return done;
}
