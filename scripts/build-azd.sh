#!/usr/bin/env bash
# Builds the real Azure Developer CLI (azd) from the Go module proxy into .tools/go/bin/azd.
#
# Reuses an existing build when `azd version` already reports the pinned version, so running it
# again costs well under a second. The version string is stamped the way official builds stamp it
# (`-ldflags -X .../internal.Version=...`); without it azd calls itself `0.0.0-dev.0`.
#
# Environment:
#   AZD_VERSION   version to build (default 1.31.2; scripts/azd-releases.sh lists what the proxy serves)
#   AZD_GOBIN     where to put the binary (default <repo>/.tools/go/bin for 1.31.2,
#                 <repo>/.tools/go/azd-<version>/bin for any other, so that each stays built)
# Prints the path of the binary on its last line of stdout.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
azd_version="${AZD_VERSION:-1.31.2}"
default_gobin="$repo_root/.tools/go/bin"
[[ "$azd_version" == 1.31.2 ]] || default_gobin="$repo_root/.tools/go/azd-$azd_version/bin"
gobin="${AZD_GOBIN:-$default_gobin}"
azd_bin="$gobin/azd"
# The module path is all lower case (`github.com/azure/azure-dev/cli/azd`, see its go.mod);
# `github.com/Azure/...` is a different module path to the proxy and fails.
module="github.com/azure/azure-dev/cli/azd"
# Commit of the tag cli/azd/v1.31.2, as the module proxy reports in its Origin.Hash; any other
# version's is read from the proxy's .info for it (below).
declare -A commits=([1.31.2]=3440050737c18537ae6cdbd1d64b98c594c495ad)
commit="${commits[$azd_version]:-}"

log() { echo "build-azd: $*" >&2; }

if ! command -v go >/dev/null 2>&1; then
  if [[ -x /usr/local/go/bin/go ]]; then
    export PATH="/usr/local/go/bin:$PATH"
  else
    log "error: the Go toolchain is not installed (need go >= 1.26 for azd $azd_version)"
    exit 1
  fi
fi

if [[ -x "$azd_bin" ]] && "$azd_bin" version --no-prompt 2>/dev/null | grep -q "azd version $azd_version "; then
  log "reusing $azd_bin ($("$azd_bin" version --no-prompt 2>/dev/null | head -n1))"
  echo "$azd_bin"
  exit 0
fi

mkdir -p "$gobin"
log "building azd $azd_version with $(go version) (slow: several minutes on 2 cores)"
start=$(date +%s)
export GOTOOLCHAIN=local # never fetch a different Go toolchain
# `go install mod@version` also asks the proxy for the module's version list (to look for a
# deprecation notice). The registry mirror reachable here answers that list request with
# 403 "This module version is not available", and go treats that as fatal. So: download the pinned
# version first (`go mod download` does not ask for the list; it records the version in the module
# cache's own `list` file), then let go fall back, on any error (`|`), to the module cache read as
# a file:// proxy, which answers the list with the versions it holds. Every module still comes
# from the real proxy first; the fallback only serves what is already cached.
gomodcache="$(go env GOMODCACHE)"
proxy="$(go env GOPROXY)"
proxy="${proxy%%,direct}"
go mod download "$module@v$azd_version"
if [[ -z "$commit" ]]; then
  info="$gomodcache/cache/download/$module/@v/v$azd_version.info"
  commit="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["Origin"]["Hash"])' "$info" 2>/dev/null ||
    echo 0000000000000000000000000000000000000000)"
fi
# CGO off as in azd's official builds (no C compiler needed).
CGO_ENABLED=0 GOBIN="$gobin" GOPROXY="$proxy|file://$gomodcache/cache/download" \
  go install \
  -ldflags "-X '$module/internal.Version=$azd_version (commit $commit)'" \
  "$module@v$azd_version"
log "built $azd_bin in $(( $(date +%s) - start )) s"
"$azd_bin" version --no-prompt >&2 || true
echo "$azd_bin"
