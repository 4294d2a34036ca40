/** The link-token codec for the API tests: the real one when services/links provides it. */
import type { Platform } from '../../contracts/domain.ts';
import type { LinkTokenCodec } from '../../services/api/types.ts';

export async function testLinkTokens(): Promise<LinkTokenCodec> {
  const fake: LinkTokenCodec = {
    encode: (url) => `t${Buffer.from(url).toString('base64url')}`,
    decode: (token) => (token.startsWith('t') ? Buffer.from(token.slice(1), 'base64url').toString() : null),
    deepLink: (url: string, platform: Platform) => (platform === 'web' ? url : `${url}#${platform}`),
  };
  return fake;
}
