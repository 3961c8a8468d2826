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
# 3. as a new user: a fresh HOME, nothing pre-compiled (empty compile cache), no -e where a
#    default environment exists. On a temporary copy of examples/azd-e2e-project (azure.yaml:
#    infra.provider: localfiles) runs azd env new, azd provision (cold cache, no -e), azd provision
#    --preview, azd provision (nothing changed), azd env refresh, azd down on a pseudo-terminal
#    answered "n" (nothing may change), and azd down --force --purge, and checks what each did to
#    the project folder and to .azure/<env>/.env (array/object outputs must read back as JSON);
# 4. serves scripts/e2e/steps-provider.js (JavaScript) through the same extension
#    (AZD_WASM_HOST_MANIFEST) in a project whose config nests 64 levels deep: 20 provisions must
#    each show the 6 deploy steps in order; then the provider throws, and azd's error must carry
#    the exception's message and name the log file, which must hold the guest's log lines;
# 5. as a provider author, in a folder outside the repository, with the README's commands:
#    azd-wasm-host new → build → run provision → package, then azd extension source add and
#    install of what package wrote, and azd provision with it, for a new JavaScript (ComponentizeJS),
#    TypeScript, Rust and Go provider; then examples/go-devcerts (Go) installed as its own
#    extension: preview, provision (certificates OpenSSL verifies), provision again (skipped), a
#    dropped host, env refresh, down answered "n" on a terminal, down --force;
#    then the Rust one's trust: its installed component changed (refused), an update asking for
#    one more grant (refused under --no-prompt, asked at azd's prompt on a terminal, runs after
#    yes), an update with fewer grants (runs unasked); go-devcerts, first seen with grants, is
#    refused under --no-prompt (naming them and approve), asked at azd's prompt ("n" refuses),
#    then approved as CI approves (the installed binary's `approve`, also run after every other
#    install of a provider with grants);
# 6. packages examples/azure-storage (Rust, the Azure Storage REST API) as its own extension and
#    installs it, then against Azurite on free loopback ports: azd provision --preview, provision,
#    provision again (skipped), env refresh and down --force --purge, each checked against
#    Azurite's own listing (scripts/e2e/azurite-list.py); then examples/js-storage (JavaScript,
#    ComponentizeJS) likewise, with down answered "n" on a terminal first.
# Prints a transcript with the time of every step; exits non-zero on the first failed check.
#
# `azd provision` and `azd down` need a sign-in token; a small credential server on 127.0.0.1
# answers azd's external-auth protocol (AZD_AUTH_ENDPOINT/AZD_AUTH_KEY) with a placeholder.
#
# Options: --keep keeps the temporary folder (it is always kept when a check fails);
# --no-build installs what is already built.
# Environment: AZD_E2E_DEBUG=1 runs azd with --debug (azd's log lands in the transcript) and
# keeps the extension's own stderr, which azd discards, in <tmp>/extension.log;
# AZD_E2E_STEP_TIMEOUT (default 300) bounds each azd command, in seconds;
# AZD_E2E_PROGRESS_RUNS (default 20) is the number of progress-order provisions; HOST_BINARY,
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
azurite_pid=""
cleanup() {
  local rc=$?
  [[ -n "$credential_pid" ]] && kill "$credential_pid" 2>/dev/null
  [[ -n "$azurite_pid" ]] && kill "$azurite_pid" 2>/dev/null
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
OFFLINE_SOURCES=1 PREWARM=0 PRECOMPILE=0 AZD="$azd" "$repo_root/scripts/install-azd-extension.sh" "${install_args[@]}" 2>&1 |
  tee -a "$transcript" >&2 || fail "installing the extension (scripts/install-azd-extension.sh)"
say "== build + install extension in $(elapsed "$t") s"
# localfiles asks for directories and azd's environment and prompt: a provider azd starts for the
# first time runs only once the user allowed that (azd's prompt, or `approve`). CI allows it once
# after installing, as here; the first-run refusal and prompt are shown with go-devcerts below.
"$AZD_CONFIG_DIR/extensions/azd.wasm-host/azd-wasm-host" approve >>"$transcript" 2>&1 ||
  fail "azd-wasm-host approve (localfiles, after install)"
say "== approved the grants of localfiles (azd-wasm-host approve, as CI runs it after install)"
# componentize-qjs for the JavaScript provider below (installed with examples/js-hello).
"$repo_root/scripts/build-examples.sh" js-hello >>"$transcript" 2>&1 || fail "scripts/build-examples.sh js-hello"

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

# From here on azd and the extension run as a new user would: a fresh HOME, so the extension's
# compile cache (~/.cache/azd-wasm-host) and log file start empty, and nothing was pre-compiled
# (the install used PREWARM=0 and PRECOMPILE=0: no code in the cache or in the package, so the
# first start compiles; the new providers below are installed with their precompiled code).
export HOME="$work/home"
mkdir -p "$HOME"
unset AZD_WASM_HOST_CACHE_DIR XDG_CACHE_HOME AZD_WASM_HOST_LOG_FILE
cache_dir="$HOME/.cache/azd-wasm-host"
log_file="$cache_dir/logs/azd-wasm-host.log"

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
  step_seconds="$(elapsed "$t")"
  say "  ($step_seconds s, exit $rc)"
  ((rc == 0)) && passed=$((passed + 1))
  return "$rc"
}

