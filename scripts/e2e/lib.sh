# shellcheck shell=bash
# shellcheck disable=SC2154,SC2034,SC2164 # variables set and read across the files the driver
# sources into one shell (scripts/azd-e2e.sh, lib.sh, the scenarios), and its set -e, unseen here
# What the scenarios of scripts/azd-e2e.sh share. Sourced once by scripts/azd-e2e.sh, after it
# read its arguments ($repo_root, $keep, $install_args): sourcing makes the temporary folder
# $work, sets the cleanup trap, starts the transcript and isolates azd; the rest are functions:
# the shared setup the driver runs (start_credential_server, build_and_install, as_a_new_user)
# and the steps and checks the scenarios (scripts/e2e/NN-*.sh) use.
#
# Variables the functions read and the scenarios set: $project, $env_name and $env_file (the
# project and azd environment under test, for env_value, expect_env*, snapshot), $blob_port,
# $queue_port and $table_port (expect_azurite). Set by the shared setup: $azd, $cache_dir,
# $log_file, $credential_pid; by the scenarios: $azurite_pid (the cleanup trap stops it).

work="$(mktemp -d "${TMPDIR:-/tmp}/azd-e2e.XXXXXX")"
credential_pid=""
azurite_pid=""
served_pids=() # the folders served over loopback HTTP (serve_folder)
# Stops the servers this run started (each once).
stop_servers() {
  local pid
  [[ -n "$credential_pid" ]] && kill "$credential_pid" 2>/dev/null
  [[ -n "$azurite_pid" ]] && kill "$azurite_pid" 2>/dev/null
  for pid in "${served_pids[@]}"; do kill "$pid" 2>/dev/null; done
  credential_pid="" azurite_pid="" served_pids=()
}
cleanup() {
  local rc=$?
  stop_servers
  if ((keep)) || ((rc != 0)); then
    echo "azd-e2e: kept $work (transcript: $work/transcript.log)" >&2
  else
    rm -rf "$work"
  fi
}
trap cleanup EXIT
# Stops what this run started and empties its folder but for the transcript, once every check
# has passed and before more runs need the disk.
release_work() {
  stop_servers
  # Out of the folder first: the last scenario may have left this shell inside it.
  cd "$repo_root" || cd /
  find "$work" -mindepth 1 -maxdepth 1 ! -name transcript.log -exec rm -rf {} + || true
}

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

# `azd provision` and `azd down` pass azd's login guard first (cmd/middleware/login_guard.go):
# it asks the current credential for a token for https://management.azure.com//.default, and
# nothing else; the provider never uses it. Offline, we answer through azd's external-auth
# protocol (AZD_AUTH_ENDPOINT + AZD_AUTH_KEY, pkg/auth/remote_credential.go), which IDEs use to
# lend azd their sign-in and azd's own functional tests use in playback (test/azdcli/cli.go).
# The server below listens on 127.0.0.1:<free port> and hands out an unsigned placeholder token.
start_credential_server() {
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
}

