/**
 * AES-SIV encryption (RFC 5297) and base58 encoding for making link tokens in bulk, giving the
 * very bytes and characters of @noble/ciphers' `aessiv` and `bs58` (./linkTokens.ts), several
 * times faster. Why: noble runs AES in JavaScript and expands both keys on every call, and bs58
 * converts one byte at a time; a weekly release makes a token per link (a million at 250,000
 * titles), which took most of its build time.
 *
 * Here AES runs in OpenSSL (node:crypto) on two long-lived ECB ciphers, one per half key, with
 * everything that depends only on the key and the associated data computed once: the CMAC
 * subkeys and S2V's `D` (RFC 5297 2.4) for the fixed associated data (the version byte). Per
 * message: one CMAC of `T` (CBC chained here, block by block) and the CTR keystream (the
 * counter blocks enciphered in one call). Decryption stays with noble (rare, on `/go`).
 */
import { createCipheriv, type Cipheriv } from 'node:crypto';

const BLOCK = 16;

/** Doubling in GF(2^128) (RFC 5297 2.3), in place. */
function dbl(block: Uint8Array): Uint8Array {
  const carry = block[0]! >> 7;
  for (let i = 0; i < BLOCK - 1; i++) block[i] = ((block[i]! << 1) | (block[i + 1]! >> 7)) & 0xff;
  block[BLOCK - 1] = ((block[BLOCK - 1]! << 1) & 0xff) ^ (carry * 0x87);
  return block;
}

/** AES in ECB mode on one key: enciphers whole blocks, no padding, reusable across calls. */
function ecb(key: Uint8Array): (blocks: Uint8Array) => Buffer {
  const cipher: Cipheriv = createCipheriv(`aes-${key.length * 8}-ecb`, key, null).setAutoPadding(false);
  return (blocks) => cipher.update(blocks);
}

/**
 * AES-CMAC (RFC 4493) of many messages on one key, block position by block position: each
 * round enciphers the current block of every message still going in one call (CBC chains
 * are sequential within a message, independent across messages). The MACs come back in one
 * buffer, message `k`'s at `k * 16`: a batch makes hundreds, and an array of its own for each
 * was an allocation per token.
 */
function cmacManyOf(key: Uint8Array): (messages: readonly Uint8Array[]) => Uint8Array {
  const encipher = ecb(key);
  const k1 = dbl(new Uint8Array(encipher(new Uint8Array(BLOCK))));
  const k2 = dbl(new Uint8Array(k1));
  return (messages) => {
    const count = messages.length;
    // Each message's blocks, then the messages longest first (a counting sort on the blocks),
    // so the messages still going in a round are a prefix.
    const blocks = new Int32Array(count);
    let most = 0;
    for (let k = 0; k < count; k++) {
      const b = Math.max(1, Math.ceil(messages[k]!.length / BLOCK));
      blocks[k] = b;
      if (b > most) most = b;
    }
    const firstOf = new Int32Array(most + 2);
    for (let k = 0; k < count; k++) firstOf[most - blocks[k]! + 1]! += 1;
    for (let b = 1; b <= most + 1; b++) firstOf[b]! += firstOf[b - 1]!;
    const order = new Int32Array(count);
    for (let k = 0; k < count; k++) order[firstOf[most - blocks[k]!]!++] = k;
    const x = new Uint8Array(count * BLOCK);
    let active = count;
    for (let r = 0; r < most; r++) {
      while (active > 0 && blocks[order[active - 1]!]! <= r) active--;
      const at = r * BLOCK;
      for (let j = 0; j < active; j++) {
        const k = order[j]!;
        const m = messages[k]!;
        const o = j * BLOCK;
        if (r < blocks[k]! - 1) {
          for (let i = 0; i < BLOCK; i++) x[o + i]! ^= m[at + i]!;
        } else {
          const complete = m.length > 0 && m.length % BLOCK === 0;
          const sub = complete ? k1 : k2;
          const rest = m.length - at;
          for (let i = 0; i < BLOCK; i++) x[o + i]! ^= (i < rest ? m[at + i]! : i === rest ? 0x80 : 0) ^ sub[i]!;
        }
      }
      x.set(encipher(x.subarray(0, active * BLOCK)));
    }
    const macs = new Uint8Array(count * BLOCK);
    for (let j = 0; j < count; j++) {
      const to = order[j]! * BLOCK;
      const from = j * BLOCK;
      for (let i = 0; i < BLOCK; i++) macs[to + i] = x[from + i]!;
    }
    return macs;
  };
}

/**
 * AES-SIV encryption under `key` (32 or 64 bytes: K1 for S2V, K2 for CTR) with one fixed
 * associated-data component, of many plaintexts at once: returns each `V || C`, exactly as
 * noble's `aessiv(key, ad).encrypt(plaintext)`, after the bytes of `lead` if given (a link
 * token's version byte), so the caller need not copy it again to prefix them.
 *
 * A batch's intermediate values and results share one buffer each (the results are views of
 * it): a release makes a token per link, and separate arrays of this size each took an
 * allocation outside the heap that the collector then had to account for and free.
 */
