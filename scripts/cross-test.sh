#!/usr/bin/env bash
# Runs each release build of scripts/release.sh as far as this machine allows, and prints the
# matrix: platform · size · what ran · where · result.
#
#   scripts/cross-test.sh [PLATFORM...]   (default: every build in target/release-dist/)
#
# - linux-amd64: natively.
# - windows-amd64: under Wine (scripts/wine/run.sh, with its test-only ProcessPrng stand-in). The
#   Windows build plays azd itself (`run` starts the same .exe as `listen`), so the whole
#   conversation, gRPC on loopback included, is Windows code.
# - linux-arm64: under qemu-user. A binary under qemu cannot start another arm64 binary without a
#   binfmt registration, so this machine's own host plays azd and starts the arm64 build as the
#   extension (AZD_WASM_HOST_EXTENSION_COMMAND): every provider call is served by arm64 code.
# - darwin-*: not runnable here; linked and inspected (scripts/macho-check.py: Mach-O headers,
#   load commands, and the ad-hoc code signature checked page by page).
#
# Each runnable build runs `--version`, `check` on the C example, and a lifecycle on a fresh
# project and HOME: `run provision`, `run state --output json`, `run down --force`. The Windows
# build also runs the Python example, whose grants (`.`, `localinfra`, `.azure/{env}`) are opened
# from Windows paths, and checks the files it made and removed. Needs the examples built
# (scripts/build-examples.sh) and this machine's host (cargo build --release).
set -uo pipefail

ROOT=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
DIST="$ROOT/target/release-dist"
NATIVE_HOST="${AZD_WASM_HOST_BIN:-$ROOT/target/release/azd-wasm-host}"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/cross-test.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
ROWS=()
FAILED=0

note() { echo "cross-test: $*" >&2; }

# step LOG COMMAND...: runs COMMAND with its output in LOG; on failure shows the log's end.
step() {
  local log=$1
  shift
  if "$@" >"$log" 2>&1; then
    return 0
  fi
  note "FAILED: $*"
  tail -n 30 "$log" | sed 's/^/    /' >&2
  return 1
}

# A fresh project for PROVIDER_DIR's example: azure.yaml, provider.toml and its component.
make_project() {
  local dir=$1 example=$2
  mkdir -p "$dir/provider/build"
  case $example in
    c-hello)
      printf 'name: cross-c\ninfra:\n  provider: c-hello\n  config:\n    name: world\n' >"$dir/azure.yaml" ;;
    python-localfiles)
      cp -r "$ROOT/examples/azd-e2e-project/." "$dir/" ;;
  esac
  cp "$ROOT/examples/$example/provider.toml" "$dir/provider/"
  cp "$ROOT/examples/$example/build/$example.wasm" "$dir/provider/build/"
}

# lifecycle LABEL RUNNER... : provision, state, down in a fresh project, with RUNNER the host
# command (the project is the working directory; paths are relative, so Wine reads them too).
lifecycle() {
  local example=$1
  shift
  local proj="$WORK/$example-$RANDOM"
  make_project "$proj" "$example"
  (
    cd "$proj" || exit 1
    export HOME="$proj/.home" AZD_WASM_HOST_CACHE_DIR=
    mkdir -p "$HOME"
    step "$proj/provision.log" "$@" run provision -p provider/provider.toml || exit 1
    step "$proj/state.log" "$@" run state -p provider/provider.toml --output json || exit 1
    grep -q '"outputs"' "$proj/state.log" || { note "state printed no outputs"; exit 1; }
    if [[ $example == python-localfiles ]]; then
      [[ -d localinfra/web && -f localinfra/settings ]] || { note "provision made no localinfra/web, localinfra/settings"; exit 1; }
      grep -q "hello from a WebAssembly provider" localinfra/settings || { note "localinfra/settings has the wrong content"; exit 1; }
    else
      grep -q "Hello" "$proj/provision.log" || { note "provision shows no greeting"; exit 1; }
    fi
    step "$proj/down.log" "$@" run down --force -p provider/provider.toml || exit 1
    if [[ $example == python-localfiles && -e localinfra/web ]]; then
      note "down left localinfra/web"
      exit 1
    fi
  ) && cp "$proj/provision.log" "$WORK/last-provision-$example.log"
}

# check_run RUNNER...: --version and check on the C example.
check_run() {
  local log="$WORK/check-$RANDOM.log"
  step "$log" "$@" --version || return 1
  make_project "$WORK/check-proj" c-hello
  (cd "$WORK/check-proj" && step "$log" "$@" check provider/provider.toml) || return 1
  grep -q "c-hello" "$log" || { note "check did not describe the provider"; return 1; }
}

