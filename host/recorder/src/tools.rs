//! The recorder lent to `listen` (the `azd-wasm-host-develop` seam's
//! `DevelopmentTools`): what the development CLI can do and the packaged
//! sidecar cannot.

use std::path::Path;
use std::sync::Arc;

use crate::conversation::Recorder;
use crate::conversation::services::Recorded;
use crate::traffic::{Traffic, TrafficMode, TrafficPlan};
use azd_wasm_host_core::AzdServices;
use azd_wasm_host_develop::{DevelopmentTools, Recording};
use azd_wasm_host_provisioning::{AzdClient, StreamTap};
use azd_wasm_host_runtime::Intercept;

/// Recording and replay, as the development CLI lends them to `listen`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Tools;

impl DevelopmentTools for Tools {
    fn replay(&self, plan: &Path) -> anyhow::Result<Arc<dyn Intercept>> {
        Ok(Traffic::open(plan)?)
    }

    fn record(
        &self,
        path: &Path,
        provider: &str,
        environment: Option<&str>,
        safe: &[String],
    ) -> anyhow::Result<Box<dyn Recording>> {
        let recorder = Recorder::create(path, provider, environment, safe)?;
        Ok(Box::new(Conversation(recorder)))
    }
}

/// A golden conversation under way.
struct Conversation(Arc<Recorder>);

impl Recording for Conversation {
    fn tap(&self) -> Arc<dyn StreamTap> {
        Arc::clone(&self.0) as Arc<dyn StreamTap>
    }

    fn services(&self, azd: AzdClient) -> Arc<dyn AzdServices> {
        Arc::new(Recorded::new(azd, Arc::clone(&self.0)))
    }

    fn traffic(&self) -> anyhow::Result<Arc<dyn Intercept>> {
        // The guest's HTTP goes into the conversation's own file, judged by
        // what the author marked safe for it.
        Ok(Traffic::new(TrafficPlan {
            mode: TrafficMode::Record,
            log: self.0.path().to_owned(),
            exchanges: Vec::new(),
            tokens: Vec::new(),
            faults: Vec::new(),
            safe: self.0.safe().to_vec(),
        })?)
    }

    fn finish(&self) {
        self.0.finish();
    }
}
