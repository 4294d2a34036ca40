/**
 * The OpenSearch SearchIndex: the search semantics of the in-process adapter (normalize.ts,
 * ranking.ts) on an OpenSearch cluster, for deployments where the index must outlive the
 * process or be shared by several API instances.
 *
 * Layout: ONE index, `${indexPrefix}-titles`, holding every title once, with a title field per
 * language (`loc.<lang>`, mapping.ts) — not one index per locale. Why: a locale's results must
 * include every title (a title without a French translation is still found in French by its
 * base title), so per-locale indexes would store each title once per locale (51 copies), and
 * an index created lazily would first need a backfill (there is no reindex module on the CI
 * server). Per-language fields give the same per-locale matching and language analyzers with
 * one copy, exact totals and a single write per title; a query in language L searches the base
 * titles and `loc.L`. A query language without fields (not in `locales`) searches the base
 * titles only, as the in-process adapter does for a language nobody translated into.
 *
 * Language analyzers: at start-up the adapter asks the cluster to analyse a word with the
 * `english` analyzer; where that works (analysis-common present) title fields get a `.stem`
 * sub-field with their language's analyzer, used for relevance only. The bare integ-test
 * server of CI lacks the module, and the index then uses `standard` alone; matching is the
 * same either way because text is normalised client-side. An existing index is used as it is
 * (a mismatch with the current mapping version is logged): rebuild it from the events under
 * a new prefix to change it.
 *
 * Visibility: OpenSearch makes writes searchable on refresh. By default `upsert` and `remove`
 * resolve only once their writes are searchable (`refresh: 'wait_for'`, waiting for the next
 * periodic refresh, up to `index.refresh_interval` = 1 s), so a caller reads its own writes, as
 * with the in-process index; bulk loaders that do not need that pass `refresh: false`.
 */
import { Client } from '@opensearch-project/opensearch';
import { AppError } from '../../contracts/errors.ts';
import { LOCALES } from '../../contracts/domain.ts';
import type { SearchDocument, SearchIndex, SearchQuery, SearchResult, SearchWrite } from '../../contracts/ports.ts';
import { isIndexNotFound, statusOf, toAppError } from './errors.ts';
import { MAPPING_VERSION, indexBody, toIndexed, type MappingOptions } from './mapping.ts';
import { searchBody, type QueryOptions } from './query.ts';

/** The subset of a pino logger the adapter uses. */
export interface SearchLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

export interface OpenSearchIndexOptions {
  /** Cluster address, e.g. `http://127.0.0.1:9200`. */
  url: string;
  /** The index is `${indexPrefix}-titles`. Default `'marquee-search'`. */
  indexPrefix?: string;
  /** Start-up facts (analyzers, index created or reused). Default: none. */
  logger?: SearchLogger;
  /** Languages with their own title fields. Default LOCALES of contracts/domain.ts. */
  locales?: readonly string[];
  /** Language whose titles are every title's main title. Default `'en'`. */
  baseLang?: string;
  /**
   * When writes become searchable before `upsert`/`remove` resolve: `'wait_for'` (next periodic
   * refresh), `true` (force a refresh now: immediate, but many small segments under a steady
   * stream of small writes) or `false` (within `index.refresh_interval`). Default `'wait_for'`.
   */
  refresh?: 'wait_for' | boolean;
  /** Documents per `_bulk` request. Default 1000. */
  bulkSize?: number;
  /** Sends of a `_bulk` chunk the cluster answers with 429 or 5xx, in all. Default 4. */
  bulkAttempts?: number;
  /** First pause before sending such a chunk again, in ms; doubles per attempt. Default 200. */
  bulkRetryMs?: number;
  /**
   * Language analyzers: `'auto'` uses them when the cluster has analysis-common, `false` never.
   * `true` insists (index creation fails without the module). Default `'auto'`.
   */
  languageAnalyzers?: 'auto' | boolean;
  /** `w` in the popularity factor 1 + w * log10(1 + popularity). Default 0.05 (x1.2 at 10,000). */
  popularityWeight?: number;
  /** Weight of a match on the query language's own title over the base titles. Default 1.1. */
  localeBoost?: number;
  /** Per request, in ms. Default 10,000. */
  requestTimeoutMs?: number;
  /**
   * Per `search` and `count` request, in ms, without a retry: a reader waits at most this long
   * for a slow or frozen cluster before it gets `unavailable` (the API answers within 2 s).
   * Writes keep `requestTimeoutMs`. Default 1500.
   */
  readTimeoutMs?: number;
}

/** `index.max_result_window`, set explicitly so the query builder can rely on it. */
const MAX_RESULT_WINDOW = 10_000;

