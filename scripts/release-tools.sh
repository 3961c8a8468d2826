#!/usr/bin/env bash
# Makes the author's tool an azd extension source: a registry.json and one archive per platform,
# in target/tools-dist/ (or OUT_DIR), as azd's own extensions are released: archives named
# <id-with-dashes>-<os>-<arch> (azd-wasm-host-tools-linux-amd64.tar.gz), .tar.gz for Linux and .zip
# for macOS and Windows, each entry with normalised modes and one time, and the sha256 of each in
# registry.json. Each archive holds, for its platform:
#   azd-wasm-host[.exe]                          the development CLI (azd's entry point: `azd wasm …`)
#   sidecars/<os>-<arch>/azd-wasm-host[.exe]     the size-optimised sidecar of every platform built,
#   sidecars/<os>-<arch>/sidecar-build.json      with what it is (profile-guided or not)
#   sidecars/sidecars.sigstore.json              the release's signed list of the files above
# so that `azd wasm package` needs no Rust toolchain and ships the same sidecars whoever runs it
# (host/author/src/package/sidecars.rs finds them there first, and ships them only as signed).
#
#   scripts/release-tools.sh [PLATFORM...|all]     (default: this machine's own platform)
#
# Builds with scripts/release.sh --dev (the sidecar of every platform asked for, and that
# platform's development CLI), unless told what to bundle:
#   TOOLS_CLI=BINARY        bundle this development CLI for this machine's platform (no build)
#   TOOLS_SIDECARS=DIR      with it: DIR/<os>-<arch>/azd-wasm-host[.exe] are the sidecars (default
#                           target/release-dist); TOOLS_SIDECAR=BINARY names this machine's alone
# Other environment: OUT_DIR (default target/tools-dist), BASE_URL (the artifacts' URLs are
# BASE_URL/<archive>; default: their absolute paths, for a local file source), TOOLS_MANIFEST
# (default host/cli/extension.yaml; host/cli/tests/all/release_tools.rs gives it a wrong version),
# SOURCE_DATE_EPOCH (every archive entry's time; default: the last commit's), RELEASE_SIGNING_KEY
# (the release's signing key, a PEM file; default: your own default signing key, which verifies
# only with a CLI built with it as release key, or where it is trusted for the tool:
# `azd-wasm-host trust add KEY.pub --for tool`, never as a key trusted for providers), SIGNER_CLI (the CLI that signs, one that runs here; default: the one
# bundled for this machine), RELEASE_TAG (when set, it must be azd-ext-<id>_<version> for the
# extension's id and version: what the release workflow is started by), and for tests
# RELEASE_SH (default scripts/release.sh) and DIST_DIR (where it leaves its builds, default
# target/release-dist).
# Archives are reproducible: entries by name, owned by 0:0, modes 0755 (folders, executables)
# or 0644, one time for all, gzip without a name or time (the signed list is a signature, so it
# differs between two signings; the files it names do not). At exit it removes only the folders it
# made itself (never one it was given, such as TOOLS_SIDECARS or target/release-dist).
# The extension's fields come from host/cli/extension.yaml; its version must be the workspace's.
# Install what it wrote:
#   azd extension source add -n wasm-tools -t file -l target/tools-dist/registry.json
#   azd extension install azd-wasm-host.tools --source wasm-tools
set -euo pipefail

