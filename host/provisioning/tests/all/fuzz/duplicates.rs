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

use azd_wasm_host_core::{Provider, ProviderError};
use azd_wasm_host_fuzz::Campaign;
use azd_wasm_host_fuzz::duplicates::{Holds, drive_duplicates};
use azd_wasm_host_sim::SimOptions;

use crate::common;

use common::held::Held;

const NAME: &str = "reused";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fuzz_ids_reused_in_flight_one_answer_per_request_and_nothing_after_it() {
    let campaign = Campaign::new("duplicates", 3);
    let holds = Arc::new(Holds::default());
    let shared = holds.clone();
    let factory =
        move || -> Result<Arc<dyn Provider>, ProviderError> { Ok(Arc::new(Held(shared.clone()))) };
    let served = common::serve(SimOptions::default(), Arc::new(factory), NAME).await;
    let (sim, serving) = (served.sim, served.serving);
    let h = served.handle.with_call_timeout(Duration::from_secs(10));
    let (campaign, tallies) = drive_duplicates(campaign, &h, NAME, &holds).await;
    assert!(!serving.is_finished(), "the dispatcher is still running");
    campaign.finish(tallies);
    sim.shutdown().await;
}
