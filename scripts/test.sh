#!/usr/bin/env bash
# The whole test suite, as CI runs it (`.ci/run` calls this script).
#
#   scripts/test.sh
#
# 1. builds every example component (scripts/build-examples.sh installs its own
#    pinned tools into .tools/; scripts/build-rust-example.sh builds the Rust ones
#    with `azd-wasm-host build`, installing Debian's Rust 1.96 with its std source
#    where no toolchain has a wasm32 std), and installs the pinned Azurite the
#    azure-storage example is tested against (scripts/install-azurite.sh) and the OCI
#    registry publish and pull are tested against (scripts/install-registry.sh);
# 2. checks formatting, the crate graph (scripts/import-graph.py: no import circle,
#    no production file over 450 lines, one test target per crate), function lengths
#    (scripts/function-lengths.py: none over 60 lines without a reason) and lints (cargo fmt
#    --check, clippy -D warnings, with unreachable_pub on for the workspace);
# 3. builds the sidecar `package` ships (host/sidecar, alone, so without wasmtime's compilers), then
#    runs every Rust test in the workspace: unit tests, WAT-fixture runtime
#    tests, the manager against the simulated azd, and the real binary as a
#    child process driving every example component, and the author's toolchain
#    (new → build → run → package) for a new provider in each language; and the fuzz
#    campaigns (docs/testing.md, Fuzzing: azd's envelopes against prost and over loopback gRPC,
#    provider.toml, component bytes, azure.yaml, .env), about 50 s in all, each printing its
#    figures (AZD_WASM_HOST_FUZZ_SECS lengthens every campaign).
# 4. with AZD_WASM_HOST_E2E=1 (CI sets it), builds the real azd CLI 1.31.2 from the
#    Go module proxy and runs it end to end against the extension
#    (scripts/azd-e2e.sh, reusing the debug build of step 3).
# 5. with AZD_WASM_HOST_CROSS=1 (or a list of platforms, e.g. "windows-amd64 linux-arm64"),
#    builds the release host for them (scripts/release.sh; 12-20 minutes each, cold, on 2 cores,
#    so CI does this only when asked) and runs each build as far as this machine allows
#    (scripts/cross-test.sh: Wine, qemu-user, Mach-O inspection), printing the matrix.
set -euo pipefail
ROOT=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

# Each step says when it starts (seconds since the suite began), so a slow CI run shows where
# its time went.
# The free disk too: CI machines share theirs, and a full one fails a link or a build anywhere.
step() {
  printf '\n==> [%ds, %s GiB free] %s\n' "$SECONDS" "$(df -Pk . | awk 'NR == 2 { printf "%.1f", $4 / 1048576 }')" "$*"
}

step "building the tests, then the example components (some with the CLI the tests build)"
# Once, as `cargo test` below builds them: the examples' build recipes then run on this CLI
# rather than on a `cargo build -p` of it, whose dependencies' features differ and would be
# compiled a second time.
cargo test --workspace --no-run --quiet
export AZD_WASM_HOST_CLI="$ROOT/target/debug/azd-wasm-host"
scripts/build-examples.sh
scripts/build-rust-example.sh
scripts/install-azurite.sh >/dev/null
scripts/install-registry.sh >/dev/null

step "Go: the SDK's and the Go example's own tests (gofmt, go vet for both targets, go test)"
# The generated bindings (internal/wit/imports, internal/wit/exports/wit_exports) are the
# generator's text, kept current by a cargo test; everything else is formatted by gofmt.
unformatted=$(gofmt -l guest-sdk/go examples/go-devcerts examples/go-storage host/cli/tests/guests/http-probe-go host/author/templates/go host/core/tests/godotenv scripts/bench |
  grep -v -E '^guest-sdk/go/internal/wit/(imports/|exports/wit_exports/)' || true)
[ -z "$unformatted" ] || { echo "gofmt would change: $unformatted" >&2; exit 1; }
hand_written=(. ./azdhttp ./internal/wit/types ./internal/wit/runtime ./internal/wit/exports/export_azd_provisioning_0_1_0_provider)
(cd guest-sdk/go && go vet "${hand_written[@]}" && GOOS=wasip1 GOARCH=wasm go vet "${hand_written[@]}" && go test ./...)
# The godotenv oracle the .env differential test builds (host/core/tests/all/godotenv.rs): its
# pinned module fetched here, vetted like the rest.
(cd host/core/tests/godotenv && go mod download && go vet ./...)
for dir in examples/go-devcerts examples/go-storage host/cli/tests/guests/http-probe-go; do
  (cd "$dir" && go vet ./... && GOOS=wasip1 GOARCH=wasm go vet ./... && go test ./...)
done

step "cargo fmt --check"
cargo fmt --all -- --check

step "the house: the crate graph (no import circle or forbidden dependency, no production file over 450 lines, one test target per crate), no function over 60 lines without its reason"
python3 scripts/import-graph.py
python3 scripts/function-lengths.py --min 61

step "cargo clippy --all-targets -- -D warnings"
cargo clippy --workspace --all-targets --features azd-wasm-host/bench-floor --quiet -- -D warnings
# The sidecar alone: the runtime without its `compiler` feature, as the sidecar ships.
cargo clippy -p azd-wasm-host-sidecar --all-targets --quiet -- -D warnings
# The training provider's writer as scripts/pgo.sh builds it: the fixtures without their runtime harness.
cargo clippy -p azd-wasm-host-fixtures --no-default-features --examples --quiet -- -D warnings

step "the sidecar alone (without wasmtime's compilers, as it ships), beside the CLI the tests run"
cargo build -p azd-wasm-host-sidecar --bin azd-wasm-host-sidecar

step "cargo test"
# Every failing test binary is reported, not only the first.
cargo test --workspace --no-fail-fast -- --skip fuzz_

step "fuzz campaigns (figures printed by each)"
# Only the fuzz_ tests, with their output shown; binaries without one print nothing (the
# harness-less in_process tests select as the harness does, and print its summary line).
cargo test --workspace fuzz_ -- --nocapture 2>&1 |
  grep -v -E '^(running 0 tests|test result: ok\. 0 passed; .*|[[:space:]]*Running .*|)$'

if [ "${AZD_WASM_HOST_E2E:-0}" = 1 ]; then
  step "real azd end to end"
  # The CLI the tests ran (the sidecar beside it was built above): a `cargo build -p` of it
  # would compile 3 minutes of dependencies again for their other features.
  CARGO_PROFILE=dev HOST_BINARY="$AZD_WASM_HOST_CLI" scripts/azd-e2e.sh
fi

case "${AZD_WASM_HOST_CROSS:-0}" in
  0 | "") ;;
  *)
    step "release builds for other platforms, run as far as this machine allows"
    platforms=${AZD_WASM_HOST_CROSS}
    [ "$platforms" = 1 ] && platforms="windows-amd64 windows-arm64 linux-arm64 darwin-arm64 darwin-amd64"
    # shellcheck disable=SC2086 # one platform per word
    scripts/release.sh linux-amd64 $platforms
    # shellcheck disable=SC2086
    scripts/cross-test.sh linux-amd64 $platforms
    ;;
esac

# Measured, not asserted: a clean run must fit a small CI disk (see Cargo.toml's [profile.dev]).
step "disk used by this run's builds"
du -sh target 2>/dev/null || true
