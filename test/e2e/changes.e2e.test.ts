/**
 * The change feed, the history and the new/leaving lists over HTTP, on a catalog built by the
 * sample crawler one day at a time, every answer checked against the served OpenAPI document.
 */
import assert from 'node:assert/strict';
import { defaultCollectionName } from '../../projections/collections.ts';
import { changesProjection } from '../../projections/changes.ts';
import { catchUp } from '../../projections/runner.ts';
import { join } from 'node:path';
import { fsReleaseStore } from '../../infra/releases/fsReleaseStore.ts';
import { crawlDate } from '../../services/crawler/catalog.ts';
import { buildRelease } from '../../services/snapshot/build.ts';
import { lit, openDuck } from '../int/snapshot.support.ts';
import { crawledCatalog, followFeed, type CrawledCatalog } from './changes.support.ts';

const COUNTRY = 'US';
const FIELDS = ['price_types', 'formats', 'audio_languages', 'subtitle_languages', 'available_from', 'available_to', 'platforms'];

/** An offer's identity in a links answer: provider, add-on, season, episode and the token of its URL. */
function identity(mediaId: string, link: any, season: unknown = link.season_number, episode: unknown = link.episode_number): string {
  return [mediaId, link.provider_id, link.addon_provider_id ?? '', season ?? '', episode ?? '', link.link_token].join('|');
}

async function allMediaIds(catalog: CrawledCatalog): Promise<string[]> {
  const collection = defaultCollectionName({ name: 'media_items', version: 1 });
  return (await catalog.adapters.readStore.scan(collection)).map((r) => r.key);
}

/** Every link of every title in the country, by identity, from `/v1/media/{id}/links`. */
async function linksOfCountry(catalog: CrawledCatalog, ids: string[], at?: string): Promise<Map<string, any>> {
  const out = new Map<string, any>();
  for (const id of ids) {
    const r = await catalog.get(`/v1/media/${id}/links?country=${COUNTRY}${at ? `&at=${at}` : ''}`);
    assert.equal(r.status, 200);
    for (const link of r.body) out.set(identity(id, link), link);
  }
  return out;
}

