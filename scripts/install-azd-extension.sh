#!/usr/bin/env bash
# Builds azd-wasm-host and an example provider component, lays them out as a local azd
# extension source, and installs the extension with azd's own commands.
#
#   scripts/install-azd-extension.sh [--no-build]
#
# Environment:
#   AZD_CONFIG_DIR   azd configuration directory to install into. Default: <repo>/.tools/azd-config
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
#   PREWARM          1 (default) compiles the component into the extension's cache after installing.
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
  export AZD_CONFIG_DIR="$repo_root/.tools/azd-config"
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

# ---- the extension manifest -------------------------------------------------------------------
python3 -c 'import yaml' 2>/dev/null || {
  log "installing PyYAML (reads extension.yaml)"
  python3 -m pip install --quiet --disable-pip-version-check pyyaml
}
read -r ext_id ext_version entry_point < <(python3 - "$repo_root/extension.yaml" <<'PY'
import sys, yaml
m = yaml.safe_load(open(sys.argv[1]))
print(m["id"], m["version"], m.get("entryPoint") or m["id"])
PY
)

# ---- build ------------------------------------------------------------------------------------
if [[ "$profile" == dev ]]; then target_sub=debug; else target_sub="$profile"; fi
binary="${HOST_BINARY:-$repo_root/target/$target_sub/azd-wasm-host}"
example_dir="${EXAMPLE_DIR:-$repo_root/examples/$example}"
[[ -f "$example_dir/provider.toml" ]] || die "no provider manifest at $example_dir/provider.toml"

if ((build)) && [[ -z "${HOST_BINARY:-}" ]]; then
  log "building azd-wasm-host ($profile)"
  cargo build --locked --profile "$profile" -p azd-wasm-host --bin azd-wasm-host >&2
fi
if ((build)) && [[ -z "${EXAMPLE_DIR:-}" ]]; then
  log "building the $example component (scripts/build-examples.sh $example)"
  "$repo_root/scripts/build-examples.sh" "$example" >&2
fi
[[ -x "$binary" ]] || die "binary not built: $binary"

# The component path inside provider.toml is relative to provider.toml; keep that layout.
component_rel="$(python3 - "$example_dir/provider.toml" <<'PY'
import sys, tomllib
print(tomllib.load(open(sys.argv[1], "rb"))["component"])
PY
)"
[[ "$component_rel" != /* && "$component_rel" != *..* ]] ||
  die "component path in provider.toml must be relative and inside the example: $component_rel"
[[ -f "$example_dir/$component_rel" ]] || die "component not built: $example_dir/$component_rel"

# ---- lay out the local source -----------------------------------------------------------------
case "$(uname -s)" in
  Linux) os=linux ;;
  Darwin) os=darwin ;;
  *) die "unsupported OS $(uname -s) (this script packages Linux and macOS)" ;;
esac
case "$(uname -m)" in
  x86_64 | amd64) arch=amd64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) die "unsupported architecture $(uname -m)" ;;
esac
platform="$os/$arch"

stage="$dist_dir/stage"
rm -rf "$stage"
mkdir -p "$stage/$(dirname "$component_rel")"
cp "$binary" "$stage/$entry_point"
# Shipped stripped: symbols and line tables are for the build machine (152 MB → 25 MB).
if command -v strip >/dev/null 2>&1; then
  strip "$stage/$entry_point" || die "strip failed on $stage/$entry_point"
else
  log "warning: no 'strip' on PATH; the binary is packaged with its symbols"
fi
cp "$example_dir/provider.toml" "$stage/provider.toml"
cp "$example_dir/$component_rel" "$stage/$component_rel"

archive="$dist_dir/${ext_id//./-}-$os-$arch.tar.gz"
# List the members by name: azd refuses an archive entry "./" (it resolves to the target
# directory itself, which fails its path-containment check in pkg/rzip/rzip.go).
(cd "$stage" && tar -czf "$archive" -- *)
sha="$(sha256sum "$archive" | cut -d' ' -f1)"
log "packaged $(basename "$archive"): $(wc -c <"$archive" | tr -d " ") bytes (binary $(wc -c <"$stage/$entry_point" | tr -d " ") bytes, stripped)"

registry="$dist_dir/registry.json"
python3 - "$repo_root/extension.yaml" "$platform" "$archive" "$sha" "$entry_point" >"$registry" <<'PY'
import json, sys, yaml
manifest_path, platform, archive, sha, entry_point = sys.argv[1:]
m = yaml.safe_load(open(manifest_path))
version = {
    "version": m["version"],
    "requiredAzdVersion": m.get("requiredAzdVersion", ""),
    "capabilities": m.get("capabilities", []),
    "providers": m.get("providers", []),
    "usage": m.get("usage", ""),
    "examples": m.get("examples", []),
    "entryPoint": entry_point,
    "artifacts": {
        platform: {
            "url": archive,
            "checksum": {"algorithm": "sha256", "value": sha},
            "entryPoint": entry_point,
        }
    },
}
version = {k: v for k, v in version.items() if v not in ("", None)}
extension = {
    "id": m["id"],
    "displayName": m["displayName"],
    "description": m["description"],
    "versions": [version],
}
for key in ("namespace", "tags"):
    if m.get(key):
        extension[key] = m[key]
json.dump({"schemaVersion": "1.0", "extensions": [extension]}, sys.stdout, indent=2)
print()
PY
log "wrote $registry ($platform artifact $(du -h "$archive" | cut -f1), sha256 $sha)"

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
# (AZD_WASM_HOST_CACHE_DIR, else ~/.cache/azd-wasm-host): a cold compile of the Python
# component takes longer than azd's 15 s wait for an extension to become ready, so without this
# the first `azd provision` after an install reports "Extension azd.wasm-host didn't start due
# to timeout". `check` loads the component through the same cache as `listen`.
if [[ "${PREWARM:-1}" == 1 ]]; then
  start=$(date +%s.%N)
  "$installed_dir/$entry_point" check "$installed_dir/provider.toml" >/dev/null ||
    die "the installed extension cannot load its provider: $installed_dir/$entry_point check $installed_dir/provider.toml"
  log "compiled the component into the cache in $(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$start" "$(date +%s.%N)") s"
fi
log "installed $ext_id $ext_version at $installed_dir"
echo "$installed_dir"