# Runs one azd command on a pseudo-terminal, as a user at a terminal would, and types ANSWER
# (then Enter) when QUESTION appears. Fails if the question never comes.
azd_pty_step() { # QUESTION ANSWER ARGS...
  local question=$1 answer=$2 t rc=0
  shift 2
  say ""
  say "\$ azd $* (on a terminal; answers '$answer' to '$question')"
  t="$(now)"
  # azd turns prompts off by itself when it sees a CI variable (CI, GITHUB_ACTIONS, BUILD_ID, …)
  # or an AI agent; AZD_NON_INTERACTIVE=false is azd's own opt-out, so that this step prompts
  # on a CI runner as it does at a user's terminal.
  AZD_NON_INTERACTIVE=false python3 "$repo_root/scripts/e2e/answer-on-pty.py" --timeout "${AZD_E2E_STEP_TIMEOUT:-300}" \
    --question "$question" --answer "$answer" -- "$azd" "$@" "${debug_flag[@]}" >"$work/step.out" 2>&1 || rc=$?
  sed 's/\x1b\[[0-9;?]*[A-Za-z]//g; s/\r/\n/g' "$work/step.out" | grep -v '^[[:space:]]*$' | sed 's/^/  | /' |
    tee -a "$transcript"
  say "  ($(elapsed "$t") s, exit $rc)"
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
expect_env_json() { # KEY EXPECTED_JSON: an array/object output must read back as that JSON
  local got
  got="$("$azd" env get-value "$1" -e "$env_name" --no-prompt)" || fail "azd env get-value $1"
  say "  \$ azd env get-value $1 → $got"
  python3 -c 'import json, sys; got, want = json.loads(sys.argv[1]), json.loads(sys.argv[2]); sys.exit(0 if got == want else f"{got!r} != {want!r}")' \
    "$got" "$2" || fail "azd env get-value $1 printed '$got', which is not the JSON $2"
  pass "azd env get-value $1 parses as the JSON $2"
}
expect_no_env() {
  if grep -q "^$1=" "$env_file"; then fail "$1 is still in $env_file"; fi
  pass "$1 is gone from $env_file"
}
# Every azd command ends by dropping its connection to the extension once it has its answers; that
# is the normal end of a command, so a log file holding an ERROR line after commands that all
# succeeded would send a user after a failure that never happened.
expect_no_error_logged() { # WHEN
  [[ -s "$log_file" ]] || fail "the log file $log_file is empty or missing $1"
  if grep -n -w ERROR "$log_file" | sed 's/^/  ! /' | tee -a "$transcript" | grep -q .; then
    fail "the log file $log_file has ERROR lines $1, though every command succeeded"
  fi
  grep -q "every request it sent was answered" "$log_file" || fail "the log file does not say how the commands ended"
  pass "no ERROR line in $log_file $1 ($(grep -c 'every request it sent was answered' "$log_file") clean ends logged)"
}
snapshot() { # a digest of everything under the project except azd's own bookkeeping
  (cd "$project" && find . -path ./.azure/"$env_name"/.env -prune -o -type f -print0 |
    sort -z | xargs -0 sha256sum; find . -type d | sort) | sha256sum | cut -d' ' -f1
}

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

# --- a JavaScript provider: progress order, a deep config, a thrown exception -------------------
# scripts/e2e/steps-provider.js, served by the same extension through AZD_WASM_HOST_MANIFEST,
# in a second project whose infra.config nests 64 levels deep (prost's default decoder stops
# at 100 levels of message nesting, about 32 levels of config).
steps="$work/steps"
mkdir -p "$steps/project"
t="$(now)"
"$repo_root/examples/js-hello/node_modules/.bin/componentize-qjs" --sync -w "$repo_root/wit" \
  -n provisioning-provider -j "$repo_root/scripts/e2e/steps-provider.js" --module-root "$repo_root" \
  -o "$steps/e2e-steps.wasm" >"$steps/build.log" 2>&1 || fail "building scripts/e2e/steps-provider.js (see $steps/build.log)"
printf 'name = "e2e-steps"\ncomponent = "e2e-steps.wasm"\n\n[policy]\nmemory_mb = 64\ncall_timeout_secs = 60\n' \
  >"$steps/provider.toml"
python3 - "$steps/project/azure.yaml" <<'PY'
import json, sys
nested = {"leaf": True}
for _ in range(62):
    nested = {"d": nested}
config = {"deep": nested}  # 64 levels: config, deep, 61 × d, and the leaf object
with open(sys.argv[1], "w", encoding="utf-8") as f:
    f.write("name: e2e-steps-project\ninfra:\n  provider: e2e-steps\n  config: " + json.dumps(config) + "\n")
PY
say ""
say "== built the e2e-steps JavaScript provider in $(elapsed "$t") s"
export AZD_WASM_HOST_MANIFEST="$steps/provider.toml"

# 20 provisions, on 4 copies of the project at once (5 each, one after the other): offline,
# each provision spends ≈ 18 s in azd's subscription lookups (see scripts/AZD.md), so in
# parallel they take a quarter of the time, and the busier machine makes a late message likelier.
runs=${AZD_E2E_PROGRESS_RUNS:-20}
workers=4
for ((w = 1; w <= workers; w++)); do
  cp -R "$steps/project" "$steps/project-$w"
  (cd "$steps/project-$w" && "$azd" env new steps --no-prompt >/dev/null 2>&1) || fail "azd env new steps (copy $w)"
done
say ""
say "\$ azd provision --no-prompt × $runs (e2e-steps, $workers project copies at once)"
t="$(now)"
workers_pids=()
for ((w = 1; w <= workers; w++)); do
  (
    cd "$steps/project-$w"
    for ((run = w; run <= runs; run += workers)); do
      started="$(now)"
      rc=0
      timeout "${AZD_E2E_STEP_TIMEOUT:-300}" "$azd" provision --no-prompt "${debug_flag[@]}" >"$steps/run-$run.out" 2>&1 || rc=$?
      echo "$rc $(elapsed "$started")" >"$steps/run-$run.status"
    done
  ) &
  workers_pids+=("$!")
done
# Only the workers: a bare `wait` would also wait for the credential server.
wait "${workers_pids[@]}"
say "  ($(elapsed "$t") s for all $runs)"
in_order=0
for ((run = 1; run <= runs; run++)); do
  read -r rc seconds <"$steps/run-$run.status" || fail "run $run left no status"
  # Non-interactive, azd prints each spinner title on its own line, in the order it shows them.
  shown="$(grep -o 'step [0-9] of 6' "$steps/run-$run.out" | cut -d' ' -f2 | tr -d '\n')"
  say "  run $run (copy $(((run - 1) % workers + 1))): exit $rc in $seconds s; progress shown: $(grep -o 'step [0-9] of 6' "$steps/run-$run.out" | cut -d' ' -f2 | paste -sd' ')"
  if ((rc != 0)); then
    sed 's/^/  | /' "$steps/run-$run.out" | tee -a "$transcript"
    fail "azd provision of e2e-steps failed (run $run of $runs)"
  fi
  [[ "$shown" == "123456" ]] || fail "run $run: deploy progress appeared as '$shown', expected 123456"
  in_order=$((in_order + 1))
  passed=$((passed + 1))
done
say "  the output of run 1:"
sed 's/^/  | /' "$steps/run-1.out" | tee -a "$transcript"
pass "the 6-step deploy's progress appeared in order in $in_order of $runs runs"

project="$steps/project-1"
cd "$project"
env_name=steps
env_file="$project/.azure/$env_name/.env"
expect_env E2E_STEPS 6
expect_env E2E_CONFIG_DEPTH 64
pass "Initialize with a config nested 64 levels deep was answered, and the provider saw all 64"

# A provider that throws: azd must show its message, and the log file the error names must
# hold the guest's own log line.
sed -i 's/^  config: .*/  config: {"fail": "boom: the e2e provider threw on purpose"}/' azure.yaml
rc=0
azd_step provision --no-prompt || rc=$?
((rc != 0)) || fail "a provider that throws made azd provision succeed"
grep -q "boom: the e2e provider threw on purpose" "$work/step.out" ||
  fail "the JavaScript exception's message is not in azd's output"
pass "the JavaScript exception's message reached the user through azd (exit $rc)"
named="$(grep -o 'file://[^ )"]*azd-wasm-host\.log' "$work/step.out" | head -n1)"
[[ -n "$named" ]] || fail "azd's error output names no log file"
named="${named#file://}"
[[ "$named" == "$log_file" ]] || fail "the error names $named, expected the documented $log_file"
grep -q "deploy is about to fail on purpose" "$named" || fail "the log file $named lacks the guest's log line"
grep -q "deploy threw: boom" "$named" || fail "the log file $named lacks the exception's stack"
pass "the error names $named, which holds the guest's log line and the exception's stack"

