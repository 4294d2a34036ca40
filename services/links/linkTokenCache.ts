/**
 * Link tokens are deterministic (AES-SIV: the same URL always gives the same token under one
 * key, ./linkTokens.ts), yet making one costs AES calls and a base58 conversion, quadratic in
 * its length (several us alone, less in a batch). The API meets a URL more than once (one token
 * per offer on every links request) and keeps its token. (The weekly release build does not:
 * it makes a page of links' tokens in one batch, which costs less than looking each up.)
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
