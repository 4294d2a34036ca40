/**
 * The encode half of link tokens, made cheap enough for a weekly release of a million links.
 *
 * noble's `aessiv(key, ad).encrypt(p)` expands the AES key four times per call (three CMACs and
 * a CTR) and computes the CMACs of the constant prefix (`<zero>` and the associated data) every
 * time: ~60 us a token, most of a release build. For one key and one associated-data value
 * those are all constants, so they are computed once here and each seal costs only the blocks
 * of the URL itself (~3 us). The AES block function is noble's own (its `unsafe` exports), and
 * test/unit/sivSealer.unit.test.ts checks byte equality with `aessiv` over many lengths and
 * both key sizes, so a token never changes. Decryption stays on `aessiv` (it is rare).
 *
 * base58Encode is likewise bs58's output (Bitcoin alphabet, a leading '1' per leading zero
 * byte) computed on limbs of 58^5 instead of single digits, ~10x fewer steps.
 */
import { unsafe } from '@noble/ciphers/aes.js';

const BLOCK = 16;

/** RFC 5297 dbl(): multiply by x in GF(2^128), big-endian, in place. */
function dbl(block: Uint8Array): Uint8Array {
  const carry = block[0]! >> 7;
  for (let i = 0; i < BLOCK - 1; i++) block[i] = ((block[i]! << 1) | (block[i + 1]! >> 7)) & 0xff;
  block[BLOCK - 1] = ((block[BLOCK - 1]! << 1) & 0xff) ^ (carry ? 0x87 : 0);
  return block;
}

/** One AES block in place; noble's round function works on little-endian 32-bit words. */
function encryptBlockInPlace(xk: Uint32Array, b: Uint8Array): void {
  const { s0, s1, s2, s3 } = unsafe.encrypt(
    xk,
    b[0]! | (b[1]! << 8) | (b[2]! << 16) | (b[3]! << 24),
    b[4]! | (b[5]! << 8) | (b[6]! << 16) | (b[7]! << 24),
    b[8]! | (b[9]! << 8) | (b[10]! << 16) | (b[11]! << 24),
    b[12]! | (b[13]! << 8) | (b[14]! << 16) | (b[15]! << 24),
  );
  b[0] = s0; b[1] = s0 >>> 8; b[2] = s0 >>> 16; b[3] = s0 >>> 24;
  b[4] = s1; b[5] = s1 >>> 8; b[6] = s1 >>> 16; b[7] = s1 >>> 24;
  b[8] = s2; b[9] = s2 >>> 8; b[10] = s2 >>> 16; b[11] = s2 >>> 24;
  b[12] = s3; b[13] = s3 >>> 8; b[14] = s3 >>> 16; b[15] = s3 >>> 24;
}

/** AES-CMAC (RFC 4493) with a precomputed key schedule and subkeys. */
function cmacWith(xk: Uint32Array, k1: Uint8Array, k2: Uint8Array, msg: Uint8Array, out: Uint8Array): void {
  out.fill(0);
  const n = Math.max(1, Math.ceil(msg.length / BLOCK));
  for (let b = 0; b < n - 1; b++) {
    for (let i = 0; i < BLOCK; i++) out[i]! ^= msg[b * BLOCK + i]!;
    encryptBlockInPlace(xk, out);
  }
  const start = (n - 1) * BLOCK;
  const rest = msg.length - start;
  if (rest === BLOCK) {
    for (let i = 0; i < BLOCK; i++) out[i]! ^= msg[start + i]! ^ k1[i]!;
  } else {
    for (let i = 0; i < rest; i++) out[i]! ^= msg[start + i]!;
    out[rest]! ^= 0x80;
    for (let i = 0; i < BLOCK; i++) out[i]! ^= k2[i]!;
  }
  encryptBlockInPlace(xk, out);
}

/**
 * `(plain) => aessiv(key, ad).encrypt(plain)`, byte for byte, with the key-dependent work done
 * once. `key` is 32 or 64 bytes (AES-128-SIV / AES-256-SIV).
 */
