/**
 * A small crawled catalog for the change-feed tests: the sample crawler's synthetic catalog,
 * published to the local inbox, ingested and projected by the same pipeline `start` runs, one
 * crawl day at a time, with the API served in process over the same stores.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Clock } from '../../contracts/ports.ts';
import { closeLmdb } from '../../infra/lmdb/env.ts';
import { createApiKey } from '../../services/api/keys.ts';
import { startApi, type RunningApi } from '../../services/api/server.ts';
import type { LinkTokenCodec } from '../../services/api/types.ts';
import { createPipeline, type Pipeline } from '../../services/cli/pipeline.ts';
import { crawlDate, observedAtFor } from '../../services/crawler/catalog.ts';
import { crawl } from '../../services/crawler/crawl.ts';
import { openAdapters, openApiKeyStore, type Adapters } from '../../services/shared/adapters.ts';
import { loadConfig } from '../../services/shared/config.ts';
import { createLogger } from '../../services/shared/logger.ts';
import { responseValidator, type ResponseValidator } from './api.openapi.ts';
import { testLinkTokens } from './api.linkTokens.ts';

export interface CrawledCatalog {
  dataDir: string;
  adapters: Adapters;
  pipeline: Pipeline;
  api: RunningApi;
  key: string;
  validator: ResponseValidator;
  linkTokens: LinkTokenCodec;
  /** The clock of the API: the crawl day last loaded, at noon. */
  clock: Clock & { set(day: number): void };
  startDate: string;
  titles: number;
  countries: string[];
  /** Crawls, ingests and projects one more day. */
  crawlDay(day: number): Promise<void>;
  /** GET a /v1 path with the key; the body is checked against the served OpenAPI document. */
  get(path: string): Promise<{ status: number; body: any }>;
  close(): Promise<void>;
}

export async function crawledCatalog(options: { titles: number; countries: string[]; days: number; startDate?: string }): Promise<CrawledCatalog> {
  const dataDir = mkdtempSync(join(tmpdir(), 'marquee-changes-'));
  const startDate = options.startDate ?? '2026-11-02';
  let now = new Date(`${crawlDate(0, startDate)}T12:00:00Z`);
  const clock = {
    now: () => now,
    set(day: number) {
      now = new Date(Date.parse(observedAtFor(day, startDate)) + 6 * 3_600_000);
    },
  };
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'warn' });
  const logger = createLogger({ level: 'warn' });
  const adapters = await openAdapters(config, logger);
  const { apiKeys } = await openApiKeyStore(config);
  const pipeline = createPipeline(adapters, logger);
  const linkTokens = await testLinkTokens();
  const api = await startApi({
    port: 0, readStore: adapters.readStore, apiKeys, search: adapters.search, eventStore: adapters.eventStore, linkTokens, clock,
    rateLimit: { perMinute: 10_000_000 },
  });
  const key = (await createApiKey(apiKeys, 'changes', clock)).key;
  const served = await fetch(`${api.url}/v1/openapi`, { headers: { authorization: `Bearer ${key}` } });
  const validator = responseValidator((await served.json()) as Record<string, unknown>);

  const catalog: CrawledCatalog = {
    dataDir, adapters, pipeline, api, key, validator, linkTokens, clock, startDate, titles: options.titles, countries: options.countries,
    async crawlDay(day) {
      await crawl({ bus: adapters.bus, seed: 7, day, startDate, titles: options.titles, countries: options.countries });
      await pipeline.drain();
      clock.set(day);
    },
    async get(path) {
      const res = await fetch(`${api.url}${path}`, { headers: { authorization: `Bearer ${key}` } });
      const text = await res.text();
      const contentType = res.headers.get('content-type');
      const body = contentType?.startsWith('application/json') && text !== '' ? JSON.parse(text) : undefined;
      validator.check('GET', path, res.status, contentType, body);
      return { status: res.status, body };
    },
    async close() {
      await api.close();
      await pipeline.stop();
      await apiKeys.close();
      await adapters.close();
      await closeLmdb(dataDir);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  for (let day = 0; day < options.days; day += 1) await catalog.crawlDay(day);
  return catalog;
}

/** Follows `/v1/changes` from `since` until `has_more` is false; every change and the final cursor. */
export async function followFeed(
  catalog: CrawledCatalog,
  country: string,
  since: string | null,
  query = '',
  limit = 1000,
): Promise<{ changes: any[]; cursor: string; pages: number; cursors: string[] }> {
  const changes: any[] = [];
  const cursors: string[] = [];
  let cursor = since;
  for (let pages = 1; ; pages += 1) {
    const r = await catalog.get(`/v1/changes?country=${country}&limit=${limit}${cursor === null ? '' : `&since=${cursor}`}${query}`);
    if (r.status !== 200) throw new Error(`changes answered ${r.status}: ${JSON.stringify(r.body)}`);
    changes.push(...r.body.results);
    cursor = r.body.next_cursor as string;
    cursors.push(cursor);
    if (!r.body.has_more) return { changes, cursor, pages, cursors };
  }
}
