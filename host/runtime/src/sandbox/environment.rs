//! The environment capability: `[policy] env`.
//!
//! Each allowlisted variable is copied from the host's environment, if set,
//! when the instance is made; nothing else is (azd's credentials can never be
//! allowlisted, see the manifest). A granted value is a secret to the
//! recorder: it is never written into a recording. wasmtime-wasi's
//! `wasi:cli/environment` serves what was copied; there is nothing to seal,
//! since the values do not depend on the request.

use std::sync::Arc;

use wasmtime::component::Linker;
use wasmtime_wasi::WasiCtxBuilder;

use super::capability::Capability;
use crate::intercept::Intercept;
use azd_wasm_host_manifest::Policy;

/// Environment variables, by name.
pub(crate) struct Variables;

impl Capability for Variables {
    const KEYS: &'static [&'static str] = &["env"];
    const INTERFACES: &'static [&'static str] = &["wasi:cli/environment"];

    fn reach(_interface: &str, policy: &Policy) -> &'static str {
        if policy.env.is_empty() {
            "environment variables: none granted (empty)"
        } else {
            "environment variables (only allowlisted)"
        }
    }
}

/// Nothing to add: wasmtime-wasi's `wasi:cli/environment` serves the context
/// [`grant`] filled.
pub(super) fn link<T>(_linker: &mut Linker<T>) -> wasmtime::Result<()> {
    Ok(())
}

/// Copies the variables `policy` allowlists into the instance's context.
pub(super) fn grant(policy: &Policy, b: &mut WasiCtxBuilder, traffic: Option<&Arc<dyn Intercept>>) {
    for name in &policy.env {
        if let Ok(value) = std::env::var(name) {
            // A granted value (an account key, say) is never written into a recording.
            if let Some(t) = traffic {
                t.keep_secret(&value);
            }
            b.env(name, value);
        }
    }
}
