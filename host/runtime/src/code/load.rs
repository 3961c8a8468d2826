//! Loading a provider: the manifest read, the component looked over,
//! compiled (or taken from the cache, or from the code its package shipped),
//! validated, and made into the factory of its instances.
//!
//! `check` and the tests load at once ([`load_provider`]); `listen` looks the
//! component over in milliseconds ([`prepare_provider`]) so that azd need not
//! wait, and compiles on a blocking thread meanwhile
//! ([`PreparedProvider::compile_in_background`]).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use azd_wasm_host_core::ProviderFactory;
use tokio_util::sync::CancellationToken;

use crate::code::cache::{self, CacheOutcome};
use crate::code::engine::{self, ComponentFile};
use crate::code::shipped::{self, Shipped};
use crate::error::LoadError;
use crate::instance::factory::WasmProviderFactory;
use crate::instance::template::{self, Compiling};
use crate::options::RuntimeOptions;
use azd_wasm_host_manifest::Manifest;

/// A validated provider, ready to register with azd.
pub struct LoadedProvider {
    /// The provider name to register.
    pub name: String,
    /// Makes a fresh instance per `Initialize`.
    pub factory: Arc<dyn ProviderFactory>,
    /// The manifest (synthesised deny-all for a bare component).
    pub manifest: Manifest,
    /// Whether the compiled code came from the cache.
    pub cache: CacheOutcome,
    /// Time to read, compile or load from the cache, and validate.
    pub load_time: Duration,
}

impl std::fmt::Debug for LoadedProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadedProvider")
            .field("name", &self.name)
            .field("manifest", &self.manifest)
            .field("cache", &self.cache)
            .field("load_time", &self.load_time)
            .finish_non_exhaustive()
    }
}

/// Loads and validates a provider now: the manifest (or bare component), the
/// component itself (compiled or taken from the cache), and its fit to our
/// world (`check`, tests). `listen` uses [`prepare_provider`] instead, so that
/// azd need not wait for a compile.
pub fn load_provider(
    manifest_or_component: &Path,
    provider_name: Option<&str>,
    opts: &RuntimeOptions,
) -> Result<LoadedProvider, LoadError> {
    let manifest = Manifest::resolve(manifest_or_component, provider_name)?;
    let loaded = compile(&manifest, opts)?;
    let compiled = Compiling::done(template::Compiled {
        pre: loaded.pre,
        component: loaded.component,
    });
    Ok(LoadedProvider {
        name: manifest.name.clone(),
        factory: factory(&manifest, compiled, opts),
        manifest,
        cache: loaded.outcome,
        load_time: loaded.load_time,
    })
}

/// Compiles (or loads from the cache) and validates the component of `manifest`.
fn compile(manifest: &Manifest, opts: &RuntimeOptions) -> Result<engine::Loaded, LoadError> {
    compile_file(manifest, &ComponentFile::open(&manifest.component)?, opts)
}

/// [`compile`] for a component file already opened.
fn compile_file(
    manifest: &Manifest,
    file: &ComponentFile<'_>,
    opts: &RuntimeOptions,
) -> Result<engine::Loaded, LoadError> {
    if opts.shipped_code_only {
        return match shipped::shipped_code(manifest, file, &opts.signed_code)? {
            Shipped::Loaded(loaded) => Ok(loaded),
            Shipped::Absent(why) | Shipped::Refused(why) => {
                Err(shipped::no_runnable_code(manifest, why))
            }
            Shipped::Untrusted(why) => Err(LoadError::Untrusted(why)),
        };
    }
    let engine = engine::shared_engine()?;
    let linker = engine::linker(&engine)?;
    let loaded = engine::load_component(&engine, &linker, file, opts.cache.as_ref())?;
    tracing::debug!(
        provider = %manifest.name,
        component = %manifest.component.display(),
        cache = ?loaded.outcome,
        ms = loaded.load_time.as_secs_f64() * 1e3,
        "provider component loaded"
    );
    Ok(loaded)
}

/// The factory of `manifest`'s instances, made from `compiled`.
fn factory(
    manifest: &Manifest,
    compiled: Compiling,
    opts: &RuntimeOptions,
) -> Arc<dyn ProviderFactory> {
    let template = template::Template::new(&manifest.name, manifest.policy.clone(), compiled, opts)
        .with_config_schema(manifest.config_schema.clone());
    Arc::new(WasmProviderFactory::new(template))
}

/// A provider whose manifest is read and whose component was looked over
/// ([`prepare_provider`]), not yet compiled.
#[derive(Debug)]
pub struct PreparedProvider {
    manifest: Manifest,
    opts: RuntimeOptions,
}

/// Reads the manifest and looks the component over without compiling it:
/// milliseconds whatever its size, so `listen` can register and signal Ready
/// at once. What only a compile can find is reported by the first Initialize.
pub fn prepare_provider(
    manifest_or_component: &Path,
    provider_name: Option<&str>,
    opts: RuntimeOptions,
) -> Result<PreparedProvider, LoadError> {
    let manifest = Manifest::resolve(manifest_or_component, provider_name)?;
    engine::inspect_component(&manifest.component)?;
    Ok(PreparedProvider { manifest, opts })
}

impl PreparedProvider {
    /// The provider name to register.
    pub fn name(&self) -> &str {
        &self.manifest.name
    }

