import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import v8 from 'node:v8';
import vm from 'node:vm';
import { cachedLinkTokens } from '../../services/api/linkTokenCache.ts';
import type { LinkTokenCodec } from '../../services/api/types.ts';
import { createLinkTokens } from '../../services/links/linkTokens.ts';

/** The real codec, counting its encode calls. */
function countingCodec(): { codec: LinkTokenCodec; real: LinkTokenCodec; calls: string[] } {
  const real = createLinkTokens({ keys: [{ version: 1, key: new Uint8Array(randomBytes(32)) }] });
  const calls: string[] = [];
  const codec: LinkTokenCodec = {
    encode: (url) => {
      calls.push(url);
      return real.encode(url);
    },
    decode: (token) => real.decode(token),
    deepLink: (url, platform) => real.deepLink(url, platform),
  };
  return { codec, real, calls };
}

describe('the API link-token cache', () => {
  it('answers the same token as the codec and encrypts each URL once', () => {
    const { codec, real, calls } = countingCodec();
    const cached = cachedLinkTokens(codec);
    const a = 'https://www.netflix.com/title/1';
    const b = 'https://www.hulu.com/movie/2';
    const tokens = [cached.encode(a), cached.encode(b), cached.encode(a), cached.encode(a)];
    assert.deepEqual(tokens, [real.encode(a), real.encode(b), real.encode(a), real.encode(a)]);
    assert.deepEqual(calls, [a, b]);
    assert.equal(cached.decode(tokens[0] as string), a);
    assert.equal(cached.deepLink(a, 'web'), real.deepLink(a, 'web'));
  });

  it('keeps at most maxEntries tokens, dropping the oldest first', () => {
    const { codec, calls } = countingCodec();
    const cached = cachedLinkTokens(codec, 2);
    for (const url of ['https://a.example/1', 'https://a.example/2', 'https://a.example/3']) cached.encode(url);
    cached.encode('https://a.example/3');
    cached.encode('https://a.example/2');
    cached.encode('https://a.example/1');
    assert.deepEqual(calls, ['https://a.example/1', 'https://a.example/2', 'https://a.example/3', 'https://a.example/1']);
  });

  it('keeps each token in a few hundred bytes (a flat string, not the ~2 KB chain base58 builds)', () => {
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as () => void;
    const real = createLinkTokens({ keys: [{ version: 1, key: new Uint8Array(randomBytes(32)) }] });
    const cached = cachedLinkTokens(real, 20_000);
    const urls = Array.from({ length: 20_000 }, (_, i) => `https://watch.example/US/mv${String(i).padStart(8, '0')}`);
    gc();
    const before = process.memoryUsage().heapUsed;
    for (const url of urls) cached.encode(url);
    gc();
    const perEntry = (process.memoryUsage().heapUsed - before) / urls.length;
    // The cache is still in use here, so the collection above could not drop it.
    assert.equal(cached.encode(urls[0] as string), real.encode(urls[0] as string));
    assert.ok(perEntry < 600, `${perEntry.toFixed(0)} bytes per cached token`);
  });
});
