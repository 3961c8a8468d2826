#!/usr/bin/env bash
# Builds what the benchmarks drive and prints their tables (release build):
#
#   1. host_bench: the manager with a native provider next to a raw tonic floor, progress
#      throughput, and each example component (cold/warm start, Initialize, per call, RSS);
#   2. go: side by side with the same trivial provider written on azd's own Go SDK (azd 1.31.2
#      pkg/azdext), as users get both:
#      - the headline table: azd's side played by a grpc-go server built from azd 1.31.2's module
#        (its services and the message broker azd's ProvisioningService runs,
#        scripts/bench/azd-driver), driving in turns this machine's sidecar as each route that
#        ships one builds it (the release workflow, `package` from a checkout, both
#        profile-guided, and the build without a profile that `package` falls back to where
#        llvm-profdata is missing; identical builds measured once), each packaged with the trivial
#        C provider and installed as azd installs it, the floor (the thinnest extension on our
#        stack, host/cli/examples/floor_extension.rs) and the Go SDK extension;
#      - vs_go: the same driven by the simulated azd (tonic), the release workflow's sidecar, a
#        bare tonic floor; then the 19 MB Python example's first start after install, and the
#        size of the shipped binary and archive per platform beside the Go SDK extension's
#        (every sidecar scripts/release.sh has built into target/release-dist, and this
#        machine's). The docs/benchmarks.md's tables come from it.
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
# 10000), BENCH_PROGRESS (default 100000), BENCH_SMAPS_DIR (keep each process's smaps when idle).
# The Go programs are built with the Go toolchain from the module proxy, as
# scripts/build-azd.sh builds azd (module cache reused).
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

# go_build DIR OUT: the Go program in DIR built into OUT, with the Go toolchain here (installed
# by scripts/build-azd.sh's recipe) and the module proxy; prints OUT.
go_build() {
  if ! command -v go >/dev/null 2>&1; then
    [[ -x /usr/local/go/bin/go ]] || {
      echo "bench: the Go toolchain is needed for the Go SDK column and azd's side" >&2
      exit 1
    }
    export PATH="/usr/local/go/bin:$PATH"
  fi
  local dir=$1 out=$2 proxy
  mkdir -p "$(dirname "$out")"
  proxy="$(go env GOPROXY)"
  proxy="${proxy%%,direct}"
  # As in build-azd.sh: the module cache, read as a file:// proxy, answers what the mirror
  # refuses (version lists). -s -w: stripped, as a packaged Go extension is.
  (cd "$dir" &&
    GOTOOLCHAIN=local CGO_ENABLED=0 GOPROXY="$proxy|file://$(go env GOMODCACHE)/cache/download" \
      go build -trimpath -ldflags "-s -w" -o "$out" .) >&2
  echo "$out"
}

# The anchor: the same trivial provider as an extension on azd 1.31.2's Go SDK.
build_go_provider() { go_build scripts/bench/go-provider "$ROOT/.tools/bench/azd-go-bench-provider"; }
# azd's side: a grpc-go server on azd 1.31.2's module (its services, its message broker).
build_azd_driver() { go_build scripts/bench/azd-driver "$ROOT/.tools/bench/azd-bench-driver"; }

if [[ $which == all || $which == host ]]; then
  scripts/build-examples.sh
  cargo bench -p azd-wasm-host --bench host_bench
fi
# The sidecar as the release workflow ships it (shipped_sidecars copies it here).
SIDECAR=""

# install_c_provider SIDECAR DIR: the bench's C provider packaged with SIDECAR by this checkout's
# CLI (signed with a key of DIR/azd-config's trust folder, which its starts then trust) and
# unpacked into DIR/azd-config/extensions/azd.wasm-host, as `azd extension install` lays it out.
install_c_provider() {
  # linux/amd64: the platform this benchmark builds its sidecars for (scripts/release.sh linux-amd64).
  local sidecar=$1 dir=$2 here=linux/amd64 installed
  mkdir -p "$dir/home"
  sed 's/^  - name: localfiles$/  - name: bench/' extension.yaml >"$dir/extension.yaml"
  AZD_CONFIG_DIR="$dir/azd-config" target/release/azd-wasm-host package scripts/bench/c-provider/provider.toml \
    --extension "$dir/extension.yaml" --out "$dir/dist" --host "$here=$sidecar" >/dev/null 2>&1 ||
    { echo "bench: packaging the C provider with $sidecar failed" >&2; exit 1; }
  installed="$dir/azd-config/extensions/azd.wasm-host"
  mkdir -p "$installed"
  tar xzf "$dir/dist/azd-wasm-host-${here/\//-}.tar.gz" -C "$installed"
}

