/** The API's link-token codec: the links endpoint makes one token per offer on every request. */
import { cachedEncode } from '../links/linkTokenCache.ts';
import type { LinkTokenCodec } from './types.ts';

/**
 * `codec` with `encode` remembered per URL (../links/linkTokenCache.ts), answering exactly the
 * same bytes. `decode` and `deepLink` are passed through.
 * @param maxEntries tokens kept; past it the oldest is dropped first. Default 50000 (~10 MB).
 */
export function cachedLinkTokens(codec: LinkTokenCodec, maxEntries = 50_000): LinkTokenCodec {
  return {
    encode: cachedEncode((url) => codec.encode(url), maxEntries),
    decode: (token) => codec.decode(token),
    deepLink: (url, platform) => codec.deepLink(url, platform),
  };
}
