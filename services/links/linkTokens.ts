/**
 * Link tokens (docs/api.md "Link tokens and `/go`"): a streaming link is published as
 * `/go/<link_token>` so the provider URL never appears in API responses or snapshots.
 *
 * token = base58 (Bitcoin alphabet) of [key version byte] ++ AES-SIV(key, URL bytes), with the
 * version byte as associated data.
 *
 * Why AES-SIV (RFC 5297, `aessiv` of @noble/ciphers) rather than AES-GCM-SIV (`gcmsiv`): the
 * token must be deterministic (same URL, same token, so links and snapshot files are stable
 * week to week), and RFC 5297 SIV is defined as deterministic authenticated encryption: it
 * needs no nonce at all, its synthetic IV is a MAC of the plaintext. GCM-SIV only tolerates a
 * repeated nonce, so determinism would rest on a fixed nonce and the key would wear out with
 * the number of URLs encrypted under that one nonce. (`siv` of @noble/ciphers v1 is removed in
 * the installed v2 and throws.) The version byte is bound as associated data, so a token cannot
 * be re-labelled to another key version.
 */
import { aessiv } from '@noble/ciphers/aes.js';
import bs58 from 'bs58';
import { base58Many } from './base58Wasm.ts';
import { sivEncrypter } from './fastSiv.ts';
import { AppError } from '../../contracts/errors.ts';
import { MAX_WEB_URL_BYTES, type Platform } from '../../contracts/domain.ts';
import { missingSecret } from '../shared/config.ts';
import { deepLink } from './deepLinks.ts';

export { deepLink };

export interface LinkKey {
  /** 0-255, written as the first byte of every token made with this key. */
  version: number;
  /** AES-SIV key: 32 bytes (AES-128-SIV) or 64 bytes (AES-256-SIV). */
  key: Uint8Array;
}

export interface LinkTokensOptions {
  /** Every key a token may have been made with; old keys stay here while their tokens live. */
  keys: LinkKey[];
  /** Version used to make new tokens. Default: the highest configured version. */
  current?: number;
}

export interface LinkTokens {
  /** The version new tokens are made with. */
  readonly version: number;
  /** The token of a web URL: the same URL always gives the same token under one key. */
  encode(webUrl: string): string;
  /** `encode` of each URL, in order, in one batch (the weekly release makes a million). */
  encodeMany(webUrls: readonly string[]): string[];
  /** The web URL of a token, or null when it is not base58 or does not authenticate. Never throws. */
  decode(token: string): string | null;
  /** Where a platform should go for a web URL (./deepLinks.ts). */
  deepLink(webUrl: string, platform: Platform): string;
}

/** SIV tag length: the smallest token is the version byte and an empty URL's tag. */
const TAG_BYTES = 16;

/**
 * The longest token of a URL the catalog accepts (MAX_WEB_URL_BYTES): base58 writes a byte in
 * log(256)/log(58) characters (a leading zero byte in one), so 1 + 16 + 1,024 bytes take at most
 * 1,422 characters. A longer token cannot decrypt: `/go` refuses it without decoding, which
 * matters because base58 decoding costs time quadratic in the length (~5 ms at this bound,
 * ~19 ms at twice the length).
 */
export const MAX_LINK_TOKEN_CHARS = Math.ceil(((1 + TAG_BYTES + MAX_WEB_URL_BYTES) * Math.log(256)) / Math.log(58));
/** Base58, Bitcoin alphabet (no 0, O, I, l): the OpenAPI `pattern` of `link_token`. */
export const LINK_TOKEN_PATTERN = /^[1-9A-HJ-NP-Za-km-z]+$/;

