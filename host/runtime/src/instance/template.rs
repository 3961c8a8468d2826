//! [`Template`]: what every instance of one provider is made from (the
//! factory that makes them is in `factory.rs`).
//!
//! The compiled component may not exist yet: `listen` registers with azd and
//! signals Ready in milliseconds, while the component compiles on a blocking
//! thread ([`Compiling`]). An instance waits for the compile only when azd
//! sends its first Initialize (and stops waiting if azd goes away). The azd
//! environment the command runs in is settled once, on first use
//! ([`CommandEnvironment`]).

use std::sync::Arc;

use azd_wasm_host_core::{
    AzdServices, CallContext, EnvironmentName, ErrorCode, ProviderError, TokenSource,
};
use tokio::sync::watch;
use wasmtime::Store;
use wasmtime::component::Component;

use crate::bindings::ProvisioningProviderPre;
use crate::instance::guest_log::{GuestLog, ProcessLog};
use crate::instance::seal::Seal;
use crate::instance::store::HostState;
use crate::intercept::Intercept;
use crate::options::RuntimeOptions;
use crate::sandbox::azd::{AzdAccess, CommandEnvironment};
use crate::sandbox::credentials::Credentials;
use crate::sandbox::memory::MAX_GUEST_TRANSFER;
use crate::sandbox::{self, AzdFiles, Grants, PathMap};
use azd_wasm_host_manifest::ConfigSchema;
use azd_wasm_host_manifest::{FsGrant, Policy};

/// A compiled, validated component.
pub(crate) struct Compiled {
    pub(crate) pre: ProvisioningProviderPre<HostState>,
    pub(crate) component: Component,
}

/// The state of the compile: not finished, done, or failed (why).
type CompileState = Option<Result<Arc<Compiled>, Arc<CompileError>>>;

/// Why the compile (or the load of shipped code) failed.
#[derive(Debug)]
pub(crate) struct CompileError {
    /// The package's precompiled code is not the code that was signed or
    /// bound: the provider is refused as untrusted, not as invalid.
    pub(crate) untrusted: bool,
    pub(crate) message: String,
}

/// The receiving end of a compile that may still be running.
#[derive(Clone)]
pub(crate) struct Compiling(watch::Receiver<CompileState>);

/// The sending end: the compile reports here when it is done.
pub(crate) struct CompileDone(watch::Sender<CompileState>);

impl Compiling {
    /// A compile that has not finished yet, and where it reports.
    pub(crate) fn pending() -> (Self, CompileDone) {
        let (tx, rx) = watch::channel(None);
        (Self(rx), CompileDone(tx))
    }

    /// A compile that is already done.
    pub(crate) fn done(compiled: Compiled) -> Self {
        Self(watch::channel(Some(Ok(Arc::new(compiled)))).1)
    }

    /// Waits for the compile, unless `ctx` is cancelled first.
    async fn wait(&self, name: &str, ctx: &CallContext) -> Result<Arc<Compiled>, ProviderError> {
        let mut rx = self.0.clone();
        let state = tokio::select! {
            r = rx.wait_for(Option::is_some) => r.map(|s| s.clone()),
            () = ctx.cancel.cancelled() => {
                return Err(ProviderError::host(
                    ErrorCode::ProviderCancelled,
                    format!("provider `{name}`: azd went away while the component was compiling"),
                ));
            }
        };
        match state {
            Ok(Some(Ok(compiled))) => Ok(compiled),
            Ok(Some(Err(why))) if why.untrusted => Err(ProviderError::host(
                ErrorCode::UntrustedProvider,
                format!("provider `{name}` is not run: {}", why.message),
            )
            .with_suggestion(
                "its package was changed after it was made; reinstall it from its publisher",
            )),
            Ok(Some(Err(why))) => Err(ProviderError::host(
                ErrorCode::InvalidComponent,
                format!("provider `{name}` cannot run: {}", why.message),
            )
            .with_suggestion("run `azd-wasm-host check` on the provider's manifest for details")),
            // The sender went away without a result: the compile thread died.
            Ok(None) | Err(_) => Err(ProviderError::host(
                ErrorCode::CompileFailed,
                format!("provider `{name}`: compiling the component stopped unexpectedly"),
            )),
        }
    }
}

impl CompileDone {
    /// Reports the compile's result to every waiting instance.
    pub(crate) fn finish(self, result: Result<Compiled, CompileError>) {
        self.0
            .send_replace(Some(result.map(Arc::new).map_err(Arc::from)));
    }
}