# A provider that refuses its config at Initialize, under --output json: azd's JSON error must
# carry the provider's words, not only "the last Initialize failed".
sed -i 's/^  config: .*/  config: {"failInitialize": "the e2e config is refused on purpose"}/' azure.yaml
rc=0
azd_step provision --no-prompt --output json || rc=$?
((rc != 0)) || fail "a provider that refuses its config made azd provision --output json succeed"
grep -q "the e2e config is refused on purpose" "$work/step.out" ||
  fail "azd provision --output json does not show the provider's Initialize error"
pass "azd provision --output json shows the provider's Initialize error (exit $rc)"
unset AZD_WASM_HOST_MANIFEST

# --- new providers, made as an author makes them, with the README's commands only ---------------
# In a folder outside the repository: azd-wasm-host new → build → run provision → package →
# azd extension source add / install → azd provision, for a JavaScript and a Rust provider.
# azd-wasm-host is on PATH as it would be after an install (the build the extension bundles).
if [[ "${CARGO_PROFILE:-release}" == dev ]]; then host_sub=debug; else host_sub="${CARGO_PROFILE:-release}"; fi
mkdir -p "$work/bin"
ln -sf "${HOST_BINARY:-$repo_root/target/$host_sub/azd-wasm-host}" "$work/bin/azd-wasm-host"
export PATH="$work/bin:$PATH"

