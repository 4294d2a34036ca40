/**
 * The ReleaseStore behaviour suite, run on every adapter (the filesystem and S3-compatible
 * object storage): publication all at once with the manifest last, immutability, the newest N
 * kept, files listed with size and sha256, ranged reads, staging never visible, and two
 * builders of the same week racing.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import type { ReleaseStore } from '../../contracts/ports.ts';

export interface ReleaseStoreFixture {
  store: ReleaseStore;
  cleanup(): Promise<void>;
}

const codeOf = (err: unknown): string | undefined => (err as { code?: string }).code;
const sha256 = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');

export async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}

async function* pieces(...parts: Array<string | Buffer>): AsyncGenerator<Uint8Array> {
  for (const p of parts) yield Buffer.from(p);
}

export function releaseStoreSuite(name: string, open: () => Promise<ReleaseStoreFixture>): void {
  describe(`ReleaseStore behaviour: ${name}`, function () {
    this.timeout(60_000);
    let fixture: ReleaseStoreFixture;
    let store: ReleaseStore;

    beforeEach(async () => {
      fixture = await open();
      store = fixture.store;
    });
    afterEach(async () => {
      await fixture.cleanup();
    });

    async function publish(version: string, files: Record<string, string> = { 'metadata.tar.gz': 'bundle', 'country=US/links.parquet': 'links-bytes' }) {
      const writer = await store.begin(version);
      for (const [path, content] of Object.entries(files)) await writer.write(path, pieces(content));
      return writer.publish({ publishedAt: '2026-11-21T08:00:00Z', countries: ['US'], schemaVersion: 1 });
    }

    it('shows nothing of a release until it is published, then all of it with its manifest', async () => {
      const writer = await store.begin('2026-W47');
      const file = await writer.write('country=US/links.parquet', pieces('links-', 'bytes'));
      assert.deepEqual(file, { path: 'country=US/links.parquet', sizeBytes: 11, sha256: sha256('links-bytes') });
      const bundle = await writer.write('metadata.tar.gz', Buffer.from('bundle'));
      // Staging is invisible to every reader, whatever it asks.
      assert.equal(await store.latest(), null);
      assert.deepEqual(await store.list(), []);
      assert.equal(await store.get('2026-W47'), null);
      await assert.rejects(store.read('2026-W47', 'country=US/links.parquet'), (err) => codeOf(err) === 'not_found');
      const manifest = await writer.publish({ publishedAt: '2026-11-21T08:00:00Z', countries: ['US', 'DE'], schemaVersion: 3 });
      assert.deepEqual(manifest, {
        version: '2026-W47',
        publishedAt: '2026-11-21T08:00:00Z',
        countries: ['DE', 'US'],
        files: [file, bundle],
        schemaVersion: 3,
      });
      assert.deepEqual(await store.latest(), manifest);
      assert.deepEqual(await store.get('2026-W47'), manifest);
      assert.deepEqual(await store.list(), [manifest]);
      assert.equal(await store.get('2026-W46'), null);
      assert.equal((await readAll(await store.read('2026-W47', 'metadata.tar.gz'))).toString(), 'bundle');
    });

    it('lists each file with the size and sha256 of the bytes it serves, a large one included', async () => {
      // Larger than one upload part of the S3 adapter (8 MiB), written in uneven chunks.
      const big = Buffer.alloc(9 * 1024 * 1024 + 17);
      for (let i = 0; i < big.length; i += 1) big[i] = (i * 31 + (i >> 11)) & 0xff;
      const chunks: Buffer[] = [];
      for (let i = 0; i < big.length; i += 700_001) chunks.push(big.subarray(i, i + 700_001));
      const writer = await store.begin('2026-W40');
      const entry = await writer.write('country=DE/links.parquet', pieces(...chunks));
      const empty = await writer.write('country=DE/rankings.parquet', pieces());
      const manifest = await writer.publish({ publishedAt: '2026-10-03T08:00:00Z', countries: ['DE'] });
      assert.deepEqual(entry, { path: 'country=DE/links.parquet', sizeBytes: big.length, sha256: sha256(big) });
      assert.deepEqual(empty, { path: 'country=DE/rankings.parquet', sizeBytes: 0, sha256: sha256('') });
      assert.deepEqual(manifest.files, [entry, empty]);
      const served = await readAll(await store.read('2026-W40', 'country=DE/links.parquet'));
      assert.equal(served.length, big.length);
      assert.equal(sha256(served), entry.sha256);
      const tail = await readAll(await store.read('2026-W40', 'country=DE/links.parquet', { start: big.length - 1000, end: big.length - 1 }));
      assert.ok(tail.equals(big.subarray(big.length - 1000)));
    });

    it('reads whole files and inclusive byte ranges, refusing ranges outside the file', async () => {
      await publish('2026-W47');
      assert.equal((await readAll(await store.read('2026-W47', 'country=US/links.parquet'))).toString(), 'links-bytes');
      assert.equal((await readAll(await store.read('2026-W47', 'country=US/links.parquet', { start: 6, end: 10 }))).toString(), 'bytes');
      assert.equal((await readAll(await store.read('2026-W47', 'country=US/links.parquet', { start: 0, end: 0 }))).toString(), 'l');
      for (const range of [{ start: 5, end: 11 }, { start: 3, end: 2 }, { start: -1, end: 2 }]) {
        await assert.rejects(store.read('2026-W47', 'country=US/links.parquet', range), (err) => codeOf(err) === 'invalid_parameter', JSON.stringify(range));
      }
    });

    it('reads only exact manifest entries', async () => {
      await publish('2026-W47');
      for (const [version, path] of [
        ['2026-W47', 'manifest.json'],
        ['2026-W47', '../2026-W47/metadata.tar.gz'],
        ['2026-W47', 'country=US/../metadata.tar.gz'],
        ['2026-W47', '/metadata.tar.gz'],
        ['2026-W47/..', 'metadata.tar.gz'],
        ['2026-W46', 'metadata.tar.gz'],
        ['2026-W47', 'country=US/other.parquet'],
        ['2026-W47', 'country=US'],
      ] as const) {
        await assert.rejects(store.read(version, path), (err) => codeOf(err) === 'not_found', `${version} ${path}`);
      }
    });

    it('is immutable: a published week cannot be opened or published again', async () => {
      const first = await publish('2026-W47');
      await assert.rejects(store.begin('2026-W47'), (err) => codeOf(err) === 'forbidden');
      assert.deepEqual(await store.get('2026-W47'), first);
      await assert.rejects(store.begin('not-a-week'), (err) => codeOf(err) === 'invalid_parameter');
    });

    it('lets exactly one of two concurrent builders of the same week publish', async () => {
      const a = await store.begin('2026-W48');
      const b = await store.begin('2026-W48');
      await Promise.all([a.write('metadata.tar.gz', Buffer.from('from a')), b.write('metadata.tar.gz', Buffer.from('from b, longer'))]);
      await a.write('country=US/links.parquet', Buffer.from('a links'));
      const outcomes = await Promise.allSettled([
        a.publish({ publishedAt: '2026-11-28T08:00:00Z', countries: ['US'] }),
        b.publish({ publishedAt: '2026-11-28T08:00:01Z', countries: [] }),
      ]);
      const won = outcomes.filter((o) => o.status === 'fulfilled');
      const lost = outcomes.filter((o) => o.status === 'rejected');
      assert.equal(won.length, 1, 'one builder publishes');
      assert.equal(lost.length, 1, 'the other is refused');
      assert.equal(codeOf(lost[0]!.reason), 'forbidden');
      const winner = (won[0] as PromiseFulfilledResult<Awaited<ReturnType<typeof a.publish>>>).value;
      assert.deepEqual(await store.get('2026-W48'), winner);
      // The bytes served are the winner's, for every file of its manifest.
      for (const file of winner.files) {
        const bytes = await readAll(await store.read('2026-W48', file.path));
        assert.equal(bytes.length, file.sizeBytes);
        assert.equal(sha256(bytes), file.sha256, file.path);
      }
    });

    it('leaves nothing visible when a build is aborted, and the week can be built again', async () => {
      const writer = await store.begin('2026-W47');
      await writer.write('metadata.tar.gz', Buffer.from('x'));
      await writer.abort();
      assert.deepEqual(await store.list(), []);
      const manifest = await publish('2026-W47');
      assert.equal(manifest.files.length, 2);
    });

    it('refuses writes after publish and paths that are not plain relative paths', async () => {
      const writer = await store.begin('2026-W47');
      for (const bad of ['../escape', '/abs', 'a//b', '']) {
        await assert.rejects(writer.write(bad, Buffer.from('x')), (err) => codeOf(err) === 'internal', bad);
      }
      await writer.write('metadata.tar.gz', Buffer.from('x'));
      await assert.rejects(writer.write('metadata.tar.gz', Buffer.from('y')), (err) => codeOf(err) === 'internal');
      await writer.publish({ publishedAt: '2026-11-21T08:00:00Z', countries: [] });
      await assert.rejects(writer.write('other.parquet', Buffer.from('z')), (err) => codeOf(err) === 'internal');
    });

    it('lists newest first and prunes all but the newest N', async () => {
      for (const week of ['2026-W45', '2026-W47', '2026-W46', '2025-W52']) await publish(week, { 'metadata.tar.gz': week });
      assert.deepEqual((await store.list()).map((m) => m.version), ['2026-W47', '2026-W46', '2026-W45', '2025-W52']);
      assert.equal((await store.latest())?.version, '2026-W47');
      assert.deepEqual(await store.prune(2), ['2026-W45', '2025-W52']);
      assert.deepEqual((await store.list()).map((m) => m.version), ['2026-W47', '2026-W46']);
      assert.equal(await store.get('2026-W45'), null);
      await assert.rejects(store.read('2026-W45', 'metadata.tar.gz'), (err) => codeOf(err) === 'not_found');
      assert.equal((await readAll(await store.read('2026-W46', 'metadata.tar.gz'))).toString(), '2026-W46');
      assert.deepEqual(await store.prune(8), []);
    });
  });
}
