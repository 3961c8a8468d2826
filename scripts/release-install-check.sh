#!/usr/bin/env bash
# Installs a release of the author's tool as a new user would, from its folder served over HTTP on
# loopback: the README's two install lines (`azd extension source add -t url`, `azd extension
# install azd-wasm-host.tools`) in a fresh HOME and azd config folder, then `azd wasm --version`.
#
#   scripts/release-install-check.sh AZD DIR
#
# DIR is what scripts/release-tools.sh wrote (registry.json and the archives). The registry's URLs
# may point anywhere (a release's point at where it will be published): a copy served beside the
# archives points them at the loopback server, with the same checksums. Run by the release
# workflow (.github/workflows/release-tools.yml) before it publishes; the end-to-end suite installs
# and uses the tool the same way (scripts/e2e/95-author-tool-extension.sh).
set -euo pipefail
[[ $# == 2 ]] || { echo "usage: $0 AZD DIR" >&2; exit 2; }
azd=$1
dir=$(cd "$2" && pwd)
root=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
work=$(mktemp -d)
server=""
trap '[[ -z $server ]] || kill "$server" 2>/dev/null; rm -rf "$work"' EXIT

mkdir -p "$work/served" "$work/home" "$work/azd"
cp "$dir"/*.tar.gz "$dir"/*.zip "$work/served/" 2>/dev/null || true
coproc SERVE { exec python3 "$root/scripts/serve-folder.py" "$work/served" 2>"$work/server.log"; }
server=$SERVE_PID
read -r url <&"${SERVE[0]}"
python3 - "$dir/registry.json" "$work/served/registry.json" "$url" <<'PY'
import json, sys
src, dst, url = sys.argv[1:]
registry = json.load(open(src))
for ext in registry["extensions"]:
    for version in ext["versions"]:
        for artifact in version["artifacts"].values():
            artifact["url"] = f"{url}/{artifact['url'].rsplit('/', 1)[-1]}"
json.dump(registry, open(dst, "w"), indent=2)
PY
export HOME="$work/home" AZD_CONFIG_DIR="$work/azd" AZURE_DEV_COLLECT_TELEMETRY=no
"$azd" extension source add -n wasm-tools -t url -l "$url/registry.json" --no-prompt
"$azd" extension install azd-wasm-host.tools --source wasm-tools --no-prompt
"$azd" wasm --version
echo "release-install-check: installed azd-wasm-host.tools from $url/registry.json and ran azd wasm --version"
