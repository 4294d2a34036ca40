import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { aessiv } from '@noble/ciphers/aes.js';
import bs58 from 'bs58';
import { base58Encode, createSivSealer } from '../../services/links/sivSealer.ts';

describe('the precomputed AES-SIV sealer and base58 encoder', function () {
  it('seal exactly what noble aessiv encrypts, for every length 0-100 and both key sizes', function () {
    for (const keyLength of [32, 64]) {
      for (const version of [0, 1, 255]) {
        const key = new Uint8Array(randomBytes(keyLength));
        const ad = Uint8Array.of(version);
        const seal = createSivSealer(key, ad);
        for (let length = 0; length <= 100; length++) {
          const plain = new Uint8Array(randomBytes(length));
          assert.deepEqual(seal(plain), aessiv(key, ad).encrypt(plain), `key ${keyLength} bytes, version ${version}, ${length} bytes`);
        }
      }
    }
  });

  it('seal the same as aessiv for 2,000 random URLs, twice in a row (no state leaks between calls)', function () {
    const key = new Uint8Array(randomBytes(32));
    const seal = createSivSealer(key, Uint8Array.of(1));
    const urls = Array.from({ length: 2000 }, () => new TextEncoder().encode(`https://watch.example/${randomBytes(1 + (randomBytes(1)[0]! % 60)).toString('base64url')}`));
    for (let round = 0; round < 2; round++) {
      for (const url of urls) assert.deepEqual(seal(url), aessiv(key, Uint8Array.of(1)).encrypt(url));
    }
  });

  it('encode base58 exactly as bs58 does, leading zero bytes and empty input included', function () {
    const cases: Uint8Array[] = [new Uint8Array(0), Uint8Array.of(0), Uint8Array.of(0, 0, 0), Uint8Array.of(0, 0, 1), Uint8Array.of(255), Uint8Array.of(57), Uint8Array.of(58)];
    for (let length = 1; length <= 120; length++) {
      cases.push(new Uint8Array(randomBytes(length)));
      const zeros = new Uint8Array(randomBytes(length));
      zeros.fill(0, 0, Math.min(length, 3));
      cases.push(zeros);
      cases.push(new Uint8Array(length).fill(255));
    }
    for (const bytes of cases) assert.equal(base58Encode(bytes), bs58.encode(bytes), `bytes ${Buffer.from(bytes).toString('hex')}`);
  });
});
