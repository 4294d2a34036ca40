/**
 * Releases are byte-identical for the same read models, whatever is done to make the builder
 * faster: every file of two small releases is compared (sha256, i.e. `cmp`) with the digests
 * of the same releases built before the builder was reworked (test/fixtures/snapshot/
 * identical.json). One release comes from the API fixture's events (changes, translations,
 * non-ASCII text; written in small chunks and row groups so their boundaries are exercised),
 * one from the bench's synthetic catalog at the default writer settings (several chunks).
 *
 * Each release is built on the calling thread and again on build threads (buildThreads.ts).
 * The files are encoded by the module of services/snapshot/parquetWriterWasm.ts (arrow-rs built
 * for speed); the fixture's release is built once more with parquet-wasm's encoder, whose
 * bytes the digests were taken from, so the two are shown to write the same files.
 *
 * A change that alters the bytes on purpose (a new schema version, another parquet-wasm)
 * regenerates the fixture with `UPDATE_IDENTICAL=1 npx mocha test/int/snapshotIdentical.int.test.ts`
 * and says why in its commit.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Clock, ReadStore } from '../../contracts/ports.ts';
import { lmdbEventStore } from '../../infra/lmdb/eventStore.ts';
import { lmdbReadStore, type LmdbReadStoreOptions } from '../../infra/lmdb/readStore.ts';
import { lmdbUnmapGroup } from '../../infra/lmdb/unmapGroup.ts';
import { fsReleaseStore } from '../../infra/releases/fsReleaseStore.ts';
import { inProcessSearchIndex } from '../../infra/search/inProcessSearch.ts';
import { writeSyntheticCatalog } from '../../bench/_snapshotCatalog.ts';
import { DEVELOPMENT_LINK_KEY_HEX, createLinkTokens } from '../../services/links/linkTokens.ts';
import { buildRelease } from '../../services/snapshot/build.ts';
import type { ParquetWriterOptions } from '../../services/snapshot/parquet.ts';
import { encoderName } from '../../services/snapshot/parquetEncoder.ts';
import { seedCatalog } from '../e2e/api.fixture.ts';

const FIXTURE = join(dirname(fileURLToPath(import.meta.url)), '../fixtures/snapshot/identical.json');
const clock: Clock = { now: () => new Date('2026-11-21T08:00:00Z') };
const key = Uint8Array.from(DEVELOPMENT_LINK_KEY_HEX.match(/../g) ?? [], (h) => parseInt(h, 16));

/** sha256 of every file under `dir`, by relative path, sorted. */
function digests(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string): void => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else out[relative(dir, p)] = createHash('sha256').update(readFileSync(p)).digest('hex');
    }
  };
  walk(dir);
  return out;
}

/**
 * The release of the read models in `dir`, built on this thread (`threads` 0) or on build
 * threads with stores of their own (buildThreads.ts).
 */
async function release(
  dir: string,
  readStore: ReadStore,
  week: string,
  threads: number,
  parquet?: ParquetWriterOptions,
  lmdb: Omit<LmdbReadStoreOptions, 'dataDir'> = {},
): Promise<Record<string, string>> {
  // A directory per way of building: a week published in one is not built again there.
  const releases = join(dir, `releases-${threads}${lmdb.unmapGroup ? '-unmapped' : ''}${parquet?.encoder ? `-${parquet.encoder}` : ''}`);
  const linkKeys = { keys: [{ version: 1, key }] };
  await buildRelease({
    readStore,
    releases: fsReleaseStore({ dir: releases }),
    linkTokens: createLinkTokens(linkKeys),
    clock,
    week,
    ...(parquet ? { parquet } : {}),
    ...(threads === 0 ? {} : { threads: { lmdb: { ...lmdb, dataDir: dir }, linkKeys, count: threads } }),
  });
  return digests(releases);
}

