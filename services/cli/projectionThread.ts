/**
 * Starts the projection worker (projectionWorkerMain.ts) and waits on it: `waitFor(position)`
 * resolves once every read model (or the ones named) has folded the log up to that position,
 * read from the checkpoints the worker commits with its writes.
 */
import { Worker } from 'node:worker_threads';
import type { ReadStore } from '../../contracts/ports.ts';
import type { Projection } from '../../contracts/projection.ts';
import { ALL_PROJECTIONS } from '../../projections/index.ts';
import { RANKING_READS } from '../ranking/job.ts';
import type { Config } from '../shared/config.ts';
import { resolveCollection } from '../shared/readModels.ts';

export interface ProjectionThread {
  /**
   * Resolves when the checkpoint of every projection (of `only`, when given) is at `position` or
   * beyond; `onProgress(lowest)` while waiting. Resolves too once `signal` is aborted (a
   * shutdown): the caller checks it.
   */
  waitFor(position: number, onProgress?: (lowest: number) => void, signal?: AbortSignal, only?: ReadonlyArray<Projection<unknown>>): Promise<void>;
  stop(): Promise<void>;
}

export interface ProjectionThreadOptions {
  /**
   * What the daily ranking reads is folded first on LMDB too (on MongoDB it always has a lane of
   * its own): for a caller that waits for it alone before each ranking, as the sample load does.
   */
  rankingFirst?: boolean;
}

export async function startProjectionThread(config: Config, readStore: ReadStore, options: ProjectionThreadOptions = {}): Promise<ProjectionThread> {
  const worker = new Worker(new URL('./projectionWorker.mjs', import.meta.url), {
    // What the daily ranking reads: a sample day waits only for that before it is ranked, and
    // the worker folds it in a lane of its own (on LMDB when asked to, see the worker).
    workerData: { config, ahead: RANKING_READS.map((p) => p.name), aheadFirst: options.rankingFirst === true },
    // A large young generation, as the CLI gives the main thread (bin/marquee.js), for the same
    // reason. V8 splits it into three (two semi-spaces and the large objects): 256 MB is ~85 MB
    // semi-spaces. Over a first start its scavenges took 5.9 s at 128 MB, 3.9 s at 384 MB and
    // 3.6 s at 768 MB (--trace-gc, load ~5); 256 keeps most of that for less memory.
    resourceLimits: { maxYoungGenerationSizeMb: 256 },
  });
  let failure: Error | null = null;
  worker.on('error', (err: Error) => {
    failure = err;
  });
  worker.on('exit', (code) => {
    failure ??= code === 0 ? null : new Error(`the projection worker exited with code ${code}`);
  });
  await new Promise<void>((resolve, reject) => {
    worker.once('message', () => resolve());
    worker.once('error', reject);
  });
  const all = await Promise.all(ALL_PROJECTIONS.map((p) => resolveCollection(readStore, p)));
  // The checkpoints the worker tells as it commits them (projectionWorkerMain.ts): a wait reads
  // the store again as soon as they say it is over, instead of at its next poll, which made each
  // of the sample load's two waits a day end up to 200 ms late. The store stays the truth.
  const told = new Map<string, number>();
  let wake: (() => void) | null = null;
  worker.on('message', (m: { type: string; name?: string; position?: number }) => {
    if (m.type !== 'checkpoint' || m.name === undefined || m.position === undefined) return;
    if ((told.get(m.name) ?? 0) < m.position) told.set(m.name, m.position);
    wake?.();
  });
  /** The lowest checkpoint of `collections`, as read or told since (never behind the last read). */
  const lowestTold = (collections: string[]): number => Math.min(...collections.map((c) => told.get(c) ?? 0));
  /** Resolves true when a checkpoint is told, false after `ms`. */
  const pause = (ms: number): Promise<boolean> =>
    new Promise((resolve) => {
      const timer = setTimeout(() => {
        wake = null;
        resolve(false);
      }, ms);
      wake = () => {
        clearTimeout(timer);
        wake = null;
        resolve(true);
      };
    });

  return {
    async waitFor(position, onProgress, signal, only) {
      const collections = only === undefined ? all : all.filter((_, i) => only.includes(ALL_PROJECTIONS[i] as Projection<unknown>));
      // The worker may hold events back to fold them in fewer batches (on MongoDB): a wait says
      // how far it must go, and for which projections.
      worker.postMessage({ type: 'upTo', position, ...(only === undefined ? {} : { projections: only.map((p) => p.name) }) });
      let read = true;
      for (;;) {
        if (failure) throw failure;
        if (signal?.aborted) return;
        if (read) {
          // Every checkpoint in one read: one per projection was 16 commands a poll on MongoDB,
          // the most frequent command FerretDB answered during a load's days 2-7.
          const checkpoints = await readStore.getCheckpoints(collections);
          checkpoints.forEach((checkpoint, i) => {
            const c = collections[i] as string;
            if ((told.get(c) ?? 0) < checkpoint) told.set(c, checkpoint);
          });
          const lowest = Math.min(...checkpoints);
          onProgress?.(lowest);
          if (lowest >= position) return;
        } else onProgress?.(lowestTold(collections));
        // At 25 ms the polls were most of what FerretDB answered during a load. So the store is
        // read every 200 ms, or when the checkpoints told reach the position, not on every
        // checkpoint told.
        const woken = await pause(200);
        read = !woken || lowestTold(collections) >= position;
      }
    },
    async stop() {
      if (failure) return;
      const stopped = new Promise<void>((resolve) => {
        worker.on('message', (m: { type: string }) => m.type === 'stopped' && resolve());
        worker.once('exit', () => resolve());
      });
      worker.postMessage({ type: 'stop' });
      await stopped;
      await worker.terminate();
    },
  };
}
