# shellcheck shell=bash
# shellcheck disable=SC2154,SC2034,SC2164 # variables set and read across the files the driver
# sources into one shell (scripts/azd-e2e.sh, lib.sh, the scenarios), and its set -e, unseen here
# Scenario 60 of scripts/azd-e2e.sh (sourced by it after the shared setup, in its shell):
# examples/go-devcerts (Go) installed as its own extension (local.devcerts): refused on its
# first run under --no-prompt (naming its grants and approve), asked at azd's prompt ("n"
# refuses), approved as CI approves; then preview, provision (certificates OpenSSL verifies),
# provision again (skipped), a dropped host, env refresh, down answered "n" on a terminal and
# down --force --purge.
#
# Needs: only the shared setup (it builds examples/go-devcerts if it was not built).
# Leaves: the working folder is $work/devcerts/project ($project, $env_name=certs, $env_file).
# requires:

dev_cli_on_path # azd-wasm-host on PATH (already there when 30 ran before)

# --- a Go provider that does real local work: examples/go-devcerts -----------------------------
# Installed as its own extension, as its author would ship it (package, then azd extension source
# add / install). The certificates it issues inside the sandbox, with Go's crypto/x509, are
# checked by OpenSSL, an implementation of its own.
devcerts="$work/devcerts"
ext="$devcerts/extension"
mkdir -p "$ext/build" "$devcerts/project"
example="$repo_root/examples/go-devcerts"
[[ -f "$example/build/go-devcerts.wasm" ]] || "$repo_root/scripts/build-examples.sh" go-devcerts >>"$transcript" 2>&1 ||
  fail "scripts/build-examples.sh go-devcerts"
cp "$example/provider.toml" "$example/extension.yaml" "$ext/"
cp "$example/build/go-devcerts.wasm" "$ext/build/"
cd "$ext"
package_and_install devcerts
cp -R "$example/project/." "$devcerts/project/"
project="$devcerts/project"
cd "$project"
env_name=certs
env_file="$project/.azure/$env_name/.env"
san() { openssl x509 -in "$1" -noout -ext subjectAltName | tail -n +2 | tr -d ' '; }
azd_step env new "$env_name" --no-prompt || fail "azd env new $env_name"
# A provider azd starts for the first time that asks for grants (devcerts: two read-write folders,
# azd's environment, questions) runs only once the user allowed them: under --no-prompt azd's
# command is refused, naming each grant and `approve`; on a terminal azd asks (default no), and
# "n" keeps it refused; `approve` (what CI runs after installing) allows them.
if azd_step provision --preview --no-prompt; then fail "a first-seen provider with grants ran unasked"; fi
grep -q "provider \`devcerts\` .* runs here for the first time" "$work/step.out" &&
  grep -q "+ directory certs (read-write)" "$work/step.out" && grep -q "approve --manifest" "$work/step.out" ||
  fail "the first-run refusal does not name the grants and the approve command"
pass "a first-seen provider with grants is refused under --no-prompt, naming its grants and approve"
rc=0
azd_pty_step "Allow?" n provision --preview || rc=$?
((rc != 124 && rc != 0)) || fail "azd provision --preview answered no at the first-run prompt did not stop (exit $rc)"
grep -q "runs here for the first time and asks for" "$work/step.out" || fail "azd did not ask about the first run's grants"
pass "azd asked about the first run's grants at its own prompt; 'no' kept the provider from running"
approve_installed devcerts
azd_step provision --preview --no-prompt || fail "azd provision --preview (devcerts)"
grep -q "devcerts would create 3, modify 0 and delete 0" "$work/step.out" ||
  fail "the devcerts preview does not show 3 resources to create"
[[ ! -e certs/ca.pem ]] || fail "azd provision --preview issued certificates"
azd_step provision --no-prompt || fail "azd provision (devcerts)"
expect_env DEVCERTS_COUNT 2
expect_env DEVCERTS_CA_CERT certs/ca.pem
for cert in api web; do
  openssl verify -CAfile certs/ca.pem "certs/$cert.pem" >"$work/verify.out" 2>&1 ||
    fail "OpenSSL does not verify certs/$cert.pem against certs/ca.pem: $(cat "$work/verify.out")"
done
[[ "$(san certs/api.pem)" == "DNS:localhost,DNS:api.localtest.me,IPAddress:127.0.0.1" ]] ||
  fail "certs/api.pem names $(san certs/api.pem)"
pass "OpenSSL verifies both certificates against the authority; api names $(san certs/api.pem)"
ca_sha="$(openssl x509 -in certs/ca.pem -noout -fingerprint -sha256 | cut -d= -f2 | tr -d : | tr 'A-F' 'a-f')"
expect_env DEVCERTS_CA_SHA256 "$ca_sha"
azd_step provision --no-prompt || fail "second azd provision (devcerts)"
grep -q "no changes to provision" "$work/step.out" || fail "the second devcerts provision was not skipped"
pass "the second devcerts provision was skipped (nothing changed)"
sed -i 's/hosts: \[localhost, api.localtest.me, 127.0.0.1\]/hosts: [localhost, 127.0.0.1]/' azure.yaml
azd_step provision --no-prompt || fail "azd provision after a host was dropped (devcerts)"
[[ "$(san certs/api.pem)" == "DNS:localhost,IPAddress:127.0.0.1" ]] || fail "certs/api.pem still names $(san certs/api.pem)"
expect_env DEVCERTS_CA_SHA256 "$ca_sha"
pass "a dropped host issued api again, under the same authority"
sed -i '/^DEVCERTS_/d' "$env_file"
azd_step env refresh --no-prompt || fail "azd env refresh (devcerts)"
expect_env DEVCERTS_COUNT 2
rc=0
azd_pty_step "Remove the certificate authority and 2 certificates under certs" n down || rc=$?
((rc != 124 && rc != 0)) || fail "azd down (devcerts) answered no did not stop with an error (exit $rc)"
[[ -f certs/ca.pem && -f certs/api-key.pem ]] || fail "azd down answered 'no' removed certificates"
pass "azd down asked before removing the authority; 'no' kept every file (exit $rc)"
azd_step down --force --purge --no-prompt || fail "azd down --force --purge (devcerts)"
left="$(cd certs && find . -mindepth 1 | sort | tr '\n' ' ')"
[[ "$left" == "./README.txt " ]] || fail "azd down left files in certs/: $left"
[[ ! -e "$project/.azure/$env_name/devcerts-state.json" ]] || fail "the devcerts state is still there after azd down"
expect_no_env DEVCERTS_COUNT
pass "azd down --force removed the authority, both certificates and the state"
