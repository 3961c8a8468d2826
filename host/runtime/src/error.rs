//! Why a provider cannot be loaded ([`LoadError`]): what [`load_provider`],
//! [`prepare_provider`], [`inspect_component`], [`check`] and
//! `precompile_into` return, and what the first `Initialize` of a provider
//! whose compile failed answers with. Each variant names the file and says
//! what is wrong; [`LoadError::Untrusted`] is the one the sidecar refuses as
//! untrusted rather than as broken.
//!
//! [`load_provider`]: crate::load_provider
//! [`prepare_provider`]: crate::prepare_provider
//! [`inspect_component`]: crate::inspect_component
//! [`check`]: crate::check()

use std::path::PathBuf;

use azd_wasm_host_manifest::ManifestError;

use crate::world::WORLD;

/// Why a provider's component cannot be loaded, compiled or run here.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// The manifest could not be read, or names nothing runnable.
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    /// wasmtime's engine, or the imports the host links, could not be set up.
    #[error("cannot set up the WebAssembly engine: {0}")]
    Engine(String),
    /// The component file could not be read.
    #[error("cannot read provider component {}", path.display())]
    Read {
        /// The component.
        path: PathBuf,
        /// What reading it said.
        #[source]
        source: std::io::Error,
    },
    /// A core module where a component belongs.
    #[error(
        "{} is a core WebAssembly module, not a component: build the provider for world {WORLD} \
         (e.g. `wasm-tools component new` with the WASI preview1 adapter)",
        path.display()
    )]
    CoreModule {
        /// The file.
        path: PathBuf,
    },
    /// Not WebAssembly in the binary format at all.
    #[error(
        "{} is not a WebAssembly component (expected a binary `.wasm` component for world {WORLD})",
        path.display()
    )]
    NotAComponent {
        /// The file.
        path: PathBuf,
    },
    /// Its bytes do not parse or compile (wasmparser's or wasmtime's words).
    #[error("{} is not a valid component: {reason}", path.display())]
    Invalid {
        /// The component.
        path: PathBuf,
        /// What the parser or compiler said.
        reason: String,
    },
    /// A component, but not one of our world: what it exports or how.
    #[error("{} is not a provider component: {why}", path.display())]
    NotAProvider {
        /// The component.
        path: PathBuf,
        /// What does not fit, and the fix.
        why: String,
    },
    /// It imports an interface the host does not link.
    #[error(
        "{} imports `{import}`, which this host cannot provide (it provides WASI 0.2, {WORLD} and \
         azd:credentials/credentials@0.1.0)",
        path.display()
    )]
    UnknownImport {
        /// The component.
        path: PathBuf,
        /// The import's name.
        import: String,
    },
    /// Its package's precompiled code (or that code's binding) is not what
    /// was signed or bound: never run, never compiled around.
    #[error("{0}")]
    Untrusted(String),
    /// A host that cannot compile (the sidecar) found no precompiled code it
    /// can run.
    #[error("provider `{provider}` has no precompiled code this host can run: {why}. {fix}")]
    NoRunnableCode {
        /// The provider's name.
        provider: String,
        /// Why the shipped code is absent or refused.
        why: String,
        /// What code this host would run, and how to give it some.
        fix: String,
    },
    /// `package` asked for code for a platform azd does not ship on.
    #[error("no precompiled code can be made for `{platform}` (known: {known})")]
    UnknownPlatform {
        /// The platform asked for.
        platform: String,
        /// The platforms there are.
        known: String,
    },
    /// Precompiled code or its binding could not be written.
    #[error("cannot write {}", path.display())]
    Write {
        /// The file or folder.
        path: PathBuf,
        /// What writing said.
        #[source]
        source: std::io::Error,
    },
    /// The folder for precompiled code could not be made.
    #[error("cannot create {}", path.display())]
    Create {
        /// The folder.
        path: PathBuf,
        /// What making it said.
        #[source]
        source: std::io::Error,
    },
    /// The code just precompiled for this machine does not load back.
    #[error("the code just compiled does not load: {0}")]
    Reload(String),
}

impl LoadError {
    /// [`LoadError::Read`] of `path`.
    pub(crate) fn read(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.into();
        move |source| Self::Read { path, source }
    }

    /// [`LoadError::Invalid`] of `path`, with wasmtime's or wasmparser's words.
    pub(crate) fn invalid(path: impl Into<PathBuf>, reason: impl std::fmt::Display) -> Self {
        Self::Invalid {
            path: path.into(),
            reason: reason.to_string(),
        }
    }

    /// Whether the provider is refused as untrusted (its shipped code is not
    /// what was signed), not as broken.
    pub fn is_untrusted(&self) -> bool {
        matches!(self, Self::Untrusted(_))
    }
}
