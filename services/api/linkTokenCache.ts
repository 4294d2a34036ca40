/**
 * Link tokens are deterministic (AES-SIV: the same URL always gives the same token under one
 * key, services/links/linkTokens.ts), yet making one costs tens of microseconds, and the links
 * endpoint makes one per offer on every request: most of its time. The API therefore keeps the
 * tokens of the URLs it served, up to a bound, and answers with exactly the same bytes.
 */
import type { LinkTokenCodec } from './types.ts';

/**
 * `codec` with `encode` remembered per URL. `decode` and `deepLink` are passed through.
 * @param maxEntries tokens kept; past it the oldest is dropped first. Default 50000 (~15 MB).
 */
export function cachedLinkTokens(codec: LinkTokenCodec, maxEntries = 50_000): LinkTokenCodec {
  const tokens = new Map<string, string>();
  return {
    encode(url) {
      const hit = tokens.get(url);
      if (hit !== undefined) return hit;
      const token = codec.encode(url);
      if (tokens.size >= maxEntries) {
        // A Map iterates in insertion order: its first key is the oldest entry.
        const oldest = tokens.keys().next();
        if (!oldest.done) tokens.delete(oldest.value);
      }
      tokens.set(url, token);
      return token;
    },
    decode: (token) => codec.decode(token),
    deepLink: (url, platform) => codec.deepLink(url, platform),
  };
}