describe('releases built from the same read models', function () {
  this.timeout(120_000);
  const built: Record<string, Record<string, string>> = {};
  // The same releases built on two build threads, and on one.
  const threaded: Record<string, Record<string, string>> = {};
  const oneThread: Record<string, Record<string, string>> = {};
  const unmapped: Record<string, Record<string, string>> = {};
  // The same release encoded by parquet-wasm (ParquetWriterOptions.encoder), on two build threads.
  const parquetWasm: Record<string, Record<string, string>> = {};
  const dirs: string[] = [];
  const fresh = (prefix: string): string => {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    dirs.push(dir);
    return dir;
  };

  after(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('are byte for byte those built before the builder was reworked (the API fixture, small chunks)', async () => {
    const dir = fresh('marquee-identical-fixture-');
    const eventStore = lmdbEventStore({ dataDir: dir, clock });
    const readStore = lmdbReadStore({ dataDir: dir });
    try {
      await seedCatalog(eventStore, readStore, inProcessSearchIndex());
      // The week of the fixture's offer changes (changes.parquet has rows).
      built.fixture = await release(dir, readStore, '2026-W46', 0, { chunkRows: 3, maxRowGroupRows: 7 });
      threaded.fixture = await release(dir, readStore, '2026-W46', 2, { chunkRows: 3, maxRowGroupRows: 7 });
      oneThread.fixture = await release(dir, readStore, '2026-W46', 1, { chunkRows: 3, maxRowGroupRows: 7 });
      assert.equal(encoderName(), 'arrow-rs', 'services/snapshot/parquetWriter.wasm is in place');
      parquetWasm.fixture = await release(dir, readStore, '2026-W46', 2, { chunkRows: 3, maxRowGroupRows: 7, encoder: 'parquet-wasm' });
    } finally {
      await readStore.close();
      await eventStore.close();
    }
    compare('fixture');
  });

  it('are byte for byte those built before the builder was reworked (a synthetic catalog, default settings)', async () => {
    const dir = fresh('marquee-identical-synthetic-');
    const readStore = lmdbReadStore({ dataDir: dir });
    try {
      await writeSyntheticCatalog(readStore, { titles: 3000, countries: 2, providersPerCountry: 20 });
      built.synthetic = await release(dir, readStore, '2026-W47', 0);
      threaded.synthetic = await release(dir, readStore, '2026-W47', 2);
      // The threads' stores reopened together after every MB of the file they map (unmapGroup.ts).
      unmapped.synthetic = await release(dir, readStore, '2026-W47', 2, undefined, { unmapAfterMb: 1, unmapGroup: lmdbUnmapGroup() });
    } finally {
      await readStore.close();
    }
    compare('synthetic');
  });

  function compare(name: string): void {
    const got = built[name] as Record<string, string>;
    if (process.env.UPDATE_IDENTICAL === '1') {
      const existing = (() => {
        try {
          return JSON.parse(readFileSync(FIXTURE, 'utf8')) as Record<string, unknown>;
        } catch {
          return {};
        }
      })();
      writeFileSync(FIXTURE, `${JSON.stringify({ ...existing, [name]: got }, null, 2)}\n`);
      return;
    }
    const expected = (JSON.parse(readFileSync(FIXTURE, 'utf8')) as Record<string, Record<string, string>>)[name];
    assert.ok(expected, `no digests for ${name} in ${FIXTURE}`);
    assert.ok(Object.keys(got).length > 10, `only ${Object.keys(got).length} files built`);
    assert.deepEqual(got, expected);
    assert.deepEqual(threaded[name], expected, 'built on two build threads');
    if (oneThread[name] !== undefined) assert.deepEqual(oneThread[name], expected, 'built on one build thread');
    if (unmapped[name] !== undefined) assert.deepEqual(unmapped[name], expected, 'built on build threads whose stores unmap together');
    if (parquetWasm[name] !== undefined) assert.deepEqual(parquetWasm[name], expected, "encoded by parquet-wasm's encoder");
  }
});
