//! Fuzzing the whole inbound path over real loopback gRPC: the simulated azd
//! sends mutated envelopes of every kind (unknown fields of every wire type,
//! groups shallow and deep, cuts, flips, garbage after the id) to a
//! ProvisioningManager serving a native provider, and checks each answer
//! against prost's reading of the same bytes (`azd_wasm_host_fuzz::stream`:
//! one answer per readable id, `invalid_message` exactly for what prost cannot
//! read, none for what is not a request, the stream alive at the end).
//! Bounded in time (`AZD_WASM_HOST_FUZZ_SECS` for longer runs); prints its
//! figures.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use azd_wasm_host_core::{CallContext, Provider, ProviderError};
use azd_wasm_host_fuzz::Campaign;
use azd_wasm_host_fuzz::stream::drive;
use azd_wasm_host_proto::azdext as pb;
use azd_wasm_host_sim::SimOptions;

use crate::common;

const NAME: &str = "fuzzed";
const WORKERS: u64 = 8;

/// Answers everything at once; deploy, preview and destroy report progress.
struct Quick;

#[async_trait]
impl Provider for Quick {
    async fn initialize(
        &self,
        _project_path: &str,
        _options: pb::ProvisioningOptions,
        _ctx: CallContext,
    ) -> Result<(), ProviderError> {
        Ok(())
    }
    async fn state(
        &self,
        _options: pb::ProvisioningStateOptions,
        _ctx: CallContext,
    ) -> Result<pb::ProvisioningStateResult, ProviderError> {
        Ok(pb::ProvisioningStateResult {
            state: Some(pb::ProvisioningState::default()),
        })
    }
    async fn deploy(
        &self,
        ctx: CallContext,
    ) -> Result<pb::ProvisioningDeployResult, ProviderError> {
        ctx.progress.report("deploying");
        Ok(pb::ProvisioningDeployResult::default())
    }
    async fn preview(
        &self,
        ctx: CallContext,
    ) -> Result<pb::ProvisioningPreviewResult, ProviderError> {
        ctx.progress.report("previewing");
        Ok(pb::ProvisioningPreviewResult::default())
    }
    async fn destroy(
        &self,
        _options: pb::ProvisioningDestroyOptions,
        ctx: CallContext,
    ) -> Result<pb::ProvisioningDestroyResult, ProviderError> {
        ctx.progress.report("destroying");
        Ok(pb::ProvisioningDestroyResult::default())
    }
    async fn ensure_env(&self, _ctx: CallContext) -> Result<(), ProviderError> {
        Ok(())
    }
    async fn parameters(
        &self,
        _ctx: CallContext,
    ) -> Result<Vec<pb::ProvisioningParameter>, ProviderError> {
        Ok(Vec::new())
    }
    async fn planned_outputs(
        &self,
        _ctx: CallContext,
    ) -> Result<Vec<pb::ProvisioningPlannedOutput>, ProviderError> {
        Ok(Vec::new())
    }
}

/// The factory: a fresh [`Quick`] each Initialize.
fn quick() -> Result<Arc<dyn Provider>, ProviderError> {
    Ok(Arc::new(Quick))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fuzz_the_stream_one_answer_per_readable_id_and_it_never_ends() {
    let campaign = Campaign::new("stream", 20);
    let served = common::serve(SimOptions::default(), Arc::new(quick), NAME).await;
    let (sim, serving) = (served.sim, served.serving);
    let h = served.handle.with_call_timeout(Duration::from_secs(10));
    let (campaign, tallies) = drive(campaign, &h, NAME, WORKERS).await;
    assert!(!serving.is_finished(), "the dispatcher is still running");
    campaign.finish(tallies);
    sim.shutdown().await;
}
