/** The real link-token codec with a key of this test run. */
import { randomBytes } from 'node:crypto';
import { createLinkTokens } from '../../services/links/linkTokens.ts';
import type { LinkTokenCodec } from '../../services/api/types.ts';

export async function testLinkTokens(): Promise<LinkTokenCodec> {
  return createLinkTokens({ keys: [{ version: 1, key: new Uint8Array(randomBytes(32)) }] });
}