export function sivEncrypter(
  key: Uint8Array,
  ad: Uint8Array,
  lead: Uint8Array = new Uint8Array(0),
): (plaintexts: readonly Uint8Array[]) => Uint8Array[] {
  if (key.length !== 32 && key.length !== 64) throw new Error(`AES-SIV needs a 32 or 64 byte key, got ${key.length}`);
  const half = key.length / 2;
  const cmac = cmacManyOf(key.slice(0, half));
  const ctr = ecb(key.slice(half));
  // S2V with components [ad, plaintext]: D = dbl(CMAC(zero)) xor CMAC(ad), fixed per key and ad.
  const fixed = cmac([new Uint8Array(BLOCK), ad]);
  const d = dbl(fixed.slice(0, BLOCK));
  for (let i = 0; i < BLOCK; i++) d[i]! ^= fixed[BLOCK + i]!;
  const dd = dbl(new Uint8Array(d));

  return (plaintexts) => {
    let tBytes = 0;
    let outBytes = 0;
    let total = 0;
    for (const p of plaintexts) {
      tBytes += Math.max(BLOCK, p.length);
      outBytes += lead.length + BLOCK + p.length;
      total += Math.ceil(p.length / BLOCK);
    }
    const tAll = new Uint8Array(tBytes);
    let at = 0;
    const ts = plaintexts.map((p) => {
      const n = p.length;
      const t = tAll.subarray(at, at + Math.max(BLOCK, n));
      at += t.length;
      t.set(p);
      if (n >= BLOCK) {
        // T = Sn xorend D
        for (let i = 0; i < BLOCK; i++) t[n - BLOCK + i]! ^= d[i]!;
      } else {
        // T = dbl(D) xor pad(Sn)
        t[n] = 0x80;
        for (let i = 0; i < BLOCK; i++) t[i]! ^= dd[i]!;
      }
      return t;
    });
    const vs = cmac(ts);
    // CTR from Q = V with bits 31 and 63 cleared, a 128-bit big-endian counter: every counter
    // block of every plaintext enciphered in one call.
    const counters = new Uint8Array(total * BLOCK);
    const q = new Uint8Array(BLOCK);
    at = 0;
    for (let k = 0; k < plaintexts.length; k++) {
      for (let i = 0; i < BLOCK; i++) q[i] = vs[k * BLOCK + i]!;
      q[8]! &= 0x7f;
      q[12]! &= 0x7f;
      for (let b = Math.ceil(plaintexts[k]!.length / BLOCK); b > 0; b--) {
        counters.set(q, at);
        at += BLOCK;
        for (let i = BLOCK - 1; i >= 0; i--) {
          q[i] = (q[i]! + 1) & 0xff;
          if (q[i] !== 0) break;
        }
      }
    }
    const stream = total === 0 ? new Uint8Array(0) : ctr(counters);
    const outAll = new Uint8Array(outBytes);
    let from = 0;
    at = 0;
    return plaintexts.map((p, k) => {
      const out = outAll.subarray(at, at + lead.length + BLOCK + p.length);
      at += out.length;
      out.set(lead);
      for (let i = 0; i < BLOCK; i++) out[lead.length + i] = vs[k * BLOCK + i]!;
      const c = lead.length + BLOCK;
      for (let i = 0; i < p.length; i++) out[c + i] = p[i]! ^ stream[from + i]!;
      from += Math.ceil(p.length / BLOCK) * BLOCK;
      return out;
    });
  };
}

const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
/** 58^4: a limb holds four base58 digits. */
const LIMB = 58 ** 4;
/** 1 / LIMB: a limb's carry is found by multiplying by it (see `carried`). */
const PER_LIMB = 1 / LIMB;
/** The alphabet's character codes. */
const DIGIT = Uint8Array.from(ALPHABET, (c) => c.charCodeAt(0));
/** The input is read in chunks of three bytes: a chunk is a digit of base 2^24. */
const CHUNK = 2 ** 24;
/**
 * Chunk terms summed into a limb before its carries are taken: each is below 2^24 * 58^4
 * (< 2^47.5), so 32 of them and a carried limb stay below 2^53, exact in doubles.
 */
const TERMS = 32;

/**
 * 2^(24 j) in limbs of 58^4 (little-endian), for j = 0, 1, ...: row j is
 * `powers[rowStart[j] .. rowStart[j + 1])`. Grown as longer inputs come (a release's tokens all
 * need the first twenty rows or so; the longest URL accepted, 348).
 */
let powers = Float64Array.of(1);
let rowStart = Int32Array.of(0, 1);
let rows = 1;