ROOT=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
die() { echo "release-tools: $*" >&2; exit 1; }
# The folders this run made (mktemp), and only those, go at exit.
made=()
cleanup() { if ((${#made[@]} > 0)); then rm -rf -- "${made[@]}"; fi; }
trap cleanup EXIT

# The six platforms azd installs extensions on (azd's pkg/extensions ValidPlatforms).
ALL_PLATFORMS=(linux-amd64 linux-arm64 windows-amd64 windows-arm64 darwin-arm64 darwin-amd64)
native=$(case "$(uname -s)/$(uname -m)" in
  Linux/x86_64) echo linux-amd64 ;;
  Linux/aarch64) echo linux-arm64 ;;
  *) die "unsupported build machine $(uname -s)/$(uname -m)" ;;
esac)
platforms=("$@")
((${#platforms[@]} > 0)) || platforms=("$native")
[[ ${platforms[*]} == all ]] && platforms=("${ALL_PLATFORMS[@]}")
OUT=${OUT_DIR:-$ROOT/target/tools-dist}
exe_of() { [[ $1 == windows-* ]] && echo azd-wasm-host.exe || echo azd-wasm-host; }

# The extension's id and version, checked before anything is built: the version must be the
# workspace's, and a release's tag must name both.
manifest=${TOOLS_MANIFEST:-$ROOT/host/cli/extension.yaml}
# One top-level `key: value` of the manifest, without quotes.
manifest_field() { sed -n "s/^$1:[[:space:]]*//p" "$manifest" | head -n1 | tr -d "\"'" | sed 's/[[:space:]]*$//'; }
ext_id=$(manifest_field id)
version=$(manifest_field version)
[[ -n $ext_id && -n $version ]] || die "$manifest names no id or version"
workspace_version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n1)
[[ $version == "$workspace_version" ]] ||
  die "host/cli/extension.yaml says version '$version', the workspace '$workspace_version': make them agree"
if [[ -n ${RELEASE_TAG:-} && $RELEASE_TAG != "azd-ext-${ext_id}_$version" ]]; then
  die "the tag $RELEASE_TAG is not azd-ext-${ext_id}_$version (the id and version of $manifest)"
fi

# What to bundle: per platform, its CLI; and the sidecars' folder.
declare -A cli_of=()
DIST=${DIST_DIR:-$ROOT/target/release-dist}
sidecars=${TOOLS_SIDECARS:-$DIST}
if [[ -n ${TOOLS_CLI:-} ]]; then
  [[ ${platforms[*]} == "$native" ]] || die "TOOLS_CLI bundles this machine's platform ($native) only"
  [[ -x $TOOLS_CLI ]] || die "TOOLS_CLI=$TOOLS_CLI is no executable"
  cli_of[$native]=$TOOLS_CLI
  if [[ -n ${TOOLS_SIDECAR:-} ]]; then
    sidecars=$(mktemp -d)
    made+=("$sidecars")
    mkdir -p "$sidecars/$native"
    cp "$TOOLS_SIDECAR" "$sidecars/$native/azd-wasm-host"
    strip "$sidecars/$native/azd-wasm-host" || echo "release-tools: warning: strip failed" >&2
    # What cargo's profile folder says of it (target/debug: the dev profile), for `package` to tell.
    profile=$(basename "$(dirname "$TOOLS_SIDECAR")")
    [[ $profile == debug ]] && profile=dev
    printf '{"profile": "%s", "profile_guided": false}\n' "$profile" >"$sidecars/$native/sidecar-build.json"
  fi
else
  "${RELEASE_SH:-scripts/release.sh}" --dev "${platforms[@]}" >&2
  for p in "${platforms[@]}"; do cli_of[$p]=$DIST/$p/dev/$(exe_of "$p"); done
fi
carried=()
for p in "${ALL_PLATFORMS[@]}"; do
  [[ -f $sidecars/$p/$(exe_of "$p") ]] && carried+=("$p")
done
((${#carried[@]} > 0)) || die "no sidecar build in $sidecars/<os>-<arch>/ (scripts/release.sh makes them)"

mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
stage_root=$(mktemp -d)
made+=("$stage_root")
epoch=${SOURCE_DATE_EPOCH:-$(git -C "$ROOT" log -1 --format=%ct 2>/dev/null || echo 0)}

# The sidecars, once, signed as one list: every archive carries the same folder.
signed="$stage_root/sidecars"
for q in "${carried[@]}"; do
  mkdir -p "$signed/$q"
  cp "$sidecars/$q/$(exe_of "$q")" "$signed/$q/"
  if [[ -f $sidecars/$q/sidecar-build.json ]]; then
    cp "$sidecars/$q/sidecar-build.json" "$signed/$q/"
  fi
done
signer=${SIGNER_CLI:-${TOOLS_CLI:-${cli_of[$native]:-}}}
[[ -n $signer && -x $signer ]] ||
  die "nothing here can sign the sidecars: build this machine's platform ($native) too, or name a CLI that runs here as SIGNER_CLI"
[[ -n ${RELEASE_SIGNING_KEY:-} ]] ||
  echo "release-tools: signing the sidecars with your own default key (RELEASE_SIGNING_KEY names a release's); a CLI built without a release key checks them only where that key is trusted for the tool (azd-wasm-host trust add KEY.pub --for tool)" >&2
"$signer" sign-sidecars "$signed" --version "$version" ${RELEASE_SIGNING_KEY:+--key "$RELEASE_SIGNING_KEY"} >/dev/null ||
  die "signing the sidecars failed"
[[ -s $signed/sidecars.sigstore.json ]] || die "$signer sign-sidecars wrote no sidecars/sidecars.sigstore.json"

# zip_dir STAGE ARCHIVE: what tar does below, as a .zip (the macOS and Windows archives): entries
# by name, modes 0755 (folders, executables) or 0644 as Unix attributes, one time for all.
zip_dir() {
  python3 - "$1" "$2" "$epoch" <<'PY'
import os, sys, time, zipfile
stage, out, epoch = sys.argv[1], sys.argv[2], int(sys.argv[3])
# A zip holds a calendar time from 1980 on: the epoch's UTC fields, at the earliest 1980-01-01.
when = time.gmtime(max(epoch, 315532800))[:6]
names = []
for folder, dirs, files in os.walk(stage):
    rel = os.path.relpath(folder, stage)
    names += [(os.path.normpath(os.path.join(rel, d)) + "/", True) for d in dirs]
    names += [(os.path.normpath(os.path.join(rel, f)), False) for f in files]
with zipfile.ZipFile(out, "w") as z:
    for name, is_dir in sorted(names):
        info = zipfile.ZipInfo(name, date_time=when)
        info.create_system = 3  # Unix: the mode is in external_attr's high half
        if is_dir:
            info.external_attr = (0o040755 << 16) | 0x10
            z.writestr(info, b"")
            continue
        mode = 0o755 if os.stat(os.path.join(stage, name)).st_mode & 0o111 else 0o644
        info.external_attr = (0o100000 | mode) << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        with open(os.path.join(stage, name), "rb") as f:
            z.writestr(info, f.read(), compresslevel=9)
PY
}

artifacts=()
for p in "${platforms[@]}"; do
  stage="$stage_root/$p"
  mkdir -p "$stage"
  cp "${cli_of[$p]}" "$stage/$(exe_of "$p")"
  # release.sh's builds are stripped already; a CLI given as TOOLS_CLI (a test's debug build) is
  # stripped here, as is the sidecar beside it: most of a debug build is its debug information.
  [[ -z ${TOOLS_CLI:-} ]] || strip "$stage/$(exe_of "$p")" || echo "release-tools: warning: strip failed" >&2
  cp -R "$signed" "$stage/sidecars"
  if [[ $p == linux-* ]]; then
    archive="$OUT/${ext_id//./-}-$p.tar.gz"
    # Listed by name (azd refuses an entry `./`), owned by nobody in particular, in a stable
    # order, with normalised modes and one time: the same inputs give the same bytes.
    (cd "$stage" && tar --sort=name --owner=0 --group=0 --numeric-owner --mode='u=rwX,go=rX' \
      --mtime="@$epoch" --format=gnu -cf - -- * | gzip -n -9 >"$archive")
  else
    archive="$OUT/${ext_id//./-}-$p.zip"
    rm -f "$archive"
    zip_dir "$stage" "$archive"
  fi
  artifacts+=("$p=$archive")
  printf 'release-tools: %-14s %s  %.1f MB (sidecars: %s)\n' "$p" "$archive" \
    "$(($(stat -c %s "$archive") / 1000))e-3" "${carried[*]}" >&2
done

# registry.json, from extension.yaml (one-line values and simple lists; see its header).
python3 - "$manifest" "$OUT/registry.json" "${BASE_URL:-}" "${artifacts[@]}" <<'PY'
import hashlib, json, sys

manifest, out, base_url, *artifacts = sys.argv[1:]

def scalar(text):
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1]
    return text

fields, key, item = {}, None, None
for raw in open(manifest, encoding="utf-8"):
    line = raw.rstrip("\n")
    if not line.strip() or line.lstrip().startswith("#"):
        continue
    if not line.startswith(" "):
        key, _, value = line.partition(":")
        fields[key] = scalar(value) if value.strip() else []
        continue
    body = line.strip()
    if body.startswith("- "):
        name, sep, value = body[2:].partition(": ")
        if sep and key == "examples":
            item = {name: scalar(value)}
            fields[key].append(item)
        else:
            fields[key].append(scalar(body[2:]))
    elif item is not None:
        name, _, value = body.partition(": ")
        item[name] = scalar(value)

def artifact(spec):
    platform, path = spec.split("=", 1)
    digest = hashlib.sha256(open(path, "rb").read()).hexdigest()
    name = path.rsplit("/", 1)[-1]
    url = f"{base_url.rstrip('/')}/{name}" if base_url else path
    entry = "azd-wasm-host.exe" if platform.startswith("windows-") else "azd-wasm-host"
    return platform.replace("-", "/"), {
        "url": url, "checksum": {"algorithm": "sha256", "value": digest}, "entryPoint": entry}

version = {k: fields[k] for k in ("version", "capabilities", "entryPoint", "usage",
                                  "requiredAzdVersion", "examples") if k in fields}
version["artifacts"] = dict(artifact(a) for a in artifacts)
extension = {k: fields[k] for k in ("id", "namespace", "displayName", "description", "tags")
             if k in fields}
extension["versions"] = [version]
with open(out, "w", encoding="utf-8") as f:
    json.dump({"schemaVersion": "1.0", "extensions": [extension]}, f, indent=2)
    f.write("\n")
print(f"release-tools: {out} ({extension['id']} {version['version']}, "
      f"namespace {extension.get('namespace')}, platforms {', '.join(version['artifacts'])})",
      file=sys.stderr)
PY
echo "$OUT/registry.json"
