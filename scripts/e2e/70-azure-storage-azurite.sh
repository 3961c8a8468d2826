# shellcheck shell=bash
# shellcheck disable=SC2154,SC2034,SC2164 # variables set and read across the files the driver
# sources into one shell (scripts/azd-e2e.sh, lib.sh, the scenarios), and its set -e, unseen here
# Scenario 70 of scripts/azd-e2e.sh (sourced by it after the shared setup, in its shell):
# examples/azure-storage (Rust, the Azure Storage REST API) installed as its own extension
# (local.azure-storage), against Azurite on free loopback ports: provision --preview, provision
# (recorded as a golden conversation, which 90 replays), provision again (skipped), env refresh
# and down --force --purge, each checked against Azurite's own listing
# (scripts/e2e/azurite-list.py, through expect_azurite in scripts/e2e/lib.sh).
#
# Needs: only the shared setup (it builds examples/azure-storage and installs Azurite if needed).
# Leaves, for 80 and 90: Azurite running ($azurite_pid, $blob_port, $queue_port, $table_port),
# $ports_sed (the manifests' ports pointed at it), $nothing and $everything (its listings),
# AZURE_STORAGE_KEY exported, $env_name=storage, the extension folder $ext (provider.toml, and
# build/azure-storage.wasm) and the recording $golden/tests/provision.conversation.jsonl; the
# working folder is $work/storage/project.
# requires:

dev_cli_on_path # azd-wasm-host on PATH (already there when 30 ran before)

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
nothing='{"containers": [], "queues": [], "tables": []}'
everything='{"containers": ["uploads", "web"], "queues": ["jobs"], "tables": ["audit"]}'
azd_step env new "$env_name" --no-prompt || fail "azd env new $env_name"
azd_step provision --preview --no-prompt || fail "azd provision --preview (azure-storage)"
grep -q "4 to create, 0 unchanged in storage account devstoreaccount1" "$work/step.out" ||
  fail "the preview does not show 4 resources to create"
expect_azurite "azd provision --preview" "$nothing"
# Recorded as a golden conversation (`listen --record`, through azd's environment): replayed by
# 90-golden-replay-without-azurite.sh.
golden="$storage/golden"
mkdir -p "$golden/tests"
# The shipped sidecar (what azd starts for the extension) no longer records itself: with
# AZD_WASM_HOST_RECORD set it hands the session to the development CLI named by
# AZD_WASM_HOST_DEV_CLI (else `azd-wasm-host` on PATH), which records. Named here: the same
# development CLI the other steps run (dev_cli_on_path).
export AZD_WASM_HOST_RECORD="$golden/tests/provision.conversation.jsonl"
export AZD_WASM_HOST_DEV_CLI="$work/bin/azd-wasm-host"
azd_step provision --no-prompt || fail "azd provision (azure-storage)"
unset AZD_WASM_HOST_RECORD AZD_WASM_HOST_DEV_CLI
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
