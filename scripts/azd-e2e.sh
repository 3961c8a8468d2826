#!/usr/bin/env bash
# End-to-end test against the real azd CLI: no Azure account, no network beyond the package
# registries the builds use.
#
#   scripts/azd-e2e.sh [--keep] [--no-build]
#
# 1. builds azd 1.31.2 from the Go module proxy (scripts/build-azd.sh; reuses an earlier build);
# 2. builds azd-wasm-host and the python-localfiles component and installs them as the extension
#    azd.wasm-host into an isolated AZD_CONFIG_DIR through a local extension source
#    (scripts/install-azd-extension.sh);
# 3. on a temporary copy of examples/azd-e2e-project (azure.yaml: infra.provider: localfiles) runs
#    azd env new, azd provision, azd provision --preview, azd provision (nothing changed),
#    azd env refresh and azd down --force --purge, all with --no-prompt, and checks what each did
#    to the project folder and to .azure/<env>/.env.
# Prints a transcript with the time of every step; exits non-zero on the first failed check.
#
# `azd provision` and `azd down` need a sign-in token; a small credential server on 127.0.0.1
# answers azd's external-auth protocol (AZD_AUTH_ENDPOINT/AZD_AUTH_KEY) with a placeholder.
#
# Options: --keep keeps the temporary folder (it is always kept when a check fails);
# --no-build installs what is already built.
# Environment: AZD_E2E_DEBUG=1 runs azd with --debug (azd's log lands in the transcript) and
# keeps the extension's own stderr, which azd discards, in <tmp>/extension.log;
# AZD_E2E_STEP_TIMEOUT (default 300) bounds each azd command, in seconds; HOST_BINARY,
# CARGO_PROFILE=dev, EXAMPLE_DIR go through to scripts/install-azd-extension.sh.
#
# What azd needs and why (with azd source paths): scripts/AZD.md.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
keep=0
install_args=()
for arg in "$@"; do
  case "$arg" in
    --keep) keep=1 ;;
    --no-build) install_args+=(--no-build) ;;
    -h | --help)
      sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    *)
      echo "azd-e2e: unknown argument: $arg" >&2
      exit 2
      ;;
  esac
done

work="$(mktemp -d "${TMPDIR:-/tmp}/azd-e2e.XXXXXX")"
credential_pid=""
cleanup() {
  local rc=$?
  [[ -n "$credential_pid" ]] && kill "$credential_pid" 2>/dev/null
  if ((keep)) || ((rc != 0)); then
    echo "azd-e2e: kept $work (transcript: $work/transcript.log)" >&2
  else
    rm -rf "$work"
  fi
}
trap cleanup EXIT

transcript="$work/transcript.log"
: >"$transcript"
say() { echo "$*" | tee -a "$transcript"; }
now() { date +%s.%N; }
elapsed() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.2f}')" "$1" "$(now)"; }
passed=0
fail() {
  say "FAIL: $*"
  if [[ -s "${work:-}/extension.log" ]]; then
    say "-- extension log (last 40 lines of $work/extension.log):"
    tail -n 40 "$work/extension.log" | sed 's/\x1b\[[0-9;]*m//g; s/^/  ! /' | tee -a "$transcript"
  fi
  say "azd-e2e: $passed passed, 1 failed"
  exit 1
}
pass() {
  passed=$((passed + 1))
  say "  ok: $*"
}

# Isolated azd: its own configuration (extensions, sources), no telemetry, no update check,
# and the extension's compiled-component cache in the temporary folder (cold on the first call).
export AZD_CONFIG_DIR="$work/azd-config"
export AZURE_DEV_COLLECT_TELEMETRY=no
export AZD_SKIP_UPDATE_CHECK=true
export AZD_WASM_HOST_CACHE_DIR="$work/wasm-cache"
unset AZD_WASM_HOST_MANIFEST AZURE_ENV_NAME AZURE_SUBSCRIPTION_ID AZURE_LOCATION
debug_flag=()
[[ "${AZD_E2E_DEBUG:-}" == 1 ]] && debug_flag=(--debug)

