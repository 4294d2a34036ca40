/**
 * The API role: the `/v1` API on `HOST:PORT`, answering from the shared stores. It writes no
 * read model; any number of API processes answer identically because they read the same stores.
 * The one thing an API process keeps of its own is an in-process search index (no
 * `OPENSEARCH_URL`): each API process then fills it from the `search` read model at start and
 * follows that read model with its own feed (checkpoint in memory), so it needs no projector in
 * the same process, only the shared read store. With OpenSearch, the active projector feeds the
 * one shared index instead.
 */
import type { Redis } from 'ioredis';
import type { ApiKeyStore } from '../../contracts/ports.ts';
import type { RunningApi } from '../api/server.ts';
import { serveApi } from '../cli/apiWorkers.ts';
import type { LinkTokens } from '../links/linkTokens.ts';
import type { WatchedDependencies } from '../shared/dependencies.ts';
import type { ApiDeps } from '../api/types.ts';
import type { RoleContext, RoleHandle } from './context.ts';

export interface ApiRoleOptions {
  apiKeys: ApiKeyStore;
  linkTokens: LinkTokens;
  snapshots: NonNullable<ApiDeps["snapshots"]>;
  redis?: Redis;
  dependencies: WatchedDependencies;
  ready: () => boolean;
}

export interface ApiRole extends RoleHandle {
  /** Where it listens (with API_WORKERS > 1, the workers' shared port). */
  api: Pick<RunningApi, 'url'>;
  /**
   * Fills the in-process search index from the `search` read model (unless `filled`, after a
   * load that filled it) and follows it from then on. Nothing to do with a shared index.
   */
  feedSearch(filled: boolean): Promise<void>;
}

export async function startApiRole(ctx: RoleContext, options: ApiRoleOptions): Promise<ApiRole> {
  const { config, adapters, logger, clock, health, pipeline } = ctx;
  const { dependencies, redis } = options;
  const api = await serveApi(config, {
    adapters, apiKeys: options.apiKeys, dependencies, redis, snapshots: options.snapshots,
    linkTokens: options.linkTokens, clock, logger, ready: options.ready, health,
  });
  let feeding = false;
  return {
    api,
    async feedSearch(filled) {
      if (!adapters.searchInProcess) return;
      if (!filled) {
        const indexed = await pipeline.refillSearch();
        if (indexed > 0) logger.info(`search index refilled with ${indexed} titles`);
      }
      pipeline.searchFeed.start();
      feeding = true;
    },
    async stop() {
      if (feeding) await pipeline.searchFeed.stop();
      await api.close();
    },
  };
}
