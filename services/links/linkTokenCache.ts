/**
 * Link tokens are deterministic (AES-SIV: the same URL always gives the same token under one
 * key, ./linkTokens.ts), yet making one costs AES calls and a base58 conversion, quadratic in
 * its length (several us alone, less in a batch). Callers that meet a URL more than once keep its
 * token: the API (one token per offer on every links request) and the weekly release build
 * (the same provider URL serves a title in many countries: 38 % of the sample's links repeat).
 */

import { ownCopy } from '../shared/strings.ts';

/**
 * `encode` remembered per URL, at most `maxEntries` tokens; past it the oldest is dropped first.
 * An entry costs ~200 bytes (URL, flat token, the slot).
 *
 * The insertion order is kept in a ring of keys rather than read back from the Map: a Map
 * leaves a hole where an entry was deleted, and `keys().next()` walks every hole from the start
 * until the table is rebuilt, so evicting that way cost time quadratic in the evictions (14 s of
 * a 50,000-title release build; 400,000 inserts into 100,000 entries took minutes).
 */
export function cachedEncode(encode: (url: string) => string, maxEntries: number): (url: string) => string {
  const cache = tokenCache(maxEntries);
  return (url) => cache.get(url) ?? cache.put(url, encode(url));
}

/** A link-token encoder that can also make the tokens of many URLs in one batch. */
export interface BatchedEncoder {
  encode(url: string): string;
  /** Makes (in one batch) and keeps the tokens of those of `urls` not kept yet. */
  prepare(urls: Iterable<string>): void;
}

/**
 * `encode` and `encodeMany` remembered per URL, at most `maxEntries` tokens: `prepare` a batch
 * of URLs, then `encode` each of them from the cache. Tokens prepared stay until `maxEntries`
 * newer ones are made, so a batch must be smaller than that.
 */
export function cachedBatchedEncode(
  encodeMany: (urls: readonly string[]) => string[],
  maxEntries: number,
): BatchedEncoder {
  const cache = tokenCache(maxEntries);
  return {
    encode: (url) => cache.get(url) ?? cache.put(url, encodeMany([url])[0] as string),
    prepare(urls) {
      const missing = new Set<string>();
      for (const url of urls) if (cache.get(url) === undefined) missing.add(url);
      if (missing.size === 0) return;
      const list = [...missing];
      const tokens = encodeMany(list);
      for (let i = 0; i < list.length; i++) cache.put(list[i] as string, tokens[i] as string);
    },
  };
}

function tokenCache(maxEntries: number): { get(url: string): string | undefined; put(url: string, token: string): string } {
  const tokens = new Map<string, string>();
  const order: string[] = [];
  let oldest = 0;
  return {
    get: (url) => tokens.get(url),
    put(url, token) {
      if (maxEntries <= 0) return token;
      // Its own copy: a URL sliced from a decoded document would keep the document's strings alive.
      url = ownCopy(url);
      if (order.length < maxEntries) order.push(url);
      else {
        tokens.delete(order[oldest] as string);
        order[oldest] = url;
        oldest = (oldest + 1) % maxEntries;
      }
      tokens.set(url, token);
      return token;
    },
  };
}
