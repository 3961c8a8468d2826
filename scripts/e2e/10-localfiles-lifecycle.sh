# shellcheck shell=bash
# shellcheck disable=SC2154,SC2034,SC2164 # variables set and read across the files the driver
# sources into one shell (scripts/azd-e2e.sh, lib.sh, the scenarios), and its set -e, unseen here
# Scenario 10 of scripts/azd-e2e.sh (sourced by it after the shared setup, in its shell):
# a new user's project (a copy of examples/azd-e2e-project, infra.provider: localfiles, the
# Python component the extension bundles): azd env new, azd provision on an empty compile cache
# and without -e, provision --preview (changes nothing), provision again (skipped), env refresh
# (outputs back from the provider's state), down at a terminal answered "n" (keeps everything)
# and down --force --purge (removes everything), each checked in the project folder and in
# .azure/<env>/.env; the log file holds no ERROR line.
#
# Needs: only the shared setup. It must be the first scenario that starts the extension (it
# checks that the compile cache is still empty), so it comes first.
# Leaves: the working folder is its project ($project, $env_name=e2e, $env_file, $root).
# requires:

# The project under test, as a new user would have it.
project="$work/project"
cp -R "$repo_root/examples/azd-e2e-project" "$project"
cd "$project"
env_name=e2e
env_file="$project/.azure/$env_name/.env"
root="$project/localinfra"

azd_step env new "$env_name" --no-prompt || fail "azd env new"
[[ -f "$env_file" ]] || fail "azd env new did not create $env_file"

