//! The two traits of the seam: [`DevelopmentTools`] (what `listen` asks for) and
//! [`Recording`] (a golden conversation under way).

use std::path::Path;
use std::sync::Arc;

use azd_wasm_host_core::AzdServices;
use azd_wasm_host_provisioning::{AzdClient, StreamTap};
use azd_wasm_host_runtime::Intercept;

/// Recording and replaying, lent by the development CLI.
pub trait DevelopmentTools: Send + Sync {
    /// The traffic plan of a test's step (the file `AZD_WASM_HOST_TRAFFIC`
    /// names): what replays, records or faults the guest's HTTP and tokens.
    fn replay(&self, plan: &Path) -> anyhow::Result<Arc<dyn Intercept>>;

    /// Starts `--record`'s golden conversation in `path` for `provider`
    /// (`environment`: the azd environment azd named; `safe`: strings the
    /// recording may keep though they look like credentials).
    fn record(
        &self,
        path: &Path,
        provider: &str,
        environment: Option<&str>,
        safe: &[String],
    ) -> anyhow::Result<Box<dyn Recording>>;
}

/// A golden conversation being recorded.
pub trait Recording: Send + Sync {
    /// What writes down the provisioning stream both ways.
    fn tap(&self) -> Arc<dyn StreamTap>;
    /// azd's services, each call and answer written down.
    fn services(&self, azd: AzdClient) -> Arc<dyn AzdServices>;
    /// What records the guest's HTTP traffic into the conversation.
    fn traffic(&self) -> anyhow::Result<Arc<dyn Intercept>>;
    /// The conversation ended: written again without what was learned secret.
    fn finish(&self);
}
