# shellcheck shell=bash
# shellcheck disable=SC2154,SC2034,SC2164 # variables set and read across the files the driver
# sources into one shell (scripts/azd-e2e.sh, lib.sh, the scenarios), and its set -e, unseen here
# Scenario 95 of scripts/azd-e2e.sh (sourced by it after the shared setup, in its shell):
# the author's tool released as scripts/release-tools.sh releases it (its registry.json and
# archives served over HTTP on loopback, as from a release's web server; azd's own `extension
# source validate --strict` passes it), installed with the README's two lines (`-t url`), then
# used by an author whose PATH has azd and Go but no Rust toolchain and no azd-wasm-host:
# azd wasm new go → build → test → package (which must ship the sidecar the tool carries, and say
# which build it is and its size; and refuse it once it is writable by others or changed since the
# release signed it), the provider installed into azd, and azd provision with it.
#
# Needs: only the shared setup. The tool bundles the CLI the run installs (HOST_BINARY, or
# target/<profile>/azd-wasm-host) and the sidecar built beside it (or the size-optimised one,
# target/sidecar/; AZD_E2E_TOOL_SIDECAR names another), as scripts/release-tools.sh's TOOLS_CLI
# and TOOLS_SIDECAR.
# Leaves: azd-wasm-host.tools and local.hello-tool installed; PATH as it found it; the working
# folder is hello-tool's project ($project, $env_name=e2e, $env_file).
# requires:

say ""
say "== the author's tool as an azd extension, used with azd and Go alone"
if [[ "${CARGO_PROFILE:-release}" == dev ]]; then tool_sub=debug; else tool_sub="${CARGO_PROFILE:-release}"; fi
tool_cli="${HOST_BINARY:-$repo_root/target/$tool_sub/azd-wasm-host}"
tool_sidecar="${AZD_E2E_TOOL_SIDECAR:-$(dirname "$tool_cli")/azd-wasm-host-sidecar}"
[[ -x "$tool_sidecar" ]] || tool_sidecar="$repo_root/target/sidecar/azd-wasm-host-sidecar"
[[ -x "$tool_sidecar" ]] ||
  fail "no sidecar build beside $tool_cli nor in target/sidecar/ (cargo build -p azd-wasm-host-sidecar)"
t="$(now)"
mkdir -p "$work/tools-dist"
serve_folder "$work/tools-dist"
# Signed with the default key of this azd config folder: what a release made here is (a published
# release's CLI carries the release key instead; docs/packaging.md). That key is trusted for the
# tool below.
OUT_DIR="$work/tools-dist" BASE_URL="$served_url" TOOLS_CLI="$tool_cli" TOOLS_SIDECAR="$tool_sidecar" \
  "$repo_root/scripts/release-tools.sh" >"$work/step.out" 2>&1 || {
  cat "$work/step.out" >>"$transcript"
  fail "scripts/release-tools.sh"
}
sed 's/^/  | /' "$work/step.out" | tee -a "$transcript"
say "  (the tool's release, served on $served_url, in $(elapsed "$t") s)"
# A tool built without a release key checks its sidecars' list only with the keys trusted for the
# tool (tool-keys/), never with those trusted for providers: trust this folder's default key, which
# signed the list above, for the tool, as a user of such a build does (docs/packaging.md).
"$tool_cli" trust add "$AZD_CONFIG_DIR/wasm-host/keys/signing.pub" --for tool >"$work/step.out" 2>&1 || {
  cat "$work/step.out" >>"$transcript"
  fail "azd-wasm-host trust add … --for tool (the key that signed the tool's sidecars)"
}
grep -q "for the tool's sidecars" "$work/step.out" || fail "trust add --for tool did not say what it trusted"
azd_step extension source validate "$served_url/registry.json" --strict --no-prompt ||
  fail "azd extension source validate --strict refused the tool's registry"
pass "azd's own validation (--strict) passes the tool's registry.json"
azd_step extension source add -n wasm-tools -t url -l "$served_url/registry.json" --no-prompt ||
  fail "azd extension source add -t url (the tool's release)"
azd_step extension install azd-wasm-host.tools --source wasm-tools --no-prompt ||
  fail "azd extension install azd-wasm-host.tools"
grep -q '"GET /azd-wasm-host-tools-linux-amd64.tar.gz HTTP' "$work/serve-folder.log" ||
  fail "azd did not download the tool's archive from $served_url"
tool_sidecars="$AZD_CONFIG_DIR/extensions/azd-wasm-host.tools/sidecars"
[[ -x "$tool_sidecars/linux-amd64/azd-wasm-host" && -s "$tool_sidecars/sidecars.sigstore.json" ]] ||
  fail "the installed tool carries no sidecar in sidecars/linux-amd64/, or not its signed list"
