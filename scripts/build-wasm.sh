#!/usr/bin/env bash
# Builds the release's WebAssembly modules (docs/architecture.md, "The Parquet encoder"):
# native/parquet-writer into services/snapshot/parquetWriter.wasm (the Parquet encoder) and
# native/base58 into services/links/base58.wasm (the link tokens' base58, in bulk).
#
#   bash scripts/build-wasm.sh           build and put the modules in place
#   bash scripts/build-wasm.sh --check   build, and fail if one differs from the one committed
#
# Needs rustup (the toolchain and the wasm32 target of each crate's rust-toolchain.toml are
# installed on first use) and clang with the WebAssembly backend, for zstd's C sources
# (Debian: apt-get install clang-14). Crates come from crates.io, locked by Cargo.lock. The
# target directory is cached under ~/.cache/marquee, so a rebuild takes seconds.
#
# The same sources, toolchain and clang give the same bytes: each crate is built from a copy at a
# fixed place (cargo's hashes of a path crate, which order code in the module, depend on where it
# is), paths are remapped, so the checkout's place is nowhere in the module, and the hash seeds
# drawn at compile time come from a fixed seed (below).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root="$PWD"
check=false
[ "${1:-}" = "--check" ] && check=true

command -v cargo >/dev/null || { echo "build-wasm: cargo not found (install rustup: https://rustup.rs)" >&2; exit 1; }
cc=""
for candidate in clang-14 clang; do
  if command -v "$candidate" >/dev/null; then cc="$candidate"; break; fi
done
[ -n "$cc" ] || { echo "build-wasm: clang not found (Debian: apt-get install clang-14)" >&2; exit 1; }
ar="llvm-ar-14"
command -v "$ar" >/dev/null || ar="llvm-ar"
command -v "$ar" >/dev/null || ar="ar"

cache="$HOME/.cache/marquee"
target_dir="$cache/parquet-writer-target"
registry="${CARGO_HOME:-$HOME/.cargo}/registry/src"
export CC_wasm32_unknown_unknown="$cc" AR_wasm32_unknown_unknown="$ar"
export CFLAGS_wasm32_unknown_unknown="-msimd128 -ffile-prefix-map=$registry=crates"
# arrow-rs turns on ahash's compile-time-rng for wasm32: const-random draws its hash seeds when it
# is compiled, so each build from an empty target directory differed (87 bytes of constants),
# and only a warm cache passed --check. A fixed seed makes the build repeatable; the seeds are in
# a public module either way, and the files written do not depend on them (parquet-wasm, with
# seeds of its own, writes the same bytes).
export CONST_RANDOM_SEED="marquee-wasm-build"
status=0

# build CRATE ARTIFACT OUT: native/CRATE built into OUT (its cargo artifact ARTIFACT.wasm).
build() {
  local crate="$root/native/$1" src="$cache/$1-src" out="$root/$3"
  rm -rf "$src"
  mkdir -p "$src"
  cp -r "$crate/Cargo.toml" "$crate/Cargo.lock" "$crate/rust-toolchain.toml" "$crate/src" "$src/"
  # The crates a build patches in by path (`../zstd-shim`), beside the copy as in native/.
  local shim="$cache/zstd-shim"
  rm -rf "$shim"
  cp -r "$root/native/zstd-shim" "$shim"
  # rustup installs a toolchain named by rust-toolchain.toml with its targets, but adds no target
  # to a toolchain already there (a machine that had 1.95.0 without wasm32 failed here).
  if command -v rustup >/dev/null; then
    local channel
    channel=$(sed -n 's/^channel = "\(.*\)"$/\1/p' "$crate/rust-toolchain.toml")
    rustup target add --toolchain "$channel" wasm32-unknown-unknown >&2
  fi
  # simd128: WebAssembly SIMD (every Node since 16.4) for zstd's and arrow-rs's loops.
  RUSTFLAGS="-C target-feature=+simd128 --remap-path-prefix=$src=$1 --remap-path-prefix=$shim=zstd-shim --remap-path-prefix=$registry=crates" \
    bash -c "cd '$src' && cargo build --release --locked --target wasm32-unknown-unknown --target-dir '$target_dir'"
  local built="$target_dir/wasm32-unknown-unknown/release/$2.wasm"
  if $check; then
    if cmp -s "$built" "$out"; then
      echo "build-wasm: $3 is what native/$1 builds" >&2
    else
      echo "build-wasm: $3 differs from what native/$1 builds here; run scripts/build-wasm.sh and commit it" >&2
      status=1
    fi
    return
  fi
  cp "$built" "$out"
  echo "build-wasm: wrote $3 ($(stat -c %s "$out") bytes)" >&2
}

echo "build-wasm: cargo build (release, wasm32, $cc)" >&2
build parquet-writer marquee_parquet_writer services/snapshot/parquetWriter.wasm
build base58 marquee_base58 services/links/base58.wasm
exit "$status"
