#!/usr/bin/env bash
# Builds, stripped, into target/release-dist/<os>-<arch>/, for the platforms azd ships on:
# - the sidecar (`host/sidecar`, renamed azd-wasm-host[.exe]): what `package` ships as an
#   extension's entry point, built without wasmtime's compilers or the author's toolchain; it
#   runs only the code `package` precompiles for its platform (`package` finds these builds);
# - with --dev, also the development CLI (run, check, new, build, package, listen that
#   compiles) into target/release-dist/<os>-<arch>/dev/.
#
#   [RELEASE_PGO=0] scripts/release.sh [--dev] [PLATFORM...|all]   PLATFORM: linux-amd64 linux-arm64 windows-amd64
#                                                  windows-arm64 darwin-arm64 darwin-amd64
#                                                  (default: this machine's own platform)
#
# This machine's platform is built with cargo as usual. The others are built with Debian's
# Rust 1.96 (rustc-web, cargo-web, rust-web-src: rustup cannot add targets here), which builds
# their standard library from source (-Zbuild-std), and a cross linker from Debian; the script
# installs what a platform needs with apt-get the first time (as root). macOS has no Apple linker
# or SDK here: zig (PyPI ziglang, the version scripts/build-examples.sh pins) links for it through
# scripts/zig/cc, and llvm-strip strips the Mach-O. Windows on arm64 has no Debian MinGW either: zig
# links it the same way, for Rust's aarch64-pc-windows-gnullvm (MinGW's ABI over LLVM's runtime). A cold cross build of the development CLI takes
# 15-20 minutes on 2 cores, the sidecar's less; CI runs them only when asked
# (AZD_WASM_HOST_CROSS=1 scripts/test.sh, which then runs scripts/cross-test.sh on what this builds).
#
# This machine's sidecar is built with a profile of the code it runs (scripts/pgo.sh trains an
# instrumented build on a provider built from WAT, so no language toolchain is needed): less
# resident after Ready and smaller (docs/benchmarks.md). The release workflow builds it so on
# Linux. That takes two builds and a minute of training; RELEASE_PGO=0 builds it once, without.
# The cross builds have no profile (another rustc, whose LLVM would not read it).
#
# Prints one line per build: its binary, size, build time, and whether profile-guided.
set -euo pipefail

ROOT=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
OUT="$ROOT/target/release-dist"
mkdir -p "$OUT"

die() { echo "release: $*" >&2; exit 1; }

native_platform() {
  case "$(uname -s)/$(uname -m)" in
    Linux/x86_64) echo linux-amd64 ;;
    Linux/aarch64) echo linux-arm64 ;;
    *) die "unsupported build machine $(uname -s)/$(uname -m)" ;;
  esac
}

triple_of() {
  case $1 in
    linux-amd64) echo x86_64-unknown-linux-gnu ;;
    linux-arm64) echo aarch64-unknown-linux-gnu ;;
    windows-amd64) echo x86_64-pc-windows-gnu ;;
    windows-arm64) echo aarch64-pc-windows-gnullvm ;;
    darwin-arm64) echo aarch64-apple-darwin ;;
    darwin-amd64) echo x86_64-apple-darwin ;;
    *) die "unknown platform '$1' (known: ${ALL_PLATFORMS[*]})" ;;
  esac
}

# apt packages, linker and C compiler of a cross platform
cross_packages() {
  case $1 in
    linux-arm64) echo gcc-aarch64-linux-gnu libc6-dev-arm64-cross ;;
    windows-amd64) echo gcc-mingw-w64-x86-64 ;;
    windows-arm64 | darwin-*) echo llvm ;;
  esac
}
cross_cc() {
  case $1 in
    linux-arm64) echo aarch64-linux-gnu-gcc ;;
    windows-amd64) echo x86_64-w64-mingw32-gcc ;;
    windows-arm64 | darwin-*) echo "$ROOT/scripts/zig/cc" ;;
  esac
}
cross_strip() {
  case $1 in
    linux-arm64) echo aarch64-linux-gnu-strip ;;
    windows-amd64) echo x86_64-w64-mingw32-strip ;;
    windows-arm64 | darwin-*) echo llvm-strip ;;
  esac
}

# zig, for the macOS targets: the pin of scripts/build-examples.sh, in its own venv.
ensure_zig() {
  local pin venv="$ROOT/.tools/zig-venv"
  pin=$(sed -n 's/^ZIGLANG_VERSION=\([^ ]*\).*/\1/p' "$ROOT/scripts/build-examples.sh")
  [[ -n $pin ]] || die "no ZIGLANG_VERSION in scripts/build-examples.sh"
  if [[ "$(cat "$venv/.pins" 2>/dev/null)" != "ziglang==$pin" ]]; then
    rm -rf "$venv"
    python3 -m venv "$venv" >&2
    "$venv/bin/python" -m pip install -q --disable-pip-version-check "ziglang==$pin" >&2
    echo "ziglang==$pin" >"$venv/.pins"
  fi
  export ZIG_PYTHON="$venv/bin/python"
}

