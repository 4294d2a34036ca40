/**
 * The people of the media pass (peoples.parquet): every person once, by id, with the name last
 * seen. A title's cast is eight people or so, so a 250,000-title release looks up two million
 * ids among ~400,000 people. In a Map of strings that cost ~2.5 s of CPU, nearly all of it
 * waiting for memory: each lookup went through the Map's bucket, its entry and the kept key
 * (cache misses one after the other), and the ~800,000 kept strings were copied through the
 * young generation and marked by every full collection.
 *
 * Here each person is one record of UTF-16 code units in one growing array (nothing for the
 * collector to copy or mark), found through an open-addressing table that keeps each record's
 * hash beside it; a lookup compares the code units of the new id and name with the record's.
 * The lookups are made in batches, and before a batch is looked up its table slots and then
 * its records are read once in a tight loop: those reads do not depend on each other, so the
 * processor waits for many of them at once rather than one after the other. The code units are
 * the strings' own, so any string (a lone surrogate included) is compared and read back exactly.
 */

/**
 * A record's header, in code units: the id's length, the name's length and where the name
 * starts (each as two 16-bit halves); the id follows, then (until a rename) the name.
 */
const HEAD = 6;
/** Lookups gathered before they are made (see above). */
const BATCH = 2048;
/** People read back per string (see latin1Block). */
const TEXT_BLOCK = 1024;
/** Where a 64-bit element's low and high 32-bit halves are in a Uint32Array over it (the platform's byte order). */
const LOW = new Uint8Array(Uint32Array.of(1).buffer)[0] === 1 ? 0 : 1;
const HIGH = 1 - LOW;

export class PeopleIndex {
  private units = new Uint16Array(1 << 16);
  private used = 0;
  /** Open addressing, linear probing: per slot the record's hash and its start + 1 (0: empty); at most half full. */
  private slots = new Int32Array(2 * 2048);
  /** Where each person's record starts, in the order they were first seen. */
  private records = new Int32Array(1024);
  /** People kept so far. */
  private count = 0;
  private readonly ids: string[] = [];
  private readonly names: string[] = [];
  private readonly hashes = new Int32Array(BATCH);
  /** What the pre-reads of a batch read, kept so that the compiler cannot drop them as unused. */
  private preread = 0;
  /** Scratch of latin1Block. */
  private latin1 = Buffer.alloc(0);

  /** Person `id` is called `name` (the last call for an id wins). */
  note(id: string, name: string): void {
    this.ids.push(id);
    this.names.push(name);
    if (this.ids.length >= BATCH) this.flush();
  }

  /** FNV-1a over the code units. */
  private static hash(s: string): number {
    let h = 0x811c9dc5 | 0;
    for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
    return h;
  }

  private flush(): void {
    const { ids, names, hashes } = this;
    const n = ids.length;
    for (let k = 0; k < n; k++) hashes[k] = PeopleIndex.hash(ids[k] as string);
    // The reads the lookups will wait for, made first where they can overlap: each batch
    // entry's first slot, then the record it holds (a hit, mostly).
    let mask = (this.slots.length >> 1) - 1;
    let touched = 0;
    for (let k = 0; k < n; k++) touched ^= this.slots[2 * ((hashes[k] as number) & mask) + 1] as number;
    for (let k = 0; k < n; k++) {
      const at = this.slots[2 * ((hashes[k] as number) & mask) + 1] as number;
      if (at !== 0) touched ^= this.units[at - 1] as number;
    }
    this.preread = touched;
    for (let k = 0; k < n; k++) {
      this.lookUp(ids[k] as string, names[k] as string, hashes[k] as number);
      mask = (this.slots.length >> 1) - 1;
    }
    ids.length = 0;
    names.length = 0;
  }

  private lookUp(id: string, name: string, h: number): void {
    const slots = this.slots;
    const mask = (slots.length >> 1) - 1;
    let slot = h & mask;
    for (;;) {
      const at = (slots[2 * slot + 1] as number) - 1;
      if (at < 0) break;
      if (slots[2 * slot] === h && this.lengthAt(at) === id.length && this.same(at + HEAD, id)) {
        const nameAt = this.nameAt(at);
        if (this.lengthAt(at + 2) !== name.length || !this.same(nameAt, name)) this.rename(at, name);
        return;
      }
      slot = (slot + 1) & mask;
    }
    const at = this.keep(id, name);
    slots[2 * slot] = h;
    slots[2 * slot + 1] = at + 1;
    if (this.count >= this.records.length) {
      const bigger = new Int32Array(this.records.length * 2);
      bigger.set(this.records);
      this.records = bigger;
    }
    this.records[this.count] = at;
    this.count += 1;
    if (this.count * 2 > slots.length >> 1) this.grow();
  }

