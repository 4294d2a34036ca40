/**
 * A WebAssembly module shipped beside the code that uses it (the release's modules, built from
 * native/ by scripts/build-wasm.sh): looked for once, compiled once per thread at first use,
 * instantiated with the functions it imports, if any. Erasable TypeScript importing only Node's
 * own modules, so a pool thread loads it through Node's type stripping
 * (services/snapshot/parquetWorker.mjs).
 */
import { existsSync, readFileSync } from 'node:fs';

/** The part of the WebAssembly global used here (the project's type libraries do not declare it). */
declare const WebAssembly: {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: unknown };
  RuntimeError: new (message?: string) => Error;
};

/** An instance's exported memory, as far as the loaders use it (`grow`: the tests exhaust it to make a module trap). */
export interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}

export interface WasmModule<E> {
  /** Whether the file is there (a checkout always has it; one that deleted it falls back). */
  readonly present: boolean;
  /** A new instance of the module (compiled on the first call); throws when it is not present. */
  instantiate(imports?: object): E;
}

/** The module in the file at `url`; its presence is checked once. */
export function wasmModule<E>(url: URL): WasmModule<E> {
  let present: boolean | undefined;
  let compiled: object | null = null;
  return {
    get present() {
      present ??= existsSync(url);
      return present;
    },
    instantiate(imports = {}) {
      compiled ??= new WebAssembly.Module(readFileSync(url));
      return new WebAssembly.Instance(compiled, imports).exports as E;
    },
  };
}

/** Whether `err` is a trap of a module (a panic, memory exhausted): its instance is not to be used again. */
export function isWasmTrap(err: unknown): err is Error {
  return err instanceof WebAssembly.RuntimeError;
}
