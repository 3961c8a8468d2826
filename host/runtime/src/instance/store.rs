//! What a guest's `Store` holds: [`HostState`].
//!
//! The sandbox built from the manifest policy, one field per capability's part
//! (`crate::sandbox`: granted directories and the disk budget, the network
//! rule, the HTTP gate, the memory budget, azd's services as granted, access
//! tokens), the WASI context and resource table they share, and the call in
//! progress (`progress`, `log`: `crate::instance::call`). Each capability's
//! linker line hands its imports their field, so the imports know nothing of
//! this struct.
//!
//! Deadlines and cancellation are not here: a call is a future, and the
//! runtime drops it (see `provider.rs`).

use std::sync::Arc;

use azd_wasm_host_core::CallContext;
use wasmtime::component::ResourceTable;
use wasmtime_wasi::sockets::WasiSocketsCtxView;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use crate::instance::call::CallBinding;
use crate::instance::seal::Seal;
use crate::sandbox::azd::AzdAccess;
use crate::sandbox::azd::AzdView;
use crate::sandbox::credentials::{Credentials, TokensView};
use crate::sandbox::files::FilesView;
use crate::sandbox::memory::InstanceLimits;
use crate::sandbox::network::SocketsView;
use crate::sandbox::{
    AzdFiles, BoundedFs, DiskBudget, GrantedDir, GrantedPreopens, Grants, GuestLookup, HttpGate,
    NetworkPolicy, OutputTail, PathMap, Sandbox,
};

/// The data of one instance's `Store`.
pub(crate) struct HostState {
    wasi: WasiCtx,
    table: ResourceTable,
    dirs: Vec<GrantedDir>,
    /// Closed while the instance is made ahead of its Initialize.
    seal: Seal,
    network: NetworkPolicy,
    http_ctx: wasmtime_wasi_http::WasiHttpCtx,
    /// The HTTP grants; what it refused names the grant in errors.
    pub(crate) http: HttpGate,
    pub(crate) limits: InstanceLimits,
    /// What the guest may still write into its read-write grants.
    disk: DiskBudget,
    /// The call being served (`progress`, `log`).
    pub(crate) call: CallBinding,
    /// azd's services and what the manifest grants of them.
    azd: AzdAccess,
    /// Access tokens for the granted scopes (`azd:credentials`).
    credentials: Credentials,
    /// The guest's last stderr lines.
    stderr_tail: OutputTail,
}

impl HostState {
    pub(crate) fn new(
        provider: Arc<str>,
        sandbox: Sandbox,
        grants: Grants,
        memory_bytes: usize,
        disk_bytes: u64,
        mut azd: AzdAccess,
        credentials: Credentials,
    ) -> Self {
        azd.paths = PathMap::of_grants(&grants.dirs);
        azd.files = grants.azd_files;
        Self {
            wasi: sandbox.wasi,
            table: ResourceTable::new(),
            dirs: grants.dirs,
            seal: sandbox.seal,
            network: sandbox.network,
            http_ctx: wasmtime_wasi_http::WasiHttpCtx::new(),
            http: sandbox.http,
            limits: InstanceLimits::new(memory_bytes),
            disk: DiskBudget::new(disk_bytes),
            stderr_tail: sandbox.stderr_tail,
            call: CallBinding::new(provider, sandbox.log),
            azd,
            credentials,
        }
    }

    /// The guest's last lines on stderr.
    pub(crate) fn stderr_tail(&self) -> Vec<String> {
        self.stderr_tail.lines()
    }

    /// Binds the instance to a call: its progress goes to `ctx`; what the
    /// sandbox refused is counted afresh.
    pub(crate) fn begin_call(&mut self, ctx: &CallContext) {
        self.call.begin(ctx);
        self.limits.take_denied();
        self.http.take_denied();
    }

    /// Unbinds the call.
    pub(crate) fn end_call(&mut self) {
        self.call.end();
    }

    /// Says how much of the guest's output was not logged during `call`, if
    /// any (once per call, however it ended).
    pub(crate) fn report_dropped_output(&self, call: &str) {
        self.call.report_dropped(call);
    }

    /// Grants `grants` to an instance made ahead of its Initialize.
    pub(crate) fn grant(&mut self, grants: Grants) {
        self.azd.paths = PathMap::of_grants(&grants.dirs);
        self.azd.files = grants.azd_files;
        self.dirs = grants.dirs;
    }

    /// azd's files the read-write grants reach.
    pub(crate) fn azd_files(&self) -> &AzdFiles {
        &self.azd.files
    }

    /// The granted folders as the guest and the host name them.
    pub(crate) fn paths(&self) -> &PathMap {
        &self.azd.paths
    }
}

impl FilesView for HostState {
    fn preopens(&mut self) -> GrantedPreopens<'_> {
        GrantedPreopens {
            table: &mut self.table,
            dirs: &self.dirs,
            seal: &self.seal,
        }
    }

    fn filesystem(&mut self) -> BoundedFs<'_> {
        BoundedFs {
            inner: wasmtime_wasi::filesystem::WasiFilesystemCtxView {
                ctx: self.wasi.filesystem(),
                table: &mut self.table,
            },
            budget: &self.disk,
        }
    }
}

impl SocketsView for HostState {
    fn lookup(&mut self) -> GuestLookup<'_> {
        GuestLookup {
            sockets: WasiSocketsCtxView {
                ctx: self.wasi.sockets(),
                table: &mut self.table,
            },
            policy: &mut self.network,
        }
    }
}

impl AzdView for HostState {
    fn azd(&mut self) -> &mut AzdAccess {
        &mut self.azd
    }
}

impl TokensView for HostState {
    fn credentials(&mut self) -> &mut Credentials {
        &mut self.credentials
    }
}

impl WasiView for HostState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl wasmtime_wasi_http::WasiHttpView for HostState {
    fn http(&mut self) -> wasmtime_wasi_http::WasiHttpCtxView<'_> {
        wasmtime_wasi_http::WasiHttpCtxView {
            ctx: &mut self.http_ctx,
            table: &mut self.table,
            hooks: &mut self.http,
        }
    }
}