    /// Starts compiling (or loading from the cache) on a blocking thread and
    /// returns the factory at once, with the handle of that thread; the
    /// factory's instances wait for the compile. Must be called inside a tokio
    /// runtime.
    ///
    /// On a cache miss the first instances run code from the baseline compiler
    /// ([`engine::quick_engine`]), ready seconds sooner; the same thread then
    /// compiles the optimised code into the cache, for the next start, unless
    /// [`BackgroundCompile::finish`] was called first.
    pub fn compile_in_background(self) -> (Arc<dyn ProviderFactory>, BackgroundCompile) {
        let (compiling, done) = Compiling::pending();
        let factory = factory(&self.manifest, compiling, &self.opts);
        let Self { manifest, opts } = self;
        let stop = CancellationToken::new();
        let stopped = stop.clone();
        let task = tokio::task::spawn_blocking(move || {
            let first = first_start(&manifest, &opts);
            let optimise = matches!(first, Ok((_, Code::Baseline)));
            done.finish(
                first
                    .map(|(loaded, _)| template::Compiled {
                        pre: loaded.pre,
                        component: loaded.component,
                    })
                    .map_err(|e| {
                        let message = azd_wasm_host_core::report::chain(&e);
                        tracing::error!(provider = %manifest.name, error = %message, "the provider component cannot run");
                        template::CompileError {
                            untrusted: e.is_untrusted(),
                            message,
                        }
                    }),
            );
            if optimise && stopped.is_cancelled() {
                tracing::debug!(provider = %manifest.name, "optimised compile skipped: the host is stopping");
            } else if optimise {
                match compile(&manifest, &opts) {
                    Ok(_) => {
                        tracing::debug!(provider = %manifest.name, "optimised code stored for the next start")
                    }
                    Err(e) => {
                        tracing::debug!(provider = %manifest.name, error = %azd_wasm_host_core::report::chain(&e), "optimised compile failed")
                    }
                }
            }
        });
        (factory, BackgroundCompile { task, stop })
    }
}

/// The thread of [`PreparedProvider::compile_in_background`].
#[derive(Debug)]
pub struct BackgroundCompile {
    task: tokio::task::JoinHandle<()>,
    stop: CancellationToken,
}

impl BackgroundCompile {
    /// Ends the background work: an optimised compile not yet begun is
    /// skipped, and the thread is waited for up to `grace`. A compile under
    /// way cannot be interrupted (wasmtime offers no way); past `grace` it is
    /// left to end with the process, which the debug log says, and the next
    /// start compiles again. Returns whether the thread had ended.
    pub async fn finish(self, grace: Duration) -> bool {
        self.stop.cancel();
        let ended = tokio::time::timeout(grace, self.task).await.is_ok();
        if !ended {
            tracing::debug!("the component is still compiling; it ends with the process");
        }
        ended
    }
}

/// Which compiler made the code a process runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Code {
    /// Cranelift's, from the cache or compiled now.
    Optimised,
    /// Winch's, from the cache or compiled now; the optimised code is not in
    /// the cache yet.
    Baseline,
}

/// Components at least this big start on the baseline compiler's code when
/// the cache has no optimised code for them: below it Cranelift takes about
/// a second or less (the 1.7 MB JS example: 2.0 s, the 51 KB C one: 0.1 s,
/// release build on 2 cores), and a second compile would not pay.
const BASELINE_FROM_BYTES: u64 = 4 << 20;

/// What a `listen` process runs first: the code its package shipped; else the optimised code from the cache; on
/// a miss, for a big component, the baseline compiler's code (from the cache,
/// or compiled and stored now, seconds sooner than the optimised compile);
/// otherwise, or where there is no baseline compiler or usable cache, or the
/// baseline compile fails, the optimised compile.
fn first_start(
    manifest: &Manifest,
    opts: &RuntimeOptions,
) -> Result<(engine::Loaded, Code), LoadError> {
    let file = ComponentFile::open(&manifest.component)?;
    let optimised = || compile_file(manifest, &file, opts).map(|loaded| (loaded, Code::Optimised));
    if opts.shipped_code_only {
        return optimised();
    }
    match shipped::shipped_code(manifest, &file, &opts.signed_code)? {
        Shipped::Loaded(loaded) => return Ok((loaded, Code::Optimised)),
        Shipped::Untrusted(why) => return Err(LoadError::Untrusted(why)),
        Shipped::Refused(why) => {
            tracing::debug!(provider = %manifest.name, %why, "the package's precompiled code is not used; compiling");
        }
        Shipped::Absent(_) => {}
    }
    let big = file.len >= BASELINE_FROM_BYTES;
    let (Some(cache), Some(quick), true) = (opts.cache.as_ref(), engine::quick_engine(), big)
    else {
        return optimised();
    };
    if cache::trusted_dir(cache.dir()).is_err() {
        return optimised();
    }
    let engine = engine::shared_engine()?;
    let linker = engine::linker(&engine)?;
    if let Some(hit) = engine::load_cached_component(&engine, &linker, &file, cache)? {
        tracing::debug!(provider = %manifest.name, ms = hit.load_time.as_secs_f64() * 1e3, "provider component loaded from the cache");
        return Ok((hit, Code::Optimised));
    }
    match engine::load_component(&quick, &engine::linker(&quick)?, &file, Some(cache)) {
        Ok(loaded) => {
            tracing::debug!(
                provider = %manifest.name,
                cache = ?loaded.outcome,
                ms = loaded.load_time.as_secs_f64() * 1e3,
                "running the baseline compiler's code; optimising in the background"
            );
            Ok((loaded, Code::Baseline))
        }
        Err(e) => {
            tracing::debug!(provider = %manifest.name, error = %azd_wasm_host_core::report::chain(&e), "baseline compile failed; compiling optimised");
            optimised()
        }
    }
}

/// Checks that the file at `path` is a provider component this host can run
/// (its exports and imports), without compiling it: what `listen` checks
/// before it registers, and `build` before it puts a component in place.
pub fn inspect_component(path: &Path) -> Result<(), LoadError> {
    engine::inspect_component(path)
}