ALL_PLATFORMS=(linux-amd64 linux-arm64 windows-amd64 windows-arm64 darwin-arm64 darwin-amd64)
RUST_WEB=("rustc-web=1.96.*" "cargo-web=1.96.*" "rust-web-src=1.96.*")

ensure_packages() {
  local missing=()
  for p in "$@"; do
    dpkg -s "${p%%=*}" >/dev/null 2>&1 || missing+=("$p")
  done
  ((${#missing[@]} == 0)) && return
  [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null || die "needs Debian packages: ${missing[*]}"
  echo "release: installing ${missing[*]}" >&2
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}

# build PLATFORM PROFILE PACKAGE BIN DEST: cargo builds BIN of PACKAGE for PLATFORM with PROFILE,
# stripped into DEST.
build() {
  local platform=$1 profile=$2 package=$3 bin_name=$4 dest=$5 triple exe="" start bin
  local upper=${profile^^} guided=""
  triple=$(triple_of "$platform")
  [[ $platform == windows-* ]] && exe=.exe
  start=$(date +%s)
  if [[ $platform == "$(native_platform)" ]]; then
    bin="$ROOT/target/$profile/$bin_name"
    strip_tool=strip
    if [[ $package == azd-wasm-host-sidecar && ${RELEASE_PGO:-1} != 0 ]]; then
      # Built with a profile of the code it runs (scripts/pgo.sh): unless no llvm-profdata.
      local rc=0 out
      out=$(scripts/pgo.sh "$platform") || rc=$?
      case $rc in
        0) bin=$out guided=" (profile-guided)" ;;
        3) echo "release: $platform sidecar built WITHOUT a profile (no llvm-profdata)" >&2 ;;
        *) die "scripts/pgo.sh failed" ;;
      esac
    fi
    [[ -n $guided ]] || cargo build --locked --profile "$profile" -p "$package" --bin "$bin_name" >&2
  else
    # shellcheck disable=SC2046 # one package per word
    ensure_packages "${RUST_WEB[@]}" $(cross_packages "$platform")
    local cc var
    cc=$(cross_cc "$platform")
    var=$(echo "$triple" | tr 'a-z-' 'A-Z_')
    if [[ $platform == darwin-* ]]; then
      ensure_zig
      # zig's target; 11.0 is the oldest macOS both architectures are built for.
      export ZIG_CC_TARGET="${triple%%-*}-macos.11.0" MACOSX_DEPLOYMENT_TARGET=11.0
      # llvm-ar writes the archive index Apple's format needs (GNU ar's is not read).
      export "AR_${triple//-/_}=llvm-ar"
      # No dsymutil here to pack debug info into a .dSYM; the binary is stripped anyway.
      export "CARGO_PROFILE_${upper}_DEBUG=false" "CARGO_PROFILE_${upper}_SPLIT_DEBUGINFO=off"
    elif [[ $platform == windows-arm64 ]]; then
      ensure_zig
      export ZIG_CC_TARGET=aarch64-windows-gnu
      export "AR_${triple//-/_}=llvm-ar"
    fi
    env PATH="/usr/bin:$PATH" RUSTC=/usr/bin/rustc RUSTC_BOOTSTRAP=1 \
      "CARGO_TARGET_${var}_LINKER=$cc" "CC_${triple//-/_}=$cc" \
      /usr/bin/cargo build --profile "$profile" -p "$package" --bin "$bin_name" \
      --target "$triple" -Zbuild-std=std,panic_unwind >&2
    bin="$ROOT/target/$triple/$profile/$bin_name$exe"
    strip_tool=$(cross_strip "$platform")
  fi
  mkdir -p "$dest"
  cp "$bin" "$dest/azd-wasm-host$exe"
  "$strip_tool" "$dest/azd-wasm-host$exe"
  if [[ $package == azd-wasm-host-sidecar ]]; then
    # What `package` says of this build when it ships it (host/author/src/package/sidecars.rs).
    printf '{"profile": "%s", "profile_guided": %s}\n' "$profile" "$([[ -n $guided ]] && echo true || echo false)" \
      >"$dest/sidecar-build.json"
  fi
  awk -v p="$platform" -v f="$dest/azd-wasm-host$exe" -v b="$(stat -c %s "$dest/azd-wasm-host$exe")" \
    -v s=$(($(date +%s) - start)) -v g="$guided" \
    'BEGIN { printf "%-14s %s  %.1f MB  built in %d s%s\n", p, f, b / 1e6, s, g }'
}

dev=0
if [[ ${1:-} == --dev ]]; then
  dev=1
  shift
fi
platforms=("$@")
((${#platforms[@]} > 0)) || platforms=("$(native_platform)")
[[ ${platforms[*]} == all ]] && platforms=("${ALL_PLATFORMS[@]}")
for p in "${platforms[@]}"; do
  # The sidecar profile (Cargo.toml): whole-program LTO, size over speed off the request path.
  build "$p" sidecar azd-wasm-host-sidecar azd-wasm-host-sidecar "$OUT/$p"
  if ((dev)); then
    build "$p" release azd-wasm-host azd-wasm-host "$OUT/$p/dev"
  fi
done
