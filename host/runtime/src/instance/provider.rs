//! [`WasmProvider`]: the [`Provider`] seam over a WebAssembly component (the
//! factory and what it makes instances from are in `template.rs`).
//!
//! Each `initialize` makes a fresh `Store` (its own sandbox, resource budget
//! and call context) and instance from the pre-instantiated world; later calls
//! on that provider use that instance, one at a time.
//!
//! A guest call is a future on wasmtime's async API, raced against the call's
//! deadline and its cancellation (azd went away). When either wins, the call
//! future is dropped: the guest stops wherever it is, inside a WASI call too,
//! and its `Store` (memory, tables, open files, sockets) is freed at once. No
//! guest code runs on a thread of its own, so nothing is left behind.
//!
//! A fault (trap, deadline, out of memory, cancellation: `failure.rs` maps
//! each to its error) retires the instance: later calls get
//! `provider_crashed` until a new `initialize` makes a fresh one. A guest's
//! own `err` keeps it. Calls before any `initialize` get
//! `provider_not_initialized`.
//!
//! After every guest call, whatever its outcome, azd's files the read-write
//! grants reach are checked (`sandbox::files::azd_files`): one that became a link
//! turns the answer into `unsafe_azd_file` and retires the instance, so azd
//! never writes through it.
//!
//! Progress a guest reports reaches azd only during deploy, preview and
//! destroy; elsewhere it goes to the debug log (azd would take it for the answer).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use async_trait::async_trait;
use azd_wasm_host_core::{CallContext, ErrorCode, Provider, ProviderError};
use azd_wasm_host_proto::RequestKind;
use azd_wasm_host_proto::azdext as pb;
use tokio::sync::Mutex;
use wasmtime::Store;

use crate::bindings::ProvisioningProvider;
use crate::bindings::azd::provisioning0_1_0::types as wit;
use crate::convert;
use crate::instance::ahead::Ahead;
use crate::instance::failure::{self, guest_error};
use crate::instance::seal::Seal;
use crate::instance::store::HostState;
use crate::instance::template::{Compiled, Template};
use crate::sandbox;
use crate::sandbox::{Grants, PathMap};
use crate::sandbox::{StopReason, bounded};

/// One running instance (or none yet, or a retired one).
pub(crate) enum InstanceState {
    /// Not initialized.
    Empty,
    /// Serving calls.
    Running(Box<Instance>),
    /// Retired by a fault; holds what happened.
    Retired(String),
}

pub(crate) struct Instance {
    store: Store<HostState>,
    bindings: ProvisioningProvider,
}

/// A provider instance backed by a WebAssembly component.
pub(crate) struct WasmProvider {
    shared: Arc<Template>,
    state: Arc<Mutex<InstanceState>>,
    /// The instance made ahead of the first Initialize (the factory's).
    ahead: Arc<Ahead>,
}

impl std::fmt::Debug for WasmProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WasmProvider")
            .field("name", &self.shared.name)
            .finish_non_exhaustive()
    }
}

/// A guest call's raw outcome: a trap or host error, or the guest's own result.
type GuestResult<T> = wasmtime::Result<Result<T, wit::Error>>;

/// A guest call in flight, borrowing the instance it runs on.
type GuestCall<'a, T> = Pin<Box<dyn Future<Output = GuestResult<T>> + Send + 'a>>;

impl WasmProvider {
    pub(crate) fn new(
        shared: Arc<Template>,
        state: Arc<Mutex<InstanceState>>,
        ahead: Arc<Ahead>,
    ) -> Self {
        Self {
            shared,
            state,
            ahead,
        }
    }

    /// Takes the instance lock, or gives up when the request is cancelled.
    async fn lock(
        &self,
        ctx: &CallContext,
    ) -> Result<tokio::sync::OwnedMutexGuard<InstanceState>, ProviderError> {
        tokio::select! {
            biased;
            guard = self.state.clone().lock_owned() => Ok(guard),
            () = ctx.cancel.cancelled() => Err(failure::cancelled(&self.shared.name, "waiting for the provider")),
        }
    }

