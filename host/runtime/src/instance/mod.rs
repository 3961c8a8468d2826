//! A provider's instances and their calls: the [`Provider`] seam over a
//! component.
//!
//! - `factory` and `template`: what every Initialize makes a fresh instance
//!   from (the compiled world, the policy, azd's services), and `ahead`, the
//!   spare instance made while azd is busy, sealed (`seal`) until its
//!   Initialize;
//! - `provider`: [`WasmProvider`], one instance serving one call at a time;
//! - `store`: what an instance's `Store` holds: the sandbox
//!   (`crate::sandbox`, one part per capability) and the call being served
//!   (`call`: progress and the guest's log, within `guest_log`'s budget);
//! - `failure`: every way a call ends without an answer, as azd's error.
//!
//! [`Provider`]: azd_wasm_host_core::Provider
//! [`WasmProvider`]: provider::WasmProvider

pub(crate) mod ahead;
pub(crate) mod call;
pub(crate) mod factory;
pub(crate) mod failure;
pub(crate) mod guest_log;
pub(crate) mod provider;
pub(crate) mod seal;
pub(crate) mod store;
pub(crate) mod template;
