//! The sandbox of one instance: exactly what the manifest policy grants, and
//! nothing else.
//!
//! The `WasiCtxBuilder` default is the starting point: no environment, no
//! preopened directories, no sockets, no name lookup, stdin closed. On top:
//! - each `fs` grant becomes a preopened directory ([`fs`]: opened beneath the
//!   project, never through a symbolic link), read-only or read-write; they
//!   are opened apart ([`open_grants_within`]), since they depend on the project
//!   Initialize names, and an instance may be made before it ([`Seal`]);
//! - each allowlisted environment variable is copied from the host if set
//!   (azd's credentials can never be allowlisted, see the manifest);
//! - TCP connects reach only allowlisted destinations, and name lookups only
//!   allowlisted names ([`net`]); UDP never;
//! - HTTP requests reach only the granted origins, each bounded in time and
//!   in the bytes it reads ([`http`]), over a connection the host opens
//!   itself ([`http_send`]);
//! - a grant by name (a `network` entry or an origin) never reaches this host,
//!   its link or a cloud's metadata service, whatever the name resolves to;
//!   only an address granted literally does ([`reach`]);
//! - guest stdout/stderr go to the host's log within the instance's log
//!   budget ([`output`], `guest_log`);
//! - a path in a granted folder crosses to azd in the host's form, and back
//!   to the guest in its own ([`paths`]).
//!
//! - what a guest may write into its read-write grants is bounded by
//!   `[policy] disk_mb` ([`disk`]: `wasi:filesystem/types` behind a budget),
//!   and the links it may make there by [`links`]: a symbolic link only into
//!   its own folder's subtree, no hard link;
//! - the files azd writes that the read-write grants reach (`.azure/<env>/.env`
//!   and the like) are checked to be plain files before the guest gets them,
//!   after each call, and before each use of azd's environment ([`azd_files`]).

mod azd_files;
mod disk;
mod fs;
mod http;
mod http_send;
mod links;
mod net;
mod output;
mod paths;
mod reach;

use std::sync::Arc;

use wasmtime::component::{HasData, Resource, ResourceTable};
use wasmtime_wasi::WasiCtx;
use wasmtime_wasi::WasiCtxBuilder;
use wasmtime_wasi::filesystem::Descriptor;
use wasmtime_wasi::p2::bindings::filesystem::preopens;

pub(crate) use azd_files::AzdFiles;
pub(crate) use disk::{BoundedFs, BoundedFsData, DiskBudget};
pub use fs::remove_unused_dirs;
pub(crate) use fs::{GrantedDir, Grants, guest_form, open_grants_within};
pub(crate) use http::HttpGate;
pub(crate) use net::{FilteredLookup, GuestLookup, NetworkPolicy};
use output::LogStream;
pub(crate) use output::OutputTail;
pub(crate) use paths::PathMap;

use crate::guest_log::GuestLog;
use crate::intercept::Intercept;
use crate::seal::Seal;
use azd_wasm_host_manifest::Policy;

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
    for name in &policy.env {
        if let Ok(value) = std::env::var(name) {
            // A granted value (an account key, say) is never written into a recording.
            if let Some(t) = traffic {
                t.keep_secret(&value);
            }
            b.env(name, value);
        }
    }
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

/// Links `wasi:filesystem/preopens` to [`GrantedPreopens`] (in place of
/// wasmtime-wasi's, which opens directories by path).
pub(crate) struct PreopensFromGrants;

impl HasData for PreopensFromGrants {
    type Data<'a> = GrantedPreopens<'a>;
}

/// The granted directories, as the guest asks for them.
pub(crate) struct GrantedPreopens<'a> {
    pub(crate) table: &'a mut ResourceTable,
    pub(crate) dirs: &'a [GrantedDir],
    pub(crate) seal: &'a Seal,
}

impl preopens::Host for GrantedPreopens<'_> {
    fn get_directories(&mut self) -> wasmtime::Result<Vec<(Resource<Descriptor>, String)>> {
        if !self.seal.allows("the granted directories") {
            // A trap: the directories cannot be known yet, and a guest that
            // kept an empty list would serve the project without them.
            wasmtime::bail!("the granted directories are {}", Seal::REFUSAL);
        }
        let mut out = Vec::with_capacity(self.dirs.len());
        for granted in self.dirs {
            let fd = self.table.push(Descriptor::Dir(granted.dir.clone()))?;
            out.push((fd, granted.guest_path.clone()));
        }
        Ok(out)
    }
}
