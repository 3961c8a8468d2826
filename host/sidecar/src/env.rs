//! The process environment the binary hands the libraries, read in one
//! place: the runtime and azd's side read no variable of their own (logging's
//! variables are in `logs.rs`, `run`'s in the runner crate).
//!
//! | variable | what it says |
//! |---|---|
//! | `AZD_WASM_HOST_CACHE_DIR` | the compile cache (default: `azd-wasm-host` in the user's cache folder) |
//! | `AZD_WASM_HOST_AZD` | the azd that gives access tokens (default: `azd` on PATH) |
//! | `AZD_ENVIRONMENT` | the azd environment of the command (set by azd) |
//! | `AZD_NO_PROMPT` | `true` under `azd --no-prompt`: questions get their defaults |
//! | `AZD_WASM_HOST_TRAFFIC` | a step's traffic plan from `azd-wasm-host test` (record, replay, faults); read by the development `listen` only |
//! | `AZD_WASM_HOST_DEV_CLI` | the development CLI the packaged sidecar hands a recording to (default: `azd-wasm-host` on PATH) |
//! | `AZD_WASM_HOST_INSTALLED_DIR` | set by a packaged sidecar that handed its session to the development CLI: the installed extension's folder, whose provider is then checked as installed (signature required, consent asked) |
//! | `AZD_WASM_HOST_RECORD_SAFE` | strings a `--record`ed conversation may keep though they look like credentials (one per line) |
//!
//! (`AZD_WASM_HOST_MANIFEST`, `AZD_WASM_HOST_PROVIDER_NAME`, `AZD_SERVER` and
//! `AZD_ACCESS_TOKEN` are read by `listen`'s arguments and azd's client.)

use std::ffi::OsString;
use std::path::PathBuf;

use azd_wasm_host_runtime::{CacheKey, CompileCache};

pub use azd_wasm_host_core::settings::{
    AZD, CACHE_DIR, DEV_CLI, INSTALLED_DIR, RECORD_SAFE, TRAFFIC,
};
/// The azd environment name azd passes an extension.
pub const AZD_ENVIRONMENT: &str = "AZD_ENVIRONMENT";

/// The compile cache: its folder ([`cache_dir`]) and the key its entries
/// are authenticated with, the trust folder's secret. `None` (and every
/// component compiled) when either cannot be had: the debug log says why.
pub fn compile_cache() -> Option<CompileCache> {
    let dir = cache_dir()?;
    let secret = azd_wasm_host_trust::TrustDir::from_env().and_then(|trust| trust.cache_secret());
    match secret {
        Ok(secret) => Some(CompileCache::new(dir, CacheKey::new(&secret))),
        Err(e) => {
            tracing::debug!(error = %azd_wasm_host_core::report::chain(&e), "no secret to authenticate the compile cache with; compiling without it");
            None
        }
    }
}

/// The compile cache's folder: `AZD_WASM_HOST_CACHE_DIR`, else the user's.
pub fn cache_dir() -> Option<PathBuf> {
    match std::env::var_os(CACHE_DIR).filter(|v| !v.is_empty()) {
        Some(dir) => Some(PathBuf::from(dir)),
        None => azd_wasm_host_runtime::user_cache_dir(),
    }
}

/// The azd that gives access tokens: `AZD_WASM_HOST_AZD`, else `azd`.
pub fn azd_executable() -> OsString {
    std::env::var_os(AZD)
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "azd".into())
}

/// The azd environment azd passed, if any.
pub fn azd_environment() -> Option<String> {
    std::env::var(AZD_ENVIRONMENT).ok()
}

/// Whether azd runs under `--no-prompt`.
pub fn no_prompt() -> bool {
    std::env::var("AZD_NO_PROMPT").is_ok_and(|v| v.eq_ignore_ascii_case("true"))
}

/// The development CLI `AZD_WASM_HOST_DEV_CLI` names, if it names one.
pub fn dev_cli() -> Option<PathBuf> {
    std::env::var_os(DEV_CLI)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// The installed extension's folder a packaged sidecar that handed its
/// session over named, if this is such a session.
pub fn installed_dir() -> Option<PathBuf> {
    std::env::var_os(INSTALLED_DIR)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// The traffic plan `azd-wasm-host test` gave this step, if any.
pub fn traffic_plan() -> Option<PathBuf> {
    std::env::var_os(TRAFFIC)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// What `AZD_WASM_HOST_RECORD_SAFE` marks safe in a recording: one string a line.
pub fn record_safe() -> Vec<String> {
    std::env::var(RECORD_SAFE)
        .unwrap_or_default()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect()
}