total_start="$(now)"
say "== azd end-to-end test in $work"

# `azd provision` and `azd down` pass azd's login guard first (cmd/middleware/login_guard.go):
# it asks the current credential for a token for https://management.azure.com//.default, and
# nothing else; the provider never uses it. Offline, we answer through azd's external-auth
# protocol (AZD_AUTH_ENDPOINT + AZD_AUTH_KEY, pkg/auth/remote_credential.go), which IDEs use to
# lend azd their sign-in and azd's own functional tests use in playback (test/azdcli/cli.go).
# The server below listens on 127.0.0.1:<free port> and hands out an unsigned placeholder token.
mkfifo "$work/credential-port"
AZD_AUTH_KEY="$(python3 -c 'import secrets; print(secrets.token_hex(16))')"
python3 - "$AZD_AUTH_KEY" "$work/credential-port" 2>>"$work/credential-server.log" <<'PY' &
import base64, datetime, json, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

key, port_fifo = sys.argv[1], sys.argv[2]

def b64(obj):
    return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()

class Handler(BaseHTTPRequestHandler):
    def log_message(self, fmt, *args):
        sys.stderr.write("credential-server: " + fmt % args + "\n")

    def do_POST(self):
        if self.path.split("?")[0] != "/token":
            self.send_error(404)
            return
        if self.headers.get("Authorization") != f"Bearer {key}":
            self.send_error(401)
            return
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        sys.stderr.write(f"credential-server: token asked for scopes {body.get('scopes')}\n")
        expires = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=1)
        claims = {"oid": "offline-e2e", "tid": body.get("tenantId") or "offline-e2e", "exp": int(expires.timestamp())}
        answer = json.dumps({
            "status": "success",
            "token": b64({"typ": "JWT", "alg": "none"}) + "." + b64(claims) + ".",
            "expiresOn": expires.strftime("%Y-%m-%dT%H:%M:%SZ"),
        }).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(port_fifo, "w") as f:
    f.write(f"{server.server_address[1]}\n")
server.serve_forever()
PY
credential_pid=$!
read -r credential_port <"$work/credential-port"
export AZD_AUTH_ENDPOINT="http://127.0.0.1:$credential_port" AZD_AUTH_KEY
say "== credential server on $AZD_AUTH_ENDPOINT (pid $credential_pid)"

t="$(now)"
azd="$("$repo_root/scripts/build-azd.sh" | tail -n1)" || fail "building azd (scripts/build-azd.sh)"
say "== build azd: $azd ($("$azd" version --no-prompt | head -n1)) in $(elapsed "$t") s"

t="$(now)"
OFFLINE_SOURCES=1 AZD="$azd" "$repo_root/scripts/install-azd-extension.sh" "${install_args[@]}" 2>&1 |
  tee -a "$transcript" >&2 || fail "installing the extension (scripts/install-azd-extension.sh)"
say "== build + install extension in $(elapsed "$t") s"

# azd throws away what an extension started for `listen` writes to stdout and stderr
# (pkg/extensions/extension.go: an output.DynamicMultiWriter with no writer). With
# AZD_E2E_DEBUG=1 a shim in front of the installed binary keeps its stderr (its debug log,
# since azd passes --debug on) in $work/extension.log, shown when a step fails.
if [[ "${AZD_E2E_DEBUG:-}" == 1 ]]; then
  ext_dir="$AZD_CONFIG_DIR/extensions/azd.wasm-host"
  mv "$ext_dir/azd-wasm-host" "$ext_dir/azd-wasm-host.real"
  printf '#!/bin/sh\nexec "%s" "$@" 2>>"%s"\n' "$ext_dir/azd-wasm-host.real" "$work/extension.log" \
    >"$ext_dir/azd-wasm-host"
  chmod +x "$ext_dir/azd-wasm-host"
  say "== extension stderr goes to $work/extension.log"