    /// Runs the guest call `f` on the instance, bounded by the call's
    /// deadline and cancellation; maps faults and retires the instance when one
    /// happens.
    async fn call<T, R>(
        &self,
        kind: RequestKind,
        ctx: CallContext,
        f: impl for<'a> FnOnce(&'a ProvisioningProvider, &'a mut Store<HostState>) -> GuestCall<'a, T>,
        convert: impl FnOnce(T, &PathMap) -> R,
    ) -> Result<R, ProviderError> {
        let what = kind.name();
        let mut guard = self.lock(&ctx).await?;
        let mut instance = match std::mem::replace(&mut *guard, InstanceState::Empty) {
            InstanceState::Running(instance) => instance,
            InstanceState::Empty => {
                return Err(ProviderError::host(
                    ErrorCode::ProviderNotInitialized,
                    format!(
                        "provider `{}` got `{what}` before `initialize`",
                        self.shared.name
                    ),
                ));
            }
            InstanceState::Retired(why) => {
                let err = failure::crashed(&self.shared.name, &why);
                *guard = InstanceState::Retired(why);
                return Err(err);
            }
        };
        // Until the call returns; stays if this future is dropped mid-call.
        *guard = InstanceState::Retired(format!("a `{what}` call was abandoned while it ran"));
        instance.store.data_mut().begin_call(&ctx);
        let outcome = {
            let Instance { store, bindings } = &mut *instance;
            bounded(f(bindings, store), &ctx, &self.shared.policy).await
        };
        if let Err(err) = files_after(what, instance.store.data()) {
            drop(instance);
            *guard = InstanceState::Retired(err.message.clone());
            return Err(err);
        }
        match self.settle(what, outcome, instance.store.data_mut()) {
            Ok(guest) => {
                let guest = guest.map_err(|e| guest_error(e, instance.store.data_mut()));
                let answer = guest.map(|t| convert(t, instance.store.data().paths()));
                *guard = InstanceState::Running(instance);
                answer
            }
            Err(err) => {
                // The instance goes, and its memory with it.
                drop(instance);
                *guard = InstanceState::Retired(err.message.clone());
                Err(err)
            }
        }
    }

    /// Takes the instance made ahead, or builds a fresh one, and calls the
    /// guest's `initialize`, unless azd's config failed the provider's config
    /// schema (`options` is that error): then no instance serves until the
    /// next Initialize, and the guest never sees that config.
    async fn init(
        &self,
        project_path: String,
        options: Result<wit::ProvisioningOptions, ProviderError>,
        ctx: CallContext,
    ) -> Result<(), ProviderError> {
        let mut guard = self.lock(&ctx).await?;
        // Whatever was there is replaced: a new layer gets a new instance.
        *guard = InstanceState::Empty;
        let mut options = options?;
        let shared = &self.shared;
        let compiled = shared.compiled(&ctx).await?;
        let grants = self.open_grants(&project_path, &mut options).await?;
        // Start code made ahead that ran out its deadline ends this instance, as its own would.
        let (mut store, made) = (self.store_for_initialize(&compiled, grants, &ctx).await)
            .inspect_err(|err| {
                if err.host_code() == Some(ErrorCode::ProviderTimeout) {
                    *guard = InstanceState::Retired(err.message.clone());
                }
            })?;
        store.data_mut().begin_call(&ctx);
        let started = {
            let store = &mut store;
            bounded(
                async move {
                    let bindings = match made {
                        Some(bindings) => bindings,
                        None => compiled.pre.instantiate_async(&mut *store).await?,
                    };
                    let guest = bindings
                        .azd_provisioning0_1_0_provider()
                        .call_initialize(&mut *store, &sandbox::guest_form(&project_path), &options)
                        .await?;
                    wasmtime::Result::Ok((bindings, guest))
                },
                &ctx,
                &shared.policy,
            )
            .await
        };
        if let Err(err) = files_after("initialize", store.data()) {
            drop(store);
            *guard = InstanceState::Retired(err.message.clone());
            return Err(err);
        }
        match self.settle("initialize", started, store.data_mut()) {
            Ok((bindings, guest)) => {
                let guest = guest.map_err(|e| guest_error(e, store.data_mut()));
                *guard = InstanceState::Running(Box::new(Instance { store, bindings }));
                guest
            }
            Err(err) => {
                drop(store);
                *guard = InstanceState::Retired(err.message.clone());
                Err(err)
            }
        }
    }

    /// Opens the grants for the project at `project_path` and writes the
    /// paths in `options`' virtual-env that lie in them in the guest's form.
    async fn open_grants(
        &self,
        project_path: &str,
        options: &mut wit::ProvisioningOptions,
    ) -> Result<Grants, ProviderError> {
        let shared = &self.shared;
        let environment = shared.environment_for_initialize().await?;
        let grants = sandbox::open_grants_within(
            &shared.policy.fs,
            project_path,
            environment.as_ref(),
            &shared.name,
            shared.folder_bounds.as_deref(),
        )?;
        convert::options_for_guest(options, &PathMap::of_grants(&grants.dirs));
        Ok(grants)
    }

    /// The store of the instance an Initialize starts: the one made ahead
    /// (instantiated; its bindings given), or a fresh one (to instantiate),
    /// holding the granted directories `grants`.
    async fn store_for_initialize(
        &self,
        compiled: &Compiled,
        grants: Grants,
        ctx: &CallContext,
    ) -> Result<(Store<HostState>, Option<ProvisioningProvider>), ProviderError> {
        let shared = &self.shared;
        Ok(match self.ahead.take(&shared.name, ctx).await? {
            Some(spare) => {
                let (mut store, bindings) = spare.unseal();
                store.data_mut().grant(grants);
                tracing::debug!(provider = %shared.name, "initialize takes the instance made ahead");
                (store, Some(bindings))
            }
            None => (shared.new_store(compiled, grants, Seal::none()), None),
        })
    }

