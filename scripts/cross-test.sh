#!/usr/bin/env bash
# Runs each build of scripts/release.sh as far as this machine allows, and prints the matrix:
# platform · size · what ran · where · result.
#
#   scripts/cross-test.sh [PLATFORM...]   (default: every build in target/release-dist/)
#
# The builds are sidecars (target/release-dist/<os>-<arch>/azd-wasm-host[.exe]), which carry no
# compiler. This machine's development CLI packages the C example (and, for Windows, the Python
# one) with every sidecar build, so each platform's archive holds the component precompiled for
# it; each archive is unpacked as azd installs it, and this machine's CLI plays azd (`run`) while
# the unpacked sidecar serves as the extension (AZD_WASM_HOST_EXTENSION_COMMAND), with its debug
# log kept: every start must say its code was loaded precompiled (no compile).
# - linux-amd64: natively.
# - windows-amd64: under Wine (scripts/wine/run.sh, with its test-only ProcessPrng stand-in),
#   from the unpacked folder itself; also the Python example, whose grants (`.`, `localinfra`,
#   `.azure/{env}`) are opened by Windows code, with the files it made and removed checked, and
#   its outputs checked to name those folders as Windows does (`Z:\...\localinfra`).
# - linux-arm64: under qemu-user.
# - windows-arm64: not runnable here (Wine runs amd64 code only); its PE headers inspected
#   (scripts/pe-check.py: an arm64 PE32+ console program importing only DLLs Windows has).
# - darwin-*: not runnable here; linked and inspected (scripts/macho-check.py: Mach-O headers,
#   load commands, and the ad-hoc code signature checked page by page).
# Each lifecycle is a fresh project and HOME: `run provision`, `run state --output json`,
# `run down --force`. Development CLI builds (`scripts/release.sh --dev`, in .../dev/) also run
# `--version` and `check` where they can run. Needs the examples built
# (scripts/build-examples.sh) and this machine's CLI (cargo build --release). CROSS_TEST_KEEP=1
# keeps the work folder (projects, archives, each sidecar's debug log) for a look afterwards.
set -uo pipefail

ROOT=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
DIST="$ROOT/target/release-dist"
NATIVE_HOST="${AZD_WASM_HOST_BIN:-$ROOT/target/release/azd-wasm-host}"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/cross-test.XXXXXX")
# One trust folder for the whole run: `package` signs with the key it makes there, and every
# sidecar (whatever HOME its lifecycle has) verifies against it.
export AZD_CONFIG_DIR="$WORK/azd-config"
[[ -n ${CROSS_TEST_KEEP:-} ]] || trap 'rm -rf "$WORK"' EXIT
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