fi

project="$work/project"
cp -R "$repo_root/examples/azd-e2e-project" "$project"
cd "$project"
env_name=e2e
env_file="$project/.azure/$env_name/.env"
root="$project/localinfra"

# Runs one azd command, echoing it and its output into the transcript, and timing it.
azd_step() {
  local t rc=0
  say ""
  say "\$ azd $*"
  t="$(now)"
  # Bounded, so that a hung extension fails the run instead of stalling CI.
  timeout "${AZD_E2E_STEP_TIMEOUT:-300}" "$azd" "$@" "${debug_flag[@]}" >"$work/step.out" 2>&1 || rc=$?
  sed 's/^/  | /' "$work/step.out" | tee -a "$transcript"
  say "  ($(elapsed "$t") s, exit $rc)"
  ((rc == 0)) && passed=$((passed + 1))
  return "$rc"
}

env_value() { # the value azd reads for KEY from the environment, or "<unset>"
  "$azd" env get-values -e "$env_name" --output json --no-prompt |
    python3 -c 'import json, sys; print(json.load(sys.stdin).get(sys.argv[1], "<unset>"))' "$1"
}
expect_env() { # KEY EXPECTED
  local got
  got="$(env_value "$1")"
  [[ "$got" == "$2" ]] || fail "$1 in the azd environment is '$got', expected '$2'"
  grep -q "^$1=" "$env_file" || fail "$1 is not written in $env_file"
  pass "$1=$2 (in $env_file)"
}
expect_env_json() { # KEY EXPECTED_JSON: the JSON value of an array/object output, as azd wrote it
  # azd 1.31.2 writes an extension's array/object output through json.Marshal of the JSON *text*
  # it received, so .env holds a JSON string literal of the JSON (pkg/infra/provisioning/manager.go,
  # UpdateEnvironment), and its own .env reader then drops the last quote. Read the line as
  # written and decode until it is no longer a string, so this holds with and without that.
  python3 - "$env_file" "$1" "$2" <<'PY' || fail "$1 in $env_file does not hold $2"
import json, re, sys
path, key, expected = sys.argv[1:]
line = next((l for l in open(path, encoding="utf-8").read().splitlines() if l.startswith(key + "=")), None)
if line is None:
    sys.exit(f"{key} is not in {path}")
raw = line[len(key) + 1:]
if raw.startswith('"') and raw.endswith('"'):
    raw = re.sub(r'\\(.)', lambda m: "\n" if m.group(1) == "n" else m.group(1), raw[1:-1])
value = raw
while isinstance(value, str):
    value = json.loads(value)
if value != json.loads(expected):
    sys.exit(f"{key}: {value!r} != {expected}")
print(f"  ({key} as written: {line[len(key) + 1:]})")
PY
  pass "$1 holds $2 (in $env_file)"
}
expect_no_env() {
  if grep -q "^$1=" "$env_file"; then fail "$1 is still in $env_file"; fi
  pass "$1 is gone from $env_file"
}
snapshot() { # a digest of everything under the project except azd's own bookkeeping
  (cd "$project" && find . -path ./.azure/"$env_name"/.env -prune -o -type f -print0 |
    sort -z | xargs -0 sha256sum; find . -type d | sort) | sha256sum | cut -d' ' -f1
}

azd_step env new "$env_name" --no-prompt || fail "azd env new"
[[ -f "$env_file" ]] || fail "azd env new did not create $env_file"

# --- provision ---------------------------------------------------------------------------------
azd_step provision -e "$env_name" --no-prompt || fail "azd provision"
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

# --- down: removes everything it made, and the outputs ------------------------------------------
azd_step down --force --purge -e "$env_name" --no-prompt || fail "azd down --force --purge"
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

say ""
say "azd-e2e: all checks passed in $(elapsed "$total_start") s"
say "azd-e2e: $passed passed, 0 failed"
