/**
 * /v1/upcoming and /v1/new for an offer listed ahead of its start (its `availableFrom` after the
 * day it was observed): it is upcoming until that day, then new from it, never new on the day it
 * was listed; a start moved later moves both, and an offer that comes earlier than it announced
 * (its start moved to that day, into the past, or cleared) is new on the day it is seen there. The same stores are read by apps whose clocks stand
 * on different days.
 */
import assert from 'node:assert/strict';
import { streams } from '../../contracts/ids.ts';
import type { Clock } from '../../contracts/ports.ts';
import { inProcessSearchIndex } from '../../infra/search/inProcessSearch.ts';
import { ALL_PROJECTIONS, defaultCollectionName } from '../../projections/index.ts';
import { catchUp } from '../../projections/runner.ts';
import { createApp } from '../../services/api/app.ts';
import { createApiKey } from '../../services/api/keys.ts';
import { IDS, offer, openFixtureStores, seedCatalog, listenLocally, type FixtureStores } from './api.fixture.ts';
import { testLinkTokens } from './api.linkTokens.ts';

const clockAt = (day: string): Clock => ({ now: () => new Date(`${day}T12:00:00Z`) });
const meta = (observedAt: string) => ({ observedAt, producer: 'test' });

describe('titles coming to a provider (/v1/upcoming) and their arrival (/v1/new)', function () {
  this.timeout(60_000);
  let stores: FixtureStores;
  let key: string;
  const search = inProcessSearchIndex();

  /** GET of `path` from an app whose clock stands on `day`. */
  async function getOn(day: string, path: string): Promise<any> {
    const app = createApp({
      readStore: stores.readStore, apiKeys: stores.apiKeys, search, linkTokens: await testLinkTokens(), clock: clockAt(day),
      rateLimit: { perMinute: 1000 }, keyCacheMs: 1000,
    });
    const server = await listenLocally(app);
    try {
      const res = await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${key}` } });
      assert.equal(res.status, 200, path);
      return await res.json();
    } finally {
      await server.close();
    }
  }
  /** Folds what was appended into every read model. */
  async function project(): Promise<void> {
    for (const projection of ALL_PROJECTIONS) {
      await catchUp({ projection, eventStore: stores.eventStore, readStore: stores.readStore, collection: defaultCollectionName(projection) });
    }
  }
  /** An offer of `mediaId` on `provider` seen at `observedAt`: added, or with its start moved to `availableFrom`; projected. */
  async function seen(type: 'OfferAdded' | 'OfferChanged', mediaId: string, provider: string, availableFrom: string | null, observedAt: string): Promise<void> {
    const data = { mediaId, country: 'US', offer: offer(provider, `https://www.${provider}.com/title/${mediaId}`, { availableFrom }) };
    await stores.eventStore.append(streams.availability(mediaId, 'US'), [
      { type, data: type === 'OfferChanged' ? { ...data, changedFields: ['availableFrom'] } : data, metadata: meta(observedAt) },
    ] as never, 'any');
    await project();
  }
  /** Netflix's offer of Rapid Fire seen at `observedAt` with its start moved to `availableFrom`, projected. */
  async function startMovedTo(availableFrom: string, observedAt: string): Promise<void> {
    await stores.eventStore.append(streams.availability(IDS.rapidFire, 'US'), [
      {
        type: 'OfferChanged',
        data: { mediaId: IDS.rapidFire, country: 'US', offer: offer('netflix', 'https://www.netflix.com/title/2', { availableFrom }), changedFields: ['availableFrom'] },
        metadata: meta(observedAt),
      },
    ], 'any');
    await project();
  }
  const entries = (body: any): string[] => body.results.map((r: any) => `${r.id} ${r.provider_id} ${r.date}`);

  before(async () => {
    stores = openFixtureStores('marquee-upcoming-', clockAt('2026-11-20'));
    await seedCatalog(stores.eventStore, stores.readStore, search);
    // Rapid Fire: listed on Netflix on the 20th to start on the 25th; on Hulu on the 20th, live at once.
    await stores.eventStore.append(streams.availability(IDS.rapidFire, 'US'), [
      { type: 'OfferAdded', data: { mediaId: IDS.rapidFire, country: 'US', offer: offer('netflix', 'https://www.netflix.com/title/2', { availableFrom: '2026-11-25' }) }, metadata: meta('2026-11-20T08:00:00Z') },
      { type: 'OfferAdded', data: { mediaId: IDS.rapidFire, country: 'US', offer: offer('hulu', 'https://www.hulu.com/movie/rapid-fire', { availableFrom: '2026-11-01' }) }, metadata: meta('2026-11-20T08:00:00Z') },
    ], 'no_stream');
    for (const projection of ALL_PROJECTIONS) {
      await catchUp({ projection, eventStore: stores.eventStore, readStore: stores.readStore, collection: defaultCollectionName(projection) });
    }
    key = (await createApiKey(stores.apiKeys, 'upcoming', clockAt('2026-11-20'))).key;
  });

  after(async () => {
    await stores?.close();
  });

  it('lists an offer listed ahead as upcoming until its start, and as new from its start, never on the day it was listed', async () => {
    const before = await getOn('2026-11-21', '/v1/upcoming?country=US');
    assert.deepEqual(entries(before), [`${IDS.rapidFire} netflix 2026-11-25`]);
    assert.deepEqual([before.from, before.to], ['2026-11-22', '2026-12-21']);
    // Hulu's offer went live on the day it was listed; Netflix's is not live yet.
    assert.deepEqual(entries(await getOn('2026-11-21', '/v1/new?country=US&days=7')).filter((e) => e.startsWith(IDS.rapidFire)), [`${IDS.rapidFire} hulu 2026-11-20`]);
    // The window: a start beyond `days` is not listed yet; the start day itself is new, not upcoming.
    assert.deepEqual(entries(await getOn('2026-11-21', '/v1/upcoming?country=US&days=3')), []);
    assert.deepEqual(entries(await getOn('2026-11-25', '/v1/upcoming?country=US')), []);
    const after = await getOn('2026-11-26', '/v1/new?country=US&days=7');
    assert.deepEqual(entries(after).filter((e) => e.startsWith(IDS.rapidFire)), [`${IDS.rapidFire} netflix 2026-11-25`, `${IDS.rapidFire} hulu 2026-11-20`]);
    // Filters as /v1/leaving takes them.
    assert.deepEqual(entries(await getOn('2026-11-21', '/v1/upcoming?country=US&provider=hulu')), []);
    assert.deepEqual(entries(await getOn('2026-11-21', '/v1/upcoming?country=US&kind=tv_show')), []);
  });

  it('follows a start moved later: the old day no longer holds, the new one does', async () => {
    await startMovedTo('2026-11-28', '2026-11-22T08:00:00Z');
    assert.deepEqual(entries(await getOn('2026-11-23', '/v1/upcoming?country=US')), [`${IDS.rapidFire} netflix 2026-11-28`]);
    assert.deepEqual(entries(await getOn('2026-11-26', '/v1/new?country=US&days=7')).filter((e) => e.startsWith(IDS.rapidFire)), [`${IDS.rapidFire} hulu 2026-11-20`]);
    // The window of the 29th is the 23rd to the 29th: Hulu's arrival has left it.
    assert.deepEqual(entries(await getOn('2026-11-29', '/v1/new?country=US&days=7')).filter((e) => e.startsWith(IDS.rapidFire)), [`${IDS.rapidFire} netflix 2026-11-28`]);
  });

  it('follows an offer that came earlier than it announced: new on the day it came, upcoming no more', async () => {
    // Seen on the 24th with its start moved to that day (the 28th announced above).
    await startMovedTo('2026-11-24', '2026-11-24T08:00:00Z');
    assert.deepEqual(entries(await getOn('2026-11-24', '/v1/upcoming?country=US')), []);
    assert.deepEqual(entries(await getOn('2026-11-24', '/v1/new?country=US&days=7')).filter((e) => e.startsWith(`${IDS.rapidFire} netflix`)), [`${IDS.rapidFire} netflix 2026-11-24`]);
    assert.deepEqual(entries(await getOn('2026-11-29', '/v1/new?country=US&days=7')).filter((e) => e.startsWith(IDS.rapidFire)), [`${IDS.rapidFire} netflix 2026-11-24`]);
  });

  it('follows an offer listed ahead whose start is cleared, or moved to a day already past: new on the day it is seen there', async () => {
    // Amazon lists Rapid Fire on the 20th for December 10th, Harbor Lights on the 21st for the 12th.
    await seen('OfferAdded', IDS.rapidFire, 'amazon', '2026-12-10', '2026-11-20T08:00:00Z');
    await seen('OfferAdded', IDS.harbor, 'amazon', '2026-12-12', '2026-11-21T08:00:00Z');
    const amazon = (body: any) => entries(body).filter((e) => e.includes(' amazon '));
    assert.deepEqual(amazon(await getOn('2026-11-25', '/v1/upcoming?country=US')), [`${IDS.rapidFire} amazon 2026-12-10`, `${IDS.harbor} amazon 2026-12-12`]);
    // On the 26th Rapid Fire is there with no start any more; on the 27th Harbor Lights, its start moved to the 22nd.
    await seen('OfferChanged', IDS.rapidFire, 'amazon', null, '2026-11-26T08:00:00Z');
    await seen('OfferChanged', IDS.harbor, 'amazon', '2026-11-22', '2026-11-27T08:00:00Z');
    assert.deepEqual(amazon(await getOn('2026-11-27', '/v1/upcoming?country=US')), []);
    assert.deepEqual(amazon(await getOn('2026-11-27', '/v1/new?country=US&days=7')), [`${IDS.harbor} amazon 2026-11-27`, `${IDS.rapidFire} amazon 2026-11-26`]);
    // Neither is new on the day it was announced for, once that comes.
    assert.deepEqual(amazon(await getOn('2026-12-13', '/v1/new?country=US&days=7')), []);
    // A later change of the start of an offer that is there already makes it new no more.
    await seen('OfferChanged', IDS.rapidFire, 'amazon', '2026-11-01', '2026-11-28T08:00:00Z');
    assert.deepEqual(amazon(await getOn('2026-11-28', '/v1/new?country=US&days=7')), [`${IDS.harbor} amazon 2026-11-27`, `${IDS.rapidFire} amazon 2026-11-26`]);
  });
});
