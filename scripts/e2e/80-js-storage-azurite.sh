# shellcheck shell=bash
# shellcheck disable=SC2154,SC2034,SC2164 # variables set and read across the files the driver
# sources into one shell (scripts/azd-e2e.sh, lib.sh, the scenarios), and its set -e, unseen here
# Scenario 80 of scripts/azd-e2e.sh (sourced by it after the shared setup, in its shell):
# examples/js-storage (JavaScript, ComponentizeJS: fetch, Shared Key signed with crypto.subtle)
# installed as its own extension (local.storage-js), against the same Azurite: preview,
# provision, provision again (skipped), down answered "n" on a terminal (Azurite keeps
# everything), down --force --purge.
#
# Needs 70-azure-storage-azurite: Azurite running and its ports ($blob_port, $queue_port,
# $table_port, $ports_sed), $nothing and $everything, AZURE_STORAGE_KEY and $env_name=storage.
# Leaves: the working folder is $work/js-storage/project; Azurite still running.
# requires: 70-azure-storage-azurite

dev_cli_on_path # azd-wasm-host on PATH (already there when 30 ran before)

# --- the same cloud work in JavaScript: examples/js-storage against the same Azurite -----------
# ComponentizeJS's fetch, Shared Key signed with crypto.subtle, the key read from the variable
# the manifest grants; installed as its own extension, as its author would ship it.
install_storage_example js-storage storage-js
jsstorage="$work/js-storage"
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
