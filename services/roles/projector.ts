/**
 * The projector role: folds the event log into the read models (and, with OpenSearch, feeds the
 * shared search index). Any number of projector processes may run; exactly one is active at a
 * time, the one holding the `projector` lease in the read store (services/shared/lease.ts), and
 * the others stand by, trying to take it every second. The active one renews it every quarter
 * of its length and checks it before every batch it writes, so a process paused past its lease
 * (a zombie) writes nothing when it resumes; one killed with SIGKILL is replaced once its lease
 * expires: within `leaseMs` + 1 s (10 s + 1 s by default).
 *
 * One lease for all projections rather than one per projection: the projections are folded off
 * one read of the log (projections/group.ts), which is what makes a projector fast, and one
 * active process keeps up with the log; a second one is there to take over, not to share.
 */
import { Gauge, type Registry } from 'prom-client';
import { ALL_PROJECTIONS } from '../../projections/index.ts';
import { ProjectionGroup } from '../../projections/group.ts';
import { projectionsHealth } from '../cli/pipeline.ts';
import { supervise } from '../shared/health.ts';
import { LeaseKeeper, PROJECTOR_LEASE } from '../shared/lease.ts';
import { projectionCheckpoints } from '../shared/readModels.ts';
import { SearchFeed } from '../shared/searchFeed.ts';
import { pause, type RoleContext, type RoleHandle } from './context.ts';

export interface ProjectorOptions {
  /** Length of the lease. Default 10 000 ms. */
  leaseMs?: number;
  /** How often a standby tries to take the lease. Default 1000 ms. */
  standbyPollMs?: number;
}

/** How long a scrape waits for the head and the checkpoints before it leaves the lag out. */
const LAG_SCRAPE_MS = 1000;

/**
 * `marquee_projection_lag{projection}`: the log's head minus each read model's checkpoint, read
 * from the stores at each scrape (as `marquee status` reads them), so any projector process,
 * active or standing by, tells how stale the read models are: the alert that matters in a
 * CQRS system. In the event store's positions: events on LMDB, offsets on the Kafka event log,
 * bytes of log on EventStoreDB. A scrape whose reads fail or take over a second shows no lag
 * rather than an old one (alert on its absence too).
 */
export function registerProjectionMetrics(registry: Registry, adapters: Pick<RoleContext['adapters'], 'eventStore' | 'readStore'>): void {
  const { eventStore, readStore } = adapters;
  const read = async () => {
    const [head, checkpoints] = await Promise.all([eventStore.headPosition(), projectionCheckpoints(readStore)]);
    return ALL_PROJECTIONS.map((p, i) => [p.name, Math.max(0, head - (checkpoints[i] ?? 0))] as const);
  };
  // /metrics needs no key (and is on the API's port in a process of every role): scrapes share
  // one read, in flight or at most LAG_SCRAPE_MS old, so a client asking in a loop costs the
  // stores one read a second, not one per request.
  let last: { at: number; lags: Promise<ReadonlyArray<readonly [string, number]> | null> } | null = null;
  const shared = () => {
    if (last === null || Date.now() - last.at >= LAG_SCRAPE_MS) last = { at: Date.now(), lags: read().catch(() => null) };
    return last.lags;
  };
  new Gauge({
    name: 'marquee_projection_lag',
    help: 'Event-log head minus the checkpoint of each read model, in the event store positions (events on LMDB, offsets on Kafka, bytes on EventStoreDB).',
    labelNames: ['projection'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), LAG_SCRAPE_MS)));
      const lags = await Promise.race([shared(), late]).finally(() => clearTimeout(timer));
      for (const [name, lag] of lags ?? []) this.labels(name).set(lag);
    },
  });
}

/** The projector lease of this process (`start` takes it before a load that projects, too). */
export function projectorLease(ctx: RoleContext, options: ProjectorOptions = {}): LeaseKeeper {
  return new LeaseKeeper(ctx.adapters.readStore, PROJECTOR_LEASE, `${ctx.health.processName}:${process.hrtime.bigint().toString(36)}`, options.leaseMs ?? 10_000);
}

export function startProjectorRole(ctx: RoleContext, lease: LeaseKeeper, options: ProjectorOptions = {}): RoleHandle {
  const { adapters, logger, health } = ctx;
  const standbyPollMs = options.standbyPollMs ?? 1000;
  const report = projectionsHealth(health);
  const loop = supervise(
    health,
    'projector',
    logger,
    async (signal) => {
      health.detail('projector', { active: false, lease: lease.holder });
      while (!signal.aborted && !(await lease.take())) await pause(standbyPollMs, signal);
      if (signal.aborted) return;
      health.detail('projector', { active: true, lease: lease.holder });
      logger.info({ lease: lease.holder }, 'projector active: this process holds the projector lease');
      // A new runner per tenure: it starts from the checkpoints the previous holder left.
      const group = new ProjectionGroup({
        eventStore: adapters.eventStore,
        readStore: adapters.readStore,
        projections: ALL_PROJECTIONS,
        logger,
        batchSize: adapters.projectionBatchSize ?? 5000,
        parallel: adapters.projectionParallelism ?? 1,
        report,
        guard: () => lease.check(),
      });
      // The shared index is fed by the active projector; an in-process index by each API process.
      // Its writes carry the document's position as version, so a late write of a lost tenure
      // cannot move a title back.
      const feed = adapters.searchFeedCheckpoint === null
        ? null
        : new SearchFeed({ eventStore: adapters.eventStore, readStore: adapters.readStore, search: adapters.search, logger, checkpointName: adapters.searchFeedCheckpoint, health });
      group.start();
      feed?.start();
      try {
        while (!signal.aborted) {
          await pause(lease.ms / 4, signal);
          if (signal.aborted) break;
          const asked = Date.now();
          if (!(await lease.take())) throw new Error('the projector lease was taken by another process; standing by');
          // A renewal as slow as a quarter of the lease leaves the runner's guard refusing
          // batches, and one slower than half lets a standby take over: say so before that.
          const took = Date.now() - asked;
          if (took > lease.ms / 4) logger.warn({ ms: took, leaseMs: lease.ms }, `renewing the projector lease took ${(took / 1000).toFixed(1)} s of its ${(lease.ms / 1000).toFixed(0)} s: the read store is slow to answer`);
        }
      } finally {
        await group.stop();
        await feed?.stop();
      }
    },
    { critical: false, minBackoffMs: 1000, maxBackoffMs: 5000 },
  );
  return {
    async stop() {
      await loop.stop();
      // Handed over at once on a clean stop: a standby need not wait for the lease to expire.
      await lease.release().catch((err: unknown) => logger.warn({ err }, 'could not release the projector lease'));
    },
  };
}