export function createSivSealer(key: Uint8Array, ad: Uint8Array): (plain: Uint8Array) => Uint8Array {
  const half = key.length / 2;
  const macKey = unsafe.expandKeyLE(key.slice(0, half));
  const ctrKey = unsafe.expandKeyLE(key.slice(half));
  const l = new Uint8Array(BLOCK);
  encryptBlockInPlace(macKey, l);
  const k1 = dbl(l.slice());
  const k2 = dbl(k1.slice());
  // S2V's constant prefix: D = dbl(CMAC(<zero>)) xor CMAC(ad).
  const d = new Uint8Array(BLOCK);
  cmacWith(macKey, k1, k2, new Uint8Array(BLOCK), d);
  dbl(d);
  const adMac = new Uint8Array(BLOCK);
  cmacWith(macKey, k1, k2, ad, adMac);
  for (let i = 0; i < BLOCK; i++) d[i]! ^= adMac[i]!;
  const dd = dbl(d.slice());
  const v = new Uint8Array(BLOCK);
  const q = new Uint8Array(BLOCK);
  const stream = new Uint8Array(BLOCK);
  // S2V's last input, reused while URLs fit (they nearly always do).
  let scratch = new Uint8Array(256);

  return (plain) => {
    // T = plain xorend D (16 bytes or more), else dbl(D) xor pad(plain).
    const tLength = Math.max(BLOCK, plain.length);
    if (scratch.length < tLength) scratch = new Uint8Array(tLength * 2);
    const t = scratch.subarray(0, tLength);
    if (plain.length >= BLOCK) {
      t.set(plain);
      const off = plain.length - BLOCK;
      for (let i = 0; i < BLOCK; i++) t[off + i]! ^= d[i]!;
    } else {
      t.fill(0);
      t.set(plain);
      t[plain.length] = 0x80;
      for (let i = 0; i < BLOCK; i++) t[i]! ^= dd[i]!;
    }
    cmacWith(macKey, k1, k2, t, v);
    const out = new Uint8Array(BLOCK + plain.length);
    out.set(v);
    // CTR from Q = V with bits 63 and 31 cleared, a 128-bit big-endian counter.
    q.set(v);
    q[8]! &= 0x7f;
    q[12]! &= 0x7f;
    for (let start = 0; start < plain.length; start += BLOCK) {
      stream.set(q);
      encryptBlockInPlace(ctrKey, stream);
      const end = Math.min(BLOCK, plain.length - start);
      for (let i = 0; i < end; i++) out[BLOCK + start + i] = plain[start + i]! ^ stream[i]!;
      for (let j = BLOCK - 1; j >= 0; j--) {
        q[j] = (q[j]! + 1) & 0xff;
        if (q[j] !== 0) break;
      }
    }
    return out;
  };
}

const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
/** 58^5: a limb of five base-58 digits; limb * 65536 + carry stays below 2^53. */
const LIMB = 656_356_768;

/** limbs = limbs * factor + value, little-endian limbs of LIMB. */
function feed(limbs: number[], value: number, factor: number): void {
  let carry = value;
  for (let k = 0; k < limbs.length; k++) {
    const x = limbs[k]! * factor + carry;
    carry = Math.floor(x / LIMB);
    limbs[k] = x - carry * LIMB;
  }
  while (carry > 0) {
    const next = Math.floor(carry / LIMB);
    limbs.push(carry - next * LIMB);
    carry = next;
  }
}

/** bs58.encode (base-x, Bitcoin alphabet), the same string. */
export function base58Encode(bytes: Uint8Array): string {
  let zeroes = 0;
  while (zeroes < bytes.length && bytes[zeroes] === 0) zeroes += 1;
  // Little-endian limbs of the big number, fed two bytes at a time (one first if the count is odd).
  const limbs: number[] = [];
  let i = zeroes;
  if ((bytes.length - i) % 2 === 1) feed(limbs, bytes[i++]!, 256);
  for (; i < bytes.length; i += 2) feed(limbs, (bytes[i]! << 8) | bytes[i + 1]!, 65536);
  let digits = '';
  for (let k = 0; k < limbs.length; k++) {
    let limb = limbs[k]!;
    const last = k === limbs.length - 1;
    for (let j = 0; j < 5 && (!last || limb > 0); j++) {
      digits = ALPHABET[limb % 58]! + digits;
      limb = Math.floor(limb / 58);
    }
  }
  return '1'.repeat(zeroes) + digits;
}
