/**
 * The write and read sides wired together in one process: ingest from the bus, every projection
 * off one read of the log, the search index fed from the `search` read model by its own loop
 * (services/shared/searchFeed.ts). Used by `start`, by the one-shot CLI commands and by the
 * ingest benchmark.
 */
import type { Clock, Consumer, SearchDocument } from '../../contracts/ports.ts';
import { ALL_PROJECTIONS, searchProjection, toSearchDocument, type SearchProjectionDoc } from '../../projections/index.ts';
import { createIngest, type Ingest, type IngestOptions } from '../ingest/ingest.ts';
import type { Adapters } from '../shared/adapters.ts';
import type { Config } from '../shared/config.ts';
import { superviseConsumer, type Health, type Supervised } from '../shared/health.ts';
import type { LeaseKeeper } from '../shared/lease.ts';
import type { Logger } from '../shared/logger.ts';
import { ProjectionGroup, type RunnerReport } from '../../projections/group.ts';
import { resolveCollection } from '../shared/readModels.ts';
import { genreTable, SearchFeed } from '../shared/searchFeed.ts';

export interface Pipeline {
  ingest: Ingest;
  projections: ProjectionGroup;
  /** Keeps the search index equal to the `search` read model; never holds the projections back. */
  searchFeed: SearchFeed;
  /**
   * While deferred, the search index is not fed one batch at a time (a bulk load rewrites a
   * title's document many times); `refillSearch` then indexes the final documents once.
   */
  deferSearch(deferred: boolean): void;
  /**
   * Fills the search index from the `search` read model (an in-process index at start-up, any
   * index after a bulk load) and moves the feed past what it covered. Returns the titles indexed.
   */
  refillSearch(onProgress?: (done: number, total: number) => void): Promise<number>;
  /** Consumes everything published so far, then projects everything appended so far, then feeds the index. */
  drain(onProgress?: (stage: 'ingest' | 'project', done: number, total: number) => void): Promise<void>;
  /** Consumes everything published so far (ingest only); `onProgress(observations)`. */
  ingestUntilIdle(onProgress?: (observations: number) => void): Promise<void>;
  /** Runs the projections and the search feed live, until stop(). */
  start(): void;
  /**
   * Consumes the bus live under supervision (`ingest` in `health`): a consumer that fails (its
   * batch is redelivered) is restarted with backoff, its state and last error recorded.
   */
  superviseIngest(health: Health): Supervised;
  /** Stops a drain or live run in progress (ingest consumer, projections, search feed). */
  stop(): Promise<void>;
}

export interface PipelineOptions extends Pick<IngestOptions, 'clock' | 'maxFutureSkewMs'> {
  /** Shows parked events (`projections`) and the search feed's state (`search-feed`). Default: nowhere. */
  health?: Health;
  /** Called before each projection batch is written; throws when this process may not write (the projector lease). */
  guard?(): void;
}

/**
 * Folds the read models up to the head behind `lease` (the projections' guard checks it): true
 * once done, false when the lease was lost on the way, in which case the process that took it
 * folds the rest. Any other failure is thrown.
 */
export async function catchUpWhileHeld(projections: ProjectionGroup, lease: Pick<LeaseKeeper, 'holds'>): Promise<boolean> {
  try {
    await projections.catchUp();
    return true;
  } catch (err) {
    if (lease.holds()) throw err;
    return false;
  }
}

/**
 * The projections as a non-critical loop component of Health (`projections`): lagging read
 * models still answer, so they never make `/readyz` refuse traffic. Its detail holds the parked
 * events per projection.
 */
export function projectionsHealth(health: Health, component = 'projections'): RunnerReport {
  health.register(component, 'loop', { critical: false });
  return {
    state: (state, error) => health.set(component, state, error),
    parked: (parked) => health.detail(component, { parked }),
  };
}

/** What the configuration says about ingest, with the process's clock. */
export function ingestSettings(config: Config, clock: Clock): Pick<IngestOptions, 'clock' | 'maxFutureSkewMs'> {
  return { clock, maxFutureSkewMs: config.ingestMaxFutureSkewHours * 3600_000 };
}

export function createPipeline(adapters: Adapters, logger: Logger, options: PipelineOptions = {}): Pipeline {
  const { eventStore, bus, readStore, search } = adapters;
  const { health, ...ingestOptions } = options;
  const ingest = createIngest({ eventStore, bus, logger, ...ingestOptions });
  let draining: Consumer | null = null;
  let stopped = false;
  // Large batches: a document touched by many events of a batch is loaded and written once.
  const projections = new ProjectionGroup({
    eventStore,
    readStore,
    projections: ALL_PROJECTIONS,
    logger,
    batchSize: adapters.projectionBatchSize ?? 5000,
    parallel: adapters.projectionParallelism ?? 1,
    ...(health ? { report: projectionsHealth(health) } : {}),
    ...(options.guard ? { guard: options.guard } : {}),
  });
  const searchFeed = new SearchFeed({
    eventStore,
    readStore,
    search,
    logger,
    checkpointName: adapters.searchFeedCheckpoint,
    ...(health ? { health } : {}),
  });
  return {
    ingest,
    projections,
    searchFeed,
    deferSearch(deferred) {
      searchFeed.pause(deferred);
    },
    async refillSearch(onProgress) {
      // Read before the scan: every event up to it is in the documents the scan reads.
      const covered = await readStore.getCheckpoint(await resolveCollection(readStore, searchProjection));
      const indexed = await refillSearch(adapters, onProgress);
      await searchFeed.jumpTo(covered);
      return indexed;
    },
    start() {
      projections.start();
      searchFeed.start();
    },
    async stop() {
      stopped = true;
      await draining?.stop();
      await projections.stop();
      await searchFeed.stop();
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
      if (stopped) return;
      await searchFeed.catchUp();
    },
  };
}

/**
 * Fills the index from the `search` read model, each title at its document's position as the
 * version (so a feed write of the same title, older or newer, orders against it). Returns the
 * number of documents indexed. `Pipeline.refillSearch` also moves the feed past what it covered.
 */
export async function refillSearch(adapters: Adapters, onProgress?: (done: number, total: number) => void): Promise<number> {
  const { readStore } = adapters;
  const collection = await resolveCollection(readStore, searchProjection);
  const total = await readStore.count(collection);
  const genres = await genreTable(readStore);
  const chunk = 5000;
  let done = 0;
  let after: string | undefined;
  for (;;) {
    const page = await readStore.scan<SearchProjectionDoc>(collection, {
      ...(after === undefined ? {} : { start: `${after}\u0000` }),
      limit: chunk,
    });
    if (page.length === 0) break;
    const writes = page.flatMap((d) => {
      const doc: SearchDocument | null = toSearchDocument(d.doc, genres);
      return doc === null ? [] : [{ id: d.key, doc, version: d.position }];
    });
    await adapters.search.write(writes);
    done += page.length;
    after = page[page.length - 1]?.key;
    onProgress?.(done, total);
    if (page.length < chunk) break;
  }
  return done;
}
