import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RecordedEvent } from '../../contracts/events.ts';
import type { Observation } from '../../contracts/observations.ts';
import type { EventStore } from '../../contracts/ports.ts';
import { lmdbEventStore } from '../../infra/lmdb/eventStore.ts';
import { lmdbInbox } from '../../infra/lmdb/inbox.ts';
import { createIngest, type Ingest } from '../../services/ingest/ingest.ts';
import { encodeUnchecked } from '../fixtures/avro/unchecked.ts';
import {
  availabilityObserved,
  mediaObserved,
  offer,
  providersObserved,
  provider,
  T0,
  T1,
  translationObserved,
} from '../unit/ingestFixtures.ts';

/** Every event of the store, oldest first. */
async function allEvents(store: EventStore): Promise<RecordedEvent[]> {
  const out: RecordedEvent[] = [];
  for (;;) {
    const page = await store.readAll({ after: out.at(-1)?.position ?? 0, limit: 1000 });
    if (page.length === 0) return out;
    out.push(...page);
  }
}

/** A stable description of what was decided, without store positions or times. */
function summary(events: RecordedEvent[]): string[] {
  return events
    .map((e) => `${e.streamId}#${e.revision} ${e.type} ${e.metadata.observationId} ${JSON.stringify(e.data)}`)
    .sort();
}

/** A day of crawling: titles, their offers and translations, each re-crawled with changes. */
function crawl(prefix: string, titles: number, rounds: number): Observation[] {
  const out: Observation[] = [];
  for (let round = 0; round < rounds; round += 1) {
    const at = new Date(Date.parse(T0) + round * 60_000).toISOString();
    for (let t = 0; t < titles; t += 1) {
      const sourceId = 1000 + t;
      // Only every other round changes anything, so re-crawls are skipped as unchanged too.
      const version = Math.floor(round / 2);
      out.push(mediaObserved(`${prefix}-m-${round}-${t}`, at, { sourceId, title: `Title ${t}`, voteCount: 100 + version }));
      out.push(translationObserved(`${prefix}-t-${round}-${t}`, at, { sourceId, title: `Titel ${t} v${version}` }));
      const offers = [offer('hulu', { webUrl: `https://hulu.example/${sourceId}` })];
      if (version % 2 === 1) offers.push(offer('max', { webUrl: `https://max.example/${sourceId}` }));
      out.push(availabilityObserved(`${prefix}-a-${round}-${t}`, at, offers, 'us', sourceId));
    }
  }
  return out;
}

