#!/usr/bin/env bash
# Builds what the benchmarks drive and prints their tables (release build):
#
#   1. host_bench: the manager with a native provider next to a raw tonic floor, progress
#      throughput, and each example component (cold/warm start, Initialize, per call, RSS);
#   2. vs_go: this host with a trivial C component side by side with the same trivial
#      provider written on azd's own Go SDK (azd 1.31.2 pkg/azdext), both started and driven
#      the way azd does, with a tonic floor and ratios; ours is the shipped sidecar (built by
#      scripts/release.sh: alone, without compilers, profile-guided) from a package, installed
#      as azd installs it. Then the 19 MB Python example's first start after install, and the
#      size of the shipped binary and archive per platform beside the Go SDK extension's (every
#      sidecar scripts/release.sh has built into target/release-dist, and this machine's). The
#      docs/benchmarks.md's tables come from it.
#
#   3. test: `azd-wasm-host test` over every example's tests (the release CLI, warm compile
#      cache), and one replayed test alone (the azure-storage lifecycle, from its cassette,
#      offline): the median and spread of BENCH_TEST_RUNS runs, and the time per step.
#
#   4. languages: each language's provider component (C, Rust, JavaScript on QuickJS and on
#      ComponentizeJS, TypeScript, Python): its size, and the first Initialize on an empty
#      compile cache and on a warm one (scripts/bench/languages.py; the language table of docs/benchmarks.md).
#
#   scripts/bench.sh [host|go|test|languages]      (default: all four)
#
# Environment: BENCH_RUNS (processes per subject, default 20), BENCH_REQUESTS (default
# 10000), BENCH_PROGRESS (default 100000). The Go extension is built with the Go toolchain
# from the module proxy, as scripts/build-azd.sh builds azd (module cache reused).
set -euo pipefail
ROOT=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

which=${1:-all}
case $which in
  all | host | go | test | languages) ;;
  *)
    echo "bench: unknown benchmark '$which' (host, go, test, languages)" >&2
    exit 2
    ;;
esac

build_go_provider() {
  if ! command -v go >/dev/null 2>&1; then
    [[ -x /usr/local/go/bin/go ]] || {
      echo "bench: the Go toolchain is needed for the Go SDK column" >&2
      exit 1
    }
    export PATH="/usr/local/go/bin:$PATH"
  fi
  local out="$ROOT/.tools/bench/azd-go-bench-provider" proxy
  mkdir -p "$(dirname "$out")"
  proxy="$(go env GOPROXY)"
  proxy="${proxy%%,direct}"
  # As in build-azd.sh: the module cache, read as a file:// proxy, answers what the mirror
  # refuses (version lists). -s -w: stripped, as a packaged Go extension is.
  (cd scripts/bench/go-provider &&
    GOTOOLCHAIN=local CGO_ENABLED=0 GOPROXY="$proxy|file://$(go env GOMODCACHE)/cache/download" \
      go build -trimpath -ldflags "-s -w" -o "$out" .) >&2
  echo "$out"
}

if [[ $which == all || $which == host ]]; then
  scripts/build-examples.sh
  cargo bench -p azd-wasm-host --bench host_bench
fi
# The sidecar as release.sh ships it: built alone (no compilers), with the sidecar profile and
# the profile of the code it runs (scripts/pgo.sh), stripped.
SIDECAR="$ROOT/target/release-dist/linux-amd64/azd-wasm-host"

