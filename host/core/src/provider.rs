//! The provider seam: what the manager calls.
//!
//! A [`Provider`] is one provider *instance* (one per azd `Initialize`, i.e. per
//! provisioning layer). A [`ProviderFactory`] makes fresh instances. The
//! WebAssembly runtime implements both; tests use native Rust providers.
//!
//! Data crosses as the protobuf types of `azdext` (plain prost structs): they are
//! exactly azd's data model, and a second copy of every struct would add nothing
//! but conversions. Errors are the host's own [`ProviderError`]. Every call gets
//! a [`CallContext`] (`call.rs`).

use std::sync::Arc;

use async_trait::async_trait;
use azd_wasm_host_proto::azdext as pb;

use crate::call::CallContext;
use crate::error::ProviderError;

/// One provider instance. Implementations must be cheap to share (`Arc`).
#[async_trait]
pub trait Provider: Send + Sync + 'static {
    /// First call on a fresh instance: the project path and the layer's options.
    async fn initialize(
        &self,
        project_path: &str,
        options: pb::ProvisioningOptions,
        ctx: CallContext,
    ) -> Result<(), ProviderError>;

    /// What is deployed now.
    async fn state(
        &self,
        options: pb::ProvisioningStateOptions,
        ctx: CallContext,
    ) -> Result<pb::ProvisioningStateResult, ProviderError>;

    /// Provisions the layer.
    async fn deploy(&self, ctx: CallContext)
    -> Result<pb::ProvisioningDeployResult, ProviderError>;

    /// What a deploy would do.
    async fn preview(
        &self,
        ctx: CallContext,
    ) -> Result<pb::ProvisioningPreviewResult, ProviderError>;

    /// Removes what the layer provisioned.
    async fn destroy(
        &self,
        options: pb::ProvisioningDestroyOptions,
        ctx: CallContext,
    ) -> Result<pb::ProvisioningDestroyResult, ProviderError>;

    /// Makes sure the environment has what the provider needs.
    async fn ensure_env(&self, ctx: CallContext) -> Result<(), ProviderError>;

    /// The inputs the provider takes.
    async fn parameters(
        &self,
        ctx: CallContext,
    ) -> Result<Vec<pb::ProvisioningParameter>, ProviderError>;

    /// The outputs a deploy will produce.
    async fn planned_outputs(
        &self,
        ctx: CallContext,
    ) -> Result<Vec<pb::ProvisioningPlannedOutput>, ProviderError>;
}

/// Makes fresh provider instances; the manager calls it on every `Initialize`.
#[async_trait]
pub trait ProviderFactory: Send + Sync + 'static {
    /// A fresh, not yet initialized instance.
    async fn create(&self) -> Result<Arc<dyn Provider>, ProviderError>;

    /// A hint that azd's first `Initialize` is coming (the manager gives it
    /// once it has told azd it is ready): a factory may make, in the
    /// background, what that `Initialize` needs. Returns at once; the default
    /// does nothing.
    fn prepare(&self) {}
}

#[async_trait]
impl<F> ProviderFactory for F
where
    F: Fn() -> Result<Arc<dyn Provider>, ProviderError> + Send + Sync + 'static,
{
    async fn create(&self) -> Result<Arc<dyn Provider>, ProviderError> {
        self()
    }
}