export async function openSearchIndex(options: OpenSearchIndexOptions): Promise<SearchIndex> {
  const index = `${options.indexPrefix ?? 'marquee-search'}-titles`;
  const baseLang = options.baseLang ?? 'en';
  const locales = options.locales ?? LOCALES;
  const refresh = options.refresh ?? 'wait_for';
  const bulkSize = Math.max(1, options.bulkSize ?? 1000);
  const bulkAttempts = Math.max(1, options.bulkAttempts ?? 4);
  const bulkRetryMs = options.bulkRetryMs ?? 200;
  const logger = options.logger;

  const client = new Client({ node: options.url, requestTimeout: options.requestTimeoutMs ?? 10_000, maxRetries: 1 });
  let languageAnalyzers: boolean;
  try {
    languageAnalyzers =
      options.languageAnalyzers === 'auto' || options.languageAnalyzers === undefined
        ? await hasLanguageAnalyzers(client)
        : options.languageAnalyzers;
    const mapping: MappingOptions = { baseLang, locales, languageAnalyzers };
    languageAnalyzers = await ensureIndex(client, index, mapping, logger);
  } catch (err) {
    await client.close().catch(() => undefined);
    throw toAppError(err, `opening index ${index}`);
  }

  const mappingOptions = { baseLang, locales };
  const queryOptions: QueryOptions = {
    baseLang,
    locales: new Set(locales),
    popularityWeight: options.popularityWeight ?? 0.05,
    localeBoost: options.localeBoost ?? 1.1,
    maxResultWindow: MAX_RESULT_WINDOW,
    languageAnalyzers,
  };
  let closed = false;
  // A reader waiting for a frozen cluster waits this long once, not requestTimeout times (1 + maxRetries).
  const readRequest = { requestTimeout: options.readTimeoutMs ?? 1500, maxRetries: 0 };

  function ensureOpen(): void {
    if (closed) throw new AppError('closed', 'The search index is closed.');
  }

  /**
   * Sends bulk operations in chunks; only the last chunk waits for visibility (it covers all).
   * A chunk the cluster turns away as busy or failing (HTTP 429 or 5xx, for the request or for
   * single items) is sent again after a doubling pause, only its failed items, up to
   * `bulkAttempts` times; every operation here is idempotent, so sending one twice is safe.
   */
  async function bulk(ops: BulkOp[], what: string): Promise<void> {
    for (let start = 0; start < ops.length; start += bulkSize) {
      const lastChunk = start + bulkSize >= ops.length;
      let pending = ops.slice(start, start + bulkSize);
      for (let attempt = 1; ; attempt += 1) {
        const body: unknown[] = [];
        for (const op of pending) {
          body.push(op.action);
          if (op.doc !== undefined) body.push(op.doc);
        }
        let response;
        try {
          response = await client.bulk({ index, body: body as never, refresh: lastChunk ? refresh : false });
        } catch (err) {
          if (attempt < bulkAttempts && isBusy(statusOf(err))) {
            await pause(attempt);
            continue;
          }
          throw toAppError(err, what);
        }
        const again = failedItems(response.body as BulkResponse, pending, what, attempt >= bulkAttempts);
        if (again.length === 0) break;
        pending = again;
        await pause(attempt);
      }
    }
  }

  function pause(attempt: number): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, bulkRetryMs * 2 ** (attempt - 1)));
  }

  return {
    async upsert(docs: SearchDocument[]): Promise<void> {
      ensureOpen();
      if (docs.length === 0) return;
      await bulk(
        docs.map((doc) => ({ action: { index: { _id: doc.id } }, doc: toIndexed(doc, mappingOptions) })),
        `indexing ${docs.length} titles`,
      );
    },

    async remove(ids: string[]): Promise<void> {
      ensureOpen();
      if (ids.length === 0) return;
      await bulk(ids.map((id) => ({ action: { delete: { _id: id } } })), `removing ${ids.length} titles`);
    },

    async write(writes: SearchWrite[]): Promise<void> {
      ensureOpen();
      if (writes.length === 0) return;
      // external_gte rather than external: the same write delivered twice is accepted, not a conflict.
      await bulk(
        writes.map((w): BulkOp => {
          const meta = { _id: w.id, version: w.version, version_type: 'external_gte' };
          return w.doc === null ? { action: { delete: meta } } : { action: { index: meta }, doc: toIndexed(w.doc, mappingOptions) };
        }),
        `writing ${writes.length} titles`,
      );
    },

    async count(): Promise<number> {
      ensureOpen();
      try {
        const { body } = await client.count({ index }, readRequest);
        return Number(body.count);
      } catch (err) {
        if (isIndexNotFound(err)) return 0;
        throw toAppError(err, 'counting titles');
      }
    },

    async search(query: SearchQuery): Promise<SearchResult> {
      ensureOpen();
      const request = searchBody(query, queryOptions);
      if (request === null) return { total: 0, ids: [] };
      try {
        const { body } = await client.search({ index, body: request as never }, readRequest);
        const hits = body.hits;
        const total = typeof hits.total === 'number' ? hits.total : Number(hits.total?.value ?? 0);
        return { total, ids: hits.hits.map((h) => String(h._id)) };
      } catch (err) {
        // Deleted behind our back (an operator, a test): nothing is indexed, so nothing matches.
        if (isIndexNotFound(err)) return { total: 0, ids: [] };
        throw toAppError(err, 'searching');
      }
    },

    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      await client.close();
    },
  };
}