  /** A 32-bit value kept as two code units at `at`. */
  private lengthAt(at: number): number {
    return (this.units[at] as number) | ((this.units[at + 1] as number) << 16);
  }

  private nameAt(at: number): number {
    return ((this.units[at + 4] as number) | ((this.units[at + 5] as number) << 16)) >>> 0;
  }

  private setWord(at: number, value: number): void {
    this.units[at] = value & 0xffff;
    this.units[at + 1] = value >>> 16;
  }

  /** Whether the code units at `at` spell `s` (its length already checked). */
  private same(at: number, s: string): boolean {
    const units = this.units;
    for (let i = 0; i < s.length; i++) if (units[at + i] !== s.charCodeAt(i)) return false;
    return true;
  }

  private room(n: number): void {
    if (this.used + n <= this.units.length) return;
    const bigger = new Uint16Array(Math.max(this.units.length * 2, this.used + n));
    bigger.set(this.units.subarray(0, this.used));
    this.units = bigger;
  }

  private write(s: string): void {
    const units = this.units;
    const at = this.used;
    for (let i = 0; i < s.length; i++) units[at + i] = s.charCodeAt(i);
    this.used += s.length;
  }

  /** A new record; returns where it starts. */
  private keep(id: string, name: string): number {
    this.room(HEAD + id.length + name.length);
    const at = this.used;
    this.used += HEAD;
    this.setWord(at, id.length);
    this.setWord(at + 2, name.length);
    this.setWord(at + 4, at + HEAD + id.length);
    this.write(id);
    this.write(name);
    return at;
  }

  /** A new name for the record at `at`, kept at the end (renames are rare). */
  private rename(at: number, name: string): void {
    this.room(name.length);
    this.setWord(at + 2, name.length);
    this.setWord(at + 4, this.used);
    this.write(name);
  }

  private grow(): void {
    const old = this.slots;
    const slots = new Int32Array(old.length * 2);
    const mask = (slots.length >> 1) - 1;
    for (let s = 0; s < old.length; s += 2) {
      if (old[s + 1] === 0) continue;
      let slot = (old[s] as number) & mask;
      while (slots[2 * slot + 1] !== 0) slot = (slot + 1) & mask;
      slots[2 * slot] = old[s] as number;
      slots[2 * slot + 1] = old[s + 1] as number;
    }
    this.slots = slots;
  }

  /**
   * The string of `length` code units at `at`. fromCharCode takes them as arguments, which is
   * fastest for the usual short id or name but overflows the stack for a very long one; the
   * Buffer's UTF-16 decoding copies the code units as they are (lone surrogates too).
   */
  private text(at: number, length: number): string {
    if (length <= 1024) return String.fromCharCode.apply(null, this.units.subarray(at, at + length) as unknown as number[]);
    return Buffer.from(this.units.buffer, this.units.byteOffset + at * 2, length * 2).toString('utf16le');
  }

  /**
   * Every person, by id in code-unit order (the default sort's, as compareNullable's), with the
   * name last seen; then the index is emptied. Sorting the ids as strings was half the cost of
   * the people at 400,000 of them (7.6 million string comparisons, each reading two strings
   * scattered in the heap); they are sorted as numbers when they fit (packedOrder).
   */
  *byId(): Generator<{ id: string; name: string }> {
    this.flush();
    const order = this.packedOrder() ?? this.stringOrder();
    for (let j = 0; j < order.length; j += TEXT_BLOCK) {
      const to = Math.min(order.length, j + TEXT_BLOCK);
      const block = this.latin1Block(order, j, to);
      if (block !== null) {
        // Each id and name a slice of the block's one string.
        for (let k = j, from = 0; k < to; k++) {
          const idEnd = block.ends[2 * (k - j)] as number;
          const nameEnd = block.ends[2 * (k - j) + 1] as number;
          yield { id: block.text.slice(from, idEnd), name: block.text.slice(idEnd, nameEnd) };
          from = nameEnd;
        }
        continue;
      }
      for (let k = j; k < to; k++) {
        const at = this.records[order[k] as number] as number;
        yield { id: this.text(at + HEAD, this.lengthAt(at)), name: this.text(this.nameAt(at), this.lengthAt(at + 2)) };
      }
    }
    this.units = new Uint16Array(0);
    this.latin1 = Buffer.alloc(0);
    this.slots = new Int32Array(2);
    this.records = new Int32Array(0);
    this.used = 0;
    this.count = 0;
  }