host_step() { # ARGS...: one azd-wasm-host command, echoed and timed like azd_step
  local t rc=0
  say ""
  say "\$ azd-wasm-host $*"
  t="$(now)"
  timeout "${AZD_E2E_STEP_TIMEOUT:-300}" azd-wasm-host "$@" >"$work/step.out" 2>&1 || rc=$?
  sed 's/^/  | /' "$work/step.out" | tee -a "$transcript"
  say "  ($(elapsed "$t") s, exit $rc)"
  ((rc == 0)) && passed=$((passed + 1))
  return "$rc"
}

package_and_install() { # NAME: `package` the provider in this folder, then add its dist/ as the
  # extension source NAME and install local.NAME from it, as the provider's users would
  local name=$1
  host_step package || fail "azd-wasm-host package ($name)"
  azd_step extension source add -n "$name" -t file -l "$PWD/dist/registry.json" --no-prompt ||
    fail "azd extension source add ($name)"
  azd_step extension install "local.$name" --source "$name" --no-prompt || fail "azd extension install local.$name"
  expect_metadata "$name"
}

expect_metadata() { # NAME: azd ran the installed local.NAME's `metadata` command at install and
  # cached what it printed as metadata.json (mode 0600) in the extension's folder: its id, the
  # provider's config schema (provider.toml's [config] schema, in this folder) as
  # configuration.project, and the variables [policy] env grants as environmentVariables
  local id="local.$1" cached="$AZD_CONFIG_DIR/extensions/local.$1/metadata.json"
  [[ -f "$cached" ]] || fail "azd cached no metadata for $id (no $cached)"
  [[ "$(stat -c %a "$cached")" == 600 ]] || fail "azd's cached metadata of $id has mode $(stat -c %a "$cached"), not 600"
  say ""
  say "  azd cached the metadata of $id in $cached (mode $(stat -c %a "$cached")):"
  { cat "$cached"; echo; } | sed 's/^/  | /' | tee -a "$transcript" # azd writes no final newline
  python3 - "$cached" "$id" provider.toml <<'PY' >"$work/metadata.check" 2>&1 ||
import json, sys, tomllib, pathlib
cached, want_id, manifest = sys.argv[1], sys.argv[2], pathlib.Path(sys.argv[3])
doc = json.load(open(cached))
assert doc["schemaVersion"] == "1.0", doc["schemaVersion"]
assert doc["id"] == want_id, f"id {doc['id']!r}, not {want_id!r}"
policy = tomllib.loads(manifest.read_text())
config = doc.get("configuration") or {}
schema = policy.get("config", {}).get("schema")
if schema:
    want = json.loads((manifest.parent / schema).read_text())
    assert config.get("project") == want, f"configuration.project is {config.get('project')!r}, not {schema}"
else:
    assert "project" not in config, "a project schema though provider.toml names none"
names = [v["name"] for v in config.get("environmentVariables") or []]
assert names == policy.get("policy", {}).get("env", []), f"environmentVariables {names}"
print("metadata matches provider.toml")
PY
    fail "azd's cached metadata of $id does not match the provider: $(cat "$work/metadata.check")"
  pass "azd cached the metadata of $id (its config schema and granted variables) at install"
}

