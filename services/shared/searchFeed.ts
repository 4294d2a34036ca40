/**
 * The search-index feed: keeps the SearchIndex equal to the `search` read model, at least once
 * and idempotently, without ever holding a projection back.
 *
 * It follows the event log on its own checkpoint, never past the `search` projection's
 * checkpoint (so every event it reads is already folded into the read model). Per batch it
 * collects the titles the events touched, re-reads their CURRENT read-model documents and writes
 * them to the index with the document's position as the version (`SearchIndex.write`, OpenSearch
 * `external_gte`); a title now missing from the read model is removed at the position of the
 * newest event that touched it. Its checkpoint moves only after the index accepted the batch;
 * a failure (OpenSearch frozen, 429, 5xx) is retried from the same checkpoint with a growing
 * pause, re-reading the read model each time, and a replayed older write never overwrites a
 * newer one. The projections run in their own loop, so they never wait for the index.
 *
 * Why not from the runner's afterWrite, as before: there a failed feed was retried together with
 * the read-model batch, whose fold then skipped the events already folded, so those titles never
 * reached the index; and a slow index held every projection back.
 *
 * The checkpoint: durable (`checkpointName` in the read store) for an index that outlives the
 * process (OpenSearch). An in-process index is refilled from the read model at every start, so
 * its checkpoint lives in memory only: it starts where `jumpTo` (the refill) puts it, else at
 * the `search` projection's checkpoint at the first step (an empty index follows changes from
 * then on). Sharing a durable checkpoint would let one process's feed skip another's index.
 */
import { isAppError } from '../../contracts/errors.ts';
import type { EventStore, ReadStore, SearchIndex, SearchWrite } from '../../contracts/ports.ts';
import type { GenresDoc } from '../../contracts/readModels.ts';
import { GENRES_KEY, genresProjection, searchProjection, toSearchDocument, type SearchProjectionDoc } from '../../projections/index.ts';
import type { Health } from './health.ts';
import type { Logger } from './logger.ts';
import { resolveCollection } from './readModels.ts';

export interface SearchFeedOptions {
  eventStore: EventStore;
  readStore: ReadStore;
  search: SearchIndex;
  logger: Logger;
  /**
   * Durable checkpoint name in the read store, or null to keep it in memory (in-process index).
   * A durable one never set takes over LEGACY_SEARCH_FEED_CHECKPOINT when the index holds titles.
   */
  checkpointName: string | null;
  /** Events read per step. Default 5000. */
  batchSize?: number;
  /** Poll interval once caught up, in ms. Default 50. */
  idleMs?: number;
  /** First pause after a failed step, in ms; doubles per consecutive failure. Default 250. */
  minBackoffMs?: number;
  /** Longest pause after failures, in ms. Default 10 000. */
  maxBackoffMs?: number;
  /** Shows the feed's state (`running`, `backing_off` with the error) and its position and lag. Default: nowhere. */
  health?: Health;
  /** Component name in `health`. Default `search-feed`. */
  healthComponent?: string;
}

/**
 * The durable checkpoint of the feed into the OpenSearch index of `indexPrefix`: one per index,
 * so that an index under a new prefix (a rebuild, OPENSEARCH_INDEX_PREFIX) starts empty and is
 * fed from position 0. Before, one checkpoint (LEGACY_SEARCH_FEED_CHECKPOINT) served every
 * index, and an index under a new prefix was never filled (that checkpoint was at the head).
 */
export function searchFeedCheckpoint(indexPrefix: string): string {
  return `search-index:${indexPrefix}`;
}

/**
 * The one checkpoint of earlier versions: an index that was being fed under it, and so holds
 * titles, goes on from there (SearchFeed's durable checkpoint takes it over) instead of being written
 * again from position 0, which would keep a start unready until every title was rewritten.
 */
export const LEGACY_SEARCH_FEED_CHECKPOINT = 'search-index';

export class SearchFeed {
  private readonly options: SearchFeedOptions;
  /** In memory for an in-process index; a cache of the durable one otherwise. null: not read yet. */
  private position: number | null = null;
  private paused = false;
  private stopped = false;
  private loop: Promise<void> | null = null;
  private failures = 0;
  private wake: (() => void) | null = null;

  constructor(options: SearchFeedOptions) {
    this.options = options;
    const { health } = options;
    health?.register(this.component, 'loop', { critical: false });
  }

  private get component(): string {
    return this.options.healthComponent ?? 'search-feed';
  }

  /** While paused (a bulk load that refills the index at the end), steps do nothing. */
  pause(paused: boolean): void {
    this.paused = paused;
  }

  /**
   * Moves the checkpoint forward to `position` (never back): after a refill from the read model
   * at or after that `search` checkpoint, the events up to it are in the index already.
   */
  async jumpTo(position: number): Promise<void> {
    const current = await this.checkpoint(false);
    // An in-memory checkpoint not set yet is set even to 0: the refill of an empty read model
    // still says where the index starts (else the first step would start at the read model's
    // checkpoint then, skipping what it folded in between).
    if (position > current || this.position === null) await this.save(position);
  }

  /** The durable checkpoint, the legacy one taken over when this one was never set and the index holds titles. */
  private async durableCheckpoint(name: string): Promise<number> {
    const { readStore, search } = this.options;
    const position = await readStore.getCheckpoint(name);
    if (position > 0 || name === LEGACY_SEARCH_FEED_CHECKPOINT) return position;
    const legacy = await readStore.getCheckpoint(LEGACY_SEARCH_FEED_CHECKPOINT);
    if (legacy === 0 || (await search.count()) === 0) return position;
    await readStore.setCheckpoint(name, legacy);
    this.options.logger.info({ checkpoint: name, from: LEGACY_SEARCH_FEED_CHECKPOINT, position: legacy }, 'search feed: took over the checkpoint of the index it was feeding');
    return legacy;
  }

