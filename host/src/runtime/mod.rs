//! The WebAssembly provider runtime: runs a provider component (world
//! `azd:provisioning/provisioning-provider@0.1.0`) in a sandbox, behind the
//! [`Provider`](crate::provider::Provider) seam.
//!
//! Design:
//! - One process-wide wasmtime `Engine` for the async API, with epoch
//!   interruption; a ticker thread advances the epoch every 10 ms and every
//!   store yields at each tick (`engine`). A component is compiled once (or
//!   loaded from the compile cache, [`cache`]), type-checked against a linker
//!   holding WASI preview 2 and our `progress`/`log` imports, and kept as a
//!   pre-instantiated world.
//! - Every azd `Initialize` gets a fresh `Store` and instance
//!   ([`WasmProvider`]): its own sandbox built from the manifest policy
//!   (`sandbox`: deny by default; grants opened beneath the project), its own
//!   budget for all its memories and tables (`limits`), and a bound on what it
//!   can hand the host in one piece.
//! - A guest call is a future raced against its deadline and the request's
//!   cancellation; the loser is dropped, which stops the guest even inside a
//!   WASI call and frees its `Store`. No guest code runs on a thread of its own.
//!   A fault answers that request with a clear error and retires the instance
//!   until the next `Initialize` (see `instance.rs` for the error mapping).
//! - WIT ⇄ protobuf conversions live in one place (`convert`); the `bindgen!`
//!   output lives alone in `bindings`; the host side of the imports in `host`.
//!
//! Entry points for the CLI: [`load_provider`] (validates everything before a
//! provider is registered with azd) and [`check_report`] (`azd-wasm-host check`).

mod bindings;
mod cache;
mod convert;
mod credentials;
mod engine;
mod host;
mod instance;
mod limits;
mod manifest;
mod sandbox;
mod services;
mod template;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;

pub use cache::{CacheOutcome, ENV_CACHE_DIR, create_private_dir, default_cache_dir, sha256_file};
pub use convert::{object_to_struct, struct_to_json};
use engine::ComponentFile;
pub use engine::{PROVIDER_EXPORT, WORLD};
pub use instance::MAX_GUEST_TRANSFER;
pub(crate) use manifest::is_loopback_host;
pub use manifest::{
    AzdGrants, BuildLanguage, BuildSettings, DEFAULT_MANIFEST_NAME, ENV_MANIFEST,
    EnvironmentAccess, FsAccess, FsGrant, GrantLocation, Manifest, Policy, RESERVED_ENV,
    locate_manifest,
};
pub use sandbox::remove_unused_dirs;
pub use services::{AzdServices, ConfirmQuestion, SelectQuestion, ServiceError, TextQuestion};
use template::{Compiling, WasmProviderFactory};

/// Environment variable holding the azd environment name (`{env}` in grants).
pub const ENV_ENVIRONMENT: &str = "AZD_ENVIRONMENT";

/// Options of [`load_provider`] and [`prepare_provider`].
#[derive(Clone, Default)]
pub struct RuntimeOptions {
    /// Compile cache directory; `None` uses [`default_cache_dir`].
    pub cache_dir: Option<PathBuf>,
    /// The azd environment name, for `{env}` in grants and the `environment`
    /// import (`listen` passes `AZD_ENVIRONMENT`). When absent, the host asks
    /// azd for its current environment (if [`RuntimeOptions::services`] is set).
    /// Checked with azd's rule; an invalid one fails every `Initialize`.
    pub environment: Option<String>,
    /// azd's own services (environment values, prompts); `None` when the
    /// host is not connected to azd.
    pub services: Option<Arc<dyn AzdServices>>,
    /// Whether the user can be asked (false under `--no-prompt`).
    pub interactive: bool,
}

impl std::fmt::Debug for RuntimeOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuntimeOptions")
            .field("cache_dir", &self.cache_dir)
            .field("environment", &self.environment)
            .field("services", &self.services.is_some())
            .field("interactive", &self.interactive)
            .finish()
    }
}

