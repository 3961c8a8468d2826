# shellcheck shell=bash
# shellcheck disable=SC2154,SC2034,SC2164 # variables set and read across the files the driver
# sources into one shell (scripts/azd-e2e.sh, lib.sh, the scenarios), and its set -e, unseen here
# Scenario 40 of scripts/azd-e2e.sh (sourced by it after the shared setup, in its shell):
# trust of a signed provider under azd, on todo-rs: its installed component changed behind
# azd's back (refused, then restored); version 0.2.0 asks for one more grant (refused under
# --no-prompt, asked at azd's prompt on a terminal, runs after yes, then unasked); version 0.3.0
# drops it again (runs unasked).
#
# Needs 30-author-js-ts-rust: todo-rs installed as local.todo-rs from the extension source
# todo-rs, signed with the key 30 made; its first provision's grants recorded; and the working
# folder being todo-rs's project (its extension.yaml, provider.toml and azure.yaml).
# Leaves: local.todo-rs at 0.3.0; the working folder unchanged.
# requires: 30-author-js-ts-rust

dev_cli_on_path # azd-wasm-host on PATH (already there when 30 ran before)

# --- trust: a signed provider, changed behind azd's back, then updated to ask for more ---------
# `package` signed todo-rs with the key it made in $AZD_CONFIG_DIR/wasm-host (trusted there), and
# its first azd provision recorded the grants it ran with. In its project folder ($project):
# 1. its installed component changed: azd provision is refused, naming the file (restored after);
# 2. version 0.2.0 also asks for an HTTP origin: refused under --no-prompt, naming it
#    and the approve command; asked on a terminal through azd's own prompt, yes: it runs, and
#    then runs unasked; 3. version 0.3.0 drops it again: runs unasked.
installed="$AZD_CONFIG_DIR/extensions/local.todo-rs"
say ""
say "== trust: the signed todo-rs provider (in $PWD)"
[[ -f "$installed/provider.sigstore.json" ]] || fail "the installed todo-rs carries no signature"
cp "$installed/build/todo-rs.wasm" "$work/todo-rs.wasm.orig"
printf '\x00\x05\x04note' >>"$installed/build/todo-rs.wasm"
if azd_step provision --no-prompt; then fail "azd provision ran a changed component"; fi
grep -q "todo-rs.wasm was changed after it was signed" "$work/step.out" ||
  fail "azd provision did not say the component was changed"
pass "a changed installed component is refused under azd"
cp "$work/todo-rs.wasm.orig" "$installed/build/todo-rs.wasm"

reinstall() { # VERSION: todo-rs packaged at VERSION and installed anew
  sed -i "s/^version: .*/version: $1/" extension.yaml
  rm -rf dist
  host_step package || fail "azd-wasm-host package (todo-rs $1)"
  azd_step extension uninstall local.todo-rs --no-prompt || fail "azd extension uninstall local.todo-rs"
  azd_step extension install local.todo-rs --source todo-rs --no-prompt || fail "azd extension install local.todo-rs $1"
}
python3 - provider.toml <<'PY'
import sys
path = sys.argv[1]
text = open(path).read() + '\n[policy.http]\nallow = ["https://example.com"]\n'
open(path, "w").write(text)
PY
reinstall 0.2.0
if azd_step provision --no-prompt; then fail "azd provision ran an update that asks for more, unasked"; fi
grep -q "provider \`todo-rs\` 0.2.0 asks for more than you allowed for 0.1.0" "$work/step.out" &&
  grep -q "+ HTTP origin https://example.com" "$work/step.out" && grep -q "approve --manifest" "$work/step.out" ||
  fail "the --no-prompt refusal does not name the new grant and the approve command"
pass "an update that asks for more is refused under --no-prompt"
azd_pty_step "Allow?" "y" provision || fail "azd provision on a terminal, answering yes to the new grant"
grep -q "also asks for: HTTP origin https://example.com" "$work/step.out" || fail "azd did not ask for the new grant"
azd_step provision --no-prompt || fail "azd provision after consent"
pass "an update that asks for more runs after the user's yes at azd's prompt, then unasked"
python3 - provider.toml <<'PY'
import sys
path = sys.argv[1]
text = open(path).read().replace('\n[policy.http]\nallow = ["https://example.com"]\n', "", 1)
open(path, "w").write(text)
PY
reinstall 0.3.0
azd_step provision --no-prompt || fail "azd provision of an update with fewer grants"
pass "an update with fewer grants runs unasked"