# Serves the folder DIR over plain HTTP on loopback, as a release's web server would
# (scripts/serve-folder.py; its requests are logged to $work/serve-folder.log); sets $served_url.
serve_folder() { # DIR
  local url_file="$work/served-url.$RANDOM" i
  python3 "$repo_root/scripts/serve-folder.py" "$1" >"$url_file" 2>>"$work/serve-folder.log" &
  served_pids+=($!)
  for ((i = 0; i < 100; i++)); do
    [[ -s "$url_file" ]] && break
    sleep 0.1
  done
  served_url="$(head -n1 "$url_file")"
  [[ "$served_url" == http://127.0.0.1:* ]] || fail "scripts/serve-folder.py did not start (serving $1)"
}

# Builds azd and the extension, installs the extension into $AZD_CONFIG_DIR and allows what
# localfiles asks for; sets $azd.
build_and_install() {
  t="$(now)"
  azd="$("$repo_root/scripts/build-azd.sh" | tail -n1)" || fail "building azd (scripts/build-azd.sh)"
  say "== build azd: $azd ($("$azd" version --no-prompt | head -n1)) in $(elapsed "$t") s"
  # The .env rules are held to godotenv by a differential test on the module version pinned in
  # host/core/tests/godotenv/go.mod: that must be the very godotenv this azd links.
  local linked pinned
  linked="$(go version -m "$azd" | awk '$2 == "github.com/joho/godotenv" { print $3 }')"
  pinned="$(awk '$1 == "require" && $2 == "github.com/joho/godotenv" { print $3 }' "$repo_root/host/core/tests/godotenv/go.mod")"
  [[ -n "$linked" && "$linked" == "$pinned" ]] ||
    fail "azd links godotenv ${linked:-(none)}, but the .env differential test pins ${pinned:-(none)} (host/core/tests/godotenv/go.mod)"
  say "== azd links godotenv $linked, the version the .env differential test runs"

  t="$(now)"
  OFFLINE_SOURCES=1 PREWARM=0 PRECOMPILE=0 AZD="$azd" "$repo_root/scripts/install-azd-extension.sh" "${install_args[@]}" 2>&1 |
    tee -a "$transcript" >&2 || fail "installing the extension (scripts/install-azd-extension.sh)"
  say "== build + install extension in $(elapsed "$t") s"
  # localfiles asks for directories and azd's environment and prompt: a provider azd starts for the
  # first time runs only once the user allowed that (azd's prompt, or `approve`). CI allows it once
  # after installing, as here; the first-run refusal and prompt are shown with go-devcerts
  # (60-go-devcerts.sh).
  "$AZD_CONFIG_DIR/extensions/azd.wasm-host/azd-wasm-host" approve >>"$transcript" 2>&1 ||
    fail "azd-wasm-host approve (localfiles, after install)"
  say "== approved the grants of localfiles (azd-wasm-host approve, as CI runs it after install)"
  # componentize-qjs for the JavaScript provider of 20-js-steps-progress-and-errors.sh (installed
  # with examples/js-hello).
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
}

# From here on azd and the extension run as a new user would: a fresh HOME, so the extension's
# compile cache (~/.cache/azd-wasm-host) and log file start empty, and nothing was pre-compiled
# (the install used PREWARM=0 and PRECOMPILE=0: no code in the cache or in the package, so the
# first start compiles; the new providers of the later scenarios are installed with their
# precompiled code).
as_a_new_user() {
  export HOME="$work/home"
  mkdir -p "$HOME"
  unset AZD_WASM_HOST_CACHE_DIR XDG_CACHE_HOME AZD_WASM_HOST_LOG_FILE
  cache_dir="$HOME/.cache/azd-wasm-host"
  log_file="$cache_dir/logs/azd-wasm-host.log"
}

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

# azd-wasm-host is on PATH as it would be after an install (the build the extension bundles).
# Every scenario that runs it calls this first; only the first call does anything (in a full
# run, the one in 30-author-js-ts-rust.sh, where the single script did it).
dev_cli_on_path() {
  [[ -z "${dev_cli_linked:-}" ]] || return 0
  if [[ "${CARGO_PROFILE:-release}" == dev ]]; then host_sub=debug; else host_sub="${CARGO_PROFILE:-release}"; fi
  mkdir -p "$work/bin"
  ln -sf "${HOST_BINARY:-$repo_root/target/$host_sub/azd-wasm-host}" "$work/bin/azd-wasm-host"
  export PATH="$work/bin:$PATH"
  dev_cli_linked=1
}

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

install_storage_example() { # EXAMPLE NAME: examples/EXAMPLE (built if it is not) staged with
  # Azurite's ports ($ports_sed) as an extension in $work/EXAMPLE/extension, packaged and installed
  # as local.NAME, as its author would ship it; its project goes to $work/EXAMPLE/project.
  local example=$1 name=$2 src="$repo_root/examples/$1" dest="$work/$1"
  mkdir -p "$dest/extension/build" "$dest/project"
  [[ -f "$src/build/$example.wasm" ]] || "$repo_root/scripts/build-examples.sh" "$example" >>"$transcript" 2>&1 ||
    fail "scripts/build-examples.sh $example"
  sed -e "$ports_sed" "$src/provider.toml" >"$dest/extension/provider.toml"
  sed -e "$ports_sed" "$src/project/azure.yaml" >"$dest/project/azure.yaml"
  cp "$src/build/$example.wasm" "$dest/extension/build/"
  cp "$dest/project/azure.yaml" "$src/extension.yaml" "$dest/extension/"
  cd "$dest/extension"
  package_and_install "$name"
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

expect_azurite() { # STEP EXPECTED_JSON: what Azurite holds after STEP
  local got
  got="$("$repo_root/scripts/e2e/azurite-list.py" "$blob_port" "$queue_port" "$table_port")" ||
    fail "reading Azurite's listing after $1"
  say "  Azurite holds: $got"
  [[ "$got" == "$2" ]] || fail "after $1 Azurite holds $got, expected $2"
  pass "after $1 Azurite holds $2"
}
