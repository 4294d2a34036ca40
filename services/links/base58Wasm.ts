/**
 * Base58 of many link tokens in one call, in WebAssembly (native/base58, built by
 * scripts/build-wasm.sh into ./base58.wasm): the same text as `bs58.encode` and as
 * ./fastSiv.ts `base58`, which it falls back to (a checkout without the module, an input too
 * long for one call). Why: a weekly release makes a token per link, a million at 250,000
 * titles, and fastSiv.ts's base58 was the largest single function of its build (about 1.5 us a
 * token); 64-bit integers make the same method about twice as fast (0.8 against 1.6 us a token;
 * test/unit/linkTokens.unit.test.ts checks the text against bs58).
 */
import { isWasmTrap, wasmModule, type WasmMemory } from '../shared/wasmModule.ts';
import { base58 } from './fastSiv.ts';

/** The module's exports (native/base58/src/lib.rs). */
interface Exports {
  memory: WasmMemory;
  b58_scratch(len: number): number;
  b58_many(input: number, offsets: number, count: number, out: number, outOffsets: number): number;
}

/** Longest input the module takes (lib.rs MAX_INPUT). */
const MAX_INPUT = 3 * 1024;
/** Inputs per call into the module: bounds its scratch memory (~20 MB at the longest inputs). */
const PER_CALL = 8192;
const MODULE = wasmModule<Exports>(new URL('./base58.wasm', import.meta.url));
/** This thread's instance; null when the module is missing. */
let instance: Exports | null | undefined;

function module(): Exports | null {
  instance ??= MODULE.present ? MODULE.instantiate() : null;
  return instance;
}

/**
 * The memory of this thread's instance (null without the module), for the tests: grown to the
 * most a module can have, it leaves a large call's scratch nowhere to go, which makes it trap.
 */
export function base58WasmMemory(): WasmMemory | null {
  return module()?.memory ?? null;
}

/** Whether the module is in place (else base58Many is fastSiv.ts's base58 on each). */
export function base58WasmPresent(): boolean {
  return module() !== null;
}

const align8 = (n: number): number => (n + 7) & ~7;

/** `base58` of each of `list`, in order. */
export function base58Many(list: readonly Uint8Array[]): string[] {
  if (list.length <= PER_CALL) return many(list);
  const out: string[] = [];
  for (let i = 0; i < list.length; i += PER_CALL) out.push(...many(list.slice(i, i + PER_CALL)));
  return out;
}

function many(list: readonly Uint8Array[]): string[] {
  const m = module();
  if (m === null) return list.map((x) => base58(x));
  try {
    return inModule(m, list);
  } catch (err) {
    // A trap (memory exhausted): the instance may be broken; a new one next time, JavaScript now.
    if (!isWasmTrap(err)) throw err;
    instance = undefined;
    return list.map((x) => base58(x));
  }
}

function inModule(m: Exports, list: readonly Uint8Array[]): string[] {
  const count = list.length;
  let bytes = 0;
  let room = 0;
  for (const b of list) {
    if (b.length > MAX_INPUT) return list.map((x) => base58(x));
    bytes += b.length;
    room += Math.floor((b.length * 138) / 100) + 1;
  }
  if (count === 0) return [];
  // One scratch buffer: the inputs, their offsets, the texts, their offsets.
  const offsetsAt = align8(bytes);
  const outAt = offsetsAt + 4 * (count + 1);
  const outOffsetsAt = align8(outAt + room);
  const base = m.b58_scratch(outOffsetsAt + 4 * (count + 1));
  // Views made after the call above, which may have grown (and so replaced) the memory.
  const memory = new Uint8Array(m.memory.buffer);
  const offsets = new Uint32Array(m.memory.buffer, base + offsetsAt, count + 1);
  let at = 0;
  for (let i = 0; i < count; i++) {
    const b = list[i] as Uint8Array;
    memory.set(b, base + at);
    offsets[i] = at;
    at += b.length;
  }
  offsets[count] = at;
  if (m.b58_many(base, base + offsetsAt, count, base + outAt, base + outOffsetsAt) !== 0) return list.map((x) => base58(x));
  const ends = new Uint32Array(m.memory.buffer, base + outOffsetsAt, count + 1);
  const text = Buffer.from(m.memory.buffer, base + outAt, ends[count] as number);
  // Each token a flat string of its own (a cached token keeps ~150 bytes, not the whole batch).
  const out = new Array<string>(count);
  for (let i = 0; i < count; i++) out[i] = text.toString('latin1', ends[i] as number, ends[i + 1] as number);
  return out;
}
