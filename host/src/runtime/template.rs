//! [`Template`]: what every instance of one provider is made from, and
//! [`WasmProviderFactory`], which makes them.
//!
//! The compiled component may not exist yet: `listen` registers with azd and
//! signals Ready in milliseconds, while the component compiles on a blocking
//! thread ([`Compiling`]). An instance waits for the compile only when azd
//! sends its first Initialize (and stops waiting if azd goes away). The azd
//! environment the command runs in is settled once, on first use: the name
//! azd passed (`AZD_ENVIRONMENT`), else the one azd reports as current.

use std::sync::Arc;

use async_trait::async_trait;
use tokio::sync::{Mutex, OnceCell, watch};
use wasmtime::Store;
use wasmtime::component::Component;

use super::bindings::ProvisioningProviderPre;
use super::host::HostState;
use super::instance::{InstanceState, MAX_GUEST_TRANSFER, WasmProvider};
use super::manifest::Policy;
use super::sandbox;
use super::services::{AzdServices, ServiceAccess};
use crate::env_name::EnvironmentName;
use crate::error::ProviderError;
use crate::provider::{CallContext, Provider, ProviderFactory};

/// A compiled, validated component.
pub(crate) struct Compiled {
    pub(crate) pre: ProvisioningProviderPre<HostState>,
    pub(crate) component: Component,
}

/// The state of the compile: not finished, done, or failed (why).
type CompileState = Option<Result<Arc<Compiled>, Arc<str>>>;

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
                return Err(ProviderError::internal(
                    "provider_cancelled",
                    format!("provider `{name}`: azd went away while the component was compiling"),
                ));
            }
        };
        match state {
            Ok(Some(Ok(compiled))) => Ok(compiled),
            Ok(Some(Err(why))) => Err(ProviderError::local(
                "invalid_component",
                crate::error::ErrorCategory::Validation,
                format!("provider `{name}` cannot run: {why}"),
            )
            .with_suggestion("run `azd-wasm-host check` on the provider's manifest for details")),
            // The sender went away without a result: the compile thread died.
            Ok(None) | Err(_) => Err(ProviderError::internal(
                "compile_failed",
                format!("provider `{name}`: compiling the component stopped unexpectedly"),
            )),
        }
    }
}

impl CompileDone {
    /// Reports the compile's result to every waiting instance.
    pub(crate) fn finish(self, result: Result<Compiled, String>) {
        self.0
            .send_replace(Some(result.map(Arc::new).map_err(Arc::from)));
    }
}

/// What every instance of one provider is made from.
pub(crate) struct Template {
    pub(crate) name: Arc<str>,
    pub(crate) policy: Policy,
    pub(crate) compiled: Compiling,
    /// The environment name azd passed, if any.
    environment_given: Option<String>,
    /// The environment, settled on first use.
    environment: OnceCell<Result<Option<EnvironmentName>, ProviderError>>,
    /// azd's services, when the host is connected to azd.
    services: Option<Arc<dyn AzdServices>>,
    /// Whether the user can be asked (false under `--no-prompt`).
    interactive: bool,
}

impl Template {
    pub(crate) fn new(
        name: &str,
        policy: Policy,
        compiled: Compiling,
        environment: Option<String>,
        services: Option<Arc<dyn AzdServices>>,
        interactive: bool,
    ) -> Self {
        Self {
            name: Arc::from(name),
            policy,
            compiled,
            environment_given: environment.filter(|e| !e.is_empty()),
            environment: OnceCell::new(),
            services,
            interactive,
        }
    }

    /// The azd environment of the command: the name azd passed, else the one
    /// azd reports as current, else none. An invalid name is an error.
    pub(crate) async fn environment(&self) -> Result<Option<EnvironmentName>, ProviderError> {
        self.environment
            .get_or_init(|| async {
                let name = match (&self.environment_given, &self.services) {
                    (Some(given), _) => given.clone(),
                    (None, Some(services)) => match services.current_environment().await {
                        Ok(name) => name,
                        Err(e) => {
                            tracing::debug!(error = %e, "azd has no current environment");
                            return Ok(None);
                        }
                    },
                    (None, None) => return Ok(None),
                };
                EnvironmentName::parse(&name).map(Some).map_err(|e| {
                    ProviderError::validation("invalid_environment_name", e.to_string())
                        .with_suggestion("select a valid environment with `azd env select <name>`")
                })
            })
            .await
            .clone()
    }

    /// The compiled component, once it is ready.
    pub(crate) async fn compiled(&self, ctx: &CallContext) -> Result<Arc<Compiled>, ProviderError> {
        self.compiled.wait(&self.name, ctx).await
    }

    /// A fresh `Store` for one instance of `compiled`: its sandbox, azd's
    /// services as granted, its budget for memories and tables, a yield at every
    /// epoch tick, and the bound on what the guest may hand the host at once.
    pub(crate) fn new_store(
        &self,
        compiled: &Compiled,
        sandbox: sandbox::Sandbox,
        environment: Option<EnvironmentName>,
    ) -> Store<HostState> {
        let services = ServiceAccess {
            grants: self.policy.azd.clone(),
            services: self.services.clone(),
            environment,
            interactive: self.interactive,
        };
        let state = HostState::new(
            self.name.clone(),
            sandbox,
            self.policy.memory_bytes(),
            services,
        );
        let mut store = Store::new(compiled.component.engine(), state);
        store.limiter_async(|s| &mut s.limits);
        store.epoch_deadline_async_yield_and_update(1);
        store.set_hostcall_fuel(MAX_GUEST_TRANSFER);
        store
    }
}

/// Makes fresh [`WasmProvider`]s for one loaded component.
#[derive(Clone)]
pub struct WasmProviderFactory {
    template: Arc<Template>,
}

impl WasmProviderFactory {
    pub(crate) fn new(template: Template) -> Self {
        Self {
            template: Arc::new(template),
        }
    }

    /// A fresh provider (what [`ProviderFactory::create`] returns), typed.
    pub(crate) fn create_wasm(&self) -> WasmProvider {
        WasmProvider::new(
            self.template.clone(),
            Arc::new(Mutex::new(InstanceState::Empty)),
        )
    }
}

impl std::fmt::Debug for WasmProviderFactory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WasmProviderFactory")
            .field("name", &self.template.name)
            .finish_non_exhaustive()
    }
}

#[async_trait]
impl ProviderFactory for WasmProviderFactory {
    async fn create(&self) -> Result<Arc<dyn Provider>, ProviderError> {
        Ok(Arc::new(self.create_wasm()))
    }
}
