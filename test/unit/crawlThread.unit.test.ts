/**
 * The sample load's crawl thread (services/cli/crawlThread.ts) must hand the inbox the very
 * records the crawler publishing on the main thread would: same bytes, same order, every day.
 * Its records are encoded unchecked, so this also proves the inbox's checks accept each one.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeObservation, encodeObservation, validateDecodedObservation } from '../../contracts/codec.ts';
import { lmdbInbox } from '../../infra/lmdb/inbox.ts';
import { generateCrawl, type CrawlOptions } from '../../services/crawler/catalog.ts';
import { publishWhileIngesting, startCrawlThread } from '../../services/cli/crawlThread.ts';
import { CHUNK, FIRST_CHUNK } from '../../services/cli/crawlWorkerMain.ts';

// Enough titles for day 0 to span several chunks.
const OPTIONS: Omit<CrawlOptions, 'day'> = { seed: 7, titles: 1500, countries: ['US', 'DE', 'JP'], startDate: '2026-03-02' };

describe('sample crawl thread', function () {
  this.timeout(120_000);

  it('says it is ready once its modules are loaded, before anything is asked of it', async () => {
    const thread = startCrawlThread(OPTIONS);
    try {
      // Resolves with no day prepared: what a bench waits for before it starts its clock.
      await thread.ready;
      let chunks = 0;
      for await (const records of thread.take(0)) chunks += records.length > 0 ? 1 : 0;
      assert.ok(chunks > 0);
    } finally {
      await thread.stop();
    }
  });

  it('yields, day after day, the bytes encodeObservation gives for the crawl, in order', async () => {
    const thread = startCrawlThread(OPTIONS);
    try {
      thread.prepare(0);
      for (const day of [0, 1]) {
        const expected = [...generateCrawl({ ...OPTIONS, day })].map((o) => encodeObservation(o));
        const got: Uint8Array[] = [];
        let chunks = 0;
        for await (const records of thread.take(day)) {
          chunks += 1;
          got.push(...records);
        }
        // Day 0 is the full catalog, several chunks; a later day carries only the churn.
        if (day === 0) assert.ok(expected.length > 2 * CHUNK, `day 0 spans several chunks (${expected.length} records)`);
        // A short first chunk (ingest waits for it), full chunks, then the last one (whatever is
        // left, possibly nothing).
        const full = expected.length < FIRST_CHUNK ? 0 : 1 + Math.floor((expected.length - FIRST_CHUNK) / CHUNK);
        assert.equal(chunks, full + 1);
        assert.equal(got.length, expected.length);
        got.forEach((bytes, i) => assert.ok(Buffer.from(bytes).equals(expected[i] as Buffer), `day ${day} record ${i} differs`));
        for (const bytes of got) assert.equal(validateDecodedObservation(decodeObservation(bytes)), null);
      }
    } finally {
      await thread.stop();
    }
  });

  it('appends a day to the inbox while a consumer takes it, every record once', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'marquee-crawl-thread-'));
    const inbox = lmdbInbox({ dataDir, pollMs: 5 });
    const thread = startCrawlThread(OPTIONS);
    try {
      const seen: string[] = [];
      const published = await publishWhileIngesting(inbox, thread.take(0), async () => {
        await inbox.consume(async (batch) => {
          for (const r of batch) seen.push(r.observation.observationId);
        }, { untilIdle: true, batchSize: 700 }).done;
      });
      const expected = [...generateCrawl({ ...OPTIONS, day: 0 })].map((o) => o.observationId);
      assert.equal(published, expected.length);
      assert.deepEqual(seen, expected);
      assert.deepEqual(await inbox.listDeadLetters(), []);
    } finally {
      await thread.stop();
      await inbox.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
