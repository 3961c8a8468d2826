# shellcheck shell=bash
# shellcheck disable=SC2154,SC2034,SC2164 # variables set and read across the files the driver
# sources into one shell (scripts/azd-e2e.sh, lib.sh, the scenarios), and its set -e, unseen here
# Scenario 30 of scripts/azd-e2e.sh (sourced by it after the shared setup, in its shell):
# new JavaScript, TypeScript and Rust providers made as an author makes them, with the README's
# commands only (author_flow in scripts/e2e/lib.sh): azd-wasm-host new, build, run provision,
# package, azd extension source add / install, azd provision; each one's config schema refuses
# a wrong config under azd.
#
# Needs: only the shared setup.
# Leaves: the development CLI as azd-wasm-host on PATH ($work/bin); the signing key `package`
# made and trusted in $AZD_CONFIG_DIR/wasm-host; local.todo, local.todo-ts and local.todo-rs
# installed from the extension sources of the same names; the working folder is todo-rs's
# project ($work/authors/rust/todo-rs: $project, $env_name=e2e, $env_file), provisioned once
# (which recorded the grants it ran with).
# requires:

# --- new providers, made as an author makes them, with the README's commands only ---------------
# In a folder outside the repository: azd-wasm-host new → build → run provision → package →
# azd extension source add / install → azd provision, for a JavaScript and a Rust provider.
dev_cli_on_path
author_flow js todo
author_flow ts todo-ts
author_flow rust todo-rs
