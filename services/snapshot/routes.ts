/**
 * The snapshot endpoints of the /v1 API (docs/api.md "Snapshots and signed downloads"), as the
 * `SnapshotRoutes` the API delegates to (`createApp({ ..., snapshots: createSnapshotRoutes(deps) })`).
 * Authentication, rate limiting and error rendering stay with the API: these handlers only
 * throw AppError.
 *
 * File requests are checked in this order, so nothing about a release leaks to a caller
 * without a valid URL: a path that can never be a release file (encoded slash, `..`, absolute,
 * odd characters) is 403; then a bad, tampered or expired signature is 403; then an unknown
 * version or a path outside the manifest is 404. Only exact manifest entries are ever read,
 * through the ReleaseStore, which refuses symlinks and anything outside the release.
 */
import { AppError } from '../../contracts/errors.ts';
import type { Clock, ReleaseManifest, ReleaseStore } from '../../contracts/ports.ts';
import { RELEASE_VERSION_PATTERN, SNAPSHOT_LICENSE_NOTE, isReleasePath, schemaDefinitions } from '../../contracts/snapshotSchema.ts';
import type { SnapshotRoutes } from '../api/types.ts';
import { contentTypeOf, matchesEtag, parseRange } from './http.ts';
import { checkDownloadSignature, downloadUrl, signDownload } from './signing.ts';
import { rfc3339 } from './week.ts';

export interface SnapshotRoutesDeps {
  releases: ReleaseStore;
  /** HMAC key of download URLs (`DOWNLOAD_SIGNING_KEY`). */
  signingKey: string | Uint8Array;
  /** Public base URL of the API, prefixed to download URLs (`PUBLIC_BASE_URL`). */
  publicBaseUrl: string;
  clock: Clock;
  /** How long a download URL stays valid, in seconds. Default 3600 (spec 8). */
  urlTtlSeconds?: number;
}

const FILE_ROUTE = '/v1/snapshots/file/';

function noReleases(): AppError {
  return new AppError('unavailable', 'No releases are available yet.');
}

function notAFile(): AppError {
  return new AppError('forbidden', 'That path is not a file of a release.');
}

export function createSnapshotRoutes(deps: SnapshotRoutesDeps): SnapshotRoutes {
  const base = deps.publicBaseUrl.replace(/\/+$/, '');
  const ttl = deps.urlTtlSeconds ?? 3600;

  async function latest(): Promise<ReleaseManifest> {
    const manifest = await deps.releases.latest();
    if (manifest === null) throw noReleases();
    return manifest;
  }

  return {
    async listing() {
      const manifest = await latest();
      return {
        latest: manifest.version,
        published_at: manifest.publishedAt,
        countries: manifest.countries,
        total_files: manifest.files.length,
        total_size_bytes: manifest.files.reduce((sum, f) => sum + f.sizeBytes, 0),
        files: manifest.files.map((f) => ({ path: f.path, size_bytes: f.sizeBytes, sha256: f.sha256 })),
        download_base: `${base}${FILE_ROUTE}${manifest.version}/`,
        note: SNAPSHOT_LICENSE_NOTE,
      };
    },

    async schemas() {
      // Spec 4.12: 503 until the schema has been generated, i.e. before the first release.
      await latest().catch(() => {
        throw new AppError('unavailable', 'The snapshot schema has not been generated yet: no release is published.');
      });
      return schemaDefinitions(`${base}/v1/openapi`);
    },

    async download({ path, version }) {
      if (version !== undefined && !RELEASE_VERSION_PATTERN.test(version)) {
        throw new AppError('invalid_parameter', "Parameter 'version' must be a release label <year>-W<week>, e.g. 2026-W47.", {
          details: { parameter: 'version' },
        });
      }
      const newest = await latest();
      const manifest = version === undefined ? newest : await deps.releases.get(version);
      if (manifest === null) throw new AppError('not_found', `Release ${version} not found.`);
      const entry = manifest.files.find((f) => f.path === path);
      if (!entry) {
        throw new AppError('forbidden', `${path} is not in the manifest of release ${manifest.version}.`, { details: { parameter: 'path' } });
      }
      const now = deps.clock.now();
      const expires = Math.floor(now.getTime() / 1000) + ttl;
      return {
        version: manifest.version,
        path: entry.path,
        size_bytes: entry.sizeBytes,
        sha256: entry.sha256,
        download_url: downloadUrl(base, manifest.version, entry.path, expires, signDownload(deps.signingKey, manifest.version, entry.path, expires)),
        expires_at: rfc3339(new Date(expires * 1000)),
      };
    },

    async file({ version, path }, ctx) {
      // Koa's ctx.path is not percent-decoded: an encoded `/` or `\` was meant to hide a
      // separator from the router, so refuse it before looking at the decoded path.
      const raw = ctx.path.startsWith(FILE_ROUTE) ? ctx.path.slice(FILE_ROUTE.length) : ctx.path;
      if (/%2f|%5c/i.test(raw) || !isReleasePath(path)) throw notAFile();
      if (!RELEASE_VERSION_PATTERN.test(version)) throw new AppError('not_found', `Release ${version} not found.`);

      const query = ctx.query as Record<string, string | string[] | undefined>;
      const single = (name: string): string | undefined => (typeof query[name] === 'string' ? (query[name] as string) : undefined);
      const check = checkDownloadSignature(
        deps.signingKey,
        { version, path, expires: single('expires'), sig: single('sig') },
        Math.floor(deps.clock.now().getTime() / 1000),
      );
      if (check === 'expired') throw new AppError('forbidden', 'This download URL has expired; ask /v1/snapshots/download for a new one.');
      if (check !== 'valid') throw new AppError('forbidden', 'This download URL is not valid; ask /v1/snapshots/download for one.');

      const manifest = await deps.releases.get(version);
      if (manifest === null) throw new AppError('not_found', `Release ${version} not found.`);
      const entry = manifest.files.find((f) => f.path === path);
      if (!entry) throw new AppError('not_found', `${path} is not a file of release ${version}.`);

      const etag = `"${entry.sha256}"`;
      if (matchesEtag(ctx.get('If-None-Match'), etag)) {
        ctx.status = 304;
        ctx.set('ETag', etag);
        return;
      }
      const ifRange = ctx.get('If-Range');
      const range = ifRange === '' || ifRange === etag ? parseRange(ctx.get('Range'), entry.sizeBytes) : null;
      if (range === 'unsatisfiable') {
        ctx.status = 416;
        ctx.set('Content-Range', `bytes */${entry.sizeBytes}`);
        ctx.body = { error: `The range is outside the file (${entry.sizeBytes} bytes).`, code: 'invalid_parameter' };
        return;
      }
      // Open the file before writing any header, so a refusal (a symlink, a file that no
      // longer matches its manifest entry) is a clean error response.
      const whole = range === null || entry.sizeBytes === 0;
      const body = ctx.method === 'HEAD' || entry.sizeBytes === 0
        ? Buffer.alloc(0)
        : await deps.releases.read(version, path, whole ? undefined : range);
      ctx.status = whole ? 200 : 206;
      ctx.body = body;
      ctx.length = whole ? entry.sizeBytes : range.end - range.start + 1;
      if (!whole) ctx.set('Content-Range', `bytes ${range.start}-${range.end}/${entry.sizeBytes}`);
      ctx.set('ETag', etag);
      ctx.set('Accept-Ranges', 'bytes');
      ctx.set('Cache-Control', 'private, max-age=3600');
      ctx.set('Content-Disposition', `attachment; filename="${version}_${path.replace(/\//g, '_')}"`);
      ctx.type = contentTypeOf(path);
    },
  };
}
