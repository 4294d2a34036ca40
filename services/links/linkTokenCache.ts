/**
 * Link tokens are deterministic (AES-SIV: the same URL always gives the same token under one
 * key, ./linkTokens.ts), yet making one with the library costs ~50-80 us (noble's aessiv expands
 * its keys on every call, base58 is quadratic). Callers that meet a URL more than once keep its
 * token: the API (one token per offer on every links request) and the weekly release build
 * (the same provider URL serves a title in many countries: 38 % of the sample's links repeat).
 */

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
  const tokens = new Map<string, string>();
  const order: string[] = [];
  let oldest = 0;
  return (url) => {
    const hit = tokens.get(url);
    if (hit !== undefined) return hit;
    const token = encode(url);
    if (maxEntries <= 0) return token;
    if (order.length < maxEntries) order.push(url);
    else {
      tokens.delete(order[oldest] as string);
      order[oldest] = url;
      oldest = (oldest + 1) % maxEntries;
    }
    tokens.set(url, token);
    return token;
  };
}