# platform_sizes GO_SOURCE: per platform, the stripped sidecar and the C bench provider's archive
# beside the Go SDK extension built for the same platform and its archive.
platform_sizes() {
  local work dist="$ROOT/target/release-dist" p exe goos goarch
  command -v go >/dev/null 2>&1 || export PATH="/usr/local/go/bin:$PATH"
  work=$(mktemp -d)
  # shellcheck disable=SC2064 # expand now
  trap "rm -rf '$work'" RETURN
  mkdir -p "$work/hosts/linux-amd64"
  cp "$SIDECAR" "$work/hosts/linux-amd64/azd-wasm-host"
  strip "$work/hosts/linux-amd64/azd-wasm-host"
  for p in linux-arm64 windows-amd64 windows-arm64 darwin-amd64 darwin-arm64; do
    exe=""
    [[ $p == windows-* ]] && exe=.exe
    [[ -f "$dist/$p/azd-wasm-host$exe" ]] || continue
    mkdir -p "$work/hosts/$p"
    cp "$dist/$p/azd-wasm-host$exe" "$work/hosts/$p/"
  done
  sed 's/^  - name: localfiles$/  - name: bench/' extension.yaml >"$work/extension.yaml"
  AZD_CONFIG_DIR="$work/azd-config" target/release/azd-wasm-host package scripts/bench/c-provider/provider.toml \
    --extension "$work/extension.yaml" --hosts-from "$work/hosts" --out "$work/dist" >/dev/null 2>&1
  echo
  echo "| platform | sidecar, stripped | its archive (with the C component, precompiled) | Go SDK extension, stripped | its archive | ratio (binary) |"
  echo "|---|---|---|---|---|---|"
  for d in "$work/hosts"/*/; do
    p=$(basename "$d")
    exe=""
    [[ $p == windows-* ]] && exe=.exe
    goos=${p%-*} goarch=${p#*-}
    (cd scripts/bench/go-provider && GOTOOLCHAIN=local CGO_ENABLED=0 GOOS=$goos GOARCH=$goarch \
      GOPROXY="$(go env GOPROXY | sed 's/,direct$//')|file://$(go env GOMODCACHE)/cache/download" \
      go build -trimpath -ldflags "-s -w" -o "$work/go-$p/azd-go-bench$exe" .) >&2
    tar czf "$work/go-$p.tar.gz" -C "$work/go-$p" "azd-go-bench$exe"
    python3 - "$p" "$d/azd-wasm-host$exe" "$work/dist/azd-wasm-host-$p.tar.gz" \
      "$work/go-$p/azd-go-bench$exe" "$work/go-$p.tar.gz" <<'PY'
import os, sys
p, ours, ours_tar, go, go_tar = sys.argv[1:]
size = lambda f: os.path.getsize(f) / 1e6
print(f"| {p} | {size(ours):.1f} MB | {size(ours_tar):.1f} MB | {size(go):.1f} MB | {size(go_tar):.1f} MB | {size(ours) / size(go):.2f}× |")
PY
  done
}

# test_times: `azd-wasm-host test` over every example, then one replayed test, BENCH_TEST_RUNS times.
test_times() {
  local runs=${BENCH_TEST_RUNS:-5} examples=() d
  scripts/build-examples.sh >/dev/null
  scripts/build-rust-example.sh >/dev/null
  cargo build --locked --release -p azd-wasm-host --bin azd-wasm-host
  for d in examples/*/; do
    [[ -d $d/tests ]] && examples+=("$d")
  done
  # One run first, so that every component is in the compile cache (as on an author's machine).
  target/release/azd-wasm-host test "${examples[@]}" >/dev/null 2>&1
  python3 - "$runs" "${examples[@]}" <<'PY'
import json, statistics, subprocess, sys
runs, examples = int(sys.argv[1]), sys.argv[2:]
def time_of(args):
    out = subprocess.run(["target/release/azd-wasm-host", "test", "--output", "json", *args],
                         capture_output=True, text=True)
    doc = json.loads(out.stdout)
    assert doc["failed"] == 0, out.stdout
    steps = sum(len(t["steps"]) for t in doc["tests"])
    return doc["seconds"], len(doc["tests"]), steps
print()
print(f"| `azd-wasm-host test` (release, warm cache, {runs} runs) | tests | steps | median | min–max | per step |")
print("|---|---|---|---|---|---|")
for label, args in [("every example's tests", examples),
                    ("one replayed test (azure-storage lifecycle, offline)",
                     ["examples/azure-storage/tests/storage.test.toml"])]:
    times = [time_of(args) for _ in range(runs)]
    secs = [t[0] for t in times]
    _, tests, steps = times[0]
    med = statistics.median(secs)
    print(f"| {label} | {tests} | {steps} | {med:.2f} s | {min(secs):.2f}–{max(secs):.2f} s | {med / steps * 1000:.0f} ms |")
PY
}

if [[ $which == all || $which == test ]]; then
  test_times
fi

if [[ $which == all || $which == languages ]]; then
  scripts/build-examples.sh >/dev/null
  scripts/build-rust-example.sh >/dev/null
  cargo build --locked --release -p azd-wasm-host --bin azd-wasm-host
  lang_work=$(mktemp -d)
  python3 scripts/bench/languages.py target/release/azd-wasm-host "$lang_work" "${BENCH_LANGUAGE_RUNS:-5}"
  rm -rf "$lang_work"
fi

if [[ $which == test || $which == languages ]]; then
  exit 0
fi

if [[ $which != host ]]; then
  scripts/build-examples.sh bench-c python-localfiles
  scripts/release.sh linux-amd64
  BENCH_SIDECAR="$SIDECAR" BENCH_GO_EXTENSION="$(build_go_provider)" \
    cargo bench -p azd-wasm-host --bench vs_go
  platform_sizes
fi
