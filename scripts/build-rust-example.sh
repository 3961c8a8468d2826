#!/usr/bin/env bash
# Builds the Rust example providers and the Rust test guest as WebAssembly components:
#   examples/rust-hello/build/rust-hello.wasm
#   examples/azure-storage/build/azure-storage.wasm
#   host/cli/tests/guests/http-probe/build/http-probe.wasm
#
# Usage: scripts/build-rust-example.sh
#
# It runs `azd-wasm-host build examples/rust-hello/provider.toml`, the same Rust recipe a
# provider author uses (host/author/src/build/rust.rs): a cargo whose rustc has the
# wasm32-wasip2 or wasm32-wasip1 standard library, or else the standard library's source
# (built for wasm32-wasip1 with -Zbuild-std) with wasm-ld and wasi-libc.
#
# Where no toolchain has a wasm32 standard library (rustup cannot add targets on the project's
# build machine), it installs Debian's pinned Rust 1.96 with its source, wasi-libc and lld
# (packages below) with apt-get, once; they build std from source (about 1.5 minutes the first
# time, cached under target/ after that). Set AZD_WASM_HOST_NO_APT=1 to never install.
set -euo pipefail

ROOT=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
RUST_WEB_VERSION='1.96.*' # Debian 12 (bookworm-security) rustc-web, cargo-web, rust-web-src
APT_PACKAGES=("rustc-web=$RUST_WEB_VERSION" "cargo-web=$RUST_WEB_VERSION" "rust-web-src=$RUST_WEB_VERSION" wasi-libc lld-19)

# As azd-wasm-host build looks: the rustc beside each cargo on PATH.
has_wasm_std() {
  local sysroot
  for cargo in $(type -ap cargo); do
    sysroot=$("$(dirname "$cargo")/rustc" --print sysroot 2>/dev/null) || continue
    for t in wasm32-wasip2 wasm32-wasip1; do
      [[ -d "$sysroot/lib/rustlib/$t/lib" ]] && return 0
    done
  done
  return 1
}

debian_route_installed() {
  [[ -x /usr/bin/rustc && -d /usr/lib/rustlib/src/rust/library && -f /usr/lib/wasm32-wasi/libc.a ]] &&
    command -v wasm-ld-19 >/dev/null 2>&1 &&
    [[ "$(/usr/bin/rustc --version)" == "rustc 1.96."* ]]
}

if ! has_wasm_std && ! debian_route_installed; then
  if [[ "${AZD_WASM_HOST_NO_APT:-0}" == 1 ]] || ! command -v apt-get >/dev/null 2>&1 || [[ $(id -u) != 0 ]]; then
    echo "build-rust-example: no Rust toolchain with a wasm32 std here; run 'rustup target add wasm32-wasip2'," >&2
    echo "  or (Debian 12, as root) apt-get install ${APT_PACKAGES[*]}" >&2
    exit 1
  fi
  echo "build-rust-example: installing Debian's Rust ${RUST_WEB_VERSION%.*} with its std source, wasi-libc and lld (once)" >&2
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${APT_PACKAGES[@]}" >/dev/null
  debian_route_installed || { echo "build-rust-example: the Debian packages did not install a usable toolchain" >&2; exit 1; }
fi

# The CLI: AZD_WASM_HOST_CLI (scripts/test.sh passes the one its tests build), else this checkout's.
if [[ -n "${AZD_WASM_HOST_CLI:-}" ]]; then
  host_bin=$AZD_WASM_HOST_CLI
else
  cargo build --quiet -p azd-wasm-host
  host_bin="${CARGO_TARGET_DIR:-$ROOT/target}/debug/azd-wasm-host"
fi
"$host_bin" build examples/rust-hello/provider.toml
"$host_bin" build examples/azure-storage/provider.toml
# The test guest of [policy.http] (host/cli/tests/all/http.rs), built the same way; it shares the std build.
"$host_bin" build host/cli/tests/guests/http-probe/provider.toml
