# shellcheck shell=bash
# shellcheck disable=SC2154,SC2034,SC2164 # variables set and read across the files the driver
# sources into one shell (scripts/azd-e2e.sh, lib.sh, the scenarios), and its set -e, unseen here
# Scenario 90 of scripts/azd-e2e.sh (sourced by it after the shared setup, in its shell):
# the golden conversation 70 recorded under the real azd (azd provision of azure-storage),
# replayed by `azd-wasm-host test` with Azurite stopped: every answer the same.
#
# Needs 70-azure-storage-azurite: its recording ($golden), its extension folder ($ext), Azurite
# ($azurite_pid, $blob_port: stopped here) and AZURE_STORAGE_KEY (unset here). 80 and 85, if
# they run, run before (they need Azurite).
# Leaves: Azurite stopped, AZURE_STORAGE_KEY unset.
# requires: 70-azure-storage-azurite

dev_cli_on_path # azd-wasm-host on PATH (already there when 30 ran before)

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
