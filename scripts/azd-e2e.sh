#!/usr/bin/env bash
# End-to-end test against the real azd CLI: no Azure account, no network beyond the package
# registries the builds use.
#
#   scripts/azd-e2e.sh [--keep] [--no-build] [SCENARIO...]
#
# 1. builds azd from the Go module proxy (scripts/build-azd.sh; reuses an earlier build): every
#    release the proxy serves (scripts/azd-releases.sh; 1.31.0 and 1.31.2 on 2026-12-06), the
#    newest for every scenario, each older one for the lifecycle (10) in a run of its own after
#    it, so that the day the proxy serves a newer azd the suite runs it and says which contract
#    it spoke (AZD_VERSION=X runs release X alone);
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
#    ComponentizeJS) and examples/go-storage (Go, net/http over wasi:http) likewise, with down
#    answered "n" on a terminal first.
# Prints a transcript with the time of every step; exits non-zero on the first failed check.
#
# Each scenario is a file of its own, scripts/e2e/NN-*.sh, run in the order of its number:
#   10-localfiles-lifecycle             (3.)   20-js-steps-progress-and-errors  (4.)
#   30-author-js-ts-rust                (5.)   40-trust-signed-update           (5., trust)
#   50-author-go                        (5.)   60-go-devcerts                   (5.)
#   70-azure-storage-azurite            (6.)   80-js-storage-azurite            (6.)
#   85-go-storage-azurite               (6.)
#   90-golden-replay-without-azurite    (6.: 70's provision, recorded under azd, replayed)
#   95-author-tool-extension            (5.: the author's tool installed as `azd wasm`, used without Rust)
#   97-watch-install                    (5.: `azd-wasm-host watch --install`, the dev loop, into azd)
# This script does the shared setup (1., 2., the credential server, a fresh HOME), then sources
# each scenario into this one shell: they share its variables, working folder and azd's
# configuration, as when they were one file. What they share is scripts/e2e/lib.sh (the steps,
# the checks, the temporary folder and its cleanup). Each scenario says at its top what it needs
# from an earlier one and what it leaves, and names those it needs on a "# requires:" line.
# SCENARIO arguments (or AZD_E2E_ONLY=SCENARIO,SCENARIO) run only those, after the same setup;
# a scenario is named by its file name without .sh, without its number too, or by its number
# (70-azure-storage-azurite, azure-storage-azurite, 70). A choice that leaves out a scenario
# another chosen one requires is refused before anything is built.
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
e2e_asked=() # the scenarios named on the command line
for arg in "$@"; do
  case "$arg" in
    --keep) keep=1 ;;
    --no-build) install_args+=(--no-build) ;;
    -h | --help)
      sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    -*)
      echo "azd-e2e: unknown argument: $arg" >&2
      exit 2
      ;;
    *) e2e_asked+=("$arg") ;;
  esac
done

# The scenarios, in the order of their numbers, and the ones to run: all, or those asked for.
e2e_all=()
for e2e_file in "$repo_root"/scripts/e2e/[0-9][0-9]-*.sh; do
  e2e_all+=("$(basename "$e2e_file" .sh)")
done
e2e_scenario_named() { # NAME: the scenario NAME names (NN-name, name or NN), or nothing
  local s
  for s in "${e2e_all[@]}"; do
    if [[ "$1" == "$s" || "$1" == "${s#[0-9][0-9]-}" || "$1" == "${s%%-*}" ]]; then
      echo "$s"
      return 0
    fi
  done
}
e2e_chosen=" " # the chosen scenarios, each between spaces; " " when none was named
for arg in "${e2e_asked[@]}"; do
  e2e_name="$(e2e_scenario_named "$arg")"
  if [[ -z "$e2e_name" ]]; then
    echo "azd-e2e: unknown argument: $arg (scenarios: ${e2e_all[*]})" >&2
    exit 2
  fi
  e2e_chosen+="$e2e_name "
