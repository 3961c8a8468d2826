# shellcheck shell=bash
# shellcheck disable=SC2154,SC2034,SC2164 # variables set and read across the files the driver
# sources into one shell (scripts/azd-e2e.sh, lib.sh, the scenarios), and its set -e, unseen here
# Scenario 97 of scripts/azd-e2e.sh (sourced by it after the shared setup, in its shell):
# `azd-wasm-host watch --install`, the author's dev loop, against the real azd. A provider made
# with `new c` whose [build] command copies a "source" component (the C example's) into place:
# watch's first cycle builds, tests, packages and installs it into azd (the source added once,
# the extension installed with --force); azd provision runs it; an edit of the source makes one
# more cycle, which reinstalls it (the installed component is the edited one); SIGINT ends watch
# with exit 0 and its closing line.
#
# Needs: only the shared setup, and examples/c-hello built (scripts/build-examples.sh c-hello).
# Leaves: local.watchme installed; the working folder is its project ($project, $env_name=e2e,
# $env_file).
# requires:

dev_cli_on_path # azd-wasm-host on PATH (already there when 30 ran before)

say ""
say "== azd-wasm-host watch --install: the dev loop into the real azd"
"$repo_root/scripts/build-examples.sh" c-hello >>"$transcript" 2>&1 || fail "scripts/build-examples.sh c-hello"
mkdir -p "$work/authors/watch"
cd "$work/authors/watch"
host_step new c watchme || fail "azd-wasm-host new c watchme"
cd watchme
project="$PWD"
env_name=e2e
env_file="$project/.azure/$env_name/.env"
mkdir -p src
cp "$repo_root/examples/c-hello/build/c-hello.wasm" src/provider.wasm
cp "$repo_root/examples/c-hello/tests/greeting.test.toml" tests/greeting.test.toml
sed -i "s|^language = \"c\"$|command = 'cp src/provider.wasm build/watchme.wasm'|" provider.toml
grep -q "^command = 'cp src/provider.wasm" provider.toml || fail "provider.toml of new c has no language = \"c\" line to replace"

watch_out="$work/watch.out"
watch_err="$work/watch.err"
say ""
say "\$ azd-wasm-host watch --install (in the background)"
AZD="$azd" azd-wasm-host watch --install >"$watch_out" 2>"$watch_err" &
watch_pid=$!

wait_for_cycles() { # N: until watch has printed N cycle lines (bounded)
  local deadline=$(($(date +%s) + ${AZD_E2E_STEP_TIMEOUT:-300}))
  while (($(grep -c -E '^(ok|FAILED):' "$watch_out" || true) < $1)); do
    kill -0 "$watch_pid" 2>/dev/null || {
      sed 's/^/  | /' "$watch_out" "$watch_err" | tee -a "$transcript"
      fail "watch ended before its cycle $1"
    }
    if (($(date +%s) > deadline)); then
      sed 's/^/  | /' "$watch_out" "$watch_err" | tee -a "$transcript"
      fail "watch printed no cycle $1 within ${AZD_E2E_STEP_TIMEOUT:-300} s"
    fi
    sleep 0.2
  done
  grep -E '^(ok|FAILED):' "$watch_out" | sed -n "$1p"
}
installed_component="$AZD_CONFIG_DIR/extensions/local.watchme/build/watchme.wasm"

first="$(wait_for_cycles 1)"
say "  | $first"
[[ "$first" =~ ^ok:\ build\ .*,\ test\ .*\([0-9]+\ passed\),\ package\ .*,\ install\ [0-9.]+\ s$ ]] ||
  fail "watch's first cycle did not build, test, package and install: $first"
cmp -s src/provider.wasm "$installed_component" || fail "azd did not install the built component ($installed_component)"
"$azd" extension list --installed --no-prompt | grep -q "local.watchme" || fail "azd does not list local.watchme as installed"
pass "watch's first cycle built, tested, packaged and installed local.watchme into azd"

azd_step env new "$env_name" --no-prompt || fail "azd env new (watchme)"
azd_step provision --no-prompt || fail "azd provision with the provider watch installed"
expect_env GREETING "Hello, world!"

# An edit of the source: the component with a custom section more (the same provider, other bytes).
python3 - src/provider.wasm <<'PY'
import sys
path = sys.argv[1]
data = open(path, "rb").read()
open(path, "wb").write(data + bytes([0, 5, 4]) + b"edit")
PY
second="$(wait_for_cycles 2)"
say "  | $second"
[[ "$second" =~ ^ok:\ build\ .*install\ [0-9.]+\ s$ ]] || fail "watch's cycle after an edit did not reinstall: $second"
cmp -s src/provider.wasm "$installed_component" || fail "azd's installed component is not the edited one"
pass "an edit made one more cycle, and azd holds the edited component"
azd_step provision --no-prompt || fail "azd provision with the provider watch reinstalled"
expect_env GREETING "Hello, world!"

kill -INT "$watch_pid"
rc=0
wait "$watch_pid" || rc=$?
sed 's/^/  | /' "$watch_out" "$watch_err" | tee -a "$transcript"
((rc == 0)) || fail "watch exited $rc after SIGINT"
[[ "$(tail -n1 "$watch_err")" == "watch: stopped after 2 cycles" ]] ||
  fail "watch's closing line is '$(tail -n1 "$watch_err")'"
pass "SIGINT stopped watch with exit 0 after its 2 cycles"