describe('the change feed, history, new and leaving (e2e)', function () {
  this.timeout(600_000);
  const DAYS = 4;
  let catalog: CrawledCatalog;
  let ids: string[];

  before(async () => {
    catalog = await crawledCatalog({ titles: 1500, countries: ['US', 'DE'], days: DAYS });
    ids = await allMediaIds(catalog);
  });

  after(async () => {
    await catalog?.close();
  });

  it('lists exactly the differences between the links before and after a crawl day, for every title of a country', async () => {
    const { cursor } = await followFeed(catalog, COUNTRY, null);
    const before = await linksOfCountry(catalog, ids);
    await catalog.crawlDay(DAYS);
    // Titles that first appear on this day have no links before it.
    ids = await allMediaIds(catalog);
    const after = await linksOfCountry(catalog, ids);
    const { changes } = await followFeed(catalog, COUNTRY, cursor, '', 7);

    const expected: string[] = [];
    for (const [k, link] of after) {
      const old = before.get(k);
      if (!old) expected.push(`new ${k} ${JSON.stringify(link)}`);
      else {
        const changed = FIELDS.filter((f) => JSON.stringify(old[f]) !== JSON.stringify(link[f]));
        if (changed.length > 0) expected.push(`updated ${k} ${JSON.stringify(old)} ${JSON.stringify(link)} ${changed.join(',')}`);
      }
    }
    for (const [k, link] of before) if (!after.has(k)) expected.push(`removed ${k} ${JSON.stringify(link)}`);

    const got = changes.map((c) => {
      const k = identity(c.media_id, c.after ?? c.before, c.season_number, c.episode_number);
      if (c.type === 'new') return `new ${k} ${JSON.stringify(c.after)}`;
      if (c.type === 'removed') return `removed ${k} ${JSON.stringify(c.before)}`;
      return `updated ${k} ${JSON.stringify(c.before)} ${JSON.stringify(c.after)} ${c.changed.join(',')}`;
    });
    assert.ok(expected.length >= 5, `a crawl day changes something (${expected.length})`);
    assert.deepEqual([...got].sort(), [...expected].sort());
    const day = crawlDate(DAYS, catalog.startDate);
    for (const c of changes) {
      assert.equal(c.country, COUNTRY);
      assert.equal(c.at.slice(0, 10), day);
      assert.match(c.id, /^chg_\d+$/);
    }
    assert.equal(new Set(changes.map((c) => c.id)).size, changes.length, 'ids are unique');
  });

  it('pages every change exactly once, oldest first, with any limit, and filters within the same order', async () => {
    const whole = await followFeed(catalog, COUNTRY, null, '', 1000);
    const small = await followFeed(catalog, COUNTRY, null, '', 97);
    assert.deepEqual(small.changes.map((c) => c.id), whole.changes.map((c) => c.id));
    assert.equal(small.cursor, whole.cursor);
    const positions = whole.changes.map((c) => Number(c.id.slice(4)));
    assert.deepEqual(positions, [...positions].sort((a, b) => a - b));

    const updated = whole.changes.filter((c) => c.type !== 'new');
    const someTitle = updated[0].media_id as string;
    const provider = updated[0].provider_id as string;
    const cases: Array<[string, (c: any) => boolean]> = [
      ['&type=removed,updated', (c) => c.type !== 'new'],
      [`&media_id=${someTitle}`, (c) => c.media_id === someTitle],
      [`&provider=${provider}&type=new`, (c) => c.type === 'new' && (c.provider_id === provider || c.addon_provider_id === provider)],
    ];
    for (const [query, keep] of cases) {
      const filtered = await followFeed(catalog, COUNTRY, null, query, 50);
      assert.deepEqual(filtered.changes.map((c) => c.id), whole.changes.filter(keep).map((c) => c.id), query);
      assert.equal(filtered.cursor, whole.cursor, `${query}: the cursor ends where the feed ends`);
    }
  });

  it('refuses a malformed cursor and an unknown type with 400, and reads any cursor as a global position', async () => {
    // A cursor is an event position: another country's cursor is a valid place in this feed too.
    const { cursor } = await followFeed(catalog, 'DE', null);
    const fromForeign = await catalog.get(`/v1/changes?country=${COUNTRY}&since=${cursor}`);
    assert.equal(fromForeign.status, 200);
    assert.ok(fromForeign.body.results.every((c: { id: string }) => c.id > `chg_${cursor}`));
    for (const query of ['since=nope', 'type=new,gone', 'provider=,']) {
      const r = await catalog.get(`/v1/changes?country=${COUNTRY}&${query}`);
      assert.equal(r.status, 400, query);
      assert.equal(r.body.code, 'invalid_parameter');
    }
    assert.equal((await catalog.get('/v1/changes')).status, 400);
    const empty = await catalog.get('/v1/changes?country=ZZ');
    assert.deepEqual([empty.status, empty.body.results, empty.body.has_more], [200, [], false]);
  });

  it('agrees with links?at= on every day of the crawl for a few hundred titles', async () => {
    const days = Array.from({ length: DAYS + 2 }, (_, d) => crawlDate(d - 1, catalog.startDate));
    let compared = 0;
    let intervals = 0;
    for (const id of ids.slice(0, 300)) {
      const history = await catalog.get(`/v1/media/${id}/history?country=${COUNTRY}`);
      assert.equal(history.status, 200);
      intervals += history.body.intervals.length;
      for (const day of days) {
        const links = await catalog.get(`/v1/media/${id}/links?country=${COUNTRY}&at=${day}`);
        const fromLinks = links.body.map((l: any) => `${identity(id, l, l.season_number ?? null, l.episode_number ?? null)} ${l.price_types} ${l.formats}`).sort();
        const fromHistory = history.body.intervals
          .filter((i: any) => i.from <= day && (i.to === null || day <= i.to))
          .map((i: any) => `${identity(id, i)} ${i.price_types} ${i.formats}`)
          .sort();
        assert.deepEqual(fromHistory, fromLinks, `${id} on ${day}`);
        compared += 1;
      }
    }
    assert.ok(intervals > 100, `${intervals} intervals`);
    assert.equal(compared, 300 * days.length);
    assert.equal((await catalog.get(`/v1/media/mv99999999/history?country=${COUNTRY}`)).status, 404);
  });

  it('writes changes.parquet with the rows /v1/changes answers for the release week, as DuckDB reads them', async () => {
    // The crawl starts on Monday 2026-11-02: every crawl day is in ISO week 2026-W45.
    const dir = join(catalog.dataDir, 'releases-test');
    const built = await buildRelease({
      readStore: catalog.adapters.readStore, releases: fsReleaseStore({ dir }), linkTokens: catalog.linkTokens,
      clock: catalog.clock, week: '2026-W45',
    });
    const file = join(dir, '2026-W45', 'country=US', 'changes.parquet');
    const duck = await openDuck();
    try {
      const { changes } = await followFeed(catalog, COUNTRY, null);
      const inWeek = changes.filter((c) => c.at >= '2026-11-02T00:00:00Z' && c.at < '2026-11-09T00:00:00Z');
      const [count] = await duck.rows(`SELECT count(*)::INTEGER AS n FROM read_parquet(${lit(file)}, hive_partitioning = false)`);
      assert.equal(count?.n, inWeek.length);
      assert.equal(built.rowCounts['country=US/changes.parquet'], inWeek.length);
      const rows = await duck.rows(`SELECT change_id, type, media_id, link_token, changed, before_formats, after_formats, after_available_to FROM read_parquet(${lit(file)}, hive_partitioning = false)`);
      assert.deepEqual(rows.map((r) => r.change_id), inWeek.map((c) => c.id));
      assert.deepEqual(rows, inWeek.map((c) => ({
        change_id: c.id, type: c.type, media_id: c.media_id, link_token: (c.after ?? c.before).link_token, changed: c.changed,
        before_formats: c.before?.formats ?? null, after_formats: c.after?.formats ?? null, after_available_to: c.after?.available_to ?? null,
      })));
      const empty = await buildRelease({
        readStore: catalog.adapters.readStore, releases: fsReleaseStore({ dir }), linkTokens: catalog.linkTokens, clock: catalog.clock, week: '2026-W44',
      });
      assert.equal(empty.rowCounts['country=US/changes.parquet'], 0);
    } finally {
      duck.close();
    }
  });

  it('rebuilds the same feed, ids and cursors included, when the changes projection is replayed from 0', async () => {
    const live = await followFeed(catalog, COUNTRY, null, '', 333);
    const { readStore, eventStore } = catalog.adapters;
    const rebuilt = `${defaultCollectionName(changesProjection)}_rtest`;
    await catchUp({ projection: changesProjection, eventStore, readStore, collection: rebuilt, batchSize: 777 });
    assert.deepEqual(await readStore.scan(rebuilt), await readStore.scan(defaultCollectionName(changesProjection)));
    await readStore.setAlias('changes', rebuilt);
    // The API re-reads aliases within a second.
    await new Promise((r) => setTimeout(r, 1100));
    const replayed = await followFeed(catalog, COUNTRY, null, '', 333);
    assert.deepEqual(replayed, live);
  });

  it('lists titles new on a provider and offers leaving soon, each confirmed by the links', async () => {
    const today = catalog.clock.now().toISOString().slice(0, 10);
    const fresh = await catalog.get(`/v1/new?country=${COUNTRY}&days=3&limit=200`);
    assert.equal(fresh.status, 200);
    assert.ok(fresh.body.total > 0, 'titles arrived during the crawl days');
    const dates = fresh.body.results.map((r: any) => r.date);
    assert.deepEqual(dates, [...dates].sort().reverse(), 'newest first');
    for (const item of fresh.body.results.slice(0, 40)) {
      assert.ok(item.date > crawlDate(-3, today) && item.date <= today, item.date);
      // Available on the provider that day: listed, and not only ahead of its first day.
      const on = async (at?: string) => (await catalog.get(`/v1/media/${item.id}/links?country=${COUNTRY}${at ? `&at=${at}` : ''}`)).body
        .some((l: any) => l.provider_id === item.provider_id && (l.available_from === null || l.available_from <= (at ?? today)));
      assert.equal(await on(), true, `${item.id} is on ${item.provider_id} now`);
      assert.equal(await on(item.date), true, `${item.id} is on ${item.provider_id} on ${item.date}`);
      assert.equal(await on(crawlDate(-1, item.date)), false, `${item.id} was not on ${item.provider_id} the day before ${item.date}`);
    }
    const movies = await catalog.get(`/v1/new?country=${COUNTRY}&days=3&kind=movie&limit=0`);
    assert.ok(movies.body.total < fresh.body.total && movies.body.total > 0);

    // Leaving: computed independently from the current links of every title.
    const horizon = crawlDate(30, today);
    const expected = new Set<string>();
    for (const [k, link] of await linksOfCountry(catalog, ids)) {
      if (link.available_to !== null && link.available_to >= today && link.available_to <= horizon) expected.add(`${k.split('|')[0]} ${link.provider_id} ${link.available_to}`);
    }
    const leaving = await catalog.get(`/v1/leaving?country=${COUNTRY}&limit=200`);
    assert.equal(leaving.status, 200);
    assert.ok(expected.size > 0, 'some offers announce their expiry');
    assert.equal(leaving.body.total, expected.size);
    const got = leaving.body.results.map((r: any) => `${r.id} ${r.provider_id} ${r.date}`);
    assert.deepEqual(new Set(got), expected);
    const soonest = leaving.body.results.map((r: any) => r.date);
    assert.deepEqual(soonest, [...soonest].sort());

    // Upcoming: the crawler lists some offers ahead of their first day; the same independent check.
    const coming = new Set<string>();
    for (const [k, link] of await linksOfCountry(catalog, ids)) {
      if (link.available_from !== null && link.available_from > today && link.available_from <= horizon) coming.add(`${k.split('|')[0]} ${link.provider_id} ${link.available_from}`);
    }
    const upcoming = await catalog.get(`/v1/upcoming?country=${COUNTRY}&limit=200`);
    assert.equal(upcoming.status, 200);
    assert.ok(coming.size > 0, 'some offers are listed ahead of their first day');
    assert.deepEqual(new Set(upcoming.body.results.map((r: any) => `${r.id} ${r.provider_id} ${r.date}`)), coming);
  });
});
