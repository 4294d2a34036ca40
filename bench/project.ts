/**
 * `npm run bench -- project [--titles N] [--countries US,DE] [--batch N] [--project-batch N]`
 *
 * Projector throughput into the MongoDB read store (MONGODB_URL, default
 * mongodb://127.0.0.1:27017; FerretDB in CI) beside a raw unordered `bulkWrite` of the same
 * documents, in the same run:
 *
 * 1. a synthetic crawl (day 0 of N titles, default 2 000, in the given countries) is ingested
 *    and projected into the embedded stores (LMDB), which gives the events and, in the LMDB
 *    read store, the documents every projection builds from them;
 * 2. project: every projection's catch-up runner folds the same events into a fresh MongoDB
 *    database (reads of stored documents, the position guard, checkpoints: the real load path),
 *    in batches of the size the projector uses on MongoDB (`projectionBatchSize`, 60 000 events;
 *    `--project-batch` to try another: a document changed in several batches is replaced once
 *    per batch, so smaller batches cost more);
 * 3. raw: the documents of step 1, each read model into its own collection of a second fresh
 *    database, as `insertOne`s of one unordered `bulkWrite` per read model (`--batch` per call,
 *    default 1 000), stored in the shape the adapter stores (its documents.ts when present,
 *    else the JSON text of the previous adapter), without any read or guard: what the server
 *    can take at best.
 *
 * Rates are documents/s (documents of step 1, over all read models); `ratio` is
 * project/raw (goal: at least 0.5). Both databases are dropped afterwards. One JSON line.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { MongoClient, type AnyBulkWriteOperation } from 'mongodb';
import { closeLmdb } from '../infra/lmdb/env.ts';
import { mongoCollectionName } from '../infra/mongo/keys.ts';
import { mongoReadStore } from '../infra/mongo/readStore.ts';
import { defaultCollectionName } from '../projections/collections.ts';
import { ALL_PROJECTIONS } from '../projections/index.ts';
import { catchUp } from '../projections/runner.ts';
import { createPipeline } from '../services/cli/pipeline.ts';
import { crawl } from '../services/crawler/crawl.ts';
import { openAdapters, projectionBatchSize } from '../services/shared/adapters.ts';
import { loadConfig } from '../services/shared/config.ts';
import { silentLogger } from '../services/shared/logger.ts';

const { values } = parseArgs({
  options: {
    titles: { type: 'string', default: '2000' },
    countries: { type: 'string', default: 'US' },
    batch: { type: 'string', default: '1000' },
    'project-batch': { type: 'string' },
  },
});
const titles = Number(values.titles);
const countries = values.countries.split(',').map((c) => c.trim().toUpperCase());
const batch = Number(values.batch);
const url = process.env.MONGODB_URL ?? 'mongodb://127.0.0.1:27017';
const projectBatch = values['project-batch'] === undefined ? projectionBatchSize({ mongodbUrl: url }) : Number(values['project-batch']);
const stamp = `${process.pid}_${Date.now().toString(36)}`;
const projectDb = `marquee_bench_project_${stamp}`;
const rawDb = `marquee_bench_raw_${stamp}`;
const prefix = 'rm_';

type Shape = (key: string, doc: unknown, position: number) => Record<string, unknown>;
/** The stored shape of the adapter under test, so raw writes what the adapter writes. */
async function storedShape(): Promise<[string, Shape]> {
  try {
    const documents = (await import('../infra/mongo/' + 'documents.ts')) as { recordOf: Shape };
    return ['bson', documents.recordOf];
  } catch {
    return ['json_text', (key, doc, position) => ({ _id: key, doc: JSON.stringify(doc), position })];
  }
}

const dataDir = mkdtempSync(join(tmpdir(), 'marquee-bench-project-'));
const client = new MongoClient(url, { serverSelectionTimeoutMS: 3000, retryWrites: false });
await client.connect();
const adapters = await openAdapters(loadConfig({ DATA_DIR: dataDir }), silentLogger);
const mongo = await mongoReadStore({ url, database: projectDb, collectionPrefix: prefix });
try {
  const pipeline = createPipeline(adapters, silentLogger);
  await crawl({ bus: adapters.bus, seed: 42, day: 0, titles, countries });
  await pipeline.drain();
  await pipeline.stop();
  const events = await adapters.eventStore.headPosition();
  const collections = ALL_PROJECTIONS.map((projection) => defaultCollectionName(projection));
  const documents = new Map<string, Array<{ key: string; doc: unknown; position: number }>>();
  let docs = 0;
  for (const collection of collections) {
    const rows = await adapters.readStore.scan(collection);
    documents.set(collection, rows);
    docs += rows.length;
  }

  const t0 = performance.now();
  for (const projection of ALL_PROJECTIONS) {
    await catchUp({ projection, eventStore: adapters.eventStore, readStore: mongo, collection: defaultCollectionName(projection), batchSize: projectBatch });
  }
  const projectMs = performance.now() - t0;

  const [shapeName, shape] = await storedShape();
  const t1 = performance.now();
  for (const collection of collections) {
    const target = client.db(rawDb).collection<Record<string, unknown>>(mongoCollectionName(prefix, collection));
    const rows = documents.get(collection) ?? [];
    for (let i = 0; i < rows.length; i += batch) {
      const ops: Array<AnyBulkWriteOperation<Record<string, unknown>>> = rows
        .slice(i, i + batch)
        .map((row) => ({ insertOne: { document: shape(row.key, row.doc, row.position) } }));
      await target.bulkWrite(ops, { ordered: false });
    }
  }
  const rawMs = performance.now() - t1;

  const server = (await client.db('admin').command({ buildInfo: 1 })) as { version?: string; ferretdbVersion?: string };
  const rate = (ms: number) => Math.round((docs / ms) * 1000);
  console.log(
    JSON.stringify({
      bench: 'project',
      url,
      server: server.ferretdbVersion ? `FerretDB ${server.ferretdbVersion}` : `MongoDB ${server.version}`,
      shape: shapeName,
      titles,
      countries,
      events,
      project_batch: projectBatch,
      docs,
      project: { ms: Math.round(projectMs), docsPerSecond: rate(projectMs) },
      raw: { ms: Math.round(rawMs), docsPerSecond: rate(rawMs) },
      ratio: Number((rawMs / projectMs).toFixed(2)),
    }),
  );
} finally {
  await mongo.close();
  await adapters.close();
  await closeLmdb(dataDir);
  await client.db(projectDb).dropDatabase().catch(() => undefined);
  await client.db(rawDb).dropDatabase().catch(() => undefined);
  await client.close();
  rmSync(dataDir, { recursive: true, force: true });
}