/** The UTF-8 bytes of each string, as views of one buffer (one allocation for a whole batch). */
function utf8Many(strings: readonly string[]): Uint8Array[] {
  let room = 0;
  for (const s of strings) room += s.length * 3;
  const all = Buffer.allocUnsafe(room);
  let at = 0;
  return strings.map((s) => {
    const n = all.write(s, at, 'utf8');
    const view = all.subarray(at, at + n);
    at += n;
    return view;
  });
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

export function createLinkTokens(options: LinkTokensOptions): LinkTokens {
  if (options.keys.length === 0) throw new AppError('internal', 'At least one link token key is needed.');
  const keys = new Map<number, Uint8Array>();
  for (const { version, key } of options.keys) {
    if (!Number.isInteger(version) || version < 0 || version > 255) {
      throw new AppError('internal', `Link token key version ${version} is not a byte (0-255).`);
    }
    if (key.length !== 32 && key.length !== 64) {
      throw new AppError('internal', `Link token key ${version} has ${key.length} bytes; AES-SIV needs 32 or 64.`);
    }
    if (keys.has(version)) throw new AppError('internal', `Link token key version ${version} is configured twice.`);
    keys.set(version, key.slice());
  }
  const current = options.current ?? Math.max(...keys.keys());
  const currentKey = keys.get(current);
  if (currentKey === undefined) throw new AppError('internal', `No link token key has version ${current}.`);
  const currentAd = Uint8Array.of(current);
  // Each sealed URL comes after the version byte, as the token's bytes.
  const seal = sivEncrypter(currentKey, currentAd, Uint8Array.of(current));
  const encodeMany = (webUrls: readonly string[]): string[] =>
    // Flat strings (a cached token keeps ~150 bytes, not a chain of pieces), in WebAssembly (./base58Wasm.ts).
    base58Many(seal(utf8Many(webUrls)));

  return {
    version: current,

    // AES-SIV and base58 by ./fastSiv.ts (the same bytes as noble's `aessiv` and `bs58`, which
    // decode below uses): OpenSSL's AES on keys expanded once, a batch enciphered a block
    // position at a time. A single token still costs several cipher calls; callers that encode
    // a URL more than once keep the tokens (./linkTokenCache.ts), and bulk callers batch.
    encode(webUrl) {
      return encodeMany([webUrl])[0] as string;
    },

    encodeMany,

    decode(token) {
      if (typeof token !== 'string' || token.length === 0 || token.length > MAX_LINK_TOKEN_CHARS) return null;
      const bytes = bs58.decodeUnsafe(token);
      if (bytes === undefined || bytes.length < 1 + TAG_BYTES) return null;
      const version = bytes[0] as number;
      const key = keys.get(version);
      if (key === undefined) return null;
      try {
        const plain = aessiv(key, Uint8Array.of(version)).decrypt(bytes.subarray(1));
        return strictUtf8.decode(plain);
      } catch {
        // Tampered, truncated or made with another key of the same version: not our token.
        return null;
      }
    },

    deepLink,
  };
}

/**
 * DEVELOPMENT ONLY, not a secret: it ships in the repository, so anyone can make tokens with
 * it. Used only by `marquee start --sample` (and `snapshot build --sample`) when
 * `LINK_TOKEN_KEYS` is not set; a server that accepted it in production would redirect to any
 * address a stranger sealed with it.
 */
export const DEVELOPMENT_LINK_KEY_HEX = '6d61727175656520646576656c6f706d656e74206c696e6b206b6579202d2d21';

export interface LinkKeysOptions {
  /** Whether an unset `LINK_TOKEN_KEYS` falls back to the development key (`--sample` only). Default false. */
  development?: boolean;
}

/**
 * Keys from `LINK_TOKEN_KEYS` = `"<version>:<hex key>,..."`, e.g. `1:<64 hex>,2:<64 hex>`
 * (64 hex = 32 bytes; 128 hex = 64 bytes for AES-256-SIV). Absent or blank: the development
 * key as version 1 when `development` is set, else an error naming the variable. A malformed
 * value is refused rather than silently replaced.
 */
export function linkKeysFromEnv(env: Record<string, string | undefined>, options: LinkKeysOptions = {}): LinkKey[] {
  const raw = env.LINK_TOKEN_KEYS?.trim();
  if (raw === undefined || raw === '') {
    if (options.development === true) return [{ version: 1, key: hexToBytes(DEVELOPMENT_LINK_KEY_HEX) }];
    throw missingSecret('LINK_TOKEN_KEYS');
  }
  return raw.split(',').map((part) => {
    const m = /^\s*(\d{1,3}):([0-9a-fA-F]{64}|[0-9a-fA-F]{128})\s*$/.exec(part);
    if (m === null || Number(m[1]) > 255) {
      throw new AppError('invalid_parameter', 'LINK_TOKEN_KEYS must look like "1:<64 hex>,2:<64 hex>".', {
        details: { variable: 'LINK_TOKEN_KEYS' },
      });
    }
    return { version: Number(m[1]), key: hexToBytes(m[2] as string) };
  });
}

/** Whether `LINK_TOKEN_KEYS` is unset, so only `--sample` can run (on the development key). */
export function usesDevelopmentLinkKey(env: Record<string, string | undefined>): boolean {
  return (env.LINK_TOKEN_KEYS?.trim() ?? '') === '';
}

function hexToBytes(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}
