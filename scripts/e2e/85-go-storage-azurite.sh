# shellcheck shell=bash
# shellcheck disable=SC2154,SC2034,SC2164 # variables set and read across the files the driver
# sources into one shell (scripts/azd-e2e.sh, lib.sh, the scenarios), and its set -e, unseen here
# Scenario 85 of scripts/azd-e2e.sh (sourced by it after the shared setup, in its shell):
# examples/go-storage (Go: net/http through the SDK's azdhttp transport over wasi:http, Shared Key
# signed with crypto/hmac) installed as its own extension (local.storage-go), against the same
# Azurite: preview, provision, provision again (skipped), env refresh, down answered "n" on a
# terminal (Azurite keeps everything), down --force --purge.
#
# Needs 70-azure-storage-azurite: Azurite running and its ports ($blob_port, $queue_port,
# $table_port, $ports_sed), $nothing and $everything, AZURE_STORAGE_KEY and $env_name=storage.
# Leaves: the working folder is $work/go-storage/project; Azurite still running, empty.
# requires: 70-azure-storage-azurite

dev_cli_on_path # azd-wasm-host on PATH (already there when 30 ran before)

# --- the same cloud work in Go: examples/go-storage against the same Azurite -------------------
# Go's own net/http, sent through the host by the SDK's transport, only to the origins the
# manifest grants; the key read with os.Getenv from the variable the manifest grants. Installed
# as its own extension, as its author would ship it.
install_storage_example go-storage storage-go
gostorage="$work/go-storage"
approve_installed storage-go
cd "$gostorage/project"
project="$gostorage/project"
env_file="$project/.azure/$env_name/.env"
azd_step env new "$env_name" --no-prompt || fail "azd env new $env_name (storage-go)"
azd_step provision --preview --no-prompt || fail "azd provision --preview (storage-go)"
grep -q "4 to create, 0 unchanged in storage account devstoreaccount1" "$work/step.out" ||
  fail "the storage-go preview does not show 4 resources to create"
expect_azurite "azd provision --preview (storage-go)" "$nothing"
azd_step provision --no-prompt || fail "azd provision (storage-go)"
expect_azurite "azd provision (storage-go)" "$everything"
expect_env_json AZURE_STORAGE_CONTAINERS '["web", "uploads"]'
expect_env_json AZURE_STORAGE_TABLES '["audit"]'
expect_env AZURE_STORAGE_QUEUE_ENDPOINT "http://127.0.0.1:$queue_port/devstoreaccount1"
azd_step provision --no-prompt || fail "second azd provision (storage-go)"
grep -q "no changes to provision" "$work/step.out" || fail "a second storage-go provision was not skipped"
pass "the second storage-go provision found everything there and was skipped"
azd_step env refresh --no-prompt || fail "azd env refresh (storage-go)"
expect_env_json AZURE_STORAGE_QUEUES '["jobs"]'
rc=0
azd_pty_step "Delete 4 resources from storage account devstoreaccount1" n down || rc=$?
((rc != 124 && rc != 0)) || fail "azd down (storage-go) answered no did not stop with an error (exit $rc)"
expect_azurite "azd down answered no (storage-go)" "$everything"
azd_step down --force --purge --no-prompt || fail "azd down --force --purge (storage-go)"
expect_azurite "azd down --force --purge (storage-go)" "$nothing"
expect_no_env AZURE_STORAGE_CONTAINERS
pass "a Go provider did the Azure Storage example's cloud work under the real azd, through net/http"
