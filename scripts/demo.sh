#!/usr/bin/env bash
# Builds everything the demo needs and runs it: the localfiles provider (Python,
# a WebAssembly component) driven through azd's lifecycle by `azd-wasm-host run`,
# which plays azd over real loopback gRPC and spawns the host as `listen`.
#
#   scripts/demo.sh
#
# It works on a copy of examples/python-localfiles/project under target/demo/.
set -euo pipefail
ROOT=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

echo "==> building azd-wasm-host and the example component (first run: several minutes)"
cargo build --quiet -p azd-wasm-host
scripts/build-examples.sh python-localfiles

BIN="$ROOT/target/debug/azd-wasm-host"
PROVIDER="$ROOT/examples/python-localfiles/provider.toml"
PROJECT="$ROOT/target/demo/project"
rm -rf "$PROJECT"
mkdir -p "$(dirname "$PROJECT")"
cp -r "$ROOT/examples/python-localfiles/project" "$PROJECT"

run() {
  echo
  echo "\$ azd-wasm-host run $1 --provider examples/python-localfiles/provider.toml --project target/demo/project ${*:2}"
  "$BIN" run "$1" --provider "$PROVIDER" --project "$PROJECT" "${@:2}"
}

echo "==> checking the component"
"$BIN" check "$PROVIDER"
run parameters
run preview
run provision
echo
echo "--- $PROJECT/.azure/dev/.env"
cat "$PROJECT/.azure/dev/.env"
echo "--- files provisioned under localinfra/"
(cd "$PROJECT" && find localinfra -type f | sort)
run preview
run state --output json
run down --force
echo
echo "--- after down: $PROJECT/.azure/dev/.env"
cat "$PROJECT/.azure/dev/.env" 2>/dev/null || true
