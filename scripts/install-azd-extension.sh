#!/usr/bin/env bash
# Builds azd-wasm-host and an example provider component, makes them a local azd extension
# source with `azd-wasm-host package` (extension.yaml + the example's provider.toml), and
# installs the extension with azd's own commands.
#
#   scripts/install-azd-extension.sh [--no-build]
#
# Environment:
#   AZD_CONFIG_DIR   azd configuration directory to install into. Default:
#                    ${XDG_STATE_HOME:-~/.local/state}/azd-wasm-host/azd-config (outside the
#                    repository: a trust folder inside a git work tree is refused)
#                    (an isolated one; set it to ~/.azd to install for your own azd).
#   OFFLINE_SOURCES  1 removes azd's official extension source (fetched from the internet) from
#                    that configuration, so that azd works offline without a 7-10 s retry delay
#                    on every command that has a positional argument (see scripts/AZD.md).
#                    Default: 1 for the default isolated AZD_CONFIG_DIR, 0 for one you name.
#   AZD              azd binary to use. Default: the one scripts/build-azd.sh builds (azd 1.31.2).
#   EXAMPLE          example provider under examples/ to bundle. Default: python-localfiles.
#   EXAMPLE_DIR      folder with the provider.toml to bundle (overrides EXAMPLE).
#   HOST_BINARY      an azd-wasm-host binary to bundle instead of building one.
#   DIST_DIR         where the source (registry.json + artifact) is written. Default: <repo>/target/azd-extension
#   CARGO_PROFILE    release (default) or dev.
#   PRECOMPILE       1 (default) ships the component's precompiled code in the archive; 0 leaves
#                    the first start to compile it (the real-azd e2e tests that path).
#   PREWARM          1 compiles the component into the user's compile cache after installing;
#                    default 0 (1 when PRECOMPILE=0), since the package's own code is used first.
#
# What azd does with it (facts and source paths in scripts/AZD.md):
#   - `azd extension source add -t file -l registry.json` registers the local source;
#   - `azd extension install azd.wasm-host --source <name>` copies the artifact named by the
#     registry entry for this platform, checks its sha256, and, because it ends in .tar.gz,
#     extracts it into $AZD_CONFIG_DIR/extensions/azd.wasm-host/; `entryPoint` names the binary.
# The archive holds the binary with provider.toml and the component beside it, since the binary
# reads provider.toml from its own directory.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"

build=1
for arg in "$@"; do
  case "$arg" in
    --no-build) build=0 ;;
    -h | --help)
      sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    *)
      echo "install-azd-extension: unknown argument: $arg" >&2
      exit 2
      ;;
  esac
done

log() { echo "install-azd-extension: $*" >&2; }
die() {
  log "error: $*"
  exit 1
}

if [[ -n "${AZD_CONFIG_DIR:-}" ]]; then
  offline_sources="${OFFLINE_SOURCES:-0}"
else
  export AZD_CONFIG_DIR="${XDG_STATE_HOME:-$HOME/.local/state}/azd-wasm-host/azd-config"
  offline_sources="${OFFLINE_SOURCES:-1}"
fi
example="${EXAMPLE:-python-localfiles}"
dist_dir="${DIST_DIR:-$repo_root/target/azd-extension}"
profile="${CARGO_PROFILE:-release}"
source_name="wasm-host-local"
# Keep azd from phoning home: no telemetry upload, no check for a newer azd.
export AZURE_DEV_COLLECT_TELEMETRY=no
export AZD_SKIP_UPDATE_CHECK=true

azd="${AZD:-}"
if [[ -z "$azd" ]]; then
  azd="$("$repo_root/scripts/build-azd.sh" | tail -n1)"
fi
[[ -x "$azd" ]] || die "azd not found at '$azd'"

# ---- build ------------------------------------------------------------------------------------
if [[ "$profile" == dev ]]; then target_sub=debug; else target_sub="$profile"; fi
binary="${HOST_BINARY:-$repo_root/target/$target_sub/azd-wasm-host}"
example_dir="${EXAMPLE_DIR:-$repo_root/examples/$example}"
[[ -f "$example_dir/provider.toml" ]] || die "no provider manifest at $example_dir/provider.toml"

if ((build)) && [[ -z "${HOST_BINARY:-}" ]]; then
  log "building azd-wasm-host and the sidecar it packages ($profile)"
  cargo build --locked --profile "$profile" -p azd-wasm-host --bin azd-wasm-host >&2
  # Alone, so that it is built without wasmtime's compilers, as it ships.
  cargo build --locked --profile "$profile" -p azd-wasm-host-sidecar --bin azd-wasm-host-sidecar >&2