pass "azd installed the author's tool over HTTP from its release, with its sidecar and their signed list"

# An author's PATH: azd and Go, the system's tools, and nothing of Rust's (Debian's rustc in
# /usr/bin included), nor azd-wasm-host itself: the tool is reached through azd alone.
tool_saved_path="$PATH"
# Nor the harness's own AZD_WASM_HOST_* settings (test.sh's, lib.sh's): a new author has none.
tool_saved_settings="$(export -p | grep -E '^declare -x AZD_WASM_HOST_' || true)"
for tool_setting in $(compgen -e | grep '^AZD_WASM_HOST_' || true); do unset "$tool_setting"; done
tool_path="$work/author-path"
mkdir -p "$tool_path"
for tool_dir in /usr/local/bin /usr/bin /bin; do
  for tool_file in "$tool_dir"/*; do
    tool_name="$(basename "$tool_file")"
    case "$tool_name" in
      cargo* | rustc* | rustdoc* | rustup* | rust-* | clippy-driver | azd-wasm-host*) continue ;;
    esac
    [[ -e "$tool_path/$tool_name" ]] || ln -s "$tool_file" "$tool_path/$tool_name"
  done
done
export PATH="$tool_path:$(dirname "$(command -v go)"):$(dirname "$azd")"
for tool_name in cargo rustc rustup azd-wasm-host; do
  ! command -v "$tool_name" >/dev/null || fail "$tool_name is still on the author's PATH: $(command -v "$tool_name")"
done
pass "the author's PATH has azd ($("$azd" version --no-prompt | head -n1)) and $(go version | cut -d' ' -f3), no cargo, rustc, rustup nor azd-wasm-host"

mkdir -p "$work/authors/tool"
cd "$work/authors/tool"
azd_step wasm --version || fail "azd wasm --version"
grep -q "^azd-wasm-host " "$work/step.out" || fail "azd wasm --version did not print the tool's version"
azd_step wasm new go hello-tool || fail "azd wasm new go hello-tool"
! grep -qi "warning" "$work/step.out" || fail "azd wasm new warned a new author: $(grep -i warning "$work/step.out")"
grep -q "^  azd wasm build$" "$work/step.out" || fail "azd wasm new did not suggest azd wasm build as the next step"
cd hello-tool
azd_step wasm build || fail "azd wasm build (Go, no Rust toolchain)"
azd_step wasm test || fail "azd wasm test"
grep -q "passed" "$work/step.out" || fail "azd wasm test printed no passed test"
azd_step wasm package || fail "azd wasm package (no Rust toolchain)"
grep -q "==> ship the host for linux/amd64: .*, [0-9.]* MB (.*extensions/azd-wasm-host.tools/sidecars/linux-amd64/azd-wasm-host)" "$work/step.out" ||
  fail "azd wasm package did not ship the installed tool's sidecar, saying which build and its size"
grep -q "==> the installed tool's sidecars (.*) match the list release .* signed" "$work/step.out" ||
  fail "azd wasm package did not check the tool's sidecars against the release's signed list"
pass "package shipped the tool's own sidecar: $(grep -o '==> ship the host for linux/amd64: [^(]*' "$work/step.out")"
# A sidecar others can write, or one changed since the release signed it, is never shipped.
tool_sidecar_file="$tool_sidecars/linux-amd64/azd-wasm-host"
chmod g+w "$tool_sidecar_file"
! azd_step wasm package || fail "azd wasm package shipped a sidecar others can write"
grep -q "sidecar folder cannot be trusted" "$work/step.out" || fail "package did not say why it refused the writable sidecar"
chmod g-w "$tool_sidecar_file"
cp "$tool_sidecar_file" "$work/sidecar.saved"
printf 'x' >>"$tool_sidecar_file"
! azd_step wasm package || fail "azd wasm package shipped a sidecar changed since the release"
grep -q "was changed after it was signed" "$work/step.out" || fail "package did not say the sidecar was changed"
cat "$work/sidecar.saved" >"$tool_sidecar_file"
pass "package refused the tool's sidecar once others could write it, and once it was changed"
rm -rf .azure
azd_step extension source add -n hello-tool -t file -l "$PWD/dist/registry.json" --no-prompt ||
  fail "azd extension source add (hello-tool)"
azd_step extension install local.hello-tool --source hello-tool --no-prompt || fail "azd extension install local.hello-tool"
project="$PWD"
env_name=e2e
env_file="$project/.azure/$env_name/.env"
azd_step env new "$env_name" --no-prompt || fail "azd env new (hello-tool)"
azd_step provision --no-prompt || fail "azd provision with the provider the tool made"
expect_env GREETING "Hello, world!"
pass "a Go provider went from azd wasm new to azd provision with azd and Go alone"
export PATH="$tool_saved_path"
eval "$tool_saved_settings"
