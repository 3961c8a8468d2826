//! Requests under the id of one still in flight, over real loopback gRPC: the
//! simulated azd sends mutated envelopes of every kind to a
//! ProvisioningManager serving a native provider that holds each call a few
//! milliseconds, about one in twenty under the id of a call the provider still
//! holds (`azd_wasm_host_fuzz::duplicates`): every request gets exactly one
//! answer (the reusing one `duplicate_request_id`, the first its own), nothing
//! follows an answer, and the stream serves on. Bounded in time
//! (`AZD_WASM_HOST_FUZZ_SECS` for longer runs); prints its figures.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use azd_wasm_host_core::{CallContext, Provider, ProviderError};
use azd_wasm_host_fuzz::Campaign;
use azd_wasm_host_fuzz::duplicates::{Holds, drive_duplicates};
use azd_wasm_host_proto::azdext as pb;
use azd_wasm_host_sim::SimOptions;

mod common;

const NAME: &str = "reused";

/// Holds every call until the campaign lets it go; deploy, preview and
/// destroy report a step before and after.
struct Holding(Arc<Holds>);

impl Holding {
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
impl Provider for Holding {
    async fn initialize(
        &self,
        _project_path: &str,
        _options: pb::ProvisioningOptions,
        ctx: CallContext,
    ) -> Result<(), ProviderError> {
        self.hold(&ctx, false).await;
        Ok(())
    }
    async fn state(
        &self,
        _options: pb::ProvisioningStateOptions,
        ctx: CallContext,
    ) -> Result<pb::ProvisioningStateResult, ProviderError> {
        self.hold(&ctx, false).await;
        Ok(pb::ProvisioningStateResult {
            state: Some(pb::ProvisioningState::default()),
        })
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fuzz_ids_reused_in_flight_one_answer_per_request_and_nothing_after_it() {
    let campaign = Campaign::new("duplicates", 3);
    let holds = Arc::new(Holds::default());
    let shared = holds.clone();
    let factory = move || -> Result<Arc<dyn Provider>, ProviderError> {
        Ok(Arc::new(Holding(shared.clone())))
    };
    let served = common::serve(SimOptions::default(), Arc::new(factory), NAME).await;
    let (sim, serving) = (served.sim, served.serving);
    let h = served.handle.with_call_timeout(Duration::from_secs(10));
    let (campaign, tallies) = drive_duplicates(campaign, &h, NAME, &holds).await;
    assert!(!serving.is_finished(), "the dispatcher is still running");
    campaign.finish(tallies);
    sim.shutdown().await;
}