# native_paths PROJ HOST_PROJECT: the Python example's state outputs name its folders as the host
# does (on Windows `Z:\...\localinfra`, never the guest's `/Z:/...`): LOCALFILES_ROOT is
# HOST_PROJECT's localinfra, and each of LOCALFILES_PATHS lies beneath it. Shows the outputs and
# their lines in .env.
native_paths() {
  local proj=$1 host_project=$2
  python3 - "$proj/state.log" "$host_project" <<'PY' || { note "the outputs are not native paths"; return 1; }
import json, sys
log, project = sys.argv[1], sys.argv[2]
sep = "\\" if project[1:3] == ":\\" else "/"
text = open(log, encoding="utf-8").read()
start = 0 if text.startswith("{") else text.index("\n{") + 1
outputs = json.JSONDecoder().raw_decode(text, start)[0]["outputs"]
root = outputs["LOCALFILES_ROOT"]["value"]
paths = json.loads(outputs["LOCALFILES_PATHS"]["value"])
print(f"    LOCALFILES_ROOT  = {root}", file=sys.stderr)
print(f"    LOCALFILES_PATHS = {outputs['LOCALFILES_PATHS']['value']}", file=sys.stderr)
want = project + sep + "localinfra"
bad = [p for p in [root, *paths.values()] if p != want and not p.startswith(want + sep)]
guest = [o["value"] for o in outputs.values() if "/Z:/" in o["value"]]
if root != want or bad or not paths or guest:
    sys.exit(f"want {want} and paths beneath it, got {root} and {bad or guest or 'no paths'}")
PY
  grep -h '^LOCALFILES_\(ROOT\|PATHS\)=' "$proj"/.azure/*/.env | sed 's/^/    .env: /' >&2 || note "no LOCALFILES_ROOT in .env"
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
    # A Windows sidecar under Wine sees the project as Z:\... (azd on Windows sends drive paths).
    if [[ ${WINDOWS_SIDECAR:-} == 1 ]]; then
      export AZD_WASM_HOST_EXTENSION_PROJECT_PATH="Z:${proj//\//\\}"
    fi
    mkdir -p "$HOME"
    step "$proj/provision.log" "$@" run provision -p provider/provider.toml || exit 1
    step "$proj/state.log" "$@" run state -p provider/provider.toml --output json || exit 1
    grep -q '"outputs"' "$proj/state.log" || { note "state printed no outputs"; exit 1; }
    if [[ $example == python-localfiles ]]; then
      native_paths "$proj" "${AZD_WASM_HOST_EXTENSION_PROJECT_PATH:-$proj}" || exit 1
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

# package EXAMPLE: the example packaged by this machine's CLI with every sidecar build in $DIST
# (one archive per platform, with the component precompiled for it), into $WORK/pkg-EXAMPLE.
package_example() {
  local example=$1 out="$WORK/pkg-$1" name
  [[ -d $out ]] && return 0
  name=$(sed -n 's/^name = "\(.*\)"/\1/p' "$ROOT/examples/$example/provider.toml")
  mkdir -p "$out"
  sed "s/^  - name: localfiles\$/  - name: $name/" "$ROOT/extension.yaml" >"$out/extension.yaml"
  step "$out/package.log" "$NATIVE_HOST" package "$ROOT/examples/$example/provider.toml" \
    --extension "$out/extension.yaml" --hosts-from "$DIST" --out "$out"
}

# sidecar_lifecycle PLATFORM EXAMPLE [RUNNER...]: the platform's archive of EXAMPLE unpacked as azd
# installs it, serving a lifecycle that this machine's CLI drives; RUNNER (Wine, qemu) starts it.
# Fails unless each of the three starts loaded the precompiled code.
sidecar_lifecycle() {
  local platform=$1 example=$2
  shift 2
  package_example "$example" || return 1
  local dir="$WORK/installed-$platform-$example" exe=azd-wasm-host
  [[ $platform == windows-* ]] && exe=azd-wasm-host.exe
  mkdir -p "$dir"
  tar xzf "$WORK/pkg-$example/"*-"$platform".tar.gz -C "$dir" || { note "cannot unpack the $platform archive"; return 1; }
  # A provider with grants (the Python one's folders) runs only once allowed: as CI allows it.
  "$NATIVE_HOST" approve --manifest "$dir/provider.toml" >/dev/null 2>&1 || { note "cannot approve $example"; return 1; }
  local ext="$WORK/ext-$platform-$example" log="$WORK/sidecar-$platform-$example.log"
  # As azd starts it: no manifest named, so the sidecar reads the provider.toml beside it.
  {
    echo '#!/bin/sh'
    echo 'unset AZD_WASM_HOST_MANIFEST'
    echo "export AZD_DEBUG=true WINE_RUN_DIR=$(printf %q "$dir")"
    # (printf '%q ' with no runner would print '', a command named by an empty word)
    echo "exec ${*:+$(printf '%q ' "$@")}$(printf %q "$dir/$exe") \"\$@\" 2>>$(printf %q "$log")"
  } >"$ext"
  chmod +x "$ext"
  local windows=0
  [[ $platform == windows-* ]] && windows=1
  AZD_WASM_HOST_EXTENSION_COMMAND="$ext" WINDOWS_SIDECAR=$windows lifecycle "$example" "$NATIVE_HOST" || return 1
  local loaded
  loaded=$(grep -c "loaded from its package's precompiled code (no compile)" "$log")
  if [[ $loaded -ne 3 ]] || grep -q "has no precompiled code" "$log"; then
    note "$platform: $loaded of 3 starts loaded the precompiled code; its log:"
    tail -n 20 "$log" | sed 's/^/    /' >&2
    return 1
  fi
  grep -m1 "loaded from its package's precompiled code" "$log" | sed "s/^/    $platform: /" >&2
}

# dev_check PLATFORM RUNNER...: --version and check on the C example, where a development CLI
# build of the platform is in $DIST/PLATFORM/dev.
dev_check() {
  local platform=$1
  shift
  [[ -f "$DIST/$platform/dev/azd-wasm-host" || -f "$DIST/$platform/dev/azd-wasm-host.exe" ]] || return 0
  check_run "$@"
}

test_linux_amd64() {
  local bin=$1 result=pass
  sidecar_lifecycle linux-amd64 c-hello && dev_check linux-amd64 "$DIST/linux-amd64/dev/azd-wasm-host" || result=FAIL
  row linux-amd64 "$(size_of "$bin")" "lifecycle (C) served by the sidecar from its package" native "$result"
}

test_windows_amd64() {
  local bin=$1 result=pass
  local wine="$ROOT/scripts/wine/run.sh"
  sidecar_lifecycle windows-amd64 c-hello "$wine" &&
    sidecar_lifecycle windows-amd64 python-localfiles "$wine" &&
    dev_check windows-amd64 "$wine" "$DIST/windows-amd64/dev/azd-wasm-host.exe" || result=FAIL
  row windows-amd64 "$(size_of "$bin")" "lifecycle (C; Python with fs grants) served by the sidecar from its package" \
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
  local qemu=(qemu-aarch64 -L /usr/aarch64-linux-gnu)
  sidecar_lifecycle linux-arm64 c-hello "${qemu[@]}" &&
    sidecar_lifecycle linux-arm64 python-localfiles "${qemu[@]}" &&
    dev_check linux-arm64 "${qemu[@]}" "$DIST/linux-arm64/dev/azd-wasm-host" || result=FAIL
  row linux-arm64 "$(size_of "$bin")" "lifecycle (C; Python with fs grants) served by the arm64 sidecar from its package" \
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

test_windows_arm64() {
  local bin=$1 result=pass log="$WORK/windows-arm64-inspect.log"
  if python3 "$ROOT/scripts/pe-check.py" "$bin" arm64 >"$log" 2>&1; then
    sed 's/^/    /' "$log" >&2
  else
    cat "$log" >&2
    result=FAIL
  fi
  row windows-arm64 "$(size_of "$bin")" \
    "linked; PE headers and imports checked (scripts/pe-check.py): $(grep -E '^(machine|imports):' "$log" | paste -sd';' -)" \
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
    windows-arm64) test_windows_arm64 "$bin" ;;
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
