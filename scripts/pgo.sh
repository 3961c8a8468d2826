#!/usr/bin/env bash
# The sidecar for this machine's platform, built with a profile of the code it runs
# (scripts/release.sh calls this for its native build):
#   1. the sidecar is built instrumented (-Cprofile-generate), in target/pgo/generate;
#   2. it is trained: the C and the Python example are packaged with it and unpacked as azd
#      installs them, and each serves whole lifecycles (provision, preview, state, parameters,
#      down) that this machine's CLI drives as azd does (`run`, the extension started as azd
#      starts one). The benchmark's provider (scripts/bench/c-provider) is not among them;
#   3. the counts are merged by llvm-profdata of rustc's own LLVM (Debian's llvm-<major>,
#      installed when missing) and the sidecar is built again with them (-Cprofile-use), in
#      target/pgo/use.
# With the profile, LLVM marks every function the training never ran as unlikely and the linker
# puts those apart, so the code a running sidecar touches sits on fewer pages: idle RSS after
# Ready 9.9 → 8.6–8.7 MiB, and the binary 10.1 → 9.3 MB (scripts/bench.sh go; docs/benchmarks.md).
#
#   scripts/pgo.sh PLATFORM   (this machine's, as release.sh names it: linux-amd64, linux-arm64)
#
# Prints the built binary's path on stdout; exits 3, having built nothing, when no llvm-profdata
# for rustc's LLVM can be had (release.sh then builds without a profile and says so).
#
# Needs the examples built (scripts/build-examples.sh c-hello python-localfiles; run here when
# missing) and a CLI of this checkout to package and drive them: AZD_WASM_HOST_BIN, else
# target/release/azd-wasm-host (built, or brought up to date, here).
set -euo pipefail

ROOT=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
PGO="$ROOT/target/pgo"
die() { echo "pgo: $*" >&2; exit 1; }

# llvm-profdata of the LLVM major rustc was built with (the raw profile format follows it):
# rustup's llvm-tools, else Debian's llvm-<major>.
profdata_tool() {
  local major tool
  major=$(rustc -vV | sed -n 's/^LLVM version: \([0-9]*\).*/\1/p')
  [[ -n $major ]] || return 1
  for tool in "$(rustc --print sysroot)/lib/rustlib/$(rustc -vV | sed -n 's/^host: //p')/bin/llvm-profdata" \
    "llvm-profdata-$major" "/usr/lib/llvm-$major/bin/llvm-profdata"; do
    command -v "$tool" >/dev/null 2>&1 && { echo "$tool"; return 0; }
  done
  if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
    echo "pgo: installing llvm-$major for llvm-profdata" >&2
    apt-get update -qq >/dev/null &&
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "llvm-$major" >/dev/null 2>&1 &&
      [[ -x /usr/lib/llvm-$major/bin/llvm-profdata ]] &&
      { echo "/usr/lib/llvm-$major/bin/llvm-profdata"; return 0; }
  fi
  echo "pgo: no llvm-profdata for LLVM $major (Debian package llvm-$major)" >&2
  return 1
}

PLATFORM=${1:?usage: scripts/pgo.sh PLATFORM}
PROFDATA=$(profdata_tool) || exit 3
TRIPLE=$(rustc -vV | sed -n 's/^host: //p')

# sidecar DIR RUSTFLAGS: builds the sidecar into DIR with RUSTFLAGS; prints its path. --target
# keeps the flags off build scripts and proc-macros.
sidecar() {
  RUSTFLAGS="$2" CARGO_TARGET_DIR="$1" cargo build --locked --profile sidecar \
    -p azd-wasm-host-sidecar --bin azd-wasm-host-sidecar --target "$TRIPLE" >&2 || return 1
  echo "$1/$TRIPLE/sidecar/azd-wasm-host-sidecar"
}

CLI=${AZD_WASM_HOST_BIN:-}
if [[ -z $CLI ]]; then
  # This checkout's (a stale one would precompile for another host version, which the sidecar
  # refuses); the release build, as bench.sh and cross-test.sh use it.
  cargo build --locked --release -p azd-wasm-host --bin azd-wasm-host >&2
  CLI="$ROOT/target/release/azd-wasm-host"
fi
# The C example's bindings come from a CLI of this checkout: the one just built.
AZD_WASM_HOST_CLI="$CLI" scripts/build-examples.sh c-hello python-localfiles >&2

