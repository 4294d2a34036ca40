import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ApiKeyStore, Clock, EventStore, ReadStore, ReleaseManifest, ReleaseStore, SearchIndex } from '../../contracts/ports.ts';
import { SNAPSHOT_FILES, SNAPSHOT_SCHEMA_VERSION } from '../../contracts/snapshotSchema.ts';
import { lmdbEventStore } from '../../infra/lmdb/eventStore.ts';
import { lmdbApiKeyStore } from '../../infra/lmdb/apiKeyStore.ts';
import { lmdbReadStore } from '../../infra/lmdb/readStore.ts';
import { fsReleaseStore } from '../../infra/releases/fsReleaseStore.ts';
import { inProcessSearchIndex } from '../../infra/search/inProcessSearch.ts';
import { createApiKey } from '../../services/api/keys.ts';
import { startApi, type RunningApi } from '../../services/api/server.ts';
import type { LinkTokenCodec } from '../../services/api/types.ts';
import { buildRelease } from '../../services/snapshot/build.ts';
import { createSnapshotRoutes } from '../../services/snapshot/routes.ts';
import { signDownload } from '../../services/snapshot/signing.ts';
import { DUCK_TYPES, lit, openDuck } from '../int/snapshot.support.ts';
import { IDS, seedCatalog } from './api.fixture.ts';
import { testLinkTokens } from './api.linkTokens.ts';

const SIGNING_KEY = 'snapshot-e2e-signing-key';
const START = Date.parse('2026-11-21T08:00:00Z');

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  bytes: Buffer;
  json: any;
}

