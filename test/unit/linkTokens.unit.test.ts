import assert from 'node:assert/strict';
import { aessiv } from '@noble/ciphers/aes.js';
import bs58 from 'bs58';
import { MAX_WEB_URL_BYTES, PLATFORMS } from '../../contracts/domain.ts';
import {
  createLinkTokens,
  deepLink,
  DEVELOPMENT_LINK_KEY_HEX,
  LINK_TOKEN_PATTERN,
  MAX_LINK_TOKEN_CHARS,
  linkKeysFromEnv,
  usesDevelopmentLinkKey,
} from '../../services/links/linkTokens.ts';
import { base58Many, base58WasmMemory, base58WasmPresent } from '../../services/links/base58Wasm.ts';
import { base58, sivEncrypter } from '../../services/links/fastSiv.ts';

const key1 = Uint8Array.from({ length: 32 }, (_, i) => i + 1);
const key2 = Uint8Array.from({ length: 32 }, (_, i) => 200 - i);
const URL_A = 'https://www.netflix.com/title/80057281';
const URL_B = 'https://www.netflix.com/title/80057282';
const BASE58 = /^[123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz]+$/;

describe('link tokens', function () {
  const v1 = createLinkTokens({ keys: [{ version: 1, key: key1 }] });

  it('gives the same token for the same URL and another for another URL', function () {
    assert.equal(v1.encode(URL_A), v1.encode(URL_A));
    assert.equal(createLinkTokens({ keys: [{ version: 1, key: key1.slice() }] }).encode(URL_A), v1.encode(URL_A));
    assert.notEqual(v1.encode(URL_A), v1.encode(URL_B));
  });

  it('decodes its own tokens back to the URL, non-ASCII and empty URLs included', function () {
    for (const url of [URL_A, 'https://example.com/f%C3%A9/été?q=ü&x=1#frag', '']) {
      assert.equal(v1.decode(v1.encode(url)), url);
    }
  });

  it('makes the very tokens it has always made (pinned: a token must never change for a key and URL)', function () {
    // Made by the former hand-written SIV and base58 before they were replaced by aessiv and bs58.
    assert.equal(v1.encode(URL_A), 'XErWuytQkLvYydF6g9sTeUK2kjLo9Knk5iL9kBMpNZA7DNS7eufkc3xPBbZM9QRSHUNKqoGS9v');
    const dev = createLinkTokens({ keys: linkKeysFromEnv({}, { development: true }) });
    assert.equal(dev.encode(URL_A), 'gtVCXktcK1Z72UoXyGqXTq4Y7zN4yhgzsUkn3nuqSGUDoHMpkJ1ZoWkPrJiiRXb6n5gsDTcknq');
    const key64 = Uint8Array.from({ length: 64 }, (_, i) => (i * 7 + 3) & 255);
    const v2 = createLinkTokens({ keys: [{ version: 2, key: key64 }] });
    assert.equal(v2.encode('https://tv.apple.com/us/movie/été'), 'i7oMKbNZ33ZfSjPnE8PseQrtGyYryBcmhKdC46C632jDz8MycLJMLHZicSZzg4DXW3g8hV');
  });

  it('makes in a batch exactly the bytes of noble aessiv and the text of bs58, for every length and both key sizes', function () {
    // Lengths around every block boundary up to 160 bytes, then a few long ones, in one batch
    // (mixed lengths: the batch enciphers block position by block position).
    const lengths = [...Array.from({ length: 161 }, (_, n) => n), 255, 256, 257, 1024];
    for (const key of [key1, Uint8Array.from({ length: 64 }, (_, i) => (i * 7 + 3) & 255)]) {
      const ad = Uint8Array.of(7);
      const plaintexts = lengths.map((n) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + n) & 255)).reverse();
      const sealed = sivEncrypter(key, ad)(plaintexts);
      plaintexts.forEach((p, k) => {
        const expected = aessiv(key, ad).encrypt(p);
        assert.deepEqual(sealed[k], expected, `${p.length} bytes, ${key.length}-byte key`);
        assert.equal(base58(expected), bs58.encode(expected));
      });
    }
    // base58's leading zero bytes (a `1` each), zeros inside, and every remainder of three.
    for (let n = 0; n < 40; n++) {
      for (const zeros of [0, 1, 2, 5]) {
        const bytes = Uint8Array.from({ length: zeros + n }, (_, i) => (i < zeros ? 0 : (i * 97 + 13) % (i % 5 === 0 ? 1 : 256)));
        assert.equal(base58(bytes), bs58.encode(bytes), `${zeros} zeros + ${n} bytes`);
      }
    }
    // Long inputs (a token of a long URL), all 0xff (the largest limbs and carries) and
    // pseudo-random bytes: the carries found by multiplication must be exact at every size.
    let seed = 12345;
    const next = (): number => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed >>> 24;
    };
    for (const n of [41, 53, 64, 97, 128, 200, 333, 512, 1 + 16 + MAX_WEB_URL_BYTES]) {
      for (const bytes of [new Uint8Array(n).fill(0xff), Uint8Array.from({ length: n }, next), Uint8Array.from({ length: n }, (_, i) => (i === 0 ? 0 : next()))]) {
        assert.equal(base58(bytes), bs58.encode(bytes), `${n} bytes from ${bytes[0]}`);
      }
    }
    const urls = [URL_A, URL_B, '', 'https://example.com/f%C3%A9/été?q=ü&x=1#frag'];
    assert.deepEqual(v1.encodeMany(urls), urls.map((url) => v1.encode(url)));
    assert.deepEqual(v1.encodeMany([]), []);
  });

  it('writes in WebAssembly, many at once, the text of bs58 (base58Many), falling back for inputs too long', function () {
    assert.ok(base58WasmPresent(), 'services/links/base58.wasm is in place');
    let seed = 777;
    const next = (): number => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed >>> 24;
    };
    const inputs: Uint8Array[] = [new Uint8Array(0), Uint8Array.of(0), new Uint8Array(7), Uint8Array.of(0, 0, 1), Uint8Array.of(255)];
    for (let n = 1; n < 80; n++) {
      for (const zeros of [0, 1, 3]) inputs.push(Uint8Array.from({ length: zeros + n }, (_, i) => (i < zeros ? 0 : next())));
      inputs.push(new Uint8Array(n).fill(0xff));
      inputs.push(Uint8Array.from({ length: n }, (_, i) => (i % 4 === 1 ? next() : 0)));
    }
    for (const n of [333, 1 + 16 + MAX_WEB_URL_BYTES, 3072, 3073]) inputs.push(new Uint8Array(n).fill(0xff), Uint8Array.from({ length: n }, next));
    const expected = inputs.map((b) => bs58.encode(b));
    assert.deepEqual(base58Many(inputs), expected);
    // In batches of every size, so that the scratch buffer grows and is reused.
    for (const size of [1, 2, 17, 400]) {
      for (let i = 0; i < inputs.length; i += size) assert.deepEqual(base58Many(inputs.slice(i, i + size)), expected.slice(i, i + size));
    }
    assert.deepEqual(base58Many([]), []);
    // More than one call into the module holds (8,192), in order.
    const many = Array.from({ length: 20_000 }, (_, i) => Uint8Array.from({ length: 1 + (i % 60) }, next));
    assert.deepEqual(base58Many(many), many.map((b) => bs58.encode(b)));
  });

  it('writes the text of bs58 still when the module traps (its memory exhausted), and a new instance the call after', function () {
    const memory = base58WasmMemory();
    assert.ok(memory !== null, 'services/links/base58.wasm is in place');
    // Scratch larger than the whole memory now: no free space inside can hold it, and the
    // memory grown to the most a module has cannot grow for it, so the allocation traps.
    const size = memory.buffer.byteLength;
    // Zero bytes, which base58 writes as '1's at once (any other bytes cost quadratic time in bs58).
    const inputs = Array.from({ length: Math.ceil(size / 2000) + 1 }, (_, i) => (i % 100 === 0 ? Uint8Array.of(i % 256, 7, 0) : new Uint8Array(1000)));
    assert.ok(inputs.length <= 8192, `one call holds them (${inputs.length})`);
    memory.grow(65536 - size / 65536);
    assert.deepEqual(base58Many(inputs), inputs.map((b) => bs58.encode(b)));
    const after = base58WasmMemory();
    assert.notEqual(after, memory, 'the trapped instance is not used again');
    assert.ok((after?.buffer.byteLength ?? 0) < 65536 * 65536);
    assert.deepEqual(base58Many(inputs.slice(0, 3)), inputs.slice(0, 3).map((b) => bs58.encode(b)));
  });

  it('bounds tokens by the longest URL accepted, and refuses a longer token without decoding it', function () {
    const longest = v1.encode(`https://p.example/${'é'.repeat((MAX_WEB_URL_BYTES - 18) / 2)}`);
    assert.ok(longest.length <= MAX_LINK_TOKEN_CHARS, `${longest.length} > ${MAX_LINK_TOKEN_CHARS}`);
    assert.match(longest, new RegExp(LINK_TOKEN_PATTERN));
    assert.equal(v1.decode(longest)?.length, 18 + (MAX_WEB_URL_BYTES - 18) / 2);
    const started = performance.now();
    assert.equal(v1.decode('z'.repeat(MAX_LINK_TOKEN_CHARS + 1)), null);
    assert.equal(v1.decode('z'.repeat(1_000_000)), null);
    assert.ok(performance.now() - started < 5);
  });

  it('writes only base58 (Bitcoin alphabet) characters, starting with the key version byte', function () {
    const token = v1.encode(URL_A);
    assert.match(token, BASE58);
    const bytes = bs58.decode(token);
    assert.equal(bytes[0], 1);
    // version byte + 16-byte SIV tag + the URL's bytes, nothing else
    assert.equal(bytes.length, 1 + 16 + URL_A.length);
  });

  it('does not reveal the URL in the token bytes', function () {
    const bytes = Buffer.from(bs58.decode(v1.encode(URL_A)));
    assert.equal(bytes.includes(Buffer.from('netflix')), false);
  });

  it('returns null for a tampered token, whichever byte is changed', function () {
    const bytes = bs58.decode(v1.encode(URL_A));
    for (const at of [1, 8, 17, bytes.length - 1]) {
      const changed = bytes.slice();
      changed[at] = (changed[at] as number) ^ 0x01;
      assert.equal(v1.decode(bs58.encode(changed)), null, `byte ${at}`);
    }
    assert.equal(v1.decode(bs58.encode(bytes.subarray(0, bytes.length - 1))), null);
    assert.equal(v1.decode(bs58.encode(bytes.subarray(0, 10))), null);
  });

  it('returns null, without throwing, for strings that are not base58 or not tokens', function () {
    for (const s of ['', '0OIl', 'abc+/=', 'https://www.netflix.com', '1', '11111111111111111111', 'x'.repeat(5000)]) {
      assert.equal(v1.decode(s), null, JSON.stringify(s.slice(0, 30)));
    }
    assert.equal(v1.decode(undefined as unknown as string), null);
  });

  it('returns null for a token made with a key it does not have, even under the same version', function () {
    const other = createLinkTokens({ keys: [{ version: 1, key: key2 }] });
    assert.equal(v1.decode(other.encode(URL_A)), null);
  });

  it('refuses a token whose version byte was relabelled to another configured key', function () {
    const both = createLinkTokens({ keys: [{ version: 1, key: key1 }, { version: 2, key: key1 }], current: 1 });
    const bytes = bs58.decode(both.encode(URL_A));
    bytes[0] = 2;
    assert.equal(both.decode(bs58.encode(bytes)), null);
  });

  it('makes new tokens with the highest version after a rotation and still decodes the old ones', function () {
    const rotated = createLinkTokens({ keys: [{ version: 1, key: key1 }, { version: 2, key: key2 }] });
    assert.equal(rotated.version, 2);
    const oldToken = v1.encode(URL_A);
    const newToken = rotated.encode(URL_A);
    assert.notEqual(newToken, oldToken);
    assert.equal(bs58.decode(newToken)[0], 2);
    assert.equal(rotated.decode(oldToken), URL_A);
    assert.equal(rotated.decode(newToken), URL_A);
    // Once key 1 is retired, its tokens stop decoding.
    assert.equal(createLinkTokens({ keys: [{ version: 2, key: key2 }] }).decode(oldToken), null);
  });

  it('encodes with an explicitly chosen current version', function () {
    const pinned = createLinkTokens({ keys: [{ version: 1, key: key1 }, { version: 2, key: key2 }], current: 1 });
    assert.equal(pinned.encode(URL_A), v1.encode(URL_A));
  });

  it('refuses a configuration without keys, with a wrong key size, a duplicate or an unknown current version', function () {
    assert.throws(() => createLinkTokens({ keys: [] }), { code: 'internal' });
    assert.throws(() => createLinkTokens({ keys: [{ version: 1, key: new Uint8Array(16) }] }), { code: 'internal' });
    assert.throws(() => createLinkTokens({ keys: [{ version: 256, key: key1 }] }), { code: 'internal' });
    assert.throws(() => createLinkTokens({ keys: [{ version: 1, key: key1 }, { version: 1, key: key2 }] }), { code: 'internal' });
    assert.throws(() => createLinkTokens({ keys: [{ version: 1, key: key1 }], current: 3 }), { code: 'internal' });
  });
});

