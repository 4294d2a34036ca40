/**
 * Signed download URLs: `sig` = hex HMAC-SHA256 over `version\npath\nexpires` (docs/api.md
 * "Snapshots and signed downloads"). The signature binds the exact release, file and expiry, so
 * a URL cannot be replayed for another file or past its hour.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { missingSecret } from '../shared/config.ts';

export function signDownload(key: string | Uint8Array, version: string, path: string, expires: number): string {
  return createHmac('sha256', key).update(`${version}\n${path}\n${expires}`).digest('hex');
}

export type SignatureCheck = 'valid' | 'malformed' | 'expired' | 'mismatch';

/**
 * Checks `expires` (unix seconds, decimal) and `sig` (64 hex) against the key and `nowSeconds`.
 * The comparison runs in constant time.
 */
export function checkDownloadSignature(
  key: string | Uint8Array,
  input: { version: string; path: string; expires: string | undefined; sig: string | undefined },
  nowSeconds: number,
): SignatureCheck {
  const { expires, sig } = input;
  if (expires === undefined || sig === undefined || !/^\d{1,12}$/.test(expires) || !/^[0-9a-f]{64}$/.test(sig)) return 'malformed';
  const expected = Buffer.from(signDownload(key, input.version, input.path, Number(expires)), 'hex');
  if (!timingSafeEqual(expected, Buffer.from(sig, 'hex'))) return 'mismatch';
  return Number(expires) < nowSeconds ? 'expired' : 'valid';
}

/** The download URL of a release file; path segments are percent-encoded, `/` and `=` kept. */
export function downloadUrl(publicBaseUrl: string, version: string, path: string, expires: number, sig: string): string {
  const encodedPath = path.split('/').map((s) => encodeURIComponent(s).replace(/%3D/g, '=')).join('/');
  return `${publicBaseUrl.replace(/\/+$/, '')}/v1/snapshots/file/${encodeURIComponent(version)}/${encodedPath}?expires=${expires}&sig=${sig}`;
}

/**
 * The signing key: `DOWNLOAD_SIGNING_KEY` when configured (required outside `--sample`, and
 * the same for every API process serving the same releases). With `development` (`--sample`)
 * and no key configured: a random key kept in `<dataDir>/download-signing.key`, created on
 * first use, so download URLs survive a restart of a single development process.
 */
export async function loadSigningKey(configured: string | null, dataDir: string, options: { development?: boolean } = {}): Promise<string> {
  if (configured !== null && configured !== '') return configured;
  if (options.development !== true) throw missingSecret('DOWNLOAD_SIGNING_KEY');
  const file = join(dataDir, 'download-signing.key');
  try {
    const stored = (await readFile(file, 'utf8')).trim();
    if (/^[0-9a-f]{64}$/.test(stored)) return stored;
  } catch (err) {
    if ((err as { code?: unknown }).code !== 'ENOENT') throw err;
  }
  await mkdir(dataDir, { recursive: true });
  const key = randomBytes(32).toString('hex');
  try {
    await writeFile(file, `${key}\n`, { flag: 'wx', mode: 0o600 });
    return key;
  } catch (err) {
    // Another process created it first: use theirs.
    if ((err as { code?: unknown }).code === 'EEXIST') return (await readFile(file, 'utf8')).trim();
    throw err;
  }
}
