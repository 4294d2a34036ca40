/**
 * Starts the projection worker (projectionWorkerMain.ts) and waits on it: `waitFor(position)`
 * resolves once every read model has folded the log up to that position, read from the
 * checkpoints the worker commits with its writes.
 */
import { Worker } from 'node:worker_threads';
import type { ReadStore } from '../../contracts/ports.ts';
import { ALL_PROJECTIONS } from '../../projections/index.ts';
import type { Config } from '../shared/config.ts';
import { resolveCollection } from '../shared/readModels.ts';

export interface ProjectionThread {
  /**
   * Resolves when every projection's checkpoint is at `position` or beyond; `onProgress(lowest)`
   * while waiting. Resolves too once `signal` is aborted (a shutdown): the caller checks it.
   */
  waitFor(position: number, onProgress?: (lowest: number) => void, signal?: AbortSignal): Promise<void>;
  stop(): Promise<void>;
}

export async function startProjectionThread(config: Config, readStore: ReadStore): Promise<ProjectionThread> {
  const worker = new Worker(new URL('./projectionWorker.mjs', import.meta.url), {
    workerData: { config },
    // The young generation the CLI gives the main thread (bin/marquee.js), for the same reason.
    resourceLimits: { maxYoungGenerationSizeMb: 128 },
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
  const collections = await Promise.all(ALL_PROJECTIONS.map((p) => resolveCollection(readStore, p)));

  return {
    async waitFor(position, onProgress, signal) {
      for (;;) {
        if (failure) throw failure;
        if (signal?.aborted) return;
        // Every checkpoint in one read: one per projection was 16 commands a poll on MongoDB,
        // the most frequent command FerretDB answered during a load's days 2-7.
        const lowest = Math.min(...(await readStore.getCheckpoints(collections)));
        onProgress?.(lowest);
        if (lowest >= position) return;
        // At 25 ms the polls were most of what FerretDB answered during a load; 200 ms adds at
        // most that to a day's wait.
        await new Promise((r) => setTimeout(r, 200));
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