row() { ROWS+=("| $1 | $2 | $3 | $4 | $5 |"); [[ $5 == pass* ]] || FAILED=1; }

size_of() { awk -v b="$(stat -c %s "$1")" 'BEGIN { printf "%.1f MB", b / 1e6 }'; }

test_linux_amd64() {
  local bin=$1 ran="--version, check, lifecycle (C)" result=pass
  check_run "$bin" && lifecycle c-hello "$bin" || result=FAIL
  row linux-amd64 "$(size_of "$bin")" "$ran" native "$result"
}

test_windows_amd64() {
  local bin=$1 result=pass
  local wine=("$ROOT/scripts/wine/run.sh" "$bin")
  check_run "${wine[@]}" && lifecycle c-hello "${wine[@]}" && lifecycle python-localfiles "${wine[@]}" || result=FAIL
  row windows-amd64 "$(size_of "$bin")" "--version, check, lifecycle (C; Python with fs grants)" \
    "Wine $(/usr/lib/wine/wine64 --version 2>/dev/null | sed 's/^wine-//')" "$result"
  [[ -f "$WORK/last-provision-python-localfiles.log" ]] && {
    echo "--- windows-amd64 under Wine: run provision (python-localfiles)"
    cat "$WORK/last-provision-python-localfiles.log"
  }
}

test_linux_arm64() {
  local bin=$1 result=pass
  if ! command -v qemu-aarch64 >/dev/null; then
    [[ $(id -u) == 0 ]] && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq qemu-user >/dev/null
  fi
  local qemu=(qemu-aarch64 -L /usr/aarch64-linux-gnu "$bin")
  # The extension command counts its starts, so the matrix shows the arm64 build served each step.
  local ext="$WORK/arm64-extension" starts="$WORK/arm64-starts"
  printf '#!/bin/sh\necho started >>%q\nexec qemu-aarch64 -L /usr/aarch64-linux-gnu %q "$@"\n' \
    "$starts" "$bin" >"$ext"
  chmod +x "$ext"
  check_run "${qemu[@]}" &&
    AZD_WASM_HOST_EXTENSION_COMMAND="$ext" lifecycle c-hello "$NATIVE_HOST" || result=FAIL
  if [[ $result == pass && $(wc -l <"$starts" 2>/dev/null || echo 0) -ne 3 ]]; then
    note "the arm64 build was not started for each of provision, state and down"
    result=FAIL
  fi
  row linux-arm64 "$(size_of "$bin")" "--version, check; lifecycle (C) served by the arm64 build as listen" \
    "qemu-user $(qemu-aarch64 --version | head -1 | awk '{print $3}')" "$result"
}

test_darwin() {
  local platform=$1 bin=$2 result=pass
  local log="$WORK/$platform-inspect.log"
  if python3 "$ROOT/scripts/macho-check.py" "$bin" "${platform#darwin-}" 11.0 >"$log" 2>&1; then
    sed 's/^/    /' "$log" >&2
  else
    cat "$log" >&2
    result=FAIL
  fi
  row "$platform" "$(size_of "$bin")" \
    "linked; Mach-O headers, load commands and code signature checked (scripts/macho-check.py): $(grep -E '^(links|code signature):' "$log" | paste -sd';' -)" \
    "not runnable here" "$result"
}

platforms=("$@")
if ((${#platforms[@]} == 0)); then
  for d in "$DIST"/*/; do platforms+=("$(basename "$d")"); done
fi
((${#platforms[@]} > 0)) || { note "no builds in $DIST: run scripts/release.sh first"; exit 1; }
[[ -x $NATIVE_HOST ]] || { note "needs this machine's host: cargo build --release"; exit 1; }
for example in c-hello python-localfiles; do
  [[ -f "$ROOT/examples/$example/build/$example.wasm" ]] || { note "needs the examples: scripts/build-examples.sh"; exit 1; }
done

for p in "${platforms[@]}"; do
  exe=""
  [[ $p == windows-* ]] && exe=.exe
  bin="$DIST/$p/azd-wasm-host$exe"
  [[ -f $bin ]] || { row "$p" - - - "FAIL: no build at $bin"; continue; }
  note "testing $p"
  case $p in
    linux-amd64) test_linux_amd64 "$bin" ;;
    windows-amd64) test_windows_amd64 "$bin" ;;
    linux-arm64) test_linux_arm64 "$bin" ;;
    darwin-*) test_darwin "$p" "$bin" ;;
    *) row "$p" "$(size_of "$bin")" - - "FAIL: no test for this platform" ;;
  esac
done

echo
echo "| target | stripped size | what ran | where | result |"
echo "|---|---|---|---|---|"
printf '%s\n' "${ROWS[@]}"
exit $FAILED