# --- provision: the first one, on an empty compile cache and without -e -------------------------
# azd starts the extension and waits 15 s for Ready; the 19 MB Python component takes longer
# than that to compile on a slow machine, so the extension must be Ready before it compiles.
[[ ! -e "$cache_dir" ]] || fail "the compile cache $cache_dir is not empty before the first provision"
azd_step provision --no-prompt || fail "azd provision (first, empty compile cache, no -e)"
ls "$cache_dir"/*.cwasm >/dev/null 2>&1 || fail "the first provision compiled nothing into $cache_dir"
pass "first provision on an empty compile cache succeeded in $step_seconds s (the component was compiled meanwhile)"
pass "provision without -e used the default environment '$env_name'"
[[ -d "$root/web" ]] || fail "directory resource web was not created"
[[ "$(cat "$root/settings")" == "greeting=hello from a WebAssembly provider" ]] ||
  fail "file resource settings has the wrong content: $(cat "$root/settings" 2>&1)"
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d == {"replicas": 1, "tables": ["users", "orders"]}, d' \
  "$root/db.json" || fail "json-store resource db has the wrong data"
pass "resources web/, settings, db.json exist under localinfra/ with the declared content"
[[ -f "$project/.azure/$env_name/localfiles-state.json" ]] || fail "the provider recorded no state"
pass "state recorded in .azure/$env_name/localfiles-state.json"
expect_env LOCALFILES_ROOT "$root"
expect_env LOCALFILES_RESOURCE_COUNT 3
expect_env_json LOCALFILES_RESOURCES '["db","settings","web"]'
expect_env_json LOCALFILES_PATHS "{\"db\": \"$root/db.json\", \"settings\": \"$root/settings\", \"web\": \"$root/web\"}"
expect_env LOCALFILES_READY true
grep -q '^AZURE_SUBSCRIPTION_ID=' "$env_file" && fail "provision wrote a subscription id without being asked"
pass "no AZURE_SUBSCRIPTION_ID / AZURE_LOCATION needed"
expect_no_error_logged "after the first provision"

# --- preview: reports, changes nothing ---------------------------------------------------------
before="$(snapshot)"
env_before="$(sha256sum "$env_file")"
azd_step provision --preview -e "$env_name" --no-prompt || fail "azd provision --preview"
[[ "$(snapshot)" == "$before" ]] || fail "azd provision --preview changed files in the project"
[[ "$(sha256sum "$env_file")" == "$env_before" ]] || fail "azd provision --preview changed $env_file"
pass "preview left the project and .env untouched"

# --- provision again: nothing changed ----------------------------------------------------------
azd_step provision -e "$env_name" --no-prompt || fail "second azd provision"
grep -q "no changes to provision" "$work/step.out" ||
  fail "second provision did not report that nothing changed"
pass "second provision was skipped (deployment state unchanged)"

# --- env refresh: outputs come back from the provider's state ----------------------------------
# Forget the outputs locally and change a resource behind the provider's back: refresh must
# restore the keys from the provider's state, and LOCALFILES_READY must now say false.
sed -i '/^LOCALFILES_/d' "$env_file"
echo "edited by hand" >"$root/settings"
azd_step env refresh -e "$env_name" --no-prompt || fail "azd env refresh"
expect_env LOCALFILES_ROOT "$root"
expect_env LOCALFILES_RESOURCE_COUNT 3
expect_env LOCALFILES_READY false

# --- down without --force, at a terminal: the provider asks, and "no" keeps everything ----------
before="$(snapshot)"
env_before="$(sha256sum "$env_file")"
rc=0
azd_pty_step "Remove 3 resources under localinfra" n down -e "$env_name" || rc=$?
((rc != 124)) || fail "azd down (answered no) did not finish"
((rc != 3)) || fail "azd down without --force did not ask before removing"
pass "azd down without --force asked: Remove 3 resources under localinfra …?"
((rc != 0)) || fail "azd down answered 'no' reported success"
grep -q "the removal was not confirmed" "$work/step.out" || fail "azd down answered 'no' did not say why it stopped"
[[ "$(snapshot)" == "$before" ]] || fail "azd down answered 'no' changed files in the project"
[[ "$(sha256sum "$env_file")" == "$env_before" ]] || fail "azd down answered 'no' changed $env_file"
pass "answered 'no': every file and .env key is kept, and azd says the removal was not confirmed (exit $rc)"

# --- down --force --purge (without -e): removes everything it made, and the outputs --------------
azd_step down --force --purge --no-prompt || fail "azd down --force --purge"
# localinfra/ itself ships with the project (the provider may only write inside it), so down
# leaves it, with nothing but its README.
left="$(cd "$root" && find . -mindepth 1 | sort | tr '\n' ' ')"
[[ "$left" == "./README.md " ]] || fail "azd down left resources behind in localinfra/: $left"
pass "the resources are gone; localinfra/ holds only its README"
[[ ! -e "$project/.azure/$env_name/localfiles-state.json" ]] || fail "state file still exists after azd down"
pass "state file is gone"
for key in LOCALFILES_ROOT LOCALFILES_RESOURCE_COUNT LOCALFILES_RESOURCES LOCALFILES_PATHS LOCALFILES_BYTES LOCALFILES_READY; do
  expect_no_env "$key"
done

expect_no_error_logged "after provision, preview, provision, env refresh and both downs"

# --- which contract this azd spoke: what the docs say of its release must be what it did -------
# The host logs, once per process, whether azd answered under the versioned contract
# (azd.extensions.v1) or under azdext. No azd released up to 1.34.0 serves the versioned one
# (docs/architecture.md, host/cli/tests/all/azd_releases.rs); a newer release is reported either way.
azd_release="$("$azd" version --no-prompt | sed -n 's/^azd version \([0-9][0-9.]*\).*/\1/p' | head -n1)"
v1_lines="$(grep -c "azd serves the versioned contract" "$log_file" || true)"
legacy_lines="$(grep -c "azd does not serve azd.extensions.v1" "$log_file" || true)"
((v1_lines + legacy_lines > 0)) || fail "the log file $log_file does not say which contract azd $azd_release answered under"
((v1_lines == 0 || legacy_lines == 0)) || fail "azd $azd_release answered under both contracts ($v1_lines v1, $legacy_lines azdext processes)"
if ((v1_lines > 0)); then spoke="azd.extensions.v1"; else spoke="azdext"; fi
# The newest release known to serve azdext only: the one host/cli/tests/all/azd_releases.rs holds the docs to.
newest_known_legacy="$(sed -n 's/^const NEWEST_KNOWN: &str = "\(.*\)";$/\1.0/p' "$repo_root/host/cli/tests/all/azd_releases.rs")"
[[ -n "$newest_known_legacy" ]] || fail "no NEWEST_KNOWN in host/cli/tests/all/azd_releases.rs"
if [[ "$(printf '%s\n%s\n' "$azd_release" "$newest_known_legacy" | sort -V | tail -n1)" == "$newest_known_legacy" ]]; then
  [[ "$spoke" == azdext ]] || fail "azd $azd_release served azd.extensions.v1, but the docs say no release up to $newest_known_legacy does: correct them (host/cli/tests/all/azd_releases.rs)"
  pass "azd $azd_release answered under $spoke, as the docs say of every release up to $newest_known_legacy"
else
  say "== NOTE: azd $azd_release is newer than $newest_known_legacy and answered under $spoke: name it in docs/architecture.md and host/cli/tests/all/azd_releases.rs"
  pass "azd $azd_release answered under $spoke (one contract for the whole run)"
fi
