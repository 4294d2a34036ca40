/**
 * ReleaseStore on S3-compatible object storage (AWS S3, versitygw, MinIO...), path-style.
 *
 *   <prefix>manifests/<version>.json            published releases: one object per release
 *   <prefix>files/<version>/<build>/<path>      the files of one build of a week
 *
 * Object storage has no rename, so publishing is "manifest written last": a build writes its
 * files under a prefix of its own (`<build>`, random), then puts the manifest, which names that
 * build in its object metadata, with `If-None-Match: *`. Readers go through manifests only, so
 * a build's files are invisible until its manifest exists, and the conditional put lets exactly
 * one of two builders of the same week win: the loser gets 412 and deletes its own files. Once
 * written, a manifest is never overwritten (immutability); pruning deletes the manifest first
 * (the release disappears at once) and the bytes after.
 *
 * Reads serve only exact manifest entries, as object keys built from the manifest's build, so
 * no caller-chosen string ever becomes an object key.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
  type _Object,
} from '@aws-sdk/client-s3';
import { AppError, isAppError } from '../../contracts/errors.ts';
import type { ReleaseFile, ReleaseManifest, ReleaseStore, ReleaseWriter } from '../../contracts/ports.ts';
import { RELEASE_VERSION_PATTERN, isReleasePath } from '../../contracts/snapshotSchema.ts';
import { byVersionDesc, checkRange, releaseManifest } from './manifest.ts';

export interface S3ReleaseStoreOptions {
  /** Endpoint of the S3 API, e.g. `http://127.0.0.1:7070`; unset = AWS. */
  endpoint?: string;
  bucket: string;
  /** Key prefix of everything this store writes (several stores may share a bucket). Default ''. */
  prefix?: string;
  /** Default `us-east-1`. */
  region?: string;
  /** Static credentials; unset = the SDK's default chain (AWS_ACCESS_KEY_ID, profiles, roles). */
  accessKeyId?: string;
  secretAccessKey?: string;
  /** A request whose socket stays silent this long fails (a frozen server must not hang a build forever). Default 30 000. */
  requestTimeoutMs?: number;
  /** Size of one multipart part; files up to this size are one PUT. Default 8 MiB (S3's minimum part is 5 MiB). */
  partBytes?: number;
}

export interface S3ReleaseStore extends ReleaseStore {
  /** Creates the bucket when it does not exist (development and tests; production buckets are provisioned). */
  ensureBucket(): Promise<void>;
  /** One cheap round trip (HEAD of the bucket), for the dependency watch; rejects when the server does not answer. */
  ping(): Promise<void>;
  /** Closes the client's connections. */
  close(): void;
}

const DEFAULT_PART_BYTES = 8 * 1024 * 1024;
/** A build whose files are not in a manifest a day after they were written was killed. */
const ABANDONED_MS = 24 * 3600 * 1000;

