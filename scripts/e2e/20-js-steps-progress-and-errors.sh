# shellcheck shell=bash
# shellcheck disable=SC2154,SC2034,SC2164 # variables set and read across the files the driver
# sources into one shell (scripts/azd-e2e.sh, lib.sh, the scenarios), and its set -e, unseen here
# Scenario 20 of scripts/azd-e2e.sh (sourced by it after the shared setup, in its shell):
# scripts/e2e/steps-provider.js (JavaScript, built with componentize-qjs from examples/js-hello,
# which the shared setup builds) served by the installed extension through
# AZD_WASM_HOST_MANIFEST: 20 provisions (AZD_E2E_PROGRESS_RUNS) each show the 6 deploy steps in
# order; a config nested 64 levels deep reaches the provider whole; a thrown exception reaches
# the user through azd, with the log file it names holding the guest's log lines; an Initialize
# error shows under --output json.
#
# Needs: only the shared setup (it makes its own projects under $work/steps).
# Leaves: the working folder is $work/steps/project-1 ($project, $env_name=steps, $env_file);
# AZD_WASM_HOST_MANIFEST unset again.
# requires:

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
