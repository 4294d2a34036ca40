#!/usr/bin/env bash
# Builds the release's Parquet encoder, native/parquet-writer, into
# services/snapshot/parquetWriter.wasm (docs/architecture.md, "The Parquet encoder").
#
#   bash scripts/build-parquet-writer.sh           build and put the module in place
#   bash scripts/build-parquet-writer.sh --check   build, and fail if it differs from the one committed
#
# Needs rustup (the toolchain and the wasm32 target of native/parquet-writer/rust-toolchain.toml
# are installed on first use) and clang with the WebAssembly backend, for zstd's C sources
# (Debian: apt-get install clang-14). Crates come from crates.io, locked by Cargo.lock. The
# target directory is cached under ~/.cache/marquee, so a rebuild takes seconds.
#
# The same sources, toolchain and clang give the same bytes: the crate is built from a copy at a
# fixed place (cargo's hashes of a path crate, which order code in the module, depend on where it
# is), and paths are remapped, so the checkout's place is nowhere in the module.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root="$PWD"
crate="$root/native/parquet-writer"
out="$root/services/snapshot/parquetWriter.wasm"
check=false
[ "${1:-}" = "--check" ] && check=true

command -v cargo >/dev/null || { echo "build-parquet-writer: cargo not found (install rustup: https://rustup.rs)" >&2; exit 1; }
cc=""
for candidate in clang-14 clang; do
  if command -v "$candidate" >/dev/null; then cc="$candidate"; break; fi
done
[ -n "$cc" ] || { echo "build-parquet-writer: clang not found (Debian: apt-get install clang-14)" >&2; exit 1; }
ar="llvm-ar-14"
command -v "$ar" >/dev/null || ar="llvm-ar"
command -v "$ar" >/dev/null || ar="ar"

cache="$HOME/.cache/marquee"
target_dir="$cache/parquet-writer-target"
src="$cache/parquet-writer-src"
rm -rf "$src"
mkdir -p "$src"
cp -r "$crate/Cargo.toml" "$crate/Cargo.lock" "$crate/rust-toolchain.toml" "$crate/src" "$src/"
registry="${CARGO_HOME:-$HOME/.cargo}/registry/src"
# simd128: WebAssembly SIMD (every Node since 16.4) for zstd's and arrow-rs's loops.
export RUSTFLAGS="-C target-feature=+simd128 --remap-path-prefix=$src=parquet-writer --remap-path-prefix=$registry=crates"
export CC_wasm32_unknown_unknown="$cc" AR_wasm32_unknown_unknown="$ar"
export CFLAGS_wasm32_unknown_unknown="-msimd128 -ffile-prefix-map=$registry=crates"
echo "build-parquet-writer: cargo build (release, wasm32, $cc)" >&2
(cd "$src" && cargo build --release --locked --target wasm32-unknown-unknown --target-dir "$target_dir")
built="$target_dir/wasm32-unknown-unknown/release/marquee_parquet_writer.wasm"
if $check; then
  if cmp -s "$built" "$out"; then
    echo "build-parquet-writer: $out is what native/parquet-writer builds" >&2
    exit 0
  fi
  echo "build-parquet-writer: $out differs from what native/parquet-writer builds here; run scripts/build-parquet-writer.sh and commit the module" >&2
  exit 1
fi
cp "$built" "$out"
echo "build-parquet-writer: wrote $out ($(stat -c %s "$out") bytes)" >&2