function powersUpTo(n: number): void {
  while (rows < n) {
    const from = rowStart[rows - 1]!;
    const length = rowStart[rows]! - from;
    // The next row is the last times 2^24 (< 58^5): at most two limbs longer.
    const end = rowStart[rows]! + length + 2;
    if (powers.length < end) {
      const bigger = new Float64Array(end * 2);
      bigger.set(powers);
      powers = bigger;
    }
    if (rowStart.length < rows + 2) {
      const bigger = new Int32Array(rowStart.length * 2);
      bigger.set(rowStart);
      rowStart = bigger;
    }
    let at = rowStart[rows]!;
    let carry = 0;
    for (let k = 0; k < length; k++) {
      const x = powers[from + k]! * CHUNK + carry;
      // Below 2^48: the quotient's rounding cannot reach the next integer.
      const q = Math.floor(x / LIMB);
      powers[at++] = x - q * LIMB;
      carry = q;
    }
    while (carry > 0) {
      const q = Math.floor(carry / LIMB);
      powers[at++] = carry - q * LIMB;
      carry = q;
    }
    rows += 1;
    rowStart[rows] = at;
  }
}

/**
 * Scratch space of `base58`, grown as needed and reused by every call: the limbs of the number
 * and the characters of the text. Building the text in place and reading it out once leaves one
 * flat string per token as garbage, where joining pieces left a chain of dozens of them (about
 * 2 KB per token, a young collection every ~30,000 tokens of a release build).
 */
let limbScratch = new Float64Array(64);
let textScratch = Buffer.alloc(256);

/**
 * Takes the carries of the first `used` limbs of `limbs` (each below 2^53) up through the
 * number, so that every limb is below 58^4; returns the limbs used now.
 */
function carried(limbs: Float64Array, used: number): number {
  let carry = 0;
  let k = 0;
  for (; k < used || carry > 0; k++) {
    const x = (k < used ? limbs[k]! : 0) + carry;
    // The quotient by a multiplication rather than a division; its rounding may leave it one
    // off, which the remainder shows (exact in doubles), and is mended then.
    let q = Math.floor(x * PER_LIMB);
    let r = x - q * LIMB;
    if (r < 0) {
      q -= 1;
      r += LIMB;
    } else if (r >= LIMB) {
      q += 1;
      r -= LIMB;
    }
    limbs[k] = r;
    carry = q;
  }
  return k;
}

/**
 * Base58 (Bitcoin alphabet) of `bytes`, the same text as `bs58.encode`: a `1` per leading zero
 * byte, then the number the remaining bytes spell, most significant digit first. The number is
 * kept in limbs of 58^4 (little-endian), made as the sum of each three-byte chunk times its
 * power of 2^24, whose limbs are computed once for every token (`powers`). Each term is a
 * multiply-add independent of the others, where converting digit by digit (as bs58, and this
 * function before, with four digits a limb and three bytes a step) chained every limb's
 * division to the carry of the one before: ~30% less time per token of a release, and a
 * release makes a token per link (a million at 250,000 titles).
 */
export function base58(bytes: Uint8Array): string {
  let zeros = 0;
  while (zeros < bytes.length && bytes[zeros] === 0) zeros++;
  const chunks = Math.ceil((bytes.length - zeros) / 3);
  powersUpTo(chunks);
  const p = powers;
  const rs = rowStart;
  // The number is below 2^(24 * chunks): the limbs of the last power and two more (2^24 < 58^5).
  const maxLimbs = (chunks === 0 ? 0 : rs[chunks]! - rs[chunks - 1]!) + 2;
  if (limbScratch.length < maxLimbs) limbScratch = new Float64Array(maxLimbs * 2);
  const limbs = limbScratch;
  limbs.fill(0, 0, maxLimbs);
  let used = 0;
  // Chunk j is the j-th three bytes from the end (the most significant may have fewer).
  let end = bytes.length;
  for (let j = 0; j < chunks; j++) {
    const start = end - 3 > zeros ? end - 3 : zeros;
    let c = 0;
    for (let i = start; i < end; i++) c = c * 256 + bytes[i]!;
    end = start;
    if (j > 0 && j % TERMS === 0) used = carried(limbs, used);
    if (c === 0) continue;
    const from = rs[j]!;
    const length = rs[j + 1]! - from;
    for (let k = 0; k < length; k++) limbs[k]! += c * p[from + k]!;
    if (length > used) used = length;
  }
  used = carried(limbs, used);
  while (used > 0 && limbs[used - 1] === 0) used--;
  // The text: the leading zeros' `1`s, then four digits per limb from the most significant.
  const length = zeros + used * 4;
  if (textScratch.length < length) textScratch = Buffer.alloc(length * 2);
  const text = textScratch;
  let at = zeros;
  for (let k = used - 1; k >= 0; k--) {
    const limb = limbs[k]!;
    const hi = Math.floor(limb / 3364);
    const lo = limb - hi * 3364;
    const a = Math.floor(hi / 58);
    const b = Math.floor(lo / 58);
    text[at] = DIGIT[a]!;
    text[at + 1] = DIGIT[hi - a * 58]!;
    text[at + 2] = DIGIT[b]!;
    text[at + 3] = DIGIT[lo - b * 58]!;
    at += 4;
  }
  // The most significant limb may start with zero digits, which are not written: the `1`s of
  // the leading zero bytes go just before the first digit that is written.
  let first = zeros;
  while (first < length && text[first] === 49 /* '1' */) first++;
  text.fill(49, first - zeros, first);
  return text.toString('latin1', first - zeros, length);
}
