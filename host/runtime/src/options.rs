//! [`RuntimeOptions`]: what the runtime takes from the process around it.
//!
//! The runtime reads no environment variable of its own (only those a
//! manifest's `env` grant copies into a guest): the binary decides where the
//! cache is, which azd environment a command runs in, and who answers for azd,
//! and passes it here.

use std::sync::Arc;

use azd_wasm_host_core::{AzdServices, TokenSource};

use crate::code::cache::CompileCache;
use crate::intercept::Intercept;
use azd_wasm_host_manifest::package::SignedCode;

/// Options of [`load_provider`](crate::load_provider) and
/// [`prepare_provider`](crate::prepare_provider).
#[derive(Clone, Default)]
pub struct RuntimeOptions {
    /// The compile cache (its folder and the key its entries are
    /// authenticated with); `None` compiles without a cache.
    pub cache: Option<CompileCache>,
    /// The azd environment name, for `{env}` in grants and the `environment`
    /// import (`listen` passes `AZD_ENVIRONMENT`). When absent, the host asks
    /// azd for its current environment (if [`RuntimeOptions::services`] is set).
    /// Checked with azd's rule; an invalid one fails every `Initialize`.
    pub environment: Option<String>,
    /// azd's own services (environment values, prompts); `None` when the
    /// host is not connected to azd.
    pub services: Option<Arc<dyn AzdServices>>,
    /// Where access tokens for granted scopes come from; `None`: nowhere
    /// (a guest's request fails with `azd-unavailable`).
    pub tokens: Option<Arc<dyn TokenSource>>,
    /// Whether the user can be asked (false under `--no-prompt`).
    pub interactive: bool,
    /// Run only the code `package` precompiled beside the binary, never
    /// compile (the shipped sidecar, which has no compiler): a component
    /// without fitting code fails with the fix, repackaging.
    pub shipped_code_only: bool,
    /// What the provider's signature says of its precompiled code (`listen`
    /// passes it once the signature verified): shipped code is mapped only
    /// when its bytes are the signed ones, refused whenever the signature
    /// names none, and held to its binding alone when nothing was verified.
    pub signed_code: SignedCode,
    /// Recorded traffic and faults (`azd-wasm-host test`); `None`: the
    /// outside world as it is.
    pub traffic: Option<Arc<dyn Intercept>>,
    /// What a folder granted outside the project may be, judged on the
    /// folder the system resolves it to, right before it is opened
    /// (an administrator's ceiling); `None`: any the manifest grants.
    pub folder_bounds: Option<Arc<dyn FolderBounds>>,
}

/// Bounds on the folders a provider may be granted outside its project,
/// judged where a link can no longer move them: on the path the system
/// resolved, right before the folder is opened.
pub trait FolderBounds: Send + Sync {
    /// `Ok` when the folder at `real` (links resolved) may be opened with
    /// `access` for the project at `project`; `Err` says why not.
    fn admits(
        &self,
        project: &std::path::Path,
        real: &std::path::Path,
        access: azd_wasm_host_manifest::FsAccess,
    ) -> Result<(), String>;
}

impl std::fmt::Debug for RuntimeOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuntimeOptions")
            .field("cache", &self.cache)
            .field("environment", &self.environment)
            .field("services", &self.services.is_some())
            .field("tokens", &self.tokens.is_some())
            .field("interactive", &self.interactive)
            .field("shipped_code_only", &self.shipped_code_only)
            .field("signed_code", &self.signed_code)
            .field("traffic", &self.traffic)
            .field("folder_bounds", &self.folder_bounds.is_some())
            .finish()
    }
}