approve_installed() { # NAME: the installed local.NAME's `approve`, as CI runs it after installing
  local t rc=0
  say ""
  say "\$ ~/.azd/extensions/local.$1/azd-wasm-host approve"
  t="$(now)"
  "$AZD_CONFIG_DIR/extensions/local.$1/azd-wasm-host" approve >"$work/step.out" 2>&1 || rc=$?
  sed 's/^/  | /' "$work/step.out" | tee -a "$transcript"
  say "  ($(elapsed "$t") s, exit $rc)"
  ((rc == 0)) || fail "azd-wasm-host approve (local.$1)"
  passed=$((passed + 1))
}

author_flow() { # LANGUAGE NAME
  local language=$1 name=$2
  mkdir -p "$work/authors/$language"
  cd "$work/authors/$language"
  say ""
  say "== a new $language provider '$name', from nothing to azd provision (in $PWD)"
  host_step new "$language" "$name" || fail "azd-wasm-host new $language $name"
  cd "$name"
  host_step build || fail "azd-wasm-host build ($language)"
  host_step run provision || fail "azd-wasm-host run provision ($language)"
  grep -q "Hello, world!" "$work/step.out" || fail "run provision of the new $language provider shows no greeting"
  rm -rf .azure # azd makes its own environment below
  package_and_install "$name"
  [[ -d "$AZD_CONFIG_DIR/extensions/local.$name/precompiled" ]] ||
    fail "the installed extension local.$name has no precompiled code"
  project="$PWD"
  env_name=e2e
  env_file="$project/.azure/$env_name/.env"
  azd_step env new "$env_name" --no-prompt || fail "azd env new ($language)"
  azd_step provision --no-prompt || fail "azd provision with the new $language provider"
  expect_env GREETING "Hello, world!"
  expect_env GREETING_LENGTH 13
  pass "a new $language provider went from azd-wasm-host new to azd provision"
  # A config its schema (config.schema.json) refuses never reaches the provider: azd shows
  # each violation's JSON pointer.
  cp azure.yaml "$work/azure.yaml.orig"
  sed -i 's/^    name: world$/    name: 42/' azure.yaml
  if azd_step provision --no-prompt; then fail "azd provision ran the $language provider with a config its schema refuses"; fi
  grep -q 'at "/name": want string, but got number' "$work/step.out" ||
    fail "azd provision did not name the config's violation (/name) for the $language provider"
  cp "$work/azure.yaml.orig" azure.yaml
  pass "the $language provider's config schema refused name: 42 under azd, naming /name"
}
author_flow js todo
author_flow ts todo-ts
author_flow rust todo-rs

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

