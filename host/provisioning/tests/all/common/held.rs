//! A native provider that holds every call until its test lets it go
//! ([`Hold`]), and answers each kind with an empty result; deploy, preview
//! and destroy report a step before and after the hold. What the tests of
//! requests under an id still in flight serve.

use std::sync::Arc;

use async_trait::async_trait;
use azd_wasm_host_core::{CallContext, Provider, ProviderError};
use azd_wasm_host_fuzz::duplicates::Holds;
use azd_wasm_host_proto::azdext as pb;

/// What a held call waits on.
#[async_trait]
pub(crate) trait Hold: Send + Sync + 'static {
    /// Waits until the test lets the call of `request_id` go.
    async fn hold(&self, request_id: &str);

    /// Whether an Initialize of `project_path` is held too (it is, unless
    /// said otherwise).
    fn holds_initialize(&self, _project_path: &str) -> bool {
        true
    }
}

#[async_trait]
impl Hold for Holds {
    async fn hold(&self, request_id: &str) {
        Holds::hold(self, request_id).await;
    }
}

/// The provider: every call held on `H`.
pub(crate) struct Held<H>(pub(crate) Arc<H>);

impl<H: Hold> Held<H> {
    async fn hold(&self, ctx: &CallContext, progress: bool) {
        if progress {
            ctx.progress.report("before");
        }
        self.0.hold(&ctx.request_id).await;
        if progress {
            ctx.progress.report("after");
        }
    }
}

#[async_trait]
impl<H: Hold> Provider for Held<H> {
    async fn initialize(
        &self,
        project_path: &str,
        _options: pb::ProvisioningOptions,
        ctx: CallContext,
    ) -> Result<(), ProviderError> {
        if self.0.holds_initialize(project_path) {
            self.hold(&ctx, false).await;
        }
        Ok(())
    }
    async fn state(
        &self,
        _options: pb::ProvisioningStateOptions,
        ctx: CallContext,
    ) -> Result<pb::ProvisioningStateResult, ProviderError> {
        self.hold(&ctx, false).await;
        Ok(pb::ProvisioningStateResult::default())
    }
    async fn deploy(
        &self,
        ctx: CallContext,
    ) -> Result<pb::ProvisioningDeployResult, ProviderError> {
        self.hold(&ctx, true).await;
        Ok(pb::ProvisioningDeployResult::default())
    }
    async fn preview(
        &self,
        ctx: CallContext,
    ) -> Result<pb::ProvisioningPreviewResult, ProviderError> {
        self.hold(&ctx, true).await;
        Ok(pb::ProvisioningPreviewResult::default())
    }
    async fn destroy(
        &self,
        _options: pb::ProvisioningDestroyOptions,
        ctx: CallContext,
    ) -> Result<pb::ProvisioningDestroyResult, ProviderError> {
        self.hold(&ctx, true).await;
        Ok(pb::ProvisioningDestroyResult::default())
    }
    async fn ensure_env(&self, ctx: CallContext) -> Result<(), ProviderError> {
        self.hold(&ctx, false).await;
        Ok(())
    }
    async fn parameters(
        &self,
        ctx: CallContext,
    ) -> Result<Vec<pb::ProvisioningParameter>, ProviderError> {
        self.hold(&ctx, false).await;
        Ok(Vec::new())
    }
    async fn planned_outputs(
        &self,
        ctx: CallContext,
    ) -> Result<Vec<pb::ProvisioningPlannedOutput>, ProviderError> {
        self.hold(&ctx, false).await;
        Ok(Vec::new())
    }
}
