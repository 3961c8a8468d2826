#!/usr/bin/env bash
# Builds the example components and prints the benchmark table (release build).
#
#   scripts/bench.sh
#
# BENCH_REQUESTS (default 10000) and BENCH_PROGRESS (default 100000) size the runs.
set -euo pipefail
ROOT=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
scripts/build-examples.sh
cargo bench -p azd-wasm-host --bench host_bench
