//! What the manager's tests against the simulated azd share: a manager serving one
//! provider over real loopback gRPC, registered, dispatching and Ready.

#![allow(dead_code, reason = "each test binary uses what it needs")]

pub(crate) mod held;

use std::sync::Arc;
use std::time::Duration;

use azd_wasm_host_core::ProviderFactory;
use azd_wasm_host_provisioning::{AzdClient, ManagerError, ProvisioningManager, StreamEnd};
use azd_wasm_host_sim::{ProviderHandle, SimAzd, SimOptions};
use tokio_util::sync::CancellationToken;

/// A simulated azd and a manager serving provider `name` on it.
pub(crate) struct Served {
    /// The simulated azd.
    pub(crate) sim: SimAzd,
    /// The client the manager talks through.
    pub(crate) client: AzdClient,
    /// The manager.
    pub(crate) manager: Arc<ProvisioningManager>,
    /// azd's handle on the registered provider.
    pub(crate) handle: ProviderHandle,
    /// The manager's dispatcher.
    pub(crate) serving: tokio::task::JoinHandle<Result<StreamEnd, ManagerError>>,
}

/// Starts a simulated azd with `opts`, connects a manager, registers `name` served by
/// `factory`, dispatches, and calls Ready.
pub(crate) async fn serve(
    opts: SimOptions,
    factory: Arc<dyn ProviderFactory>,
    name: &str,
) -> Served {
    let sim = SimAzd::start(opts).await.unwrap();
    let client = AzdClient::connect(&sim.address(), &sim.token())
        .await
        .unwrap();
    let manager = ProvisioningManager::new(client.clone());
    manager.register(factory, name).await.unwrap();
    let serving = {
        let m = manager.clone();
        tokio::spawn(async move { m.receive(CancellationToken::new()).await })
    };
    manager.ready().await.unwrap();
    let handle = sim.provider(name, Duration::from_secs(10)).await.unwrap();
    Served {
        sim,
        client,
        manager,
        handle,
        serving,
    }
}