describe('link token keys from the environment', function () {
  it('reads versioned hex keys from LINK_TOKEN_KEYS', function () {
    const keys = linkKeysFromEnv({ LINK_TOKEN_KEYS: `1:${'ab'.repeat(32)}, 2:${'CD'.repeat(32)}` });
    assert.deepEqual(keys.map((k) => k.version), [1, 2]);
    assert.deepEqual(keys[0]!.key, new Uint8Array(32).fill(0xab));
    assert.deepEqual(keys[1]!.key, new Uint8Array(32).fill(0xcd));
    assert.equal(usesDevelopmentLinkKey({ LINK_TOKEN_KEYS: `1:${'ab'.repeat(32)}` }), false);
  });

  it('falls back to the labelled development key, version 1, only with --sample and when the variable is absent or blank', function () {
    for (const env of [{}, { LINK_TOKEN_KEYS: '' }, { LINK_TOKEN_KEYS: '  ' }]) {
      const keys = linkKeysFromEnv(env, { development: true });
      assert.equal(keys.length, 1);
      assert.equal(keys[0]!.version, 1);
      assert.equal(Buffer.from(keys[0]!.key).toString('hex'), DEVELOPMENT_LINK_KEY_HEX);
      assert.equal(usesDevelopmentLinkKey(env), true);
    }
    const configured = linkKeysFromEnv({ LINK_TOKEN_KEYS: `1:${'ab'.repeat(32)}` }, { development: true });
    assert.deepEqual(configured.map((k) => Buffer.from(k.key).toString('hex')), ['ab'.repeat(32)], 'configured keys win, even with --sample');
  });

  it('refuses to run on the development key without --sample: the error names the variable', function () {
    for (const env of [{}, { LINK_TOKEN_KEYS: '' }, { LINK_TOKEN_KEYS: '  ' }]) {
      assert.throws(() => linkKeysFromEnv(env), (err: Error & { code?: string }) => {
        assert.equal(err.code, 'missing_parameter');
        assert.match(err.message, /^LINK_TOKEN_KEYS is not set: .*--sample/);
        assert.doesNotMatch(err.message, /\n/);
        return true;
      });
    }
  });

  it('refuses a malformed LINK_TOKEN_KEYS instead of using the development key', function () {
    for (const value of ['abc', `1:${'ab'.repeat(31)}`, `x:${'ab'.repeat(32)}`, `300:${'ab'.repeat(32)}`, `1:${'zz'.repeat(32)}`]) {
      assert.throws(() => linkKeysFromEnv({ LINK_TOKEN_KEYS: value }), { code: 'invalid_parameter' }, value);
    }
  });
});