/// A validated provider, ready to register with azd.
pub struct LoadedProvider {
    /// The provider name to register.
    pub name: String,
    /// Makes a fresh instance per `Initialize`.
    pub factory: Arc<dyn crate::provider::ProviderFactory>,
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
) -> anyhow::Result<LoadedProvider> {
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
fn compile(manifest: &Manifest, opts: &RuntimeOptions) -> anyhow::Result<engine::Loaded> {
    compile_file(manifest, &ComponentFile::open(&manifest.component)?, opts)
}

/// [`compile`] for a component file already opened.
fn compile_file(
    manifest: &Manifest,
    file: &ComponentFile<'_>,
    opts: &RuntimeOptions,
) -> anyhow::Result<engine::Loaded> {
    let engine = engine::shared_engine()?;
    let linker = engine::linker(&engine)?;
    let cache_dir = opts.cache_dir.clone().or_else(default_cache_dir);
    let loaded = engine::load_component(&engine, &linker, file, cache_dir.as_deref())?;
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
) -> Arc<dyn crate::provider::ProviderFactory> {
    Arc::new(WasmProviderFactory::new(template::Template::new(
        &manifest.name,
        manifest.policy.clone(),
        compiled,
        opts.environment.clone(),
        opts.services.clone(),
        opts.interactive,
    )))
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
) -> anyhow::Result<PreparedProvider> {
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
    /// returns the factory at once; its instances wait for the compile. Must be
    /// called inside a tokio runtime.
    ///
    /// On a cache miss the first instances run code from the baseline compiler
    /// ([`engine::quick_engine`]), ready seconds sooner; the same thread then
    /// compiles the optimised code into the cache, for the next start. If the
    /// process ends first, the next start does the same again.
    pub fn compile_in_background(self) -> Arc<dyn crate::provider::ProviderFactory> {
        let (compiling, done) = Compiling::pending();
        let factory = factory(&self.manifest, compiling, &self.opts);
        let Self { manifest, opts } = self;
        tokio::task::spawn_blocking(move || {
            let first = first_start(&manifest, &opts);
            let optimise = matches!(first, Ok((_, Code::Baseline)));
            done.finish(
                first
                    .map(|(loaded, _)| template::Compiled {
                        pre: loaded.pre,
                        component: loaded.component,
                    })
                    .map_err(|e| {
                        tracing::error!(provider = %manifest.name, error = %format!("{e:#}"), "the provider component cannot run");
                        format!("{e:#}")
                    }),
            );
            if optimise {
                match compile(&manifest, &opts) {
                    Ok(_) => {
                        tracing::debug!(provider = %manifest.name, "optimised code stored for the next start")
                    }
                    Err(e) => {
                        tracing::debug!(provider = %manifest.name, error = %format!("{e:#}"), "optimised compile failed")
                    }
                }
            }
        });
        factory
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

/// What a `listen` process runs first: the optimised code from the cache; on
/// a miss, for a big component, the baseline compiler's code (from the cache,
/// or compiled and stored now, seconds sooner than the optimised compile);
/// otherwise, or where there is no baseline compiler or usable cache, or the
/// baseline compile fails, the optimised compile.
fn first_start(
    manifest: &Manifest,
    opts: &RuntimeOptions,
) -> anyhow::Result<(engine::Loaded, Code)> {
    let file = ComponentFile::open(&manifest.component)?;
    let optimised = || compile_file(manifest, &file, opts).map(|loaded| (loaded, Code::Optimised));
    if let Some(shipped) = shipped_code(manifest, &file)? {
        return Ok((shipped, Code::Optimised));
    }
    let cache_dir = opts.cache_dir.clone().or_else(default_cache_dir);
    let big = file.len >= BASELINE_FROM_BYTES;
    let (Some(dir), Some(quick), true) = (cache_dir, engine::quick_engine(), big) else {
        return optimised();
    };
    if cache::trusted_dir(&dir).is_err() {
        return optimised();
    }
    let engine = engine::shared_engine()?;
    let linker = engine::linker(&engine)?;
    if let Some(hit) = engine::load_cached_component(&engine, &linker, &file, &dir)? {
        tracing::debug!(provider = %manifest.name, ms = hit.load_time.as_secs_f64() * 1e3, "provider component loaded from the cache");
        return Ok((hit, Code::Optimised));
    }
    match engine::load_component(&quick, &engine::linker(&quick)?, &file, Some(&dir)) {
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
            tracing::debug!(provider = %manifest.name, error = %format!("{e:#}"), "baseline compile failed; compiling optimised");
            optimised()
        }
    }
}

/// Checks that the file at `path` is a provider component this host can run
/// (its exports and imports), without compiling it: what `listen` checks
/// before it registers, and `build` before it puts a component in place.
pub fn inspect_component(path: &Path) -> anyhow::Result<()> {
    engine::inspect_component(path)
}

/// The folder beside a packaged manifest that holds the component's code,
/// compiled by `azd-wasm-host package` for the archive's platform.
pub const PRECOMPILED_DIR: &str = "precompiled";

/// The code `package` shipped beside the manifest (`precompiled/`), when it
/// is there, trusted like a cache (the user's alone) and made by this very
/// host for this component; `None` otherwise (the caller compiles).
fn shipped_code(
    manifest: &Manifest,
    file: &ComponentFile<'_>,
) -> anyhow::Result<Option<engine::Loaded>> {
    let Some(dir) = shipped_dir(manifest) else {
        return Ok(None);
    };
    let engine = engine::shared_engine()?;
    let linker = engine::linker(&engine)?;
    let found = engine::load_cached_component(&engine, &linker, file, &dir)?;
    match &found {
        Some(hit) => {
            tracing::debug!(provider = %manifest.name, ms = hit.load_time.as_secs_f64() * 1e3, "provider component loaded from its package's precompiled code")
        }
        None => {
            tracing::debug!(provider = %manifest.name, dir = %dir.display(), "the package's precompiled code does not fit this host; compiling")
        }
    }
    Ok(found)
}

/// `precompiled/` beside the manifest, when there is one and the manifest
/// sits beside the running binary (the layout of an installed extension).
///
/// Precompiled code is native code that runs outside the sandbox, so it is
/// trusted exactly as far as the binary itself: only from the binary's own
/// folder, never from a project or download that merely ships a
/// `precompiled/` beside its manifest (there the component is compiled, and
/// the debug log says why).
fn shipped_dir(manifest: &Manifest) -> Option<PathBuf> {
    let base = manifest.source.as_deref().and_then(Path::parent)?;
    let dir = base.join(PRECOMPILED_DIR);
    if !dir.is_dir() {
        return None;
    }
    let exe_dir = std::env::current_exe()
        .ok()
        .and_then(|exe| std::fs::canonicalize(exe).ok())
        .and_then(|exe| exe.parent().map(Path::to_path_buf));
    let base = std::fs::canonicalize(base).ok();
    if exe_dir.is_none() || exe_dir != base {
        tracing::debug!(dir = %dir.display(), "precompiled code ignored: it is used only beside the host binary that runs it");
        return None;
    }
    Some(dir)
}

/// Compiles the component of `manifest` with the engine `listen` uses and
/// stores the code in `dir` (made private), where [`shipped_code`] finds it
/// when `dir` is `precompiled/` beside the manifest. Returns the files written.
pub fn precompile_into(manifest: &Manifest, dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    create_private_dir(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let file = ComponentFile::open(&manifest.component)?;
    let engine = engine::shared_engine()?;
    let linker = engine::linker(&engine)?;
    let loaded = engine::load_component(&engine, &linker, &file, Some(dir))?;
    if !matches!(
        loaded.outcome,
        CacheOutcome::Stored | CacheOutcome::Rebuilt | CacheOutcome::Hit
    ) {
        anyhow::bail!(
            "the compiled code could not be written to {}",
            dir.display()
        );
    }
    Ok(cache::entry_files(&engine, &file.sha, dir))
}

/// Whether the compile cache already holds this machine's code for the
/// provider at `path` (a manifest or a component): a quick look that compiles
/// nothing, so that a caller can say a first start will compile. A start may
/// still find the entry stale and compile anyway.
pub fn is_compiled(path: &Path) -> bool {
    let Ok(manifest) = Manifest::resolve(path, None) else {
        return false;
    };
    let Ok(sha) = cache::sha256_file(&manifest.component) else {
        return false;
    };
    let shipped = shipped_dir(&manifest);
    let dirs: Vec<PathBuf> = default_cache_dir().into_iter().chain(shipped).collect();
    engine::shared_engine()
        .ok()
        .into_iter()
        .chain(engine::quick_engine())
        .any(|engine| dirs.iter().any(|dir| cache::has_entry(&engine, &sha, dir)))
}

/// Validates a component (or the component of a manifest) and describes it:
/// what it imports (the capabilities it asks for) and what the policy grants.
pub fn check_report(component_or_manifest: &Path) -> anyhow::Result<String> {
    let manifest = Manifest::resolve(component_or_manifest, None)?;
    let engine = engine::shared_engine()?;
    let linker = engine::linker(&engine)?;
    let file = ComponentFile::open(&manifest.component).context("check failed")?;
    let loaded = engine::load_component(&engine, &linker, &file, default_cache_dir().as_deref())
        .context("check failed")?;
    let ty = loaded.component.component_type();
    let mut out = String::new();
    let _ = writeln!(out, "provider:  {}", manifest.name);
    let mut imports: Vec<&str> = ty.imports(&engine).map(|(name, _)| name).collect();
    imports.sort_unstable();
    // A component that imports nothing of 0.2.0 was built for 0.1.0's world.
    let world = if imports
        .iter()
        .any(|i| i.starts_with("azd:provisioning/") && i.contains("@0.2."))
    {
        WORLD
    } else {
        "azd:provisioning/provisioning-provider@0.1.0"
    };
    let _ = writeln!(
        out,
        "component: {} ({} bytes) targets {world}: OK",
        manifest.component.display(),
        loaded.bytes_len
    );
    match &manifest.source {
        Some(src) => {
            let _ = writeln!(out, "manifest:  {}", src.display());
        }
        None => {
            let _ = writeln!(
                out,
                "manifest:  none (bare component: deny-all policy, default limits)"
            );
        }
    }
    let _ = writeln!(out, "\nimports (capabilities the component asks for):");
    for name in imports {
        let _ = writeln!(
            out,
            "  {name:<44} {}",
            describe_import(name, &manifest.policy)
        );
    }
    write_policy(&mut out, &manifest.policy);
    Ok(out)
}

/// The policy section of [`check_report`]: what the sandbox grants.
fn write_policy(out: &mut String, policy: &Policy) {
    let _ = writeln!(out, "\npolicy (what the sandbox grants):");
    if policy.is_deny_all() {
        let _ = writeln!(
            out,
            "  deny-all: no files, no environment variables, no network, no HTTP"
        );
    }
    write_reach(out, policy);
    let _ = writeln!(
        out,
        "  memory   {} MiB per instance (all memories and tables together)",
        policy.memory_mb
    );
    let _ = writeln!(out, "  timeout  {} s per call", policy.call_timeout_secs);
    if policy.azd.environment != EnvironmentAccess::None {
        let _ = writeln!(out, "  azd      environment: {}", policy.azd.environment);
    }
    if policy.azd.prompt {
        let _ = writeln!(out, "  azd      prompt: may ask the user");
    }
    for scope in &policy.azd.credential_scopes {
        let _ = writeln!(
            out,
            "  azd      access tokens for {scope} (from `azd auth token`)"
        );
    }
    if policy.fs.iter().any(|g| g.access == FsAccess::ReadWrite) {
        let _ = writeln!(
            out,
            "  disk     not bounded: read-write grants may take what the disk holds"
        );
    }
}

/// The grants of [`write_policy`] that reach outside the sandbox: files,
/// environment variables, the network and HTTP.
fn write_reach(out: &mut String, policy: &Policy) {
    for g in &policy.fs {
        let place = if g.outside_project {
            "OUTSIDE the azd project (granted explicitly)"
        } else {
            "inside the azd project"
        };
        let _ = writeln!(out, "  fs       {} ({}; {place})", g.path, g.access);
    }
    for e in &policy.env {
        let _ = writeln!(out, "  env      {e}");
    }
    for n in &policy.network {
        let _ = writeln!(
            out,
            "  network  {n} (TCP connect; name lookups only for listed names)"
        );
    }
    for origin in &policy.http.allow {
        let _ = writeln!(
            out,
            "  http     {origin} (TLS by the host; plaintext only to loopback)"
        );
    }
    if !policy.http.allow.is_empty() {
        let _ = writeln!(
            out,
            "  http     each request: {} s at most, {} bytes of response body at most",
            policy.http_timeout().as_secs_f64(),
            policy.http.max_response_bytes
        );
    }
}

/// What an import lets the guest do under `policy`, in a few words. An
/// import is only what the component *could* call: a toolchain's runtime
/// (QuickJS's libc, CPython's) imports files even when the provider's code
/// has no way to open one, and the policy decides what any call reaches.
fn describe_import(name: &str, policy: &Policy) -> &'static str {
    let iface = name.split('@').next().unwrap_or(name);
    match iface {
        "wasi:filesystem/types" | "wasi:filesystem/preopens" if policy.fs.is_empty() => {
            "files: none granted (no [policy] fs), every open fails"
        }
        "wasi:cli/environment" if policy.env.is_empty() => {
            "environment variables: none granted (empty)"
        }
        "azd:provisioning/progress" => "progress on azd's spinner",
        "azd:provisioning/log" => "host debug log",
        "azd:provisioning/types" => "types only",
        "azd:provisioning/environment" => "azd environment values (only as [policy.azd] grants)",
        "azd:provisioning/prompt" => "questions to the user (only with [policy.azd] prompt)",
        "azd:credentials/credentials" if policy.azd.credential_scopes.is_empty() => {
            "access tokens: none granted (no [policy.azd] credential_scopes)"
        }
        "azd:credentials/credentials" => "access tokens (only the granted scopes below)",
        "wasi:filesystem/types" | "wasi:filesystem/preopens" => "files (only the fs grants below)",
        "wasi:cli/environment" => "environment variables (only allowlisted)",
        "wasi:cli/stdout" | "wasi:cli/stderr" => "output (goes to the host's debug log)",
        "wasi:cli/stdin" => "input (always empty)",
        "wasi:cli/exit" => "exit (crashes the instance)",
        "wasi:random/random" | "wasi:random/insecure" | "wasi:random/insecure-seed" => "randomness",
        "wasi:clocks/wall-clock" | "wasi:clocks/monotonic-clock" => "clocks",
        n if n.starts_with("wasi:sockets/") => "network (only allowlisted host:port)",
        "wasi:http/outgoing-handler" | "wasi:http/types" if policy.http.allow.is_empty() => {
            "HTTP: none granted (no [policy.http] allow), every request is refused"
        }
        n if n.starts_with("wasi:http/") => "HTTP requests (only the [policy.http] origins below)",
        n if n.starts_with("wasi:io/") => "streams and polling",
        n if n.starts_with("wasi:cli/terminal") => "terminal queries (never a terminal)",
        _ => "",
    }
}
