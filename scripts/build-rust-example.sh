#!/usr/bin/env bash
# Builds the Rust example provider as a WebAssembly component:
#   examples/rust-hello/build/rust-hello.wasm
#
# Usage: scripts/build-rust-example.sh
#
# It needs the Rust target wasm32-wasip2 (`rustup target add wasm32-wasip2`); rustc then links
# the cdylib straight into a component, no other tool needed. Where the target is not
# installed (as on the project's build machine, whose rustup has no wasm32 standard library)
# it says so on one line and exits 0, so callers can run it unconditionally.
set -euo pipefail

ROOT=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
TARGET=wasm32-wasip2
OUT="$ROOT/examples/rust-hello/build/rust-hello.wasm"

if ! command -v rustup >/dev/null 2>&1 \
  || ! rustup target list --installed 2>/dev/null | grep -qx "$TARGET"; then
  echo "skipped: Rust example component (target $TARGET not installed; rustup target add $TARGET)"
  exit 0
fi

cd "$ROOT"
cargo build --target "$TARGET" --release -p rust-hello
mkdir -p "$(dirname -- "$OUT")"
cp "${CARGO_TARGET_DIR:-$ROOT/target}/$TARGET/release/rust_hello.wasm" "$OUT"
echo "built: ${OUT#"$ROOT"/} ($(wc -c <"$OUT") bytes)"