describe('the snapshot endpoints over HTTP', function () {
  this.timeout(60_000);
  let nowMs = START;
  const clock: Clock = { now: () => new Date(nowMs) };
  let dir: string;
  let outside: string;
  let eventStore: EventStore;
  let readStore: ReadStore;
  let apiKeys: ApiKeyStore;
  let search: SearchIndex;
  let linkTokens: LinkTokenCodec;
  let releases: ReleaseStore;
  let api: RunningApi;
  let key: string;
  let manifest: ReleaseManifest;

  /** Raw HTTP, so paths with `..` or encoded characters reach the server exactly as written. */
  function get(path: string, options: { key?: string | null; headers?: Record<string, string>; method?: string } = {}): Promise<Reply> {
    const headers: Record<string, string> = { ...options.headers };
    const k = options.key === undefined ? key : options.key;
    if (k !== null) headers.authorization = `Bearer ${k}`;
    const url = new URL(api.url);
    return new Promise((resolve, reject) => {
      const req = request({ host: url.hostname, port: url.port, path, method: options.method ?? 'GET', headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const bytes = Buffer.concat(chunks);
          const json = String(res.headers['content-type'] ?? '').startsWith('application/json') && bytes.length > 0 ? JSON.parse(bytes.toString('utf8')) : undefined;
          resolve({ status: res.statusCode ?? 0, headers: res.headers, bytes, json });
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end();
    });
  }

  /** Path and query of a download URL (the base is this server). */
  const local = (downloadUrl: string): string => {
    const u = new URL(downloadUrl);
    return `${u.pathname}${u.search}`;
  };

  /** A correctly signed file URL for any version and path, to show the signature is not the only guard. */
  const signed = (version: string, path: string, rawPath = path): string => {
    const expires = Math.floor(nowMs / 1000) + 600;
    return `/v1/snapshots/file/${version}/${rawPath}?expires=${expires}&sig=${signDownload(SIGNING_KEY, version, path, expires)}`;
  };

  async function descriptor(path: string): Promise<any> {
    const reply = await get(`/v1/snapshots/download?path=${encodeURIComponent(path)}`);
    assert.equal(reply.status, 200, JSON.stringify(reply.json));
    return reply.json;
  }

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'marquee-snapshot-e2e-'));
    outside = join(dir, 'outside-secret.parquet');
    writeFileSync(outside, 'TOP-SECRET-OUTSIDE-BYTES');
    eventStore = lmdbEventStore({ dataDir: dir, clock });
    readStore = lmdbReadStore({ dataDir: dir });
    apiKeys = lmdbApiKeyStore({ dataDir: dir });
    search = inProcessSearchIndex();
    linkTokens = await testLinkTokens();
    await seedCatalog(eventStore, readStore, search);
    key = (await createApiKey(apiKeys, 'snapshot-e2e', clock)).key;
    releases = fsReleaseStore({ dir: join(dir, 'releases') });
    api = await startApi({
      port: 0, readStore, apiKeys, search, linkTokens, clock, eventStore,
      snapshots: createSnapshotRoutes({ releases, signingKey: SIGNING_KEY, publicBaseUrl: 'http://marquee.example', clock }),
      rateLimit: { perMinute: 10_000 },
    });
  });

  after(async () => {
    await api?.close();
    await apiKeys?.close();
    await readStore?.close();
    await eventStore?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  beforeEach(() => {
    nowMs = START;
  });

  it('answers 503 unavailable on the listing, the schemas and the download before the first release', async () => {
    for (const path of ['/v1/snapshots', '/v1/schemas', '/v1/snapshots/download?path=metadata.tar.gz']) {
      const reply = await get(path);
      assert.equal(reply.status, 503, path);
      assert.equal(reply.json.code, 'unavailable', path);
    }
  });

  describe('once a release is published', () => {
    before(async () => {
      manifest = (await buildRelease({ readStore, releases, linkTokens, clock })).manifest;
    });

    it('lists the latest release with its manifest, with or without a key', async () => {
      for (const k of [key, null]) {
        const reply = await get('/v1/snapshots', { key: k });
        assert.equal(reply.status, 200);
        assert.deepEqual(Object.keys(reply.json).sort(), ['countries', 'download_base', 'files', 'latest', 'note', 'published_at', 'total_files', 'total_size_bytes']);
        assert.equal(reply.json.latest, '2026-W47');
        assert.equal(reply.json.published_at, '2026-11-21T08:00:00Z');
        assert.deepEqual(reply.json.countries, ['DE', 'US']);
        assert.equal(reply.json.total_files, manifest.files.length);
        assert.equal(reply.json.total_size_bytes, manifest.files.reduce((s, f) => s + f.sizeBytes, 0));
        assert.deepEqual(reply.json.files, manifest.files.map((f) => ({ path: f.path, size_bytes: f.sizeBytes, sha256: f.sha256 })));
        assert.equal(reply.json.download_base, 'http://marquee.example/v1/snapshots/file/2026-W47/');
        assert.match(reply.json.note, /non-commercial/);
      }
      assert.equal((await get('/v1/snapshots', { key: 'mk_live_00000000000000000000000000000000' })).status, 401);
    });

    it('describes every file from the same definitions that wrote them', async () => {
      const reply = await get('/v1/schemas');
      assert.equal(reply.status, 200);
      assert.equal(reply.json.schema_version, SNAPSHOT_SCHEMA_VERSION);
      assert.deepEqual(reply.json.files, SNAPSHOT_FILES);
      assert.deepEqual(reply.json.files[0].columns.slice(0, 3).map((c: { name: string; type: string; nullable: boolean }) => [c.name, c.type, c.nullable]), [
        ['media_id', 'UTF8', false], ['season_number', 'INT16', true], ['episode_number', 'INT16', true],
      ]);
      assert.equal((await get('/v1/schemas', { key: null })).status, 401);
    });

    it('issues a download descriptor valid for one hour', async () => {
      const d = await descriptor('country=US/links.parquet');
      const entry = manifest.files.find((f) => f.path === 'country=US/links.parquet');
      assert.equal(d.version, '2026-W47');
      assert.equal(d.path, 'country=US/links.parquet');
      assert.equal(d.size_bytes, entry?.sizeBytes);
      assert.equal(d.expires_at, '2026-11-21T09:00:00Z');
      const expires = Date.parse('2026-11-21T09:00:00Z') / 1000;
      assert.equal(
        d.download_url,
        `http://marquee.example/v1/snapshots/file/2026-W47/country=US/links.parquet?expires=${expires}&sig=${signDownload(SIGNING_KEY, '2026-W47', 'country=US/links.parquet', expires)}`,
      );
      assert.equal((await get(`/v1/snapshots/download?path=metadata.tar.gz&version=2026-W47`)).json.path, 'metadata.tar.gz');
    });

    it('refuses download requests with 400, 403 and 404 as documented', async () => {
      const cases: Array<[string, number, string]> = [
        ['/v1/snapshots/download', 400, 'missing_parameter'],
        ['/v1/snapshots/download?path=metadata.tar.gz&version=2026-47', 400, 'invalid_parameter'],
        ['/v1/snapshots/download?path=metadata.tar.gz&version=latest', 400, 'invalid_parameter'],
        ['/v1/snapshots/download?path=country%3DFR%2Flinks.parquet', 403, 'forbidden'],
        ['/v1/snapshots/download?path=..%2F..%2Fetc%2Fpasswd', 403, 'forbidden'],
        ['/v1/snapshots/download?path=manifest.json', 403, 'forbidden'],
        ['/v1/snapshots/download?path=metadata.tar.gz&version=2020-W01', 404, 'not_found'],
      ];
      for (const [path, status, code] of cases) {
        const reply = await get(path);
        assert.equal(reply.status, status, path);
        assert.equal(reply.json.code, code, path);
      }
      assert.equal((await get('/v1/snapshots/download?path=metadata.tar.gz', { key: null })).status, 401);
    });

    it('serves the file of a download URL with its length, ETag, type and the exact bytes', async () => {
      for (const path of ['country=US/links.parquet', 'metadata.tar.gz']) {
        const reply = await get(local((await descriptor(path)).download_url));
        const entry = manifest.files.find((f) => f.path === path);
        assert.equal(reply.status, 200, path);
        assert.equal(reply.headers['content-length'], String(entry?.sizeBytes));
        assert.equal(reply.headers.etag, `"${entry?.sha256}"`);
        assert.equal(reply.headers['accept-ranges'], 'bytes');
        assert.equal(reply.headers['content-type'], path.endsWith('.parquet') ? 'application/vnd.apache.parquet' : 'application/gzip');
        assert.equal(createHash('sha256').update(reply.bytes).digest('hex'), entry?.sha256);
      }
      const head = await get(local((await descriptor('metadata.tar.gz')).download_url), { method: 'HEAD' });
      assert.equal(head.status, 200);
      assert.equal(head.headers['content-length'], String(manifest.files.find((f) => f.path === 'metadata.tar.gz')?.sizeBytes));
      assert.equal(head.bytes.length, 0);
    });

    it('gives the same link tokens in links.parquet as the links endpoint', async () => {
      const reply = await get(local((await descriptor('country=US/links.parquet')).download_url));
      const downloaded = join(dir, 'downloaded-links.parquet');
      writeFileSync(downloaded, reply.bytes);
      const duck = await openDuck();
      try {
        for (const id of [IDS.landGirls, IDS.harbor]) {
          const rows = await duck.rows(`SELECT link_token FROM read_parquet(${lit(downloaded)}) WHERE media_id = ${lit(id)} ORDER BY link_token`);
          const links = await get(`/v1/media/${id}/links?country=US`);
          assert.equal(links.status, 200);
          assert.deepEqual(rows.map((r) => r.link_token), links.json.map((l: { link_token: string }) => l.link_token).sort(), id);
          assert.ok(rows.length > 0);
        }
        const described = await duck.rows(`DESCRIBE SELECT * FROM read_parquet(${lit(downloaded)})`);
        assert.equal(described.find((d) => d.column_name === 'season_number')?.column_type, DUCK_TYPES.INT16);
      } finally {
        duck.close();
      }
    });

    it('needs the API key on top of the signature', async () => {
      const url = local((await descriptor('metadata.tar.gz')).download_url);
      const reply = await get(url, { key: null });
      assert.equal(reply.status, 401);
      assert.equal(reply.headers['www-authenticate'], 'Bearer');
    });

    it('refuses an expired, tampered or re-targeted signature with 403', async () => {
      const url = local((await descriptor('country=US/links.parquet')).download_url);
      const u = new URL(url, 'http://x');
      const sig = u.searchParams.get('sig') ?? '';
      const expires = u.searchParams.get('expires') ?? '';
      const tampered = `${sig.slice(0, -1)}${sig.endsWith('0') ? '1' : '0'}`;
      const cases = [
        `/v1/snapshots/file/2026-W47/country=US/links.parquet?expires=${expires}&sig=${tampered}`,
        `/v1/snapshots/file/2026-W47/country=US/links.parquet?expires=${Number(expires) + 1}&sig=${sig}`,
        `/v1/snapshots/file/2026-W47/country=US/rankings.parquet?expires=${expires}&sig=${sig}`,
        `/v1/snapshots/file/2026-W46/country=US/links.parquet?expires=${expires}&sig=${sig}`,
        `/v1/snapshots/file/2026-W47/country=US/links.parquet?expires=${expires}`,
        `/v1/snapshots/file/2026-W47/country=US/links.parquet`,
      ];
      for (const path of cases) {
        const reply = await get(path);
        assert.equal(reply.status, 403, path);
        assert.equal(reply.json.code, 'forbidden', path);
      }
      // A repeated parameter is a malformed request (400, as anywhere in /v1), never a pass.
      const doubled = await get(`/v1/snapshots/file/2026-W47/country=US/links.parquet?expires=${expires}&sig=${sig}&sig=${sig}`);
      assert.deepEqual([doubled.status, doubled.json.code], [400, 'invalid_parameter']);
      nowMs = START + 3600_000 + 1000;
      const expired = await get(url);
      assert.equal(expired.status, 403);
      assert.match(expired.json.error, /expired/);
    });

    it('answers 404 for a validly signed URL of an unknown version or a path outside the manifest', async () => {
      for (const [version, path] of [['2020-W01', 'metadata.tar.gz'], ['2026-W47', 'country=FR/links.parquet'], ['2026-W47', 'manifest.json']] as const) {
        const reply = await get(signed(version, path));
        assert.equal(reply.status, 404, `${version} ${path}`);
        assert.equal(reply.json.code, 'not_found');
      }
    });

    it('honours Range with 206, suffix ranges, and 416 for an unsatisfiable range', async () => {
      const path = 'country=US/links.parquet';
      const url = local((await descriptor(path)).download_url);
      const whole = readFileSync(join(dir, 'releases', '2026-W47', path));
      const size = whole.length;

      const first = await get(url, { headers: { range: 'bytes=0-9' } });
      assert.equal(first.status, 206);
      assert.equal(first.headers['content-range'], `bytes 0-9/${size}`);
      assert.equal(first.headers['content-length'], '10');
      assert.deepEqual(first.bytes, whole.subarray(0, 10));
      assert.equal(first.bytes.subarray(0, 4).toString('latin1'), 'PAR1');

      const suffix = await get(url, { headers: { range: 'bytes=-8' } });
      assert.equal(suffix.status, 206);
      assert.equal(suffix.headers['content-range'], `bytes ${size - 8}-${size - 1}/${size}`);
      assert.deepEqual(suffix.bytes, whole.subarray(size - 8));

      const open = await get(url, { headers: { range: `bytes=${size - 3}-` } });
      assert.equal(open.status, 206);
      assert.deepEqual(open.bytes, whole.subarray(size - 3));

      const beyond = await get(url, { headers: { range: `bytes=${size}-` } });
      assert.equal(beyond.status, 416);
      assert.equal(beyond.headers['content-range'], `bytes */${size}`);
    });

    it('answers 304 to If-None-Match with the ETag', async () => {
      const url = local((await descriptor('metadata.tar.gz')).download_url);
      const entry = manifest.files.find((f) => f.path === 'metadata.tar.gz');
      const reply = await get(url, { headers: { 'if-none-match': `"${entry?.sha256}"` } });
      assert.equal(reply.status, 304);
      assert.equal(reply.bytes.length, 0);
      assert.equal((await get(url, { headers: { 'if-none-match': '"other"' } })).status, 200);
    });

    it('never serves a file outside the release, whatever the path (traversal, encoded slashes, absolute paths, symlinks)', async () => {
      const release = join(dir, 'releases', '2026-W47');
      // A symlink planted in the release directory, and a manifest file swapped for one.
      symlinkSync(outside, join(release, 'country=US', 'planted.parquet'));
      const victim = join(release, 'country=DE', 'links.parquet');
      const entry = manifest.files.find((f) => f.path === 'country=DE/links.parquet');
      renameSync(victim, `${victim}.moved`);
      const sameSize = join(dir, 'same-size-outside');
      writeFileSync(sameSize, Buffer.alloc(entry?.sizeBytes ?? 0, 'S'));
      symlinkSync(sameSize, victim);
      // A directory component swapped for a symlink to a directory outside.
      const fakeDir = join(dir, 'fake-country');
      mkdirSync(fakeDir);
      writeFileSync(join(fakeDir, 'rankings.parquet'), Buffer.alloc(manifest.files.find((f) => f.path === 'country=US/rankings.parquet')?.sizeBytes ?? 0, 'S'));

      const attempts: string[] = [
        signed('2026-W47', '../../outside-secret.parquet'),
        signed('2026-W47', '../../outside-secret.parquet', '%2e%2e/%2e%2e/outside-secret.parquet'),
        signed('2026-W47', `..${'/'}..${'/'}outside-secret.parquet`, '..%2F..%2Foutside-secret.parquet'),
        signed('2026-W47', 'country=US/links.parquet', 'country=US%2Flinks.parquet'),
        signed('2026-W47', 'country=US/links.parquet', 'country=US%2flinks.parquet'),
        signed('2026-W47', outside, outside.slice(1)),
        signed('2026-W47', outside, `%2F${outside.slice(1)}`),
        signed('2026-W47', 'country=US/planted.parquet'),
        signed('2026-W47', 'country=DE/links.parquet'),
        signed('2026-W47', 'country=US\\..\\..\\outside-secret.parquet', 'country=US%5C..%5C..%5Coutside-secret.parquet'),
        signed('2026-W47/..', 'outside-secret.parquet'),
        '/v1/snapshots/file/2026-W47/../../outside-secret.parquet',
        '/v1/snapshots/file/2026-W47/%2e%2e/%2e%2e/outside-secret.parquet',
      ];
      for (const path of attempts) {
        const reply = await get(path);
        assert.ok(reply.status === 403 || reply.status === 404, `${path} -> ${reply.status}`);
        assert.ok(!reply.bytes.includes('TOP-SECRET'), path);
        assert.ok(!reply.bytes.includes('SSSSSSSS'), path);
        assert.equal(reply.headers['content-disposition'], undefined, path);
      }

      rmSync(join(release, 'country=US', 'rankings.parquet'));
      renameSync(join(release, 'country=US'), join(dir, 'moved-country'));
      symlinkSync(fakeDir, join(release, 'country=US'));
      const viaDir = await get(signed('2026-W47', 'country=US/rankings.parquet'));
      assert.equal(viaDir.status, 404);
      assert.ok(!viaDir.bytes.includes('SSSSSSSS'));
    });
  });
});
