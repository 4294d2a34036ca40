/**
 * `npm run bench -- mongoReadStore [--docs N] [--updates-per-command N]`
 *
 * The position-guarded writeBatch of the MongoDB read store against the bare driver writing the
 * same records without the guard, on the server at MONGODB_URL (default
 * mongodb://127.0.0.1:27017; FerretDB in CI), in a database dropped afterwards. Four timings of
 * one batch of N documents (default 10 000), each on its own collection:
 *
 * - create/raw:     `bulkWrite` of `replaceOne({ _id }, record, { upsert: true })`, unordered,
 *                   in one call: the reference for a first write;
 * - create/adapter: `writeBatch` of the same documents into an empty collection (guarded
 *                   upserts, a few in flight, infra/mongo/guardedWrite.ts);
 * - update/raw:     the same unguarded upserts over existing documents, in chunks of
 *                   `--updates-per-command` (default 25) per `bulkWrite`: FerretDB 1.24
 *                   deadlocks an `update` command of about 100 matching statements, so one call
 *                   for the whole batch is not an option there;
 * - update/adapter: `writeBatch` moving every document ahead (the same guarded upserts).
 *
 * Rates are documents/s. Prints one JSON line.
 */
import { parseArgs } from 'node:util';
import { MongoClient } from 'mongodb';
import { mongoReadStore } from '../infra/mongo/readStore.ts';
import { mongoCollectionName } from '../infra/mongo/keys.ts';

const { values } = parseArgs({
  options: {
    docs: { type: 'string', default: '10000' },
    'updates-per-command': { type: 'string', default: '25' },
  },
});
const docs = Number(values.docs);
const updatesPerCommand = Number(values['updates-per-command']);
const url = process.env.MONGODB_URL ?? 'mongodb://127.0.0.1:27017';
const database = `marquee_bench_${process.pid}_${Date.now().toString(36)}`;
const prefix = 'rm_';

/** A document the size of a small title read model (about 400 bytes of JSON). */
function documentOf(i: number, version: number) {
  return {
    id: `tm${i}`,
    version,
    title: `Title number ${i}`,
    genres: [28, 12, 35],
    availability: { US: ['nfx', 'amp'], DE: ['nfx'], FR: ['dnp', 'cnl'] },
    popularity: i / 7,
    overview: 'x'.repeat(200),
  };
}
const keys = Array.from({ length: docs }, (_, i) => `movie:${String(i).padStart(7, '0')}`);

const client = new MongoClient(url, { serverSelectionTimeoutMS: 3000, retryWrites: false });
await client.connect();
const store = await mongoReadStore({ url, database, collectionPrefix: prefix });
const results: Record<string, { ms: number; docsPerSecond: number }> = {};

async function time(name: string, action: () => Promise<unknown>): Promise<void> {
  const started = performance.now();
  await action();
  const ms = performance.now() - started;
  results[name] = { ms: Math.round(ms), docsPerSecond: Math.round((docs / ms) * 1000) };
  // Progress on stderr: a run on a slow server takes minutes, and stdout stays one JSON line.
  console.error(JSON.stringify({ [name]: results[name] }));
}

function rawUpserts(version: number) {
  return keys.map((key, i) => ({
    replaceOne: {
      filter: { _id: key },
      replacement: { doc: JSON.stringify(documentOf(i, version)), position: version * docs + i },
      upsert: true,
    },
  }));
}

try {
  const raw = client.db(database).collection<{ _id: string }>(mongoCollectionName(prefix, 'raw'));
  await time('create_raw', () => raw.bulkWrite(rawUpserts(1), { ordered: false }));
  await time('create_adapter', () =>
    store.writeBatch('adapter', keys.map((key, i) => ({ key, doc: documentOf(i, 1), position: docs + i }))),
  );
  await time('update_raw', async () => {
    const ops = rawUpserts(2);
    for (let i = 0; i < ops.length; i += updatesPerCommand) {
      await raw.bulkWrite(ops.slice(i, i + updatesPerCommand), { ordered: false });
    }
  });
  await time('update_adapter', () =>
    store.writeBatch('adapter', keys.map((key, i) => ({ key, doc: documentOf(i, 2), position: 2 * docs + i }))),
  );
  const server = (await client.db('admin').command({ buildInfo: 1 })) as { version?: string; ferretdbVersion?: string };
  console.log(
    JSON.stringify({
      bench: 'mongoReadStore',
      url,
      server: server.ferretdbVersion ? `FerretDB ${server.ferretdbVersion}` : `MongoDB ${server.version}`,
      docs,
      updatesPerCommand,
      ...results,
    }),
  );
} finally {
  await store.close();
  await client.db(database).dropDatabase();
  await client.close();
}
