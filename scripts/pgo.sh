#!/usr/bin/env bash
# The sidecar for this machine's platform, built with a profile of the code it runs (the release
# workflow's Linux builds, scripts/release.sh and `package` from a checkout all build it so):
#   1. the sidecar is built instrumented (-Cprofile-generate), in target/pgo/generate;
#   2. it is trained on the training provider (host/fixtures/src/training.rs: built from WAT, so
#      no language toolchain is needed; every answer carries values, and it calls every import a
#      provider does: progress, log, stderr, azd's environment, files in a granted folder),
#      packaged with it and unpacked as azd installs it, serving whole lifecycles (provision,
#      preview, state, parameters, down) that a CLI of this checkout drives as azd does (`run`,
#      the extension started as azd starts one);
#   3. the counts, and each process's trace of the order it first ran functions in, are merged
#      by llvm-profdata of rustc's own LLVM (rustup's llvm-tools, else Debian's llvm-<major>,
#      installed when missing, unless AZD_WASM_HOST_NO_APT=1) and the sidecar is built again with
#      them (-Cprofile-use; on x86_64 Linux laid out by the traces too), in target/pgo/use, with
#      the note `package` reads beside it.
# With the profile, LLVM marks every function the training never ran as unlikely and the linker
# puts those apart, so the code a running sidecar touches sits on fewer pages (less resident
# after Ready; docs/benchmarks.md).
#
#   scripts/pgo.sh PLATFORM   (this machine's, as release.sh names it: linux-amd64, linux-arm64)
#
# Prints the built binary's path on stdout; exits 3, having built nothing, when no llvm-profdata
# for rustc's LLVM can be had (release.sh and `package` then build without a profile and say so).
#
# Drives a CLI of this checkout: AZD_WASM_HOST_BIN (`package` passes itself), else
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
  if [[ ${AZD_WASM_HOST_NO_APT:-} != 1 && $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
    echo "pgo: installing llvm-$major for llvm-profdata" >&2
    apt-get update -qq >/dev/null &&
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "llvm-$major" >/dev/null 2>&1 &&
      [[ -x /usr/lib/llvm-$major/bin/llvm-profdata ]] &&
      { echo "/usr/lib/llvm-$major/bin/llvm-profdata"; return 0; }
  fi
  echo "pgo: no llvm-profdata for LLVM $major (rustup component add llvm-tools, or Debian's llvm-$major)" >&2
  return 1
}

PLATFORM=${1:?usage: scripts/pgo.sh PLATFORM}
PROFDATA=$(profdata_tool) || exit 3
TRIPLE=$(rustc -vV | sed -n 's/^host: //p')
sha256() { if command -v sha256sum >/dev/null; then sha256sum; else shasum -a 256; fi; }

# sidecar DIR RUSTFLAGS: builds the sidecar into DIR with RUSTFLAGS; prints its path. --target
# keeps the flags off build scripts and proc-macros.
sidecar() {
  RUSTFLAGS="$2" CARGO_TARGET_DIR="$1" cargo build --locked --profile sidecar \
    -p azd-wasm-host-sidecar --bin azd-wasm-host-sidecar --target "$TRIPLE" >&2 || return 1
  echo "$1/$TRIPLE/sidecar/azd-wasm-host-sidecar"
}

# guided: the profile-guided build, with the note `package` and release.sh read beside it.
guided() {
  local bin
  bin=$(sidecar "$PGO/use" "$USE_FLAGS") || return 1
  printf '{"profile": "sidecar", "profile_guided": true}\n' >"$(dirname "$bin")/sidecar-build.json"
  echo "$bin"
}

CLI=${AZD_WASM_HOST_BIN:-}
if [[ -z $CLI ]]; then
  # This checkout's (a stale one would precompile for another host version, which the sidecar
  # refuses); the release build, as bench.sh and cross-test.sh use it.
  cargo build --locked --release -p azd-wasm-host --bin azd-wasm-host >&2
  CLI="$ROOT/target/release/azd-wasm-host"
fi
# The training provider, written by the fixtures' example (no runtime in that build: a minute),
# in a target folder of its own so that no build under way in target/ waits for it.
PROVIDER="$PGO/provider"
CARGO_TARGET_DIR="$PGO/tools" cargo run --quiet --locked --release -p azd-wasm-host-fixtures \
  --no-default-features --example training-provider -- "$PROVIDER" >/dev/null ||
  die "cannot write the training provider"

# Temporal instrumentation: each process's profile also records the order in which it first ran
# each function (a trace), from which the linker lays out the code a start runs, below.
instrumented=$(sidecar "$PGO/generate" "-Cprofile-generate=$PGO/raw -Cllvm-args=-pgo-temporal-instrumentation")
# The profile is named after what it was trained with (the build, the provider, this script):
# when none changed it is reused (and the build with it stays fresh); otherwise the training runs
# again, and the new name rebuilds.
PROFILE="$PGO/sidecar-$(cat "$instrumented" "${BASH_SOURCE[0]}" "$PROVIDER/provider.toml" \
  "$PROVIDER/build/training.wasm" | sha256 | cut -c1-16).profdata"
# lld keeps the code that never ran (.text.unlikely.*) apart only when asked. The training is a
# few short sessions, so the code every start runs once is a larger share of its counts than of a
# sidecar serving azd: at LLVM's default (the blocks making up 99% of the counts are hot, here
# any block run 5 times) nearly all of it would count as hot, compiled for speed and inlined into
# (2026-12-07: 12.0 MB stripped, idle RSS 10.0 MiB); the blocks making up 95% (run 35 times or
# more) are nearer what a long session finds hot (a profile of the benchmark's own session: 68):
# 10.8 MB, idle RSS 9.3 MiB (docs/benchmarks.md).
USE_FLAGS="-Cprofile-use=$PROFILE -Clink-arg=-Wl,-z,keep-text-section-prefix -Cllvm-args=-profile-summary-cutoff-hot=950000"
# Where rustc links with its own lld (x86_64 Linux), the functions the training's processes ran
# are also laid out by when they first ran (lld's balanced partitioning of the traces above), so
# a start faults in fewer pages of code (2026-12-07, the same profile without and with it: idle
# RSS 9.1 → 8.8 MiB, after a session 9.6 → 9.0 MiB; docs/benchmarks.md).
if [[ $TRIPLE == x86_64-unknown-linux-gnu ]]; then
  USE_FLAGS="$USE_FLAGS -Clink-arg=-Wl,--irpgo-profile=$PROFILE -Clink-arg=-Wl,--bp-startup-sort=function"
fi
if [[ -f $PROFILE ]]; then
  echo "pgo: reusing $PROFILE (the instrumented build is unchanged)" >&2
  guided
  exit 0
fi
rm -rf "$PGO/raw"

# A raw profile per process (%p): each then keeps its own trace of first runs, which merging
# into one file as the processes end would not keep.
export LLVM_PROFILE_FILE="$PGO/raw/sidecar-%p.profraw"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/pgo.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
# One trust folder: `package` signs with the key it makes there, and the sidecar verifies with it.
export AZD_CONFIG_DIR="$WORK/azd-config"
log="$WORK/train.log"

# The training provider packaged with the instrumented sidecar, unpacked into a folder named as
# the extension, as azd installs it (the sidecar checks the signed extension id against that name).
installed="$WORK/installed/$(sed -n 's/^id: *//p' extension.yaml)"
mkdir -p "$WORK/pkg" "$installed"
sed "s/^  - name: localfiles\$/  - name: training/" extension.yaml >"$WORK/pkg/extension.yaml"
"$CLI" package "$PROVIDER/provider.toml" --extension "$WORK/pkg/extension.yaml" \
  --host "${PLATFORM/-//}=$instrumented" --out "$WORK/pkg" >"$log" 2>&1 ||
  { cat "$log" >&2; die "cannot package the training provider"; }
tar xzf "$WORK/pkg/"*.tar.gz -C "$installed"
# Its grants (a folder, azd's environment) run only once allowed: as CI allows them.
"$installed/azd-wasm-host" approve >"$log" 2>&1 || { cat "$log" >&2; die "cannot approve the training provider"; }
# As azd starts it: no manifest named, so the sidecar reads the provider.toml beside it.
printf '#!/bin/sh\nunset AZD_WASM_HOST_MANIFEST\nexec %q "$@"\n' "$installed/azd-wasm-host" >"$WORK/extension"
chmod +x "$WORK/extension"

# Each action in a fresh project, with a new HOME and an empty cache: a project provisioned
# before (its state file there), whose azure.yaml gives the provider a config of every JSON kind.
for action in provision preview state parameters down; do
  proj="$WORK/project-$action"
  mkdir -p "$proj/infra" "$proj/.home"
  printf 'deployed\n' >"$proj/infra/state.txt"
  cat >"$proj/azure.yaml" <<'YAML'
name: pgo-training
infra:
  provider: training
  config:
    name: world
    replicas: 2
    enabled: true
    tags: [web, db]
    limits: { cpu: 0.5, memory: null }
YAML
  cp -R "$PROVIDER" "$proj/provider"
  flags=()
  [[ $action == down ]] && flags=(--force)
  (cd "$proj" && HOME="$proj/.home" AZD_WASM_HOST_CACHE_DIR='' AZD_WASM_HOST_EXTENSION_COMMAND="$WORK/extension" \
    "$CLI" run "$action" "${flags[@]}" -p provider/provider.toml) >"$log" 2>&1 ||
    { tail -n 30 "$log" >&2; die "run $action failed while training"; }
done

ls "$PGO/raw/"*.profraw >/dev/null 2>&1 || die "the training wrote no profile to $PGO/raw"
rm -f "$PGO/"sidecar-*.profdata
"$PROFDATA" merge -o "$PROFILE" "$PGO/raw/"*.profraw
guided
