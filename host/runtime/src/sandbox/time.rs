//! The time capability, a bound: a guest call runs at most `[policy]
//! call_timeout_secs` ([`bounded`]), and is dropped when its request is
//! cancelled; either stops the guest wherever it is (`crate::instance::failure`
//! says why to azd). The clocks a guest reads are every guest's, not a grant.

use azd_wasm_host_core::CallContext;
use wasmtime::component::Linker;

use super::capability::Capability;
use azd_wasm_host_manifest::Policy;

/// Each call within its deadline.
pub(crate) struct CallTime;

impl Capability for CallTime {
    const KEYS: &'static [&'static str] = &["call_timeout_secs"];
    const INTERFACES: &'static [&'static str] = &[];

    fn reach(_interface: &str, _policy: &Policy) -> &'static str {
        ""
    }
}

/// Nothing to link: [`bounded`] enforces the bound around each call.
pub(super) fn link<T>(_linker: &mut Linker<T>) -> wasmtime::Result<()> {
    Ok(())
}

/// Why the host stopped a guest call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StopReason {
    /// The call's deadline (`call_timeout_secs`) passed.
    Timeout,
    /// The request was cancelled (azd went away).
    Cancelled,
}

/// Runs `call` until it finishes, its deadline passes or `ctx` is cancelled.
/// A call that loses the race is dropped here, which stops the guest.
pub(crate) async fn bounded<T>(
    call: impl Future<Output = T>,
    ctx: &CallContext,
    policy: &Policy,
) -> Result<T, StopReason> {
    // The epoch advances while the guest runs, so a guest that never waits still yields.
    let _ticking = crate::code::ticker::ticking();
    tokio::select! {
        done = call => Ok(done),
        () = ctx.cancel.cancelled() => Err(StopReason::Cancelled),
        () = tokio::time::sleep(policy.call_timeout()) => Err(StopReason::Timeout),
    }
}
