/**
 * `npm run bench -- mongoFloor --data-dir DIR [--batch N] [--concurrency N] [--no-index] [--models a,b]`
 *
 * The floor of a first start on MongoDB/FerretDB: how long the server (MONGODB_URL, default
 * mongodb://127.0.0.1:27017) takes to store the read models of a loaded catalog when nothing but
 * inserting them is asked of it. DIR is the data directory of an embedded `npm start --sample`
 * (LMDB, stopped); every live read model's documents are read from it and inserted into a
 * fresh database in the shape the read store writes (documents.ts, with the bucket `_b` of
 * keys.ts, and the `{ _b: 1, _id: 1 }` index made first on MongoDB, as the read store makes it,
 * unless `--no-index`; the store makes none on FerretDB, nor does this), as unordered
 * `insertMany`s of `--batch` documents (default 1 000), `--concurrency` in flight (default 4).
 * No read, no guard, no checkpoint, each document once: whatever a start does on top of this
 * is the adapter's and the projections' cost. The database is dropped afterwards.
 *
 * Prints one JSON line: per read model its documents, MB of JSON and ms, and the total.
 */
import { parseArgs } from 'node:util';
import { MongoClient } from 'mongodb';
import { lmdbReadStore } from '../infra/lmdb/readStore.ts';
import { closeLmdb } from '../infra/lmdb/env.ts';
import { recordOf, type StoredRecord } from '../infra/mongo/documents.ts';
import { forEachLimited } from '../infra/mongo/guardedWrite.ts';
import { bucketOf, mongoCollectionName } from '../infra/mongo/keys.ts';
import { ALL_PROJECTIONS } from '../projections/index.ts';
import { resolveCollection } from '../services/shared/readModels.ts';

const { values } = parseArgs({
  options: {
    'data-dir': { type: 'string' },
    batch: { type: 'string', default: '1000' },
    concurrency: { type: 'string', default: '4' },
    'no-index': { type: 'boolean', default: false },
    /** Only these read models (names, comma-separated); default all. */
    models: { type: 'string' },
  },
});
const dataDir = values['data-dir'];
if (!dataDir) {
  console.error('usage: npm run bench -- mongoFloor --data-dir DIR (the data directory of a stopped `npm start --sample`)');
  process.exit(2);
}
const batch = Number(values.batch);
const concurrency = Number(values.concurrency);
const url = process.env.MONGODB_URL ?? 'mongodb://127.0.0.1:27017';
const database = `marquee_bench_floor_${process.pid}_${Date.now().toString(36)}`;

const source = lmdbReadStore({ dataDir });
const client = new MongoClient(url, { serverSelectionTimeoutMS: 3000, retryWrites: false });
await client.connect();
const server = (await client.db('admin').command({ buildInfo: 1 })) as { version?: string; ferretdbVersion?: string };
const index = !values['no-index'] && server.ferretdbVersion === undefined;
try {
  const perModel: Record<string, { docs: number; mb: number; ms: number }> = {};
  let docs = 0;
  let ms = 0;
  const only = values.models === undefined ? null : new Set(values.models.split(','));
  for (const projection of ALL_PROJECTIONS.filter((p) => only === null || only.has(p.name))) {
    const collection = await resolveCollection(source, projection);
    const rows = await source.scan(collection);
    const records: StoredRecord[] = rows.map((row) => ({ ...recordOf(row.key, row.doc, row.position), _b: bucketOf(row.key) }));
    const mb = rows.reduce((sum, row) => sum + JSON.stringify(row.doc).length, 0) / 1e6;
    const target = client.db(database).collection<StoredRecord>(mongoCollectionName('rm_', collection));
    const chunks: StoredRecord[][] = [];
    for (let i = 0; i < records.length; i += batch) chunks.push(records.slice(i, i + batch));
    const t0 = performance.now();
    if (index) await target.createIndex({ _b: 1, _id: 1 });
    await forEachLimited(chunks, concurrency, async (chunk) => {
      await target.insertMany(chunk, { ordered: false });
    });
    const took = performance.now() - t0;
    perModel[projection.name] = { docs: rows.length, mb: Math.round(mb * 10) / 10, ms: Math.round(took) };
    docs += rows.length;
    ms += took;
  }
  console.log(JSON.stringify({
    bench: 'mongoFloor',
    server: server.ferretdbVersion ? `FerretDB ${server.ferretdbVersion}` : `MongoDB ${server.version}`,
    batch, concurrency, index,
    docs, ms: Math.round(ms), docsPerSecond: Math.round((docs / ms) * 1000),
    load: (await import('node:os')).loadavg().map((l) => Math.round(l * 10) / 10),
    perModel,
  }));
} finally {
  await client.db(database).dropDatabase().catch(() => undefined);
  await client.close();
  await source.close();
  await closeLmdb(dataDir);
}