fi
if ((build)) && [[ -z "${EXAMPLE_DIR:-}" ]]; then
  log "building the $example component (scripts/build-examples.sh $example)"
  "$repo_root/scripts/build-examples.sh" "$example" >&2
fi
[[ -x "$binary" ]] || die "binary not built: $binary"

# ---- the extension source: azd-wasm-host package ----------------------------------------------
# It checks every name azd matches (extension.yaml's id, version, capabilities, and a providers
# entry naming provider.toml's provider), and writes registry.json and this platform's archive
# (the sidecar, which carries no compiler, stripped, provider.toml, the component and its code
# precompiled for this platform; with PRECOMPILE=0 the development binary, which compiles, and
# no code) into DIST_DIR.
package_args=(package "$example_dir/provider.toml" --extension "$repo_root/extension.yaml" --out "$dist_dir")
[[ "${PRECOMPILE:-1}" == 1 ]] || package_args+=(--no-precompile)
"$binary" "${package_args[@]}" >&2 || die "azd-wasm-host package refused the extension (see above)"
registry="$dist_dir/registry.json"
fields="$(python3 - "$registry" "$example_dir/provider.toml" <<'PY'
import json, sys, tomllib
ext = json.load(open(sys.argv[1]))["extensions"][0]
version = ext["versions"][0]
print(ext["id"], version["version"], version["entryPoint"], tomllib.load(open(sys.argv[2], "rb"))["component"])
PY
)" || die "cannot read $registry or $example_dir/provider.toml"
read -r ext_id ext_version entry_point component_rel <<<"$fields"

# ---- install with azd -------------------------------------------------------------------------
mkdir -p "$AZD_CONFIG_DIR"
log "installing $ext_id $ext_version into AZD_CONFIG_DIR=$AZD_CONFIG_DIR with $("$azd" version --no-prompt | head -n1)"
# Note `--output=json`, not `--output json`: azd 1.31.2 takes the first word after the command
# that is not a flag ("json") for a possible extension namespace and searches every extension
# source for it (cmd/auto_install.go, tryAutoInstallForPartialNamespace).
has_source() { "$azd" extension source list --output=json --no-prompt | python3 -c '
import json, sys
sys.exit(0 if any(s.get("name") == sys.argv[1] for s in json.load(sys.stdin)) else 1)' "$1"; }

if has_source "$source_name"; then
  "$azd" extension source remove "$source_name" --no-prompt >&2
fi
"$azd" extension source add --name="$source_name" --type=file --location="$registry" --no-prompt >&2
# A configuration without sources gets azd's official source "azd" (a URL on the internet).
# `azd extension source remove azd` refuses ("reserved"), but the configuration key can be unset.
if ((offline_sources)) && has_source azd; then
  log "removing the official source 'azd' from this configuration (offline; takes one failed fetch)"
  "$azd" config unset extension.sources.azd --no-prompt >&2
fi
"$azd" extension source validate --strict "$registry" --no-prompt >&2

# --force reinstalls the same version (the artifact changes from build to build).
"$azd" extension install "$ext_id" --source="$source_name" --force --no-prompt >&2

installed_dir="$AZD_CONFIG_DIR/extensions/$ext_id"
for f in "$entry_point" provider.toml "$component_rel"; do
  [[ -f "$installed_dir/$f" ]] || die "azd did not install $installed_dir/$f"
done
[[ -x "$installed_dir/$entry_point" ]] || die "$installed_dir/$entry_point is not executable"
"$azd" extension list --installed --no-prompt >&2

# Compile the component once now, into the cache the extension will read
# (AZD_WASM_HOST_CACHE_DIR, else ~/.cache/azd-wasm-host). Only an optimisation: the host is
# Ready before it compiles, and a package with precompiled code compiles nothing at all.
# `check` loads the component through the same cache as `listen`.
if [[ "${PRECOMPILE:-1}" == 1 ]]; then prewarm_default=0; else prewarm_default=1; fi
if [[ "${PREWARM:-$prewarm_default}" == 1 ]]; then
  start=$(date +%s.%N)
  "$installed_dir/$entry_point" check "$installed_dir/provider.toml" >/dev/null ||
    die "the installed extension cannot load its provider: $installed_dir/$entry_point check $installed_dir/provider.toml"
  log "compiled the component into the cache in $(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$start" "$(date +%s.%N)") s"
fi
log "installed $ext_id $ext_version at $installed_dir"
# A provider that asks for grants (localfiles: folders, azd's environment, questions) runs only
# once you allowed them: azd asks at its first command, or allow them now, as CI does.
log "its grants need your consent: azd asks at the first command (--no-prompt refuses), or run:"
log "  $installed_dir/$entry_point approve"
echo "$installed_dir"
