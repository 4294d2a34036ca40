/**
 * The projection worker: every read-model projection, run live in a thread of its own, so that
 * while the main thread ingests, the read models are folded on the other core (used by the
 * first start's sample load). It opens its own stores from the configuration and stops when
 * told to, after the batch in flight.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { ReadStore } from '../../contracts/ports.ts';
import { ALL_PROJECTIONS } from '../../projections/index.ts';
import { openEventStore, openReadStore, projectionBatchSize, projectionParallelism } from '../shared/adapters.ts';
import type { Config } from '../shared/config.ts';
import { createLogger } from '../shared/logger.ts';
import { ProjectionGroup } from '../../projections/group.ts';

const { config } = workerData as { config: Config };
const logger = createLogger({ level: config.logLevel, json: config.logJson, name: 'marquee-projections' });
const { eventStore } = await openEventStore(config);
const { readStore: store } = await openReadStore(config);
/** Tells the main thread a checkpoint it may be waiting for, once committed. */
const told = (name: string, position: number): void => parentPort?.postMessage({ type: 'checkpoint', name, position });
// Every committed checkpoint is told to the main thread (projectionThread.ts), so that a wait
// for the read models ends with the batch that completes it rather than at a later poll.
const readStore: ReadStore = {
  ...store,
  async writeBatch(collection, writes, checkpoint) {
    const result = await store.writeBatch(collection, writes, checkpoint);
    if (checkpoint) told(checkpoint.name, checkpoint.position);
    return result;
  },
  async setCheckpoint(name, position) {
    await store.setCheckpoint(name, position);
    told(name, position);
  },
};
// No search sink here: the search index lives in the main thread, which refills it from the
// `search` read model once the load is done.
const group = new ProjectionGroup({
  eventStore,
  readStore,
  projections: ALL_PROJECTIONS,
  logger,
  batchSize: projectionBatchSize(config),
  parallel: projectionParallelism(config),
  // On MongoDB a batch costs round trips per read model whatever its size (a checkpoint write,
  // a parked lookup), and a document changed in two batches is written twice: waiting a second
  // once caught up lets a day's ingest gather larger batches (days 2-7 of a 1,000-title sample:
  // two batches a day instead of three to six). On LMDB a batch costs little.
  idleMs: config.mongodbUrl ? 1000 : 10,
});
group.start();
parentPort?.postMessage({ type: 'started' });
parentPort?.on('message', (message: { type: string }) => {
  if (message.type !== 'stop') return;
  void (async () => {
    await group.stop();
    await Promise.allSettled([eventStore.close(), readStore.close()]);
    parentPort?.postMessage({ type: 'stopped' });
  })();
});
