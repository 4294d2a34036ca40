import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ReleaseStore } from '../../contracts/ports.ts';
import { fsReleaseStore } from '../../infra/releases/fsReleaseStore.ts';

const codeOf = (err: unknown): string | undefined => (err as { code?: string }).code;

async function text(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks).toString('utf8');
}

async function* pieces(...parts: string[]): AsyncGenerator<Uint8Array> {
  for (const p of parts) yield Buffer.from(p);
}

/** What only the filesystem adapter has to prove; the port's behaviour is test/ports/releaseStore.suite.ts. */
describe('the filesystem release store', () => {
  let dir: string;
  let store: ReleaseStore;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'marquee-releases-'));
    store = fsReleaseStore({ dir });
  });

  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  async function publish(version: string, files: Record<string, string> = { 'metadata.tar.gz': 'bundle', 'country=US/links.parquet': 'links-bytes' }) {
    const writer = await store.begin(version);
    for (const [path, content] of Object.entries(files)) await writer.write(path, pieces(content));
    return writer.publish({ publishedAt: '2026-11-21T08:00:00Z', countries: ['US'], schemaVersion: 1 });
  }

  it('leaves nothing behind when a release is aborted', async () => {
    const writer = await store.begin('2026-W47');
    await writer.write('metadata.tar.gz', Buffer.from('x'));
    await writer.abort();
    assert.deepEqual(await store.list(), []);
    assert.deepEqual(readdirSync(join(dir, '.staging')), []);
  });

  it('removes the staging of a build of the same week whose process is gone, and keeps a live one', async () => {
    const { spawnSync } = await import('node:child_process');
    const dead = spawnSync(process.execPath, ['-e', '0']).pid as number;
    const staging = join(dir, '.staging');
    const orphan = join(staging, `2026-W47.${dead}.0123456789ab`);
    const live = join(staging, `2026-W47.${process.ppid}.0123456789ab`);
    const otherWeek = join(staging, `2026-W46.${dead}.0123456789ab`);
    for (const d of [orphan, live, otherWeek]) {
      mkdirSync(join(d, 'country=US'), { recursive: true });
      writeFileSync(join(d, 'country=US/links.parquet'), 'half a file');
    }
    const manifest = await publish('2026-W47');
    assert.equal(manifest.files.length, 2);
    assert.equal(existsSync(orphan), false, 'the killed build of the same week is removed');
    assert.equal(existsSync(live), true, 'a build by a live process is left alone');
    assert.equal(existsSync(otherWeek), true, 'another week is not this build\'s to clean');
  });

  it('refuses to open or publish a week that is already published', async () => {
    await publish('2026-W47');
    await assert.rejects(store.begin('2026-W47'), (err) => codeOf(err) === 'forbidden');
    // Two builds racing: the second publish loses and its files are removed.
    const a = await store.begin('2026-W48');
    const b = await store.begin('2026-W48');
    await a.write('metadata.tar.gz', Buffer.from('a'));
    await b.write('metadata.tar.gz', Buffer.from('b'));
    await a.publish({ publishedAt: '2026-11-28T08:00:00Z', countries: [] });
    await assert.rejects(b.publish({ publishedAt: '2026-11-28T08:00:01Z', countries: [] }), (err) => codeOf(err) === 'forbidden');
    assert.equal(await text(await store.read('2026-W48', 'metadata.tar.gz')), 'a');
    assert.deepEqual(readdirSync(join(dir, '.staging')), []);
  });

  it('reads only exact manifest entries, never through `..`, absolute paths or symlinks', async () => {
    await publish('2026-W47');
    writeFileSync(join(dir, 'secret'), 'secret');
    for (const [version, path] of [
      ['2026-W47', 'manifest.json'],
      ['2026-W47', '../secret'],
      ['2026-W47', 'country=US/../../secret'],
      ['2026-W47', join(dir, 'secret')],
      ['2026-W47/..', 'secret'],
      ['2026-W46', 'metadata.tar.gz'],
      ['2026-W47', 'country=US/other.parquet'],
    ] as const) {
      await assert.rejects(store.read(version, path), (err) => codeOf(err) === 'not_found', `${version} ${path}`);
    }
    // A manifest entry swapped for a symlink (same size, so only the link check stops it).
    writeFileSync(join(dir, 'same-size'), 'SSSSSSSSSSS');
    const entry = join(dir, '2026-W47', 'country=US', 'links.parquet');
    rmSync(entry);
    symlinkSync(join(dir, 'same-size'), entry);
    await assert.rejects(store.read('2026-W47', 'country=US/links.parquet'), (err) => codeOf(err) === 'not_found');
    // A directory on the way swapped for a symlink to a directory outside.
    const outsideDir = mkdtempSync(join(tmpdir(), 'marquee-outside-'));
    try {
      writeFileSync(join(outsideDir, 'links.parquet'), 'SSSSSSSSSSS');
      renameSync(join(dir, '2026-W47', 'country=US'), join(dir, 'moved'));
      symlinkSync(outsideDir, join(dir, '2026-W47', 'country=US'));
      await assert.rejects(store.read('2026-W47', 'country=US/links.parquet'), (err) => codeOf(err) === 'not_found');
    } finally {
      rmSync(outsideDir, { recursive: true, force: true });
    }
  });

});
