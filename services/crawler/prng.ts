/**
 * Keyed pseudo-random numbers for the sample crawler. Every random choice is drawn from a
 * generator seeded by a hash of (seed, salt, key parts), never from a shared sequential
 * stream: the offers of one title in one country on day N can then be computed on their own,
 * without replaying the rest of the catalog or the earlier days.
 */

/** 32-bit finaliser of MurmurHash3: spreads every input bit over the output. */
export function mix32(value: number): number {
  let h = value >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Order-sensitive hash of non-negative integers (each below 2^53; the high part is folded in). */
export function hashInts(...parts: number[]): number {
  let h = 0x9e3779b9;
  for (const part of parts) {
    const lo = part >>> 0;
    const hi = Math.floor(part / 4294967296) >>> 0;
    h = mix32((h ^ lo) + Math.imul(h, 31));
    if (hi !== 0) h = mix32(h ^ hi);
  }
  return h >>> 0;
}

/** FNV-1a over UTF-16 code units, for turning names and salts into integers. */
export function hashString(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return mix32(h);
}

/** One uniform draw in [0, 1) for a key, without allocating a generator. */
export function unitOf(...parts: number[]): number {
  return hashInts(...parts) / 4294967296;
}

/** The total `weightedIndex` draws against, summed in the same order. */
export function weightTotal(weights: readonly number[]): number {
  let total = 0;
  for (const w of weights) total += w;
  return total;
}

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Mulberry32: small, fast and good enough for sample data (not for anything secret). */
export class Rng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Integer in [min, max], both inclusive. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError('pick from an empty list');
    return items[Math.floor(this.next() * items.length)] as T;
  }

  /**
   * Index drawn with probability proportional to its weight; a caller that draws from the same
   * weights again and again passes their `weightTotal`.
   */
  weightedIndex(weights: readonly number[], total = weightTotal(weights)): number {
    let r = this.next() * total;
    for (let i = 0; i < weights.length; i++) {
      r -= weights[i] ?? 0;
      if (r < 0) return i;
    }
    return weights.length - 1;
  }

  /** `count` distinct items in a random order (all of them when fewer are given). */
  sample<T>(items: readonly T[], count: number): T[] {
    const copy = items.slice();
    const n = Math.min(count, copy.length);
    for (let i = 0; i < n; i++) {
      const j = i + Math.floor(this.next() * (copy.length - i));
      const tmp = copy[i] as T;
      copy[i] = copy[j] as T;
      copy[j] = tmp;
    }
    return copy.slice(0, n);
  }

  /** Days until the next event of a process that fires with `probability` per day (>= 1). */
  geometric(probability: number): number {
    const u = this.next();
    return Math.max(1, Math.ceil(Math.log(1 - u) / Math.log(1 - probability)));
  }

  /** Random characters from an alphabet (default letters and digits), e.g. for image ids. */
  token(length: number, alphabet = ALNUM): string {
    let out = '';
    for (let i = 0; i < length; i++) out += alphabet[Math.floor(this.next() * alphabet.length)];
    return out;
  }
}

export function rngOf(...parts: number[]): Rng {
  return new Rng(hashInts(...parts));
}

/** Salts, so that draws for different purposes from the same key are independent. */
export const SALT = {
  title: hashString('title'),
  media: hashString('media'),
  cast: hashString('cast'),
  popularity: hashString('popularity'),
  recrawlMedia: hashString('recrawl-media'),
  listed: hashString('listed'),
  offers: hashString('offers'),
  slot: hashString('slot'),
  variant: hashString('variant'),
  recrawlOffers: hashString('recrawl-offers'),
  announced: hashString('announced'),
  announcedLead: hashString('announced-lead'),
  seasons: hashString('seasons'),
  translation: hashString('translation'),
  providers: hashString('providers'),
  providerWeight: hashString('provider-weight'),
  collection: hashString('collection'),
  featured: hashString('featured'),
} as const;