function statusOf(err: unknown): number | undefined {
  return (err as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode;
}

function isMissing(err: unknown): boolean {
  const name = (err as { name?: string })?.name;
  return name === 'NoSuchKey' || name === 'NotFound' || name === 'NoSuchBucket' || statusOf(err) === 404;
}

function ioError(err: unknown, what: string): AppError {
  if (isAppError(err)) return err;
  return new AppError('unavailable', `release store: ${what} failed`, { cause: err, retriable: true });
}

function alreadyPublished(version: string): AppError {
  return new AppError('forbidden', `Release ${version} is already published; releases are immutable.`);
}

function notFound(what: string): AppError {
  return new AppError('not_found', what);
}

export function s3ReleaseStore(options: S3ReleaseStoreOptions): S3ReleaseStore {
  const client = new S3Client({
    region: options.region ?? 'us-east-1',
    forcePathStyle: true,
    ...(options.endpoint ? { endpoint: options.endpoint } : {}),
    ...(options.accessKeyId && options.secretAccessKey
      ? { credentials: { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey } }
      : {}),
    // The SDK's default CRC32 checksums on every request are not implemented by every
    // S3-compatible server; the manifest's sha256 is our own integrity check.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    maxAttempts: 3,
    requestHandler: { connectionTimeout: 3000, requestTimeout: options.requestTimeoutMs ?? 30_000 },
  });
  const bucket = options.bucket;
  const prefix = options.prefix ?? '';
  const partBytes = Math.max(options.partBytes ?? DEFAULT_PART_BYTES, 5 * 1024 * 1024);
  const manifestKey = (version: string) => `${prefix}manifests/${version}.json`;
  const buildPrefix = (version: string, build: string) => `${prefix}files/${version}/${build}/`;

  async function readManifest(version: string): Promise<{ manifest: ReleaseManifest; build: string } | null> {
    if (!RELEASE_VERSION_PATTERN.test(version)) return null;
    try {
      const out = await client.send(new GetObjectCommand({ Bucket: bucket, Key: manifestKey(version) }));
      const text = await out.Body!.transformToString('utf8');
      const build = out.Metadata?.build;
      if (!build) throw new AppError('internal', `the manifest of ${version} names no build`);
      return { manifest: JSON.parse(text) as ReleaseManifest, build };
    } catch (err) {
      if (isMissing(err)) return null;
      throw ioError(err, `reading the manifest of ${version}`);
    }
  }

  async function listKeys(under: string): Promise<_Object[]> {
    const objects: _Object[] = [];
    let token: string | undefined;
    try {
      do {
        const out = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: under, ContinuationToken: token }));
        objects.push(...(out.Contents ?? []));
        token = out.IsTruncated ? out.NextContinuationToken : undefined;
      } while (token);
    } catch (err) {
      if (isMissing(err)) return [];
      throw ioError(err, `listing ${under}`);
    }
    return objects;
  }

  async function deleteKeys(keys: string[]): Promise<void> {
    for (let i = 0; i < keys.length; i += 1000) {
      const batch = keys.slice(i, i + 1000);
      if (batch.length === 0) continue;
      try {
        await client.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true } }));
      } catch (err) {
        throw ioError(err, 'deleting release files');
      }
    }
  }

  async function list(): Promise<ReleaseManifest[]> {
    const keys = await listKeys(`${prefix}manifests/`);
    const versions = keys
      .map((o) => o.Key!.slice(`${prefix}manifests/`.length).replace(/\.json$/, ''))
      .filter((v) => RELEASE_VERSION_PATTERN.test(v));
    const manifests = await Promise.all(versions.map(readManifest));
    return manifests.filter((m) => m !== null).map((m) => m.manifest).sort(byVersionDesc);
  }

  /** Uploads one object from a stream: one PUT when it fits in a part, multipart otherwise. */
  async function upload(key: string, data: Uint8Array | AsyncIterable<Uint8Array>): Promise<{ size: number; sha256: string }> {
    const hash = createHash('sha256');
    let size = 0;
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    let uploadId: string | undefined;
    const parts: Array<{ ETag: string; PartNumber: number }> = [];
    const sendPart = async () => {
      uploadId ??= (await client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key }))).UploadId!;
      const PartNumber = parts.length + 1;
      const body = Buffer.concat(pending, pendingBytes);
      pending = [];
      pendingBytes = 0;
      const out = await client.send(new UploadPartCommand({ Bucket: bucket, Key: key, UploadId: uploadId, PartNumber, Body: body }));
      parts.push({ ETag: out.ETag!, PartNumber });
    };
    try {
      const chunks: AsyncIterable<Uint8Array> | Uint8Array[] = data instanceof Uint8Array ? [data] : data;
      for await (const chunk of chunks) {
        hash.update(chunk);
        size += chunk.byteLength;
        // Copied: a producer may reuse its buffer once the chunk is handed over.
        pending.push(Buffer.from(chunk));
        pendingBytes += chunk.byteLength;
        if (pendingBytes >= partBytes) await sendPart();
      }
      if (uploadId === undefined) {
        await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: Buffer.concat(pending, pendingBytes), ContentLength: pendingBytes }));
      } else {
        if (pendingBytes > 0) await sendPart();
        await client.send(new CompleteMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: uploadId, MultipartUpload: { Parts: parts } }));
      }
    } catch (err) {
      if (uploadId !== undefined) {
        await client.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: uploadId })).catch(() => {});
      }
      throw err;
    }
    return { size, sha256: hash.digest('hex') };
  }

  function writer(version: string, build: string): ReleaseWriter {
    const files = new Map<string, ReleaseFile>();
    let finished = false;
    const ensureWritable = () => {
      if (finished) throw new AppError('internal', `release ${version} is already published or aborted`);
    };
    const removeFiles = async () => {
      const keys = (await listKeys(buildPrefix(version, build))).map((o) => o.Key!);
      await deleteKeys(keys);
    };
    return {
      async write(path, data) {
        ensureWritable();
        if (!isReleasePath(path)) throw new AppError('internal', `not a valid release file path: ${JSON.stringify(path)}`);
        if (files.has(path)) throw new AppError('internal', `${path} was already written to release ${version}`);
        let result;
        try {
          result = await upload(`${buildPrefix(version, build)}${path}`, data);
        } catch (err) {
          throw ioError(err, `writing ${path}`);
        }
        const file: ReleaseFile = { path, sizeBytes: result.size, sha256: result.sha256 };
        files.set(path, file);
        return file;
      },
      async publish(meta) {
        ensureWritable();
        finished = true;
        const manifest = releaseManifest(version, meta, files.values());
        try {
          await client.send(new PutObjectCommand({
            Bucket: bucket,
            Key: manifestKey(version),
            Body: `${JSON.stringify(manifest, null, 2)}\n`,
            ContentType: 'application/json',
            Metadata: { build },
            // Only if no manifest exists: two builders of one week, one wins.
            IfNoneMatch: '*',
          }));
        } catch (err) {
          await removeFiles().catch(() => {});
          // 412: another build published first; 409: it is publishing right now.
          if (statusOf(err) === 412 || statusOf(err) === 409) throw alreadyPublished(version);
          throw ioError(err, `publishing ${version}`);
        }
        return manifest;
      },
      async abort() {
        finished = true;
        await removeFiles();
      },
    };
  }

  return {
    async ensureBucket() {
      try {
        await client.send(new HeadBucketCommand({ Bucket: bucket }));
        return;
      } catch (err) {
        if (!isMissing(err)) throw ioError(err, `checking bucket ${bucket}`);
      }
      try {
        await client.send(new CreateBucketCommand({ Bucket: bucket }));
      } catch (err) {
        const name = (err as { name?: string })?.name;
        if (name !== 'BucketAlreadyOwnedByYou' && name !== 'BucketAlreadyExists') throw ioError(err, `creating bucket ${bucket}`);
      }
    },
    async ping() {
      await client.send(new HeadBucketCommand({ Bucket: bucket }));
    },
    close() {
      client.destroy();
    },
    async begin(version) {
      if (!RELEASE_VERSION_PATTERN.test(version)) {
        throw new AppError('invalid_parameter', `Not a release version: ${version}`, { details: { parameter: 'version' } });
      }
      if ((await readManifest(version)) !== null) throw alreadyPublished(version);
      return writer(version, `${Date.now().toString(36)}-${randomBytes(6).toString('hex')}`);
    },
    list,
    async latest() {
      return (await list())[0] ?? null;
    },
    async get(version) {
      return (await readManifest(version))?.manifest ?? null;
    },
    async read(version, path, range) {
      const found = await readManifest(version);
      if (found === null) throw notFound(`Release ${version} not found.`);
      const entry = isReleasePath(path) ? found.manifest.files.find((f) => f.path === path) : undefined;
      if (!entry) throw notFound(`${path} is not a file of release ${version}.`);
      if (range !== undefined) checkRange(entry, range);
      try {
        const out = await client.send(new GetObjectCommand({
          Bucket: bucket,
          Key: `${buildPrefix(version, found.build)}${entry.path}`,
          ...(range === undefined ? {} : { Range: `bytes=${range.start}-${range.end}` }),
        }));
        const expected = range === undefined ? entry.sizeBytes : range.end - range.start + 1;
        if (out.ContentLength !== undefined && out.ContentLength !== expected) {
          (out.Body as Readable).destroy();
          throw new AppError('internal', `${version}/${path} does not match its manifest entry`);
        }
        return out.Body as Readable;
      } catch (err) {
        if (isMissing(err)) throw notFound(`${path} is missing from release ${version}.`);
        throw ioError(err, `reading ${path}`);
      }
    },
    async prune(keep) {
      const releases = await list();
      const removed: string[] = [];
      for (const manifest of releases.slice(Math.max(0, keep))) {
        try {
          // The manifest's deletion is the removal readers see; the bytes go after.
          await deleteKeys([manifestKey(manifest.version)]);
        } catch (err) {
          throw ioError(err, `pruning ${manifest.version}`);
        }
        await deleteKeys((await listKeys(`${prefix}files/${manifest.version}/`)).map((o) => o.Key!));
        removed.push(manifest.version);
      }
      await removeAbandonedBuilds(releases.slice(0, Math.max(0, keep)));
      return removed;
    },
  };

  /** Files of builds that never published (killed) and are a day old: nothing will finish them. */
  async function removeAbandonedBuilds(kept: ReleaseManifest[]): Promise<void> {
    const published = new Set<string>();
    for (const m of kept) {
      const found = await readManifest(m.version);
      if (found) published.add(buildPrefix(m.version, found.build));
    }
    const stale = (await listKeys(`${prefix}files/`)).filter((o) => {
      const rest = o.Key!.slice(`${prefix}files/`.length).split('/');
      const own = `${prefix}files/${rest[0]}/${rest[1]}/`;
      return !published.has(own) && Date.now() - (o.LastModified?.getTime() ?? Date.now()) > ABANDONED_MS;
    });
    await deleteKeys(stale.map((o) => o.Key!));
  }
}