/// What every instance of one provider is made from.
pub(crate) struct Template {
    pub(crate) name: Arc<str>,
    pub(crate) policy: Policy,
    pub(crate) compiled: Compiling,
    /// The azd environment of the command.
    environment: Arc<CommandEnvironment>,
    /// azd's services, when the host is connected to azd.
    services: Option<Arc<dyn AzdServices>>,
    /// Where access tokens come from.
    tokens: Option<Arc<dyn TokenSource>>,
    /// Whether the user can be asked (false under `--no-prompt`).
    interactive: bool,
    /// Recorded traffic and faults, under `azd-wasm-host test`.
    pub(crate) traffic: Option<Arc<dyn Intercept>>,
    /// The JSON Schema azd's config must match (`[config] schema`).
    config_schema: Option<ConfigSchema>,
    /// What all its instances may write to the log together.
    log: ProcessLog,
    /// What a folder granted outside the project may resolve to.
    pub(crate) folder_bounds: Option<Arc<dyn crate::options::FolderBounds>>,
}

impl Template {
    pub(crate) fn new(
        name: &str,
        policy: Policy,
        compiled: Compiling,
        opts: &RuntimeOptions,
    ) -> Self {
        Self {
            name: Arc::from(name),
            policy,
            compiled,
            environment: Arc::new(CommandEnvironment::new(
                opts.environment.clone(),
                opts.services.clone(),
            )),
            services: opts.services.clone(),
            tokens: match &opts.traffic {
                Some(traffic) => Arc::clone(traffic).tokens(opts.tokens.clone()),
                None => opts.tokens.clone(),
            },
            interactive: opts.interactive,
            traffic: opts.traffic.clone(),
            config_schema: None,
            log: ProcessLog::default(),
            folder_bounds: opts.folder_bounds.clone(),
        }
    }

    /// Checks azd's config against `schema` at every Initialize.
    pub(crate) fn with_config_schema(mut self, schema: Option<ConfigSchema>) -> Self {
        self.config_schema = schema;
        self
    }

    /// Initialize's config (azure.yaml's `infra.config`; an empty object when
    /// azd sends none, as the guest gets it) checked against the provider's
    /// config schema, if it has one.
    pub(crate) fn check_config(
        &self,
        options: &azd_wasm_host_proto::azdext::ProvisioningOptions,
    ) -> Result<(), ProviderError> {
        let Some(schema) = &self.config_schema else {
            return Ok(());
        };
        let config = options.config.as_ref().map_or_else(
            || serde_json::Value::Object(serde_json::Map::new()),
            azd_wasm_host_core::json::struct_to_json,
        );
        schema.check(&config, &self.name)
    }

    /// The azd environment, as Initialize needs it: settled when azd passed
    /// its name (a wrong one is refused now) or when a granted directory
    /// names it (`{env}`); otherwise left to the first guest call that needs
    /// it, so that Initialize does not wait for a question to azd.
    pub(crate) async fn environment_for_initialize(
        &self,
    ) -> Result<Option<EnvironmentName>, ProviderError> {
        let named = self.policy.fs.iter().any(FsGrant::names_environment);
        if named || !self.environment.asks_azd() {
            self.environment.get().await
        } else {
            Ok(None)
        }
    }

    /// The compiled component, once it is ready.
    pub(crate) async fn compiled(&self, ctx: &CallContext) -> Result<Arc<Compiled>, ProviderError> {
        self.compiled.wait(&self.name, ctx).await
    }

    /// A fresh `Store` for one instance of `compiled`: its sandbox (with the
    /// granted directories `grants`, under `seal`), azd's services as granted,
    /// its budget for memories and tables and for what it logs (within all
    /// instances'), a yield at every epoch tick, and the bound on what the
    /// guest may hand the host at once.
    pub(crate) fn new_store(
        &self,
        compiled: &Compiled,
        grants: Grants,
        seal: Seal,
    ) -> Store<HostState> {
        let log = GuestLog::new(self.name.clone(), &self.log);
        let sandbox = sandbox::build(&self.policy, &self.name, self.traffic.as_ref(), &seal, &log);
        let azd = AzdAccess {
            grants: self.policy.azd.clone(),
            services: self.services.clone(),
            environment: self.environment.clone(),
            interactive: self.interactive,
            seal: seal.clone(),
            paths: PathMap::default(),
            files: AzdFiles::default(),
        };
        let credentials = Credentials::new(
            self.name.clone(),
            self.policy.azd.credential_scopes.clone(),
            self.tokens.clone(),
            seal,
        );
        let state = HostState::new(
            self.name.clone(),
            sandbox,
            grants,
            self.policy.memory_bytes(),
            self.policy.disk_bytes(),
            azd,
            credentials,
        );
        let mut store = Store::new(compiled.component.engine(), state);
        store.limiter_async(|s| &mut s.limits);
        store.epoch_deadline_async_yield_and_update(1);
        store.set_hostcall_fuel(MAX_GUEST_TRANSFER);
        store
    }
}
