/**
 * `marquee replay`: rebuilding a read model from position 0 gives exactly the documents the
 * live projection built, and switches the alias; an analyst's own projection module runs over
 * the whole history into an NDJSON file. Also `status` and `dead-letters` speak to a person.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EventType } from '../../contracts/events.ts';
import type { StoredDocument } from '../../contracts/ports.ts';
import { closeLmdb } from '../../infra/lmdb/env.ts';
import { lmdbEventStore } from '../../infra/lmdb/eventStore.ts';
import { lmdbInbox } from '../../infra/lmdb/inbox.ts';
import { lmdbReadStore } from '../../infra/lmdb/readStore.ts';
import type { Churn } from '../fixtures/offerChurn.ts';
import { marquee } from './process.ts';
import { defaultCollectionName, linksProjection, rankingsProjection } from '../../projections/index.ts';

async function scanAll(dataDir: string, collection: string): Promise<StoredDocument[]> {
  const store = lmdbReadStore({ dataDir });
  try {
    return await store.scan(collection);
  } finally {
    await store.close();
  }
}

describe('marquee replay (e2e)', function () {
  this.timeout(180_000);
  let dataDir: string;
  let env: NodeJS.ProcessEnv;

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'marquee-replay-'));
    env = { ...process.env, DATA_DIR: dataDir, LOG_FORMAT: 'json', REPLAY_DROP_GRACE_MS: '0', KAFKA_BROKERS: '', MONGODB_URL: '', OPENSEARCH_URL: '', EVENTSTORE_URL: '', RELEASES_S3_URL: '' };
    // A crawler's mistake among good observations: a translation of a title never observed.
    const inbox = lmdbInbox({ dataDir });
    await inbox.publish([
      {
        type: 'MediaTranslationObserved',
        observationId: 'orphan-translation',
        observedAt: '2026-11-01T05:00:00Z',
        data: { contentType: 'movie', sourceId: 99_999_999, language: 'de', title: 'Niemandes Film', overview: null, tagline: null, poster: null, backdrop: null },
      },
    ]);
    await inbox.close();
    for (const day of ['0', '1']) {
      const crawled = await marquee(['crawl', '--titles', '400', '--countries', 'US,DE,FR', '--day', day, '--start-date', '2026-11-01'], env);
      assert.equal(crawled.code, 0, crawled.stderr);
    }
    const ranked = await marquee(['rank', '--date', '2026-11-02'], env);
    assert.equal(ranked.code, 0, ranked.stderr);
  });

  after(async () => {
    await closeLmdb(dataDir);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('rebuilds a read model beside the live one with identical documents, then switches to it', async () => {
    const linksCollection = defaultCollectionName(linksProjection);
    const before = await scanAll(dataDir, linksCollection);
    assert.ok(before.length > 100, `${before.length} links documents`);
    const replayed = await marquee(['replay', 'links', '--keep-old'], env);
    assert.equal(replayed.code, 0, replayed.stderr);
    const live = new RegExp(`into (${linksCollection}_r[0-9a-z]+); now live`).exec(replayed.stdout)?.[1];
    assert.ok(live, replayed.stdout);
    const store = lmdbReadStore({ dataDir });
    assert.equal(await store.getAlias('links'), live);
    await store.close();
    const after = await scanAll(dataDir, live);
    assert.deepEqual(after, before);
  });

  it('drops the previous collection after the switch unless asked to keep it', async () => {
    const store = lmdbReadStore({ dataDir });
    const previous = await store.getAlias('rankings') ?? defaultCollectionName(rankingsProjection);
    const count = await store.count(previous);
    await store.close();
    assert.ok(count > 0);
    const replayed = await marquee(['replay', 'rankings'], env);
    assert.equal(replayed.code, 0, replayed.stderr);
    assert.match(replayed.stdout, new RegExp(`dropped the previous collection ${previous}`));
    assert.equal((await scanAll(dataDir, previous)).length, 0);
  });

  it('leaves one collection of a read model when two replays of it run at once', async () => {
    const [first, second] = await Promise.all([marquee(['replay', 'media'], env), marquee(['replay', 'media'], env)]);
    assert.equal(first.code, 0, first.stderr);
    assert.equal(second.code, 0, second.stderr);
    const store = lmdbReadStore({ dataDir });
    const live = await store.getAlias('media');
    // A dropped collection may leave its name behind: what counts is a copy still holding documents.
    const nonEmpty: string[] = [];
    for (const c of await store.listCollections()) if (/^media_v\d+(_r[0-9a-z]+)?$/.test(c) && (await store.count(c)) > 0) nonEmpty.push(c);
    await store.close();
    assert.ok(live, 'media has an alias');
    assert.deepEqual(nonEmpty, [live], `collections of media left: ${nonEmpty.join(', ')}`);
  });

  it("runs an analyst's projection module over the whole history into NDJSON", async () => {
    const out = join(dataDir, 'churn.ndjson');
    const replayed = await marquee(['replay', '--module', 'test/fixtures/offerChurn.ts', '--out', out], env);
    assert.equal(replayed.code, 0, replayed.stderr);
    const lines = readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { id: string; position: number; document: Churn });

    // The same counts, folded independently from the raw event log.
    const expected = new Map<string, Churn>();
    const events = lmdbEventStore({ dataDir });
    let afterPosition = 0;
    for (;;) {
      const batch = await events.readAll({ after: afterPosition, limit: 5000 });
      const last = batch.at(-1);
      if (!last) break;
      afterPosition = last.position;
      for (const e of batch) {
        if (e.type !== 'OfferAdded' && e.type !== 'OfferRemoved') continue;
        const id = `${e.data.country}:${e.data.offer.providerId}`;
        const churn = expected.get(id) ?? { provider: e.data.offer.providerId, country: e.data.country, added: 0, removed: 0 };
        if (e.type === 'OfferAdded') churn.added += 1;
        else churn.removed += 1;
        expected.set(id, churn);
      }
    }
    await events.close();
    assert.equal(lines.length, expected.size);
    for (const line of lines) assert.deepEqual(line.document, expected.get(line.id), line.id);
    assert.ok(lines.some((l) => l.document.removed > 0), 'day 1 removed offers');
  });

  it('says in one line that the output could not be written (a full disk), exit 1', async () => {
    // /dev/full answers every write with ENOSPC, as a full disk does.
    const replayed = await marquee(['replay', '--module', 'test/fixtures/offerChurn.ts', '--out', '/dev/full'], env);
    assert.equal(replayed.code, 1, replayed.stderr);
    assert.match(replayed.stderr, /^marquee: replay: writing \/dev\/full failed: ENOSPC: no space left on device, write$/m);
  });

  it('refuses a module that is not a projection, saying what is missing', async () => {
    const bad = await marquee(['replay', '--module', 'test/fixtures/countingProjection.ts', '--out', join(dataDir, 'x.ndjson')], env);
    // That fixture exports its projection by another name, with no default export.
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /is not a projection: no default export/);
    const misspelt = join(dataDir, 'misspelt.mjs');
    writeFileSync(misspelt, "export default { name: 'm', version: 1, canHandle: ['OfferAdded', 'OfferAdd'], documentId: (e) => e.streamId, evolve: (d) => d };\n");
    const typo = await marquee(['replay', '--module', misspelt, '--out', join(dataDir, 'm.ndjson')], env);
    assert.equal(typo.code, 1);
    assert.match(typo.stderr, /^marquee: \S+misspelt\.mjs is not a projection: `canHandle` names "OfferAdd", which no event is; the event types are MediaRegistered, .*OfferAdded/m);
  });

  it("names the event an analyst's projection failed on, and the line of the module", async () => {
    const module = (name: string, body: string): string => {
      const file = join(dataDir, `${name}.mjs`);
      writeFileSync(file, `export default { name: '${name}', version: 1, canHandle: ['OfferAdded'],\n${body} };\n`);
      return file;
    };
    for (const [file, message] of [
      [module('throws', "documentId: (e) => e.streamId,\nevolve(doc, e) { throw new Error('no price for ' + e.streamId); },"),
        /^marquee: replay: the projection's evolve threw on OfferAdded at position \d+ \(stream availability-\S+, revision \d+\): no price for availability-\S+ \(at Object\.evolve \(\S+throws\.mjs:3:\d+\)\)$/m],
      [module('numbers', 'documentId: (e) => e.position,\nevolve: (doc) => doc,'),
        /^marquee: replay: the projection's documentId returned \d+ \(number\), not a string or null, on OfferAdded at position \d+/m],
      [module('nothing', 'documentId: (e) => e.streamId,\nevolve() {},'),
        /^marquee: replay: the projection's evolve returned undefined \(return the document, or null to delete it\) on OfferAdded/m],
      // Once parked, every document of the replay, which took a hundred times as long and wrote none.
      [module('circular', 'documentId: (e) => e.streamId,\nevolve() { const d = {}; d.self = d; return d; },'),
        /^marquee: replay: the projection's document availability-\S+, folded up to OfferAdded at position \d+, cannot be stored: .*Maximum call stack size exceeded$/m],
      // Written halfway, then "writing failed" and the partial file left behind.
      [module('bigint', 'documentId: (e) => e.streamId,\nevolve: () => ({ count: 1n }),'),
        /^marquee: replay: the projection's document availability-\S+ \(position \d+\) cannot be written as JSON: Do not know how to serialize a BigInt$/m],
    ] as const) {
      const out = join(dataDir, 'failed.ndjson');
      const run = await marquee(['replay', '--module', file, '--out', out], env);
      assert.equal(run.code, 1, run.stdout);
      assert.match(run.stderr, message);
      assert.doesNotMatch(run.stderr, /runner\.ts/, 'no stack through the runner');
      assert.equal(existsSync(out), false, 'no output written');
    }
  });

  it('reports positions, lag and events per type with `status`', async () => {
    const status = await marquee(['status'], env);
    assert.equal(status.code, 0, status.stderr);
    assert.match(status.stdout, /event store head position: \d+/);
    for (const name of ['media', 'links', 'search', 'rankings', 'trending']) assert.match(status.stdout, new RegExp(`^${name}\\s`, 'm'));
    const types: EventType[] = ['MediaRegistered', 'OfferAdded', 'RankingComputed'];
    for (const type of types) assert.match(status.stdout, new RegExp(`${type}\\s+\\d+`));
    assert.match(status.stdout, /\s0\s+\d+\n/, 'a caught-up projection has no lag');
    // Published just now: everything is kept, from the first sequence, dated by its publishing.
    assert.match(status.stdout, /^local inbox: [1-9]\d* observations kept \(sequences 1-[1-9]\d*, the oldest published \d{4}-\d\d-\d\dT[\d:.]+Z\); handled ones go after 168 h/m);
  });

  it('lists the observation ingest refused, with its reason, and ingested the rest', async () => {
    const letters = await marquee(['dead-letters'], env);
    assert.equal(letters.code, 0, letters.stderr);
    assert.match(letters.stdout, /media not registered/);
    assert.match(letters.stdout, /orphan-translation/);
    const status = await marquee(['status'], env);
    assert.match(status.stdout, /dead letters: 1\b/);
  });
});
