#!/usr/bin/env bash
# Makes sure of an OCI registry for the tests of `publish` and `pull` (host/cli/tests/all/trust.rs), which
# start it on a free loopback port with its storage in a temporary folder: the CNCF distribution
# registry as Debian packages it (docker-registry 2.8), installed once with apt-get. Prints the
# path of its command.
#
#   scripts/install-registry.sh
set -euo pipefail

if command -v docker-registry >/dev/null 2>&1; then
  command -v docker-registry
  exit 0
fi
if command -v apt-get >/dev/null 2>&1 && [[ $(id -u) == 0 && "${AZD_WASM_HOST_NO_APT:-0}" != 1 ]]; then
  echo "install-registry: installing Debian's docker-registry (once)" >&2
  apt-get update -qq >/dev/null
  # The package would start a system service; nothing here wants one.
  DEBIAN_FRONTEND=noninteractive RUNLEVEL=1 apt-get install -y -qq docker-registry >/dev/null
  command -v docker-registry
  exit 0
fi
echo "install-registry: docker-registry not found: apt-get install docker-registry (as root)" >&2
exit 1