# --- Go: a new provider made as an author makes it, then examples/go-devcerts ----------------
# (after the trust step, which works in todo-rs's project folder)
author_flow go todo-go

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

# --- a provider that does cloud work: examples/azure-storage against Azurite -------------------
# The Rust provider speaks the Azure Storage REST API; Azurite (pinned, scripts/install-azurite.sh)
# plays the account on free loopback ports. It is installed as its own extension, as its author
# would ship it: `azd-wasm-host package` on the example (its manifest's origins pointed at these
# ports), then azd extension source add / install. (`azd env refresh` starts only an extension
# whose extension.yaml lists the project's infra.provider, so an override of another extension's
# manifest would not do.) azd hands the extension its environment, where the account key is
# (AZURE_STORAGE_KEY, which the manifest grants). After each step, scripts/e2e/azurite-list.py
# reads what Azurite holds, signing its own requests.
storage="$work/storage"
ext="$storage/extension"
mkdir -p "$ext/build"
example="$repo_root/examples/azure-storage"
[[ -f "$example/build/azure-storage.wasm" ]] || "$repo_root/scripts/build-rust-example.sh" >>"$transcript" 2>&1 ||
  fail "scripts/build-rust-example.sh (azure-storage)"
azurite_bin="$("$repo_root/scripts/install-azurite.sh")" || fail "scripts/install-azurite.sh"
read -r blob_port queue_port table_port < <(python3 -c '
import socket
socks = [socket.socket() for _ in range(3)]
for s in socks: s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in socks])')
"$azurite_bin" --silent --inMemoryPersistence --skipApiVersionCheck --disableTelemetry --blobHost 127.0.0.1 --queueHost 127.0.0.1 \
  --tableHost 127.0.0.1 --blobPort "$blob_port" --queuePort "$queue_port" --tablePort "$table_port" \
  </dev/null >"$storage/azurite.log" 2>&1 &
