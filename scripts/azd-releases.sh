#!/usr/bin/env bash
# Lists the releases of azd (module github.com/azure/azure-dev/cli/azd) that the Go module proxy
# serves, oldest first, one version per line (e.g. 1.31.2): the ones scripts/azd-e2e.sh runs
# against, so that the day the proxy serves a newer azd the end-to-end suite runs it.
#
#   scripts/azd-releases.sh
#
# Asks the proxy (the first of `go env GOPROXY`) for the module's version list; a proxy that
# refuses the list (the mirror reachable here answers 403) is asked for each release from 1.31.0
# (the first azd with provisioning extensions) through minor version 49 instead, a few at a time. Only
# releases (vMAJOR.MINOR.PATCH, no pre-release) from 1.31.0 on are listed. Exits 1, printing
# nothing, when the proxy answers none.
# Environment: AZD_PROXY (the proxy to ask; default the first of `go env GOPROXY`),
# AZD_RELEASE_PROBE (the minor versions to try when the list is refused; default "31..49").
set -euo pipefail

module="github.com/azure/azure-dev/cli/azd"
proxy="${AZD_PROXY:-}"
if [[ -z "$proxy" ]]; then
  command -v go >/dev/null 2>&1 || PATH="/usr/local/go/bin:$PATH"
  proxy="$(go env GOPROXY 2>/dev/null || echo https://proxy.golang.org)"
  proxy="${proxy%%[,|]*}"
fi
[[ "$proxy" == http://* || "$proxy" == https://* ]] || proxy="https://proxy.golang.org"
base="${proxy%/}/$module/@v"

is_release() { [[ "$1" =~ ^v1\.([0-9]+)\.[0-9]+$ ]] && ((BASH_REMATCH[1] >= 31)); }

found=()
if list="$(curl -fsS -m 30 "$base/list" 2>/dev/null)" && [[ -n "$list" ]]; then
  while read -r v; do
    if is_release "$v"; then found+=("${v#v}"); fi
  done <<<"$list"
else
  probe="${AZD_RELEASE_PROBE:-31..49}"
  first="${probe%%..*}" last="${probe##*..}"
  candidates=()
  for ((minor = first; minor <= last; minor++)); do
    for patch in 0 1 2 3 4 5; do candidates+=("v1.$minor.$patch"); done
  done
  # A served version answers 200 with its .info; the rest 403/404/410.
  mapfile -t found < <(printf '%s\n' "${candidates[@]}" |
    xargs -P 8 -I{} sh -c 'curl -fsS -m 30 -o /dev/null "$1/$2.info" 2>/dev/null && echo "${2#v}"' _ "$base" {})
fi
((${#found[@]} > 0)) || {
  echo "azd-releases: $base serves no azd release from 1.31.0 on" >&2
  exit 1
}
printf '%s\n' "${found[@]}" | sort -t. -k1,1n -k2,2n -k3,3n -u
