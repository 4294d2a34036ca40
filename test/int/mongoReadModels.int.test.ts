/**
 * Every read model on MongoDB is a collection of real documents: after the API fixture's small
 * catalog is projected into the MongoDB read store, each read-model collection answers a plain
 * `mongodb` driver query filtering on one of its fields (not only on `_id`), as an operator's
 * `mongosh` look-up would.
 *
 * Needs MONGODB_URL (`bash infra/local/servers.sh up ferretdb`); see requireServer.ts.
 */
import assert from 'node:assert/strict';
import { MongoClient } from 'mongodb';
import { systemClock, type ReadStore } from '../../contracts/ports.ts';
import { READ_MODELS } from '../../contracts/readModels.ts';
import { mongoCollectionName } from '../../infra/mongo/keys.ts';
import { mongoReadStore } from '../../infra/mongo/readStore.ts';
import { inProcessSearchIndex } from '../../infra/search/inProcessSearch.ts';
import { defaultCollectionName } from '../../projections/collections.ts';
import { ALL_PROJECTIONS, departuresProjection, upcomingProjection } from '../../projections/index.ts';
import { catchUp } from '../../projections/runner.ts';
import { streams } from '../../contracts/ids.ts';
import { IDS, openFixtureStores, seedCatalog, type FixtureStores } from '../e2e/api.fixture.ts';
import { describeWithServer } from '../ports/requireServer.ts';

const PREFIX = 'rm_';

/**
 * The dotted path of the first scalar field of the read model itself (not the store's
 * `_`-fields), looking into objects and the first element of arrays, with its value.
 */
function scalarField(doc: Record<string, unknown>, path = ''): [string, string | number | boolean] | null {
  for (const [name, value] of Object.entries(doc)) {
    if (path === '' && name.startsWith('_')) continue;
    const at = path === '' ? name : `${path}.${name}`;
    const inner = Array.isArray(value) ? value[0] : value;
    if (typeof inner === 'string' || typeof inner === 'number' || typeof inner === 'boolean') return [at, inner];
    if (inner !== null && typeof inner === 'object') {
      const found = scalarField(inner as Record<string, unknown>, at);
      if (found) return found;
    }
  }
  return null;
}

describeWithServer('read models on MongoDB as documents', 'MONGODB_URL', (url) => {
  const database = `marquee_rm_${process.pid}_${Date.now().toString(36)}`;
  let stores: FixtureStores;
  let readStore: ReadStore;
  let client: MongoClient;

  before(async function () {
    this.timeout(120_000);
    stores = openFixtureStores('marquee-rm-', systemClock);
    readStore = await mongoReadStore({ url, database, collectionPrefix: PREFIX });
    await seedCatalog(stores.eventStore, readStore, inProcessSearchIndex());
    // The fixture has no offer with an end date, nor one listed ahead of its start; departures
    // and upcoming need one.
    await stores.eventStore.append(streams.availability(IDS.rapidFire, 'DE'), [{
      type: 'OfferAdded',
      data: {
        mediaId: IDS.rapidFire, country: 'DE',
        offer: {
          providerId: 'netflix', addonProviderId: null, seasonNumber: null, episodeNumber: null,
          webUrl: 'https://www.netflix.com/title/2', priceTypes: ['flatrate'], formats: ['hd'], audioLanguages: ['de'],
          subtitleLanguages: null, availableFrom: '2026-11-25', availableTo: '2026-12-31', platforms: ['web'],
        },
      },
      metadata: { observedAt: '2026-11-20T10:00:00Z', producer: 'test' },
    }], 'no_stream');
    for (const projection of [departuresProjection, upcomingProjection]) {
      await catchUp({ projection, eventStore: stores.eventStore, readStore, collection: defaultCollectionName(projection) });
    }
    client = new MongoClient(url, { serverSelectionTimeoutMS: 3000 });
    await client.connect();
  });

  after(async function () {
    this.timeout(30_000);
    await client?.db(database).dropDatabase();
    await client?.close();
    await readStore?.close();
    await stores?.close();
  });

  it('has a projection for every read model', () => {
    assert.deepEqual(
      ALL_PROJECTIONS.map((p) => p.name).sort(),
      Object.values(READ_MODELS).sort(),
    );
  });

  for (const projection of ALL_PROJECTIONS) {
    it(`finds ${projection.name} documents by a field through the plain driver`, async () => {
      const raw = client.db(database).collection<Record<string, unknown> & { _id: string }>(
        mongoCollectionName(PREFIX, defaultCollectionName(projection)),
      );
      const sample = await raw.findOne({ _deleted: { $ne: true } });
      assert.ok(sample, `no ${projection.name} document was projected`);
      const field = scalarField(sample);
      assert.ok(field, `${projection.name} has no scalar field: ${JSON.stringify(sample).slice(0, 200)}`);
      const [path, value] = field;
      const found = await raw.find({ [path]: value }).toArray();
      assert.ok(found.some((doc) => doc._id === sample._id), `{ ${path}: ${JSON.stringify(value)} } missed ${sample._id}`);
      // The field the driver filtered on is a field of the read model, as the store reads it back.
      const stored = await readStore.get<Record<string, unknown>>(defaultCollectionName(projection), sample._id);
      assert.ok(stored !== null);
      assert.deepEqual(scalarField(stored.doc), field);
    });
  }
});
