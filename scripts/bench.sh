#!/usr/bin/env bash
# Builds what the benchmarks drive and prints their tables (release build):
#
#   1. host_bench: the manager with a native provider next to a raw tonic floor, progress
#      throughput, and each example component (cold/warm start, Initialize, per call, RSS);
#   2. vs_go: this host with a trivial C component side by side with the same trivial
#      provider written on azd's own Go SDK (azd 1.31.2 pkg/azdext), both started and driven
#      the way azd does, with a tonic floor and ratios. The README's table comes from it.
#
#   scripts/bench.sh [host|go]      (default: both)
#
# Environment: BENCH_RUNS (processes per subject, default 20), BENCH_REQUESTS (default
# 10000), BENCH_PROGRESS (default 100000). The Go extension is built with the Go toolchain
# from the module proxy, as scripts/build-azd.sh builds azd (module cache reused).
set -euo pipefail
ROOT=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

which=${1:-all}
case $which in
  all | host | go) ;;
  *)
    echo "bench: unknown benchmark '$which' (host, go)" >&2
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

if [[ $which != go ]]; then
  scripts/build-examples.sh
  cargo bench -p azd-wasm-host --bench host_bench
fi
if [[ $which != host ]]; then
  scripts/build-examples.sh bench-c
  BENCH_GO_EXTENSION="$(build_go_provider)" cargo bench -p azd-wasm-host --bench vs_go
fi