describe('deep links per platform', function () {
  const web = 'https://www.netflix.com/title/80057281?trkid=7';

  it('sends web to the URL itself', function () {
    assert.equal(deepLink(web, 'web'), web);
  });

  it('maps a known provider to its published app identifiers', function () {
    const fallback = encodeURIComponent(web);
    assert.deepEqual(
      Object.fromEntries(PLATFORMS.map((p) => [p, deepLink(web, p)])),
      {
        web,
        ios: 'nflx://www.netflix.com/title/80057281?trkid=7',
        android: `intent://www.netflix.com/title/80057281?trkid=7#Intent;scheme=https;package=com.netflix.mediaclient;S.browser_fallback_url=${fallback};end`,
        android_tv: `intent://www.netflix.com/title/80057281?trkid=7#Intent;scheme=https;package=com.netflix.ninja;S.browser_fallback_url=${fallback};end`,
        fire_tv: `intent://www.netflix.com/title/80057281?trkid=7#Intent;scheme=https;package=com.netflix.ninja;S.browser_fallback_url=${fallback};end`,
        roku: 'roku://launch/12?contentId=80057281',
        webos: `webos://launch/netflix?contentTarget=${fallback}`,
      },
    );
  });

  it('derives identifiers from the domain of any other provider', function () {
    const url = 'https://play.stream-hub.co.uk/watch/abc-123';
    assert.equal(deepLink(url, 'ios'), 'streamhub://play.stream-hub.co.uk/watch/abc-123');
    assert.match(deepLink(url, 'android'), /;package=uk\.co\.streamhub;/);
    assert.match(deepLink(url, 'android_tv'), /;package=uk\.co\.streamhub;/);
    assert.equal(deepLink(url, 'roku'), 'roku://launch/streamhub?contentId=abc-123');
    assert.equal(deepLink(url, 'webos'), `webos://launch/streamhub?contentTarget=${encodeURIComponent(url)}`);
  });

  it('uses a stable hash as Roku content id when the URL has no path', function () {
    const a = deepLink('https://example.com/?id=1', 'roku');
    assert.match(a, /^roku:\/\/launch\/example\?contentId=[0-9a-f]{16}$/);
    assert.equal(deepLink('https://example.com/?id=1', 'roku'), a);
    assert.notEqual(deepLink('https://example.com/?id=2', 'roku'), a);
  });

  it('gives the web URL back for every platform when the URL is not http(s)', function () {
    for (const p of PLATFORMS) {
      assert.equal(deepLink('not a url', p), 'not a url');
      assert.equal(deepLink('javascript:alert(1)', p), 'javascript:alert(1)');
    }
  });

  it('is reachable from the token codec for the redirect', function () {
    const tokens = createLinkTokens({ keys: linkKeysFromEnv({}, { development: true }) });
    const url = tokens.decode(tokens.encode(web));
    assert.equal(url === null ? null : tokens.deepLink(url, 'ios'), 'nflx://www.netflix.com/title/80057281?trkid=7');
  });
});
