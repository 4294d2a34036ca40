/**
 * Link tokens are deterministic (AES-SIV: the same URL always gives the same token under one
 * key, ./linkTokens.ts), yet making one with the library costs ~50-80 us (noble's aessiv expands
 * its keys on every call, base58 is quadratic). Callers that meet a URL more than once keep its
 * token: the API (one token per offer on every links request) and the weekly release build
 * (the same provider URL serves a title in many countries: 38 % of the sample's links repeat).
 */

/**
 * `encode` remembered per URL, at most `maxEntries` tokens; past it the oldest is dropped first
 * (a Map iterates in insertion order). An entry costs ~200 bytes (URL, flat token, the slot).
 */
export function cachedEncode(encode: (url: string) => string, maxEntries: number): (url: string) => string {
  const tokens = new Map<string, string>();
  return (url) => {
    const hit = tokens.get(url);
    if (hit !== undefined) return hit;
    const token = encode(url);
    if (tokens.size >= maxEntries) {
      const oldest = tokens.keys().next();
      if (!oldest.done) tokens.delete(oldest.value);
    }
    tokens.set(url, token);
    return token;
  };
}
