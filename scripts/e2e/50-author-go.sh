# shellcheck shell=bash
# shellcheck disable=SC2154,SC2034,SC2164 # variables set and read across the files the driver
# sources into one shell (scripts/azd-e2e.sh, lib.sh, the scenarios), and its set -e, unseen here
# Scenario 50 of scripts/azd-e2e.sh (sourced by it after the shared setup, in its shell):
# a new Go provider made as an author makes it (author_flow in scripts/e2e/lib.sh), from
# azd-wasm-host new to azd provision, and its config schema under azd.
#
# Needs: only the shared setup. It runs after 40 because 40 works in todo-rs's project folder
# and author_flow moves to a folder of its own.
# Leaves: local.todo-go installed; the working folder is its project ($project, $env_name=e2e,
# $env_file).
# requires:

dev_cli_on_path # azd-wasm-host on PATH (already there when 30 ran before)

# --- Go: a new provider made as an author makes it, then examples/go-devcerts ----------------
# (after the trust step, which works in todo-rs's project folder)
author_flow go todo-go