describe('ingest on the embedded LMDB event store and inbox', () => {
  const dirs: string[] = [];
  const closers: Array<() => Promise<void>> = [];

  function open(name: string) {
    const dataDir = mkdtempSync(join(tmpdir(), `marquee-ingest-${name}-`));
    dirs.push(dataDir);
    const eventStore = lmdbEventStore({ dataDir });
    const bus = lmdbInbox({ dataDir, pollMs: 5 });
    closers.push(() => bus.close(), () => eventStore.close());
    return { dataDir, eventStore, bus };
  }

  afterEach(async () => {
    for (const close of closers.splice(0)) await close();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  async function drain(ingest: Ingest, group = 'ingest', batchSize = 50): Promise<void> {
    await ingest.run({ group, batchSize, untilIdle: true }).done;
  }

  it('appends the events of observations delivered twice only once', async () => {
    const { eventStore, bus } = open('dup');
    const observations = crawl('dup', 3, 2);
    await bus.publish(observations);
    await bus.publish(observations);
    const ingest = createIngest({ eventStore, bus });
    await drain(ingest);

    const events = await allEvents(eventStore);
    // Per title: MediaRegistered, MediaTranslationChanged, OfferAdded (round 1 changes nothing).
    assert.equal(events.length, 9);
    assert.deepEqual(ingest.totals(), { observations: 36, appended: 9, skipped: 27, rejected: 0, conflicts: 0, takeovers: 0 });

    // A fresh instance (cold cache) replaying everything appends nothing either.
    await drain(createIngest({ eventStore, bus }), 'replay');
    assert.equal(await eventStore.headPosition(), 9);
  });

  it('dead-letters an invalid observation with its reason and appends the valid ones around it', async () => {
    const { eventStore, bus } = open('dead');
    await bus.publish([mediaObserved('v1', T0)]);
    // publish refuses it; a producer we do not control may still send it.
    await bus.publishRaw([encodeUnchecked(mediaObserved('bad', T0, { sourceId: 604, title: '   ' }))]);
    await bus.publish([providersObserved('v2', T0, [provider('hulu')], 'us'), translationObserved('orphan', T0, { sourceId: 605 })]);
    const ingest = createIngest({ eventStore, bus });
    await drain(ingest);

    const deadLetters = await bus.listDeadLetters();
    assert.deepEqual(
      deadLetters.map((d) => [d.source, d.reason, (d.payload as Observation).observationId]),
      [
        ['inbox:2', 'MediaObserved.data.title: must not be empty', 'bad'],
        ['inbox:4', 'media not registered: a translation needs a MediaObserved first', 'orphan'],
      ],
    );
    assert.deepEqual(
      (await allEvents(eventStore)).map((e) => `${e.streamId} ${e.type}`),
      ['media-mv00000603 MediaRegistered', 'providers-US ProviderAdded'],
    );
    // The bus refused the invalid one (it never reached ingest); ingest refused the orphan.
    assert.equal(ingest.totals().rejected, 1);
  });

  it('appends nothing for an unchanged re-crawl', async () => {
    const { eventStore, bus } = open('recrawl');
    const first = [
      mediaObserved('r1', T0),
      availabilityObserved('r2', T0, [offer('hulu'), offer('netflix')], 'de'),
      providersObserved('r3', T0, [provider('hulu'), provider('netflix')], 'DE'),
    ];
    await bus.publish(first);
    await drain(createIngest({ eventStore, bus }));
    const head = await eventStore.headPosition();
    assert.equal(head, 5);

    // The same facts seen a day later under new observation ids, by a cold instance.
    await bus.publish([
      mediaObserved('s1', T1),
      availabilityObserved('s2', T1, [offer('netflix'), offer('hulu')], 'DE'),
      providersObserved('s3', T1, [provider('netflix'), provider('hulu')], 'de'),
    ]);
    const again = createIngest({ eventStore, bus });
    await drain(again);
    assert.equal(await eventStore.headPosition(), head);
    assert.deepEqual(again.totals(), { observations: 3, appended: 0, skipped: 3, rejected: 0, conflicts: 0, takeovers: 0 });
  });

  it('handles a conflict with another writer by re-reading the stream', async () => {
    const { dataDir, eventStore } = open('conflict');
    const other = lmdbEventStore({ dataDir });
    closers.unshift(() => other.close());
    const noBus = lmdbInbox({ dataDir });
    closers.unshift(() => noBus.close());
    const a = createIngest({ eventStore, bus: noBus });
    const b = createIngest({ eventStore: other, bus: noBus });
    const record = (o: Observation) => [{ source: 'test', observation: o }];

    await a.handleBatch(record(mediaObserved('c1', T0)));
    await b.handleBatch(record(mediaObserved('c2', T1, { runtime: 140 })));
    const stats = await a.handleBatch(record(mediaObserved('c2', T1, { runtime: 140 })));
    assert.deepEqual(stats, { observations: 1, appended: 0, skipped: 1, rejected: 0, conflicts: 1, takeovers: 0 });
    assert.deepEqual((await allEvents(eventStore)).map((e) => e.metadata.observationId), ['c1', 'c2']);
  });

  it('lets two concurrent ingest instances on the same streams append each change exactly once', async () => {
    const observations = crawl('conc', 4, 8);

    // The reference: one instance alone.
    const alone = open('alone');
    await alone.bus.publish(observations);
    await drain(createIngest({ eventStore: alone.eventStore, bus: alone.bus }), 'ingest', 7);
    const expected = summary(await allEvents(alone.eventStore));

    // Two instances, each with its own store handle and consumer group, so both handle every
    // observation, in small batches, at the same time.
    const shared = open('concurrent');
    const secondStore = lmdbEventStore({ dataDir: shared.dataDir });
    closers.unshift(() => secondStore.close());
    await shared.bus.publish(observations);
    const a = createIngest({ eventStore: shared.eventStore, bus: shared.bus });
    const b = createIngest({ eventStore: secondStore, bus: shared.bus });
    await Promise.all([drain(a, 'group-a', 7), drain(b, 'group-b', 5)]);

    const events = await allEvents(shared.eventStore);
    assert.deepEqual(summary(events), expected);
    const appended = a.totals().appended + b.totals().appended;
    assert.equal(appended, events.length);
    assert.equal(a.totals().observations + b.totals().observations, 2 * observations.length);
    // The two really raced on the same streams (otherwise this test would prove nothing).
    assert.ok(a.totals().conflicts + b.totals().conflicts > 0, 'expected append conflicts between the instances');
  });
});