interface BulkItem {
  status?: number;
  error?: { type?: string; reason?: string };
}

interface BulkResponse {
  errors?: boolean;
  items?: Array<Record<string, BulkItem>>;
}

interface BulkOp {
  action: Record<string, Record<string, unknown>>;
  doc?: unknown;
}

/** The cluster's state rather than the request's: worth sending again after a pause. */
function isBusy(status: number | undefined): boolean {
  return status !== undefined && (status === 429 || status >= 500);
}

/**
 * A bulk request succeeds as a whole even when items fail. Returns the operations to send again
 * (failed with 429 or 5xx) unless `final`; throws for anything else. Deleting a missing id is
 * fine, and so is a version conflict of a versioned write: the index already holds a newer
 * version of that title, which is what external versions are for.
 */
function failedItems(response: BulkResponse, sent: BulkOp[], what: string, final: boolean): BulkOp[] {
  if (response.errors !== true) return [];
  const busy: BulkOp[] = [];
  const failures: BulkItem[] = [];
  (response.items ?? []).forEach((item, index) => {
    for (const [action, result] of Object.entries(item)) {
      if (result.error === undefined) continue;
      if (action === 'delete' && result.status === 404) continue;
      if (result.status === 409 && result.error.type === 'version_conflict_engine_exception') continue;
      failures.push(result);
      const op = sent[index];
      if (op !== undefined && isBusy(result.status ?? 500)) busy.push(op);
    }
  });
  const first = failures[0];
  if (first === undefined) return [];
  if (!final && busy.length === failures.length) return busy;
  const status = first.status ?? 500;
  const message = `${what}: ${failures.length} failed, first: HTTP ${status} ${first.error?.type ?? ''} ${first.error?.reason ?? ''}`;
  throw busy.length === failures.length
    ? new AppError('unavailable', `OpenSearch is unavailable (${message})`, { retriable: true, details: { failed: failures.length } })
    : new AppError('internal', `OpenSearch rejected ${message}`, { retriable: false, details: { failed: failures.length } });
}

/**
 * Whether the cluster has the language analyzers (module analysis-common): the most direct
 * test is to use one. A 400 ("failed to find global analyzer") means no; anything else is an
 * error of the cluster and propagates.
 */
export async function hasLanguageAnalyzers(client: Client): Promise<boolean> {
  try {
    await client.indices.analyze({ body: { analyzer: 'english', text: 'probe' } });
    return true;
  } catch (err) {
    if (statusOf(err) === 400) return false;
    throw err;
  }
}

/**
 * Creates the index when missing; returns whether the index in use has `.stem` sub-fields
 * (an existing index keeps what it was created with).
 */
async function ensureIndex(client: Client, index: string, mapping: MappingOptions, logger?: SearchLogger): Promise<boolean> {
  const exists = await client.indices.exists({ index });
  if (!exists.body) {
    try {
      await client.indices.create({ index, body: indexBody(mapping) as never });
      logger?.info({ index, languageAnalyzers: mapping.languageAnalyzers }, 'created the OpenSearch search index');
      return mapping.languageAnalyzers;
    } catch (err) {
      // Another process created it between our check and our create: use theirs.
      const type = (err as { meta?: { body?: { error?: { type?: string } } } }).meta?.body?.error?.type;
      if (type !== 'resource_already_exists_exception') throw err;
    }
  }
  const { body } = await client.indices.getMapping({ index });
  const meta = (Object.values(body)[0] as { mappings?: { _meta?: { marquee?: { mappingVersion?: number; languageAnalyzers?: boolean } } } } | undefined)
    ?.mappings?._meta?.marquee;
  if (meta?.mappingVersion !== MAPPING_VERSION) {
    logger?.warn(
      { index, found: meta?.mappingVersion ?? null, expected: MAPPING_VERSION },
      'the OpenSearch search index has another mapping version; rebuild it under a new prefix',
    );
  }
  const stems = meta?.languageAnalyzers === true;
  logger?.info({ index, languageAnalyzers: stems }, 'using the existing OpenSearch search index');
  return stems;
}