instrumented=$(sidecar "$PGO/generate" "-Cprofile-generate=$PGO/raw")
# The profile is named after what it was trained with (the build, the examples, this script):
# when none changed it is reused (and the build with it stays fresh); otherwise the training runs
# again, and the new name rebuilds.
PROFILE="$PGO/sidecar-$(cat "$instrumented" "${BASH_SOURCE[0]}" examples/{c-hello,python-localfiles}/provider.toml \
  examples/c-hello/build/c-hello.wasm examples/python-localfiles/build/python-localfiles.wasm |
  sha256sum | cut -c1-16).profdata"
# lld keeps the code that never ran (.text.unlikely.*) apart only when asked.
USE_FLAGS="-Cprofile-use=$PROFILE -Clink-arg=-Wl,-z,keep-text-section-prefix"
if [[ -f $PROFILE ]]; then
  echo "pgo: reusing $PROFILE (the instrumented build is unchanged)" >&2
  sidecar "$PGO/use" "$USE_FLAGS"
  exit 0
fi
rm -rf "$PGO/raw"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/pgo.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
# One trust folder: `package` signs with the key it makes there, and the sidecar verifies with it.
export AZD_CONFIG_DIR="$WORK/azd-config"

# train EXAMPLE ACTION...: EXAMPLE packaged with the instrumented sidecar, unpacked as azd installs
# it, serving each ACTION in a fresh project with a new HOME and an empty cache.
train() {
  # Unpacked into a folder named as the extension, as azd installs it: the sidecar checks the
  # signed extension id against that name.
  local example=$1 name proj installed log="$WORK/$1.log"
  installed="$WORK/installed-$1/$(sed -n 's/^id: *//p' extension.yaml)"
  shift
  name=$(sed -n 's/^name = "\(.*\)"/\1/p' "examples/$example/provider.toml")
  mkdir -p "$WORK/pkg-$example" "$installed"
  sed "s/^  - name: localfiles\$/  - name: $name/" extension.yaml >"$WORK/pkg-$example/extension.yaml"
  "$CLI" package "examples/$example/provider.toml" --extension "$WORK/pkg-$example/extension.yaml" \
    --host "${PLATFORM/-//}=$instrumented" --out "$WORK/pkg-$example" >"$log" 2>&1 ||
    { cat "$log" >&2; die "cannot package $example"; }
  tar xzf "$WORK/pkg-$example/"*.tar.gz -C "$installed"
  # A provider with grants (the Python one's folders) runs only once allowed: as CI allows it.
  "$installed/azd-wasm-host" approve >"$log" 2>&1 || { cat "$log" >&2; die "cannot approve $example"; }
  # As azd starts it: no manifest named, so the sidecar reads the provider.toml beside it.
  printf '#!/bin/sh\nunset AZD_WASM_HOST_MANIFEST\nexec %q "$@"\n' "$installed/azd-wasm-host" >"$WORK/ext-$example"
  chmod +x "$WORK/ext-$example"
  for action in "$@"; do
    proj="$WORK/$example-$action"
    mkdir -p "$proj/provider/build" "$proj/.home"
    if [[ $example == python-localfiles ]]; then
      cp -r examples/azd-e2e-project/. "$proj/"
    else
      printf 'name: pgo-c\ninfra:\n  provider: %s\n  config:\n    name: world\n' "$name" >"$proj/azure.yaml"
    fi
    cp "examples/$example/provider.toml" "$proj/provider/"
    cp "examples/$example/build/$example.wasm" "$proj/provider/build/"
    local flags=()
    [[ $action == down ]] && flags=(--force)
    (cd "$proj" && HOME="$proj/.home" AZD_WASM_HOST_CACHE_DIR='' \
      AZD_WASM_HOST_EXTENSION_COMMAND="$WORK/ext-$example" \
      "$CLI" run "$action" "${flags[@]}" -p provider/provider.toml) >"$log" 2>&1 ||
      { tail -n 30 "$log" >&2; die "$example: run $action failed while training"; }
  done
}
train c-hello provision preview state parameters down
train python-localfiles provision state down

ls "$PGO/raw/"*.profraw >/dev/null 2>&1 || die "the training wrote no profile to $PGO/raw"
rm -f "$PGO/"sidecar-*.profdata
"$PROFDATA" merge -o "$PROFILE" "$PGO/raw/"*.profraw
sidecar "$PGO/use" "$USE_FLAGS"