  /** The feed's checkpoint: every title touched by an event up to it is in the index. */
  async checkpoint(initialise = true): Promise<number> {
    if (this.position !== null) return this.position;
    const { checkpointName } = this.options;
    if (checkpointName !== null) this.position = await this.durableCheckpoint(checkpointName);
    else if (initialise) this.position = await this.searchCheckpoint();
    else return 0;
    return this.position;
  }

  /**
   * One batch: the events after the feed's checkpoint up to the `search` projection's, their
   * titles re-read and written. Returns whether it moved; throws when the index refused.
   */
  async step(): Promise<boolean> {
    if (this.paused) return false;
    const { eventStore, readStore, search } = this.options;
    const from = await this.checkpoint();
    const upTo = await this.searchCheckpoint();
    if (from >= upTo) {
      this.showLag(from, upTo);
      return false;
    }
    const events = (await eventStore.readAll({ after: from, limit: Math.min(this.options.batchSize ?? 5000, upTo - from) })).filter(
      (e) => e.position <= upTo,
    );
    const last = events[events.length - 1];
    if (last === undefined) return false;
    const handled = new Set<string>(searchProjection.canHandle);
    /** Title -> position of the newest event that touched it. */
    const touched = new Map<string, number>();
    for (const event of events) {
      if (!handled.has(event.type)) continue;
      const id = searchProjection.documentId(event);
      if (id !== null) touched.set(id, event.position);
    }
    if (touched.size > 0) {
      const ids = [...touched.keys()];
      const collection = await resolveCollection(readStore, searchProjection);
      const [stored, genres] = await Promise.all([readStore.getMany<SearchProjectionDoc>(collection, ids), genreTable(readStore)]);
      const writes: SearchWrite[] = ids.map((id, index) => {
        const current = stored[index] ?? null;
        if (current === null) return { id, doc: null, version: touched.get(id) ?? 0 };
        return { id, doc: toSearchDocument(current.doc, genres), version: current.position };
      });
      await search.write(writes);
    }
    await this.save(last.position);
    this.showLag(last.position, upTo);
    return true;
  }

  /**
   * Feeds up to the `search` projection's checkpoint as it is now, retrying failures with
   * backoff. Gives up after `timeoutMs` (default 60 s), logging why, and returns false: the
   * durable checkpoint lets a later run (the server's live feed) finish the job.
   */
  async catchUp(options: { timeoutMs?: number } = {}): Promise<boolean> {
    const deadline = Date.now() + (options.timeoutMs ?? 60_000);
    const target = await this.searchCheckpoint();
    while (!this.stopped && !this.paused && (await this.checkpoint()) < target) {
      try {
        await this.step();
        this.succeeded();
      } catch (err) {
        const pause = this.failed(err);
        if (Date.now() + pause > deadline) {
          this.options.logger.warn({ err }, 'the search index did not take the latest changes; the live feed will retry them');
          return false;
        }
        await this.sleep(pause);
      }
    }
    return true;
  }

  /** Runs live until stop(): follows the `search` read model; failures back off and retry. */
  start(): void {
    if (this.loop) return;
    this.stopped = false;
    this.loop = (async () => {
      while (!this.stopped) {
        let pause = this.options.idleMs ?? 50;
        try {
          if (await this.step()) pause = 0;
          this.succeeded();
        } catch (err) {
          pause = this.failed(err);
        }
        if (pause > 0) await this.sleep(pause);
      }
      this.options.health?.set(this.component, 'stopped');
    })();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.loop;
    this.loop = null;
  }

  private async searchCheckpoint(): Promise<number> {
    const { readStore } = this.options;
    return readStore.getCheckpoint(await resolveCollection(readStore, searchProjection));
  }

  private async save(position: number): Promise<void> {
    const { checkpointName, readStore } = this.options;
    if (checkpointName !== null) await readStore.setCheckpoint(checkpointName, position);
    this.position = position;
  }

  private succeeded(): void {
    if (this.failures > 0) this.options.logger.info('the search index takes writes again');
    this.failures = 0;
    this.options.health?.set(this.component, 'running');
  }

  /** Records a failed step and returns the pause before the next one. */
  private failed(err: unknown): number {
    this.failures += 1;
    const { minBackoffMs = 250, maxBackoffMs = 10_000, logger, health } = this.options;
    const pause = Math.min(maxBackoffMs, minBackoffMs * 2 ** (this.failures - 1));
    health?.set(this.component, 'backing_off', err);
    // An outage is expected to heal and is said once; anything else is a bug worth each line.
    if (this.failures === 1 || !(isAppError(err) && err.retriable)) {
      logger.warn({ err, retryInMs: pause }, 'the search index refused a batch; retrying from the same checkpoint');
    }
    return pause;
  }

  private showLag(position: number, upTo: number): void {
    this.options.health?.detail(this.component, { position, lag: upTo - position });
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.wake = null;
        resolve();
      }, ms);
      this.wake = () => {
        clearTimeout(timer);
        this.wake = null;
        resolve();
      };
    });
  }
}

/** Genre slugs for the index come from the genres read model (a separate stream). */
export async function genreTable(readStore: ReadStore): Promise<GenresDoc['genres']> {
  const collection = await resolveCollection(readStore, genresProjection);
  const stored = await readStore.get<GenresDoc>(collection, GENRES_KEY);
  return stored?.doc.genres ?? [];
}