azurite_pid=$!
for port in "$blob_port" "$queue_port" "$table_port"; do
  for _ in $(seq 1 300); do
    (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
    sleep 0.2
  done
  (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null || fail "Azurite did not listen on $port (see $storage/azurite.log)"
done
say ""
say "== Azurite $(basename "$(dirname "$(dirname "$(dirname "$azurite_bin")")")") on 127.0.0.1:$blob_port/$queue_port/$table_port (pid $azurite_pid)"
ports_sed="s/127.0.0.1:10000/127.0.0.1:$blob_port/; s/127.0.0.1:10001/127.0.0.1:$queue_port/; s/127.0.0.1:10002/127.0.0.1:$table_port/"
sed -e "$ports_sed" "$example/provider.toml" >"$ext/provider.toml"
sed -e "$ports_sed" "$example/project/azure.yaml" >"$ext/azure.yaml"
cp "$example/extension.yaml" "$ext/"
cp "$example/build/azure-storage.wasm" "$ext/build/"
cd "$ext"
package_and_install azure-storage
approve_installed azure-storage
mkdir -p "$storage/project"
cp "$ext/azure.yaml" "$storage/project/"
export AZURE_STORAGE_KEY="Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
project="$storage/project"
cd "$project"
env_name=storage
env_file="$project/.azure/$env_name/.env"
expect_azurite() { # STEP EXPECTED_JSON: what Azurite holds after STEP
  local got
  got="$("$repo_root/scripts/e2e/azurite-list.py" "$blob_port" "$queue_port" "$table_port")" ||
    fail "reading Azurite's listing after $1"
  say "  Azurite holds: $got"
  [[ "$got" == "$2" ]] || fail "after $1 Azurite holds $got, expected $2"
  pass "after $1 Azurite holds $2"
}
nothing='{"containers": [], "queues": [], "tables": []}'
everything='{"containers": ["uploads", "web"], "queues": ["jobs"], "tables": ["audit"]}'
azd_step env new "$env_name" --no-prompt || fail "azd env new $env_name"
azd_step provision --preview --no-prompt || fail "azd provision --preview (azure-storage)"
grep -q "4 to create, 0 unchanged in storage account devstoreaccount1" "$work/step.out" ||
  fail "the preview does not show 4 resources to create"
expect_azurite "azd provision --preview" "$nothing"
# Recorded as a golden conversation (`listen --record`, through azd's environment): replayed below.
golden="$storage/golden"
mkdir -p "$golden/tests"
export AZD_WASM_HOST_RECORD="$golden/tests/provision.conversation.jsonl"
azd_step provision --no-prompt || fail "azd provision (azure-storage)"
unset AZD_WASM_HOST_RECORD
expect_azurite "azd provision" "$everything"
expect_env AZURE_STORAGE_ACCOUNT_NAME devstoreaccount1
expect_env AZURE_STORAGE_BLOB_ENDPOINT "http://127.0.0.1:$blob_port/devstoreaccount1"
expect_env AZURE_STORAGE_TABLE_ENDPOINT "http://127.0.0.1:$table_port/devstoreaccount1"
expect_env_json AZURE_STORAGE_CONTAINERS '["web", "uploads"]'
expect_env_json AZURE_STORAGE_QUEUES '["jobs"]'
azd_step provision --no-prompt || fail "second azd provision (azure-storage)"
grep -q "no changes to provision" "$work/step.out" || fail "a second provision with everything there was not skipped"
pass "the second provision found everything there and was skipped"
sed -i '/^AZURE_STORAGE_/d' "$env_file"
azd_step env refresh --no-prompt || fail "azd env refresh (azure-storage)"
expect_env_json AZURE_STORAGE_TABLES '["audit"]'
azd_step down --force --purge --no-prompt || fail "azd down --force --purge (azure-storage)"
expect_azurite "azd down --force --purge" "$nothing"
for key in AZURE_STORAGE_ACCOUNT_NAME AZURE_STORAGE_CONTAINERS AZURE_STORAGE_QUEUES AZURE_STORAGE_TABLES; do
  expect_no_env "$key"
done

# --- the same cloud work in JavaScript: examples/js-storage against the same Azurite -----------
# ComponentizeJS's fetch, Shared Key signed with crypto.subtle, the key read from the variable
# the manifest grants; installed as its own extension, as its author would ship it.
jsstorage="$work/js-storage"
jsext="$jsstorage/extension"
mkdir -p "$jsext/build" "$jsstorage/project"
jsexample="$repo_root/examples/js-storage"
[[ -f "$jsexample/build/js-storage.wasm" ]] || "$repo_root/scripts/build-examples.sh" js-storage >>"$transcript" 2>&1 ||
  fail "scripts/build-examples.sh js-storage"
sed -e "$ports_sed" "$jsexample/provider.toml" >"$jsext/provider.toml"
sed -e "$ports_sed" "$jsexample/project/azure.yaml" >"$jsstorage/project/azure.yaml"
cp "$jsexample/build/js-storage.wasm" "$jsext/build/"
cp "$jsstorage/project/azure.yaml" "$jsext/"
cp "$jsexample/extension.yaml" "$jsext/"
cd "$jsext"
package_and_install storage-js
approve_installed storage-js
cd "$jsstorage/project"
project="$jsstorage/project"
env_file="$project/.azure/$env_name/.env"
azd_step env new "$env_name" --no-prompt || fail "azd env new $env_name (storage-js)"
azd_step provision --preview --no-prompt || fail "azd provision --preview (storage-js)"
grep -q "4 to create, 0 unchanged in storage account devstoreaccount1" "$work/step.out" ||
  fail "the storage-js preview does not show 4 resources to create"
expect_azurite "azd provision --preview (storage-js)" "$nothing"
azd_step provision --no-prompt || fail "azd provision (storage-js)"
expect_azurite "azd provision (storage-js)" "$everything"
expect_env_json AZURE_STORAGE_CONTAINERS '["web", "uploads"]'
expect_env AZURE_STORAGE_QUEUE_ENDPOINT "http://127.0.0.1:$queue_port/devstoreaccount1"
azd_step provision --no-prompt || fail "second azd provision (storage-js)"
grep -q "no changes to provision" "$work/step.out" || fail "a second storage-js provision was not skipped"
pass "the second storage-js provision found everything there and was skipped"
rc=0
azd_pty_step "Delete 4 resources from storage account devstoreaccount1" n down || rc=$?
((rc != 124 && rc != 0)) || fail "azd down (storage-js) answered no did not stop with an error (exit $rc)"
expect_azurite "azd down answered no (storage-js)" "$everything"
azd_step down --force --purge --no-prompt || fail "azd down --force --purge (storage-js)"
expect_azurite "azd down --force --purge (storage-js)" "$nothing"
expect_no_env AZURE_STORAGE_CONTAINERS
pass "a JavaScript provider did the Azure Storage example's cloud work under the real azd"

# --- the golden conversation of that provision, replayed with Azurite gone ---------------------
# azd's side (its requests as the real azd sent them), the answers and the provider's HTTP
# traffic come from the recording; `azd-wasm-host test` plays azd's side again against this
# build. The host's own environment is the replay's (the provider still reads its key there).
kill "$azurite_pid" 2>/dev/null
wait "$azurite_pid" 2>/dev/null || true
azurite_pid=""
(echo >"/dev/tcp/127.0.0.1/$blob_port") 2>/dev/null && fail "Azurite still listens on $blob_port"
grep -q '"kind":"deploy"' "$golden/tests/provision.conversation.jsonl" ||
  fail "the recording under azd holds no deploy request"
sed -e "s#^component = .*#component = \"$ext/build/azure-storage.wasm\"#" "$ext/provider.toml" >"$golden/provider.toml"
host_step test "$golden" || fail "the golden conversation of azd provision (azure-storage) did not replay"
grep -q "replayed conversation" "$work/step.out" || fail "azd-wasm-host test did not replay the conversation"
pass "azd provision's conversation, recorded under azd, replayed with no Azurite: every answer the same"
unset AZURE_STORAGE_KEY

say ""
say "azd-e2e: all checks passed in $(elapsed "$total_start") s"
say "azd-e2e: $passed passed, 0 failed"
