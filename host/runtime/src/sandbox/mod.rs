//! The sandbox of one instance: exactly what the manifest policy grants, and
//! nothing else.
//!
//! The `WasiCtxBuilder` default is the starting point: no environment, no
//! preopened directories, no sockets, no name lookup, stdin closed. Each
//! thing a policy can grant is a capability ([`capability`]) in a module of
//! its own, which owns its `[policy]` fields, its part of the store, its
//! linker line, what it does before Initialize (the seal) and its words in
//! `check`:
//! - [`files`]: `fs` and `disk_mb`, directories opened beneath the project,
//!   writes within a budget;
//! - [`environment`]: `env`, allowlisted variables copied from the host;
//! - [`network`]: `network`, TCP connects only to allowlisted destinations and
//!   name lookups only of allowlisted names; UDP never;
//! - [`http`]: `[policy.http]`, requests only to the granted origins, each
//!   bounded in time and in the bytes it reads, over a connection the host
//!   opens itself;
//! - [`credentials`]: `[policy.azd] credential_scopes`, access tokens;
//! - [`azd`]: `[policy.azd] environment` and `prompt`, azd's services;
//! - [`memory`] and [`time`]: the bounds `memory_mb` and `call_timeout_secs`.
//!
//! A grant by name (a `network` entry or an origin) never reaches this host,
//! its link or a cloud's metadata service, whatever the name resolves to; only
//! an address granted literally does ([`reach`]). Guest stdout/stderr go to
//! the host's log within the instance's log budget ([`output`], not a grant).

pub(crate) mod azd;
mod capability;
pub(crate) mod credentials;
mod environment;
pub(crate) mod files;
pub(crate) mod http;
pub(crate) mod memory;
pub(crate) mod network;
mod output;
mod reach;
mod time;

use std::sync::Arc;

use wasmtime_wasi::WasiCtx;
use wasmtime_wasi::WasiCtxBuilder;

pub use files::remove_unused_dirs;
pub(crate) use files::{
    AzdFiles, BoundedFs, DiskBudget, GrantedDir, GrantedPreopens, Grants, PathMap, guest_form,
    open_grants_within,
};
pub(crate) use http::HttpGate;
pub(crate) use network::{GuestLookup, NetworkPolicy};
use output::LogStream;
pub(crate) use output::OutputTail;
pub(crate) use time::{StopReason, bounded};

use crate::instance::guest_log::GuestLog;
use crate::instance::seal::Seal;
use crate::intercept::Intercept;
use azd_wasm_host_manifest::Policy;
use capability::Entry;

/// Names each capability once, as `module::Type`: [`CAPABILITIES`] (what
/// `check` words imports through, and the tests hold to `Policy::fields`) and
/// [`link_all`] (each module's `link`) both come from the one list.
macro_rules! capabilities {
    ($($module:ident :: $capability:ident),* $(,)?) => {
        /// Every capability, in the order consent lists their fields.
        pub(crate) const CAPABILITIES: &[Entry] =
            &[$(Entry::of::<$module::$capability>(stringify!($module))),*];

        /// Puts every capability's host side in `linker`, each over
        /// wasmtime-wasi's where it serves one of WASI's interfaces.
        pub(crate) fn link_all<T: Parts>(
            linker: &mut wasmtime::component::Linker<T>,
        ) -> wasmtime::Result<()> {
            $(
                $module::link(linker).map_err(|e| {
                    e.context(concat!("the ", stringify!($module), " capability"))
                })?;
            )*
            Ok(())
        }
    };
}

capabilities!(
    files::Files,
    environment::Variables,
    network::Sockets,
    http::Http,
    credentials::Tokens,
    azd::Services,
    memory::Memory,
    time::CallTime,
);

/// What a store gives the capabilities: each its own part, through the view
/// trait of its module.
pub(crate) trait Parts:
    files::FilesView
    + network::SocketsView
    + credentials::TokensView
    + azd::AzdView
    + wasmtime_wasi_http::WasiHttpView
    + 'static
{
}

impl<T> Parts for T where
    T: files::FilesView
        + network::SocketsView
        + credentials::TokensView
        + azd::AzdView
        + wasmtime_wasi_http::WasiHttpView
        + 'static
{
}

/// What an import of `interface` (a name without its version) lets the guest
/// do under `policy`, when a capability serves it.
pub(crate) fn reach(interface: &str, policy: &Policy) -> Option<&'static str> {
    CAPABILITIES.iter().find_map(|c| c.reach(interface, policy))
}

/// Everything the sandbox of one instance holds.
pub(crate) struct Sandbox {
    /// The WASI context: environment, stdio, sockets.
    pub(crate) wasi: WasiCtx,
    /// Closed while the instance is made ahead of its Initialize.
    pub(crate) seal: Seal,
    /// The network allowlist (consulted by [`GuestLookup`] and the connect check).
    pub(crate) network: NetworkPolicy,
    /// The guest's last stderr lines.
    pub(crate) stderr_tail: OutputTail,
    /// The HTTP grants (the hook of `wasi:http/outgoing-handler`).
    pub(crate) http: HttpGate,
    /// What the instance may still write to the log (stdout, stderr, `log`).
    pub(crate) log: GuestLog,
}

/// Builds the sandbox of an instance, but for its granted directories, under
/// `seal`; its stdout and stderr spend `log`.
pub(crate) fn build(
    policy: &Policy,
    provider: &Arc<str>,
    traffic: Option<&Arc<dyn Intercept>>,
    seal: &Seal,
    log: &GuestLog,
) -> Sandbox {
    let mut b = WasiCtxBuilder::new();
    let stderr_tail = OutputTail::default();
    b.stdout(LogStream::new(
        provider.clone(),
        "stdout",
        log.clone(),
        None,
    ));
    b.stderr(LogStream::new(
        provider.clone(),
        "stderr",
        log.clone(),
        Some(stderr_tail.clone()),
    ));
    environment::grant(policy, &mut b, traffic);
    let network = NetworkPolicy::new(&policy.network, seal.clone());
    network.configure(&mut b);
    Sandbox {
        wasi: b.build(),
        seal: seal.clone(),
        network,
        stderr_tail,
        http: HttpGate::new(policy, provider.clone(), traffic.cloned(), seal.clone()),
        log: log.clone(),
    }
}