done
if [[ -n "${AZD_E2E_ONLY:-}" ]]; then
  IFS=, read -ra e2e_only <<<"$AZD_E2E_ONLY"
  for arg in "${e2e_only[@]}"; do
    [[ -n "$arg" ]] || continue
    e2e_name="$(e2e_scenario_named "$arg")"
    if [[ -z "$e2e_name" ]]; then
      echo "azd-e2e: AZD_E2E_ONLY names no scenario: $arg (scenarios: ${e2e_all[*]})" >&2
      exit 2
    fi
    e2e_chosen+="$e2e_name "
  done
fi
e2e_run=()
for e2e_name in "${e2e_all[@]}"; do
  if [[ "$e2e_chosen" == " " || "$e2e_chosen" == *" $e2e_name "* ]]; then e2e_run+=("$e2e_name"); fi
done
# What a scenario requires (its "# requires:" line) must be a scenario before it, and run too.
e2e_seen=" "
for e2e_name in "${e2e_run[@]}"; do
  # shellcheck disable=SC2013 # one scenario per word
  for e2e_need in $(sed -n 's/^# requires:[[:space:]]*//p' "$repo_root/scripts/e2e/$e2e_name.sh"); do
    if [[ " ${e2e_all[*]} " != *" $e2e_need "* || ! "$e2e_need" < "$e2e_name" ]]; then
      echo "azd-e2e: scripts/e2e/$e2e_name.sh requires $e2e_need, which is no scenario before it" >&2
      exit 2
    fi
    if [[ "$e2e_seen" != *" $e2e_need "* ]]; then
      echo "azd-e2e: scenario $e2e_name works on what $e2e_need leaves (see the top of" \
        "scripts/e2e/$e2e_name.sh): run $e2e_need with it, or every scenario" >&2
      exit 2
    fi
  done
  e2e_seen+="$e2e_name "
done

# The temporary folder, its cleanup, the transcript, the steps and checks, an isolated azd.
# shellcheck source-path=SCRIPTDIR source=e2e/lib.sh
source "$repo_root/scripts/e2e/lib.sh"

# Which azd releases to run: AZD_VERSION alone, else every one the module proxy serves.
older_releases=()
if [[ -z "${AZD_VERSION:-}" ]]; then
  if releases="$("$repo_root/scripts/azd-releases.sh")"; then
    mapfile -t azd_releases <<<"$releases"
  else
    echo "azd-e2e: warning: the Go module proxy lists no azd release; running azd 1.31.2 alone" >&2
    azd_releases=(1.31.2)
  fi
  export AZD_VERSION="${azd_releases[-1]}"
  if [[ " ${e2e_run[*]} " == *" 10-localfiles-lifecycle "* ]]; then
    older_releases=("${azd_releases[@]:0:${#azd_releases[@]}-1}")
  fi
fi

total_start="$(now)"
say "== azd end-to-end test in $work"
[[ "$e2e_chosen" == " " ]] || say "== only the scenarios ${e2e_run[*]}"
start_credential_server
build_and_install
as_a_new_user

for e2e_scenario in "${e2e_run[@]}"; do
  # shellcheck source=/dev/null
  source "$repo_root/scripts/e2e/$e2e_scenario.sh"
done

say ""
say "azd-e2e: all checks passed in $(elapsed "$total_start") s"
say "azd-e2e: $passed passed, 0 failed"

# The older releases the proxy serves, each through the lifecycle, in a run (and a folder) of its own.
# This run passed: its folder (4 GiB: installed extensions, a fresh HOME's build caches) goes
# first, so the older releases' runs never hold both on a small CI disk. --keep keeps it.
((${#older_releases[@]} == 0)) || ((keep)) || release_work
for release in "${older_releases[@]}"; do
  say ""
  say "== azd $release (an older release the module proxy serves): the lifecycle scenario"
  flags=()
  ((keep)) && flags+=(--keep)
  AZD_VERSION="$release" AZD_E2E_ONLY= "$repo_root/scripts/azd-e2e.sh" "${flags[@]}" "${install_args[@]}" 10-localfiles-lifecycle ||
    fail "azd $release: the lifecycle scenario (AZD_VERSION=$release scripts/azd-e2e.sh 10)"
done