  /**
   * The ids and names of the people `order[from..to)` as one Latin-1 string, each id then its
   * name, and where each ends in it (`ends[2k]` the id's, `ends[2k + 1]` the name's); null when
   * one of their code units is above 0xff (those are read one string at a time). One string
   * per block: making each id and name on its own from its code units (`text`) was most of
   * the cost of reading 400,000 people back; a Latin-1 decoding keeps every code unit below
   * 0x100 as it is.
   */
  private latin1Block(order: Int32Array, from: number, to: number): { text: string; ends: Int32Array } | null {
    const { units, records } = this;
    let size = 0;
    for (let k = from; k < to; k++) {
      const at = records[order[k] as number] as number;
      size += this.lengthAt(at) + this.lengthAt(at + 2);
    }
    if (this.latin1.length < size) this.latin1 = Buffer.allocUnsafe(Math.max(size, this.latin1.length * 2));
    const bytes = this.latin1;
    const ends = new Int32Array(2 * (to - from));
    let n = 0;
    let high = 0;
    for (let k = from; k < to; k++) {
      const at = records[order[k] as number] as number;
      const idAt = at + HEAD;
      const idEnd = idAt + this.lengthAt(at);
      for (let i = idAt; i < idEnd; i++) {
        const unit = units[i] as number;
        high |= unit;
        bytes[n++] = unit;
      }
      ends[2 * (k - from)] = n;
      const nameAt = this.nameAt(at);
      const nameEnd = nameAt + this.lengthAt(at + 2);
      for (let i = nameAt; i < nameEnd; i++) {
        const unit = units[i] as number;
        high |= unit;
        bytes[n++] = unit;
      }
      ends[2 * (k - from) + 1] = n;
    }
    if (high > 0xff) return null;
    return { text: bytes.toString('latin1', 0, n), ends };
  }

  /** The people's numbers (order of first sight) in the order of their ids, by the default sort of the ids. */
  private stringOrder(): Int32Array {
    const ids = new Array<string>(this.count);
    for (let k = 0; k < this.count; k++) {
      const at = this.records[k] as number;
      ids[k] = this.text(at + HEAD, this.lengthAt(at));
    }
    return Int32Array.from(Array.from(ids.keys()).sort((a, b) => ((ids[a] as string) < (ids[b] as string) ? -1 : 1)));
  }

  /**
   * The people's numbers in the order of their ids, or null when the ids do not fit in 64 bits
   * as below. Each id becomes one unsigned 64-bit number: its code units, each as its rank
   * among the code units the ids use (1 for the smallest; B bits each), from the first, zeros
   * after its end up to the longest id's length L, then the person's number (I bits). When
   * L * B + I <= 64 the numbers order as the ids do in code-unit order (ranks keep the units'
   * order, and a prefix comes first since no rank is 0), and the typed array sorts them
   * natively, with no comparison called from JavaScript. People ids are short and use few
   * code units (digits, `nm0000123`): 400,000 of 8-9 characters take 36 + 19 bits.
   */
  private packedOrder(): Int32Array | null {
    const n = this.count;
    const { units, records } = this;
    // Ranks up to 65,536 (every code unit used).
    const rank = new Int32Array(65536);
    let longest = 0;
    for (let k = 0; k < n; k++) {
      const at = records[k] as number;
      const length = this.lengthAt(at);
      if (length > longest) {
        longest = length;
        // Even one bit a code unit (and the numbers) could not fit.
        if (longest > 64) return null;
      }
      for (let i = at + HEAD; i < at + HEAD + length; i++) rank[units[i] as number] = 1;
    }
    let used = 0;
    for (let u = 0; u < 65536; u++) if (rank[u] !== 0) rank[u] = ++used;
    const unitBits = 32 - Math.clz32(used);
    const numberBits = Math.max(1, 32 - Math.clz32(n - 1));
    if (longest * unitBits + numberBits > 64) return null;
    const packed = new BigUint64Array(n);
    const halves = new Uint32Array(packed.buffer);
    for (let k = 0; k < n; k++) {
      const at = records[k] as number;
      const length = this.lengthAt(at);
      let hi = 0;
      let lo = 0;
      for (let i = 0; i < longest; i++) {
        const value = i < length ? (rank[units[at + HEAD + i] as number] as number) : 0;
        hi = ((hi << unitBits) | (lo >>> (32 - unitBits))) >>> 0;
        lo = ((lo << unitBits) | value) >>> 0;
      }
      hi = ((hi << numberBits) | (lo >>> (32 - numberBits))) >>> 0;
      lo = ((lo << numberBits) | k) >>> 0;
      halves[2 * k + LOW] = lo;
      halves[2 * k + HIGH] = hi;
    }
    packed.sort();
    const order = new Int32Array(n);
    // At most 31 bits: a typed array holds fewer than 2^31 people.
    const mask = (1 << numberBits) - 1;
    for (let j = 0; j < n; j++) order[j] = (halves[2 * j + LOW] as number) & mask;
    return order;
  }
}