# shipped_sidecars ROUTES: this machine's sidecar as each route that ships one builds it, with
# the C provider installed beside it in ROUTES/<n>/; ROUTES/routes.txt lists them (label TAB
# folder). Builds that come out byte for byte the same are measured once, under all their names.
shipped_sidecars() {
  local routes=$1 dist="$ROOT/target/release-dist/linux-amd64" labels=() bins=() i j n=0 label
  mkdir -p "$routes/bin"
  # 1. The release workflow (.github/workflows/release-tools.yml): on Linux, scripts/release.sh,
  #    profile-guided (scripts/pgo.sh). What every author who installs the author's tool ships.
  scripts/release.sh linux-amd64 >&2
  grep -q '"profile_guided": true' "$dist/sidecar-build.json" ||
    { echo "bench: scripts/release.sh built no profile-guided sidecar (no llvm-profdata?)" >&2; exit 1; }
  cp "$dist/azd-wasm-host" "$routes/bin/workflow"
  labels+=("release workflow") bins+=("$routes/bin/workflow")
  SIDECAR="$routes/bin/workflow"
  # 2. `package` from a checkout with no sidecar built: the command it runs
  #    (host/author/src/package/sidecars.rs, build_guided), driving this checkout's CLI and
  #    installing nothing; stripped, as `package` ships it.
  cp "$(AZD_WASM_HOST_BIN="$ROOT/target/release/azd-wasm-host" AZD_WASM_HOST_NO_APT=1 scripts/pgo.sh linux-amd64)" \
    "$routes/bin/checkout"
  strip "$routes/bin/checkout"
  labels+=("package from a checkout") bins+=("$routes/bin/checkout")
  # 3. `package` from a checkout where that cannot run (no llvm-profdata for rustc's LLVM, or
  #    Windows): the size-optimised build without a profile (build_here), in its own folder.
  cargo build --locked --quiet --profile sidecar -p azd-wasm-host-sidecar \
    --target-dir "$ROOT/target/sidecar-auto" >&2
  cp "$ROOT/target/sidecar-auto/sidecar/azd-wasm-host-sidecar" "$routes/bin/unguided"
  strip "$routes/bin/unguided"
  labels+=("without a profile (no llvm-profdata)") bins+=("$routes/bin/unguided")
  : >"$routes/routes.txt"
  for i in "${!bins[@]}"; do
    [[ -n ${bins[i]} ]] || continue
    label=${labels[i]}
    for j in "${!bins[@]}"; do
      if ((j > i)) && [[ -n ${bins[j]} ]] && cmp -s "${bins[i]}" "${bins[j]}"; then
        label="$label = ${labels[j]}"
        bins[j]=""
      fi
    done
    n=$((n + 1))
    install_c_provider "${bins[i]}" "$routes/$n"
    printf '%s\t%s\n' "$label" "$routes/$n" >>"$routes/routes.txt"
  done
  echo "bench: routes measured: $(cut -f1 "$routes/routes.txt" | paste -sd ';')" >&2
}

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
  cargo build --locked --release -p azd-wasm-host --bin azd-wasm-host
  routes=$(mktemp -d)
  trap 'rm -rf "$routes"' EXIT
  shipped_sidecars "$routes"
  go_extension=$(build_go_provider)
  driver=$(build_azd_driver)
  # The floor: the thinnest extension on our stack (tonic, answers made ahead, no provider).
  cargo build --locked --release -p azd-wasm-host --example floor_extension --features bench-floor
  # The headline table: azd's own server stack driving each route's sidecar (the C provider
  # packaged with it and installed as azd installs it) and the Go SDK extension, in turns.
  python3 - "$routes" "$go_extension" "$ROOT/target/release/examples/floor_extension" \
    >"$routes/subjects.json" <<'PY'
import json, os, sys
routes, go, floor = sys.argv[1:]
subjects = []
for line in open(os.path.join(routes, "routes.txt")):
    label, folder = line.rstrip("\n").split("\t")
    subjects.append({
        "label": label,
        "program": os.path.join(folder, "azd-config/extensions/azd.wasm-host/azd-wasm-host"),
        "env": {"HOME": os.path.join(folder, "home"),
                "AZD_CONFIG_DIR": os.path.join(folder, "azd-config"),
                "AZD_WASM_HOST_CACHE_DIR": os.path.join(folder, "cache")},
    })
subjects.append({"label": "floor (tonic, no provider)", "program": floor, "floor": True})
subjects.append({"label": "Go SDK extension", "program": go, "anchor": True})
print(json.dumps(subjects, indent=1))
PY
  echo
  "$driver" -subjects "$routes/subjects.json" -runs "${BENCH_RUNS:-20}" \
    -requests "${BENCH_REQUESTS:-10000}" -progress "${BENCH_PROGRESS:-100000}"
  # The same, driven by the simulated azd (tonic): the workflow's sidecar, the Go SDK
  # extension, a bare tonic floor; then the Python example's first start and the sizes.
  BENCH_SIDECAR="$SIDECAR" BENCH_GO_EXTENSION="$go_extension" \
    cargo bench -p azd-wasm-host --bench vs_go
  platform_sizes
fi
