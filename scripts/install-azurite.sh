#!/usr/bin/env bash
# Installs Azurite, the Azure Storage emulator, pinned by scripts/azurite/package-lock.json, into
# .tools/azurite-<version>/ (once per version), and prints the path of its `azurite` command.
#
#   scripts/install-azurite.sh
#
# The azure-storage example's tests (host/cli/tests/all/azure_storage.rs) and the real-azd e2e start it
# on free loopback ports, in memory, and stop it after. Needs Node.js 18 or newer and npm (the
# machine's; Azurite 3.35.0 is the newest release that runs on Node 20), and openssl (installed
# from Debian's packages if missing).
set -euo pipefail

ROOT=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
pins="$ROOT/scripts/azurite"
version=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["dependencies"]["azurite"])' "$pins/package.json")
dest="$ROOT/.tools/azurite-$version"
bin="$dest/node_modules/.bin/azurite"
stamp="$dest/.installed"
lock_sum=$(sha256sum "$pins/package-lock.json" | cut -d' ' -f1)

# The TLS test (host/cli/tests/all/azure_storage.rs) makes Azurite a self-signed certificate with openssl.
if ! command -v openssl >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1 && [[ $(id -u) == 0 && "${AZD_WASM_HOST_NO_APT:-0}" != 1 ]]; then
    echo "install-azurite: installing Debian's openssl (once)" >&2
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openssl >/dev/null
  else
    echo "install-azurite: openssl not found (the TLS test needs it: apt-get install openssl)" >&2
    exit 1
  fi
fi

if [[ -x "$bin" && -f "$stamp" && "$(cat "$stamp")" == "$lock_sum" ]]; then
  echo "$bin"
  exit 0
fi
command -v npm >/dev/null 2>&1 || {
  echo "install-azurite: npm not found (Azurite needs Node.js 18 or newer)" >&2
  exit 1
}
echo "install-azurite: installing azurite $version into ${dest#"$ROOT"/} (once)" >&2
rm -rf "$dest"
mkdir -p "$dest"
cp "$pins/package.json" "$pins/package-lock.json" "$dest/"
start=$(date +%s)
if ! npm ci --prefix "$dest" --no-audit --no-fund --loglevel=error >"$dest/npm.log" 2>&1; then
  echo "install-azurite: npm ci failed; its log:" >&2
  tail -n 30 "$dest/npm.log" >&2
  exit 1
fi
[[ -x "$bin" ]] || { echo "install-azurite: npm ci installed no $bin" >&2; exit 1; }
echo "$lock_sum" >"$stamp"
echo "install-azurite: installed in $(($(date +%s) - start)) s" >&2
echo "$bin"