    /// How a bounded guest call ended: `Ok` with what the guest returned
    /// (the instance serves on), or the error of the fault that ends the
    /// instance (a trap, or the host stopped it).
    fn settle<A>(
        &self,
        what: &str,
        outcome: Result<wasmtime::Result<A>, StopReason>,
        state: &mut HostState,
    ) -> Result<A, ProviderError> {
        let (name, policy) = (&*self.shared.name, &self.shared.policy);
        state.report_dropped_output(what);
        match outcome {
            Ok(Ok(answer)) => {
                state.end_call();
                Ok(answer)
            }
            Ok(Err(trap)) => Err(failure::failed_call(name, policy, what, &trap, state)),
            Err(reason) => Err(failure::stopped(name, policy, what, reason)),
        }
    }
}

/// azd's files after the guest's `what` returned, however it ended: the
/// error its answer becomes when one of them is no longer plain (the
/// instance is then retired: the provider, or something while it ran, made
/// a link azd would follow).
fn files_after(what: &str, state: &HostState) -> Result<(), ProviderError> {
    state.azd_files().check(&format!("after `{what}`"))
}

#[async_trait]
impl Provider for WasmProvider {
    async fn initialize(
        &self,
        project_path: &str,
        options: pb::ProvisioningOptions,
        ctx: CallContext,
    ) -> Result<(), ProviderError> {
        let options =
            (self.shared.check_config(&options)).map(|()| convert::options_to_wit(&options));
        self.init(project_path.to_owned(), options, ctx).await
    }

    async fn state(
        &self,
        options: pb::ProvisioningStateOptions,
        ctx: CallContext,
    ) -> Result<pb::ProvisioningStateResult, ProviderError> {
        let options = convert::state_options_to_wit(&options);
        self.call(
            RequestKind::State,
            ctx,
            move |b, s| {
                Box::pin(async move {
                    b.azd_provisioning0_1_0_provider()
                        .call_state(s, &options)
                        .await
                })
            },
            convert::state_from_wit,
        )
        .await
    }

    async fn deploy(
        &self,
        ctx: CallContext,
    ) -> Result<pb::ProvisioningDeployResult, ProviderError> {
        self.call(
            RequestKind::Deploy,
            ctx,
            |b, s| Box::pin(b.azd_provisioning0_1_0_provider().call_deploy(s)),
            convert::deploy_from_wit,
        )
        .await
    }

    async fn preview(
        &self,
        ctx: CallContext,
    ) -> Result<pb::ProvisioningPreviewResult, ProviderError> {
        self.call(
            RequestKind::Preview,
            ctx,
            |b, s| Box::pin(b.azd_provisioning0_1_0_provider().call_preview(s)),
            convert::preview_from_wit,
        )
        .await
    }

    async fn destroy(
        &self,
        options: pb::ProvisioningDestroyOptions,
        ctx: CallContext,
    ) -> Result<pb::ProvisioningDestroyResult, ProviderError> {
        let options = convert::destroy_options_to_wit(&options);
        self.call(
            RequestKind::Destroy,
            ctx,
            move |b, s| Box::pin(b.azd_provisioning0_1_0_provider().call_destroy(s, options)),
            |r, _| convert::destroy_from_wit(r),
        )
        .await
    }

    async fn ensure_env(&self, ctx: CallContext) -> Result<(), ProviderError> {
        self.call(
            RequestKind::EnsureEnv,
            ctx,
            |b, s| Box::pin(b.azd_provisioning0_1_0_provider().call_ensure_env(s)),
            |(), _| (),
        )
        .await
    }

    async fn parameters(
        &self,
        ctx: CallContext,
    ) -> Result<Vec<pb::ProvisioningParameter>, ProviderError> {
        self.call(
            RequestKind::Parameters,
            ctx,
            |b, s| Box::pin(b.azd_provisioning0_1_0_provider().call_parameters(s)),
            |r, _| convert::parameters_from_wit(r),
        )
        .await
    }

    async fn planned_outputs(
        &self,
        ctx: CallContext,
    ) -> Result<Vec<pb::ProvisioningPlannedOutput>, ProviderError> {
        self.call(
            RequestKind::PlannedOutputs,
            ctx,
            |b, s| Box::pin(b.azd_provisioning0_1_0_provider().call_planned_outputs(s)),
            |r, _| convert::planned_outputs_from_wit(r),
        )
        .await
    }
}
