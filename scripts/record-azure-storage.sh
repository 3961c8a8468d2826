#!/usr/bin/env bash
# Records a storage example's tests (examples/azure-storage in Rust, the default,
# examples/js-storage in JavaScript or examples/go-storage in Go) against a fresh Azurite (the Azure Storage emulator,
# pinned, installed by scripts/install-azurite.sh) on its default ports, in memory, into
# examples/<example>/tests/cassettes/, then stops Azurite. The tests then replay offline:
# `azd-wasm-host test examples/<example>` needs neither Azurite nor a network.
#
#   scripts/record-azure-storage.sh [azure-storage | js-storage | go-storage]
#
# Run it after changing what the provider sends. Azurite's ports 10000-10002 must be free.
# A cassette is written only for a test that passes; the tests run one at a time (they share
# the one account).
set -euo pipefail
ROOT=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

azurite=$(scripts/install-azurite.sh)
for port in 10000 10001 10002; do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    echo "record-azure-storage: port $port is in use (another Azurite?): stop it first" >&2
    exit 1
  fi
done
cargo build --quiet -p azd-wasm-host
example=${1:-azure-storage}
case $example in
  azure-storage) [ -f examples/azure-storage/build/azure-storage.wasm ] || scripts/build-rust-example.sh ;;
  js-storage | go-storage) scripts/build-examples.sh "$example" ;;
  *)
    echo "record-azure-storage: unknown example '$example' (azure-storage, js-storage or go-storage)" >&2
    exit 64
    ;;
esac

work=$(mktemp -d)
"$azurite" --inMemoryPersistence --disableTelemetry --silent --skipApiVersionCheck \
  --blobHost 127.0.0.1 --queueHost 127.0.0.1 --tableHost 127.0.0.1 >"$work/azurite.log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 100); do
  (exec 3<>/dev/tcp/127.0.0.1/10002) 2>/dev/null && break
  sleep 0.1
done

target/debug/azd-wasm-host test --record --jobs 1 "examples/$example"
