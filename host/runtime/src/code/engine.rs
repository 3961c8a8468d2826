//! The shared engine, the linker, and loading + validating a component.
//!
//! One [`Engine`] serves the whole process, for wasmtime's async API: guest
//! calls are futures. Epoch interruption is on, with a ticker thread that
//! advances the epoch every tick while a guest runs (and sleeps otherwise:
//! [`crate::code::ticker`]); every store yields to the async
//! runtime at each tick, so a guest computing in a loop still lets its caller
//! drop the call (deadline, cancellation) within about one tick, and a guest
//! waiting in a WASI call is just a pending future.
//!
//! The linker holds WASI preview 2 (async), each capability's line over it
//! (`crate::sandbox::capability`: files, sockets, HTTP, azd's services,
//! tokens, some serving a WASI interface in place of wasmtime-wasi's) and our
//! `progress`/`log` imports. A component is
//! type-checked against it once, at load time, into a pre-instantiated world
//! that every instance is made from.

use std::io::Read as _;
use std::path::Path;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use azd_wasm_host_proto::RequestKind;
use wasmtime::component::{Component, HasSelf, Linker};
use wasmtime::{Config, Engine};

use crate::bindings::ProvisioningProviderPre;
use crate::code::cache::{self, CacheOutcome, CompileCache};
use crate::error::LoadError;
use crate::instance::store::HostState;
use crate::world::{PROVIDER_EXPORT, WORLD};

/// Guest stack limit; deeper recursion traps with a stack overflow.
const MAX_WASM_STACK: usize = 1024 * 1024;

/// The settings every engine shares: the compilers' here, the code `package` precompiles for
/// other platforms (`shipped`), and the sidecar's, which loads that code and must agree with it.
pub(crate) fn config() -> Config {
    let mut config = Config::new();
    config.epoch_interruption(true);
    config.max_wasm_stack(MAX_WASM_STACK);
    config.wasm_component_model(true);
    config
}

/// The process-wide engine, with Cranelift, the optimising compiler (made on
/// first use, with the epoch ticker).
pub(crate) fn shared_engine() -> Result<Engine, LoadError> {
    static ENGINE: OnceLock<Result<Engine, String>> = OnceLock::new();
    ENGINE
        .get_or_init(|| {
            let engine = Engine::new(&config()).map_err(|e| format!("{e:#}"))?;
            crate::code::ticker::start(&engine)?;
            Ok(engine)
        })
        .clone()
        .map_err(LoadError::Engine)
}

/// An engine with Winch, wasmtime's baseline compiler: it compiles several
/// times faster than Cranelift (the 19 MB Python example: 2.9 s instead of
/// 10.1 s on 2 cores) into slower code. Used only for a first start on a cold
/// cache (`load::first_start`); `None` where Winch is not a supported
/// (tier 1) compiler, i.e. off x86_64, and in a build without compilers.
#[cfg(feature = "compiler")]
pub(crate) fn quick_engine() -> Option<Engine> {
    static QUICK: OnceLock<Option<Engine>> = OnceLock::new();
    QUICK
        .get_or_init(|| {
            if !cfg!(target_arch = "x86_64") {
                return None;
            }
            let mut config = config();
            config.strategy(wasmtime::Strategy::Winch);
            let engine = Engine::new(&config)
                .inspect_err(|e| tracing::debug!(error = %format!("{e:#}"), "no baseline compiler"))
                .ok()?;
            crate::code::ticker::start(&engine).ok()?;
            Some(engine)
        })
        .clone()
}

/// A build without compilers (the shipped sidecar) has no baseline compiler.
#[cfg(not(feature = "compiler"))]
pub(crate) fn quick_engine() -> Option<Engine> {
    None
}

/// A linker with everything a provider may import.
pub(crate) fn linker(engine: &Engine) -> Result<Linker<HostState>, LoadError> {
    link(engine).map_err(|e| LoadError::Engine(format!("cannot link the host's imports: {e:#}")))
}

/// [`linker`], in wasmtime's errors.
fn link(engine: &Engine) -> wasmtime::Result<Linker<HostState>> {
    use crate::bindings::azd::provisioning0_1_0::{log, progress, types};
    use crate::instance::call::CallBinding;
    let mut linker = Linker::new(engine);
    // What every guest has: WASI preview 2, then each capability's line over it.
    wasmtime_wasi::p2::add_to_linker_async(&mut linker)?;
    crate::sandbox::link_all(&mut linker)?;
    // The call being served: progress, the log, and their types.
    types::add_to_linker::<HostState, HasSelf<CallBinding>>(&mut linker, |s| &mut s.call)?;
    progress::add_to_linker::<HostState, HasSelf<CallBinding>>(&mut linker, |s| &mut s.call)?;
    log::add_to_linker::<HostState, HasSelf<CallBinding>>(&mut linker, |s| &mut s.call)?;
    Ok(linker)
}

/// A loaded, validated component.
pub(crate) struct Loaded {
    pub(crate) component: Component,
    pub(crate) pre: ProvisioningProviderPre<HostState>,
    pub(crate) outcome: CacheOutcome,
    /// Read + compile or cache load + validation.
    pub(crate) load_time: Duration,
    pub(crate) bytes_len: u64,
}

/// Opens the component at `path` and refuses what is clearly not a component.
fn open_component(path: &Path) -> Result<(std::fs::File, u64), LoadError> {
    let file = std::fs::File::open(path).map_err(LoadError::read(path))?;
    let len = file.metadata().map_err(LoadError::read(path))?.len();
    let mut head = Vec::with_capacity(8);
    (&file)
        .take(8)
        .read_to_end(&mut head)
        .map_err(LoadError::read(path))?;
    let head = head.as_slice();
    let path = path.to_owned();
    if wasmparser::Parser::is_core_wasm(head) {
        return Err(LoadError::CoreModule { path });
    }
    if !wasmparser::Parser::is_component(head) {
        return Err(LoadError::NotAComponent { path });
    }
    Ok((file, len))
}

/// Looks the component at `path` over without compiling it (milliseconds,
/// whatever its size): a component, exporting [`PROVIDER_EXPORT`], importing
/// only interfaces this host links. Compiling later type-checks every detail.
pub(crate) fn inspect_component(path: &Path) -> Result<(), LoadError> {
    open_component(path)?;
    let bytes = std::fs::read(path).map_err(LoadError::read(path))?;
    let (imports, exports) = top_level_names(&bytes).map_err(|e| LoadError::invalid(path, e))?;
    if !exports.iter().any(|e| e == PROVIDER_EXPORT) {
        let found = if exports.is_empty() {
            "nothing".to_owned()
        } else {
            exports.join(", ")
        };
        return Err(LoadError::NotAProvider {
            path: path.to_owned(),
            why: format!(
                "it does not export `{PROVIDER_EXPORT}` (it exports {found}); build it for {WORLD}"
            ),
        });
    }
    if let Some(unknown) = imports.into_iter().find(|i| !links(i)) {
        return Err(LoadError::UnknownImport {
            path: path.to_owned(),
            import: unknown,
        });
    }
    Ok(())
}

/// Whether the host links an import of this name (WASI 0.2 with
/// `wasi:http`, the `azd:provisioning` interfaces of 0.1.x and 0.2.x, and
/// `azd:credentials` 0.1.x).
fn links(import: &str) -> bool {
    let (interface, version) = import.split_once('@').unwrap_or((import, ""));
    if interface.starts_with("wasi:") {
        return version.starts_with("0.2.");
    }
    if interface == "azd:credentials/credentials" {
        return version.starts_with("0.1.");
    }
    interface.starts_with("azd:provisioning/")
        && (version.starts_with("0.1.") || version.starts_with("0.2."))
}

/// The names of a component's top-level imports and exports, read without
/// descending into its core modules or nested components.
fn top_level_names(
    bytes: &[u8],
) -> Result<(Vec<String>, Vec<String>), wasmparser::BinaryReaderError> {
    use wasmparser::{Chunk, Parser, Payload};
    let mut parser = Parser::new(0);
    let mut rest = bytes;
    let (mut imports, mut exports) = (Vec::new(), Vec::new());
    while let Chunk::Parsed { consumed, payload } = parser.parse(rest, true)? {
        rest = &rest[consumed..];
        match payload {
            Payload::ComponentImportSection(reader) => {
                for import in reader {
                    imports.push(import?.name.name.to_owned());
                }
            }
            Payload::ComponentExportSection(reader) => {
                for export in reader {
                    exports.push(export?.name.name.to_owned());
                }
            }
            Payload::ModuleSection {
                unchecked_range, ..
            }
            | Payload::ComponentSection {
                unchecked_range, ..
            } => {
                // Skip the nested module or component whole: the parent parser
                // goes on after it.
                let skip = unchecked_range.end.saturating_sub(unchecked_range.start);
                rest = rest.get(skip..).unwrap_or_default();
            }
            Payload::End(_) => break,
            _ => {}
        }
    }
    Ok((imports, exports))
}

/// A component file, looked over ([`open_component`]) and identified once:
/// its length and sha256 (what the cache key is made from).
pub(crate) struct ComponentFile<'a> {
    pub(crate) path: &'a Path,
    pub(crate) len: u64,
    pub(crate) sha: [u8; 32],
}

impl<'a> ComponentFile<'a> {
    pub(crate) fn open(path: &'a Path) -> Result<Self, LoadError> {
        let (_, len) = open_component(path)?;
        let sha = azd_wasm_host_core::files::sha256_file(path).map_err(LoadError::read(path))?;
        Ok(Self { path, len, sha })
    }
}

/// Compiles (or loads from the cache) and validates the component in `file`.
/// Every failure names the file and says what is wrong.
pub(crate) fn load_component(
    engine: &Engine,
    linker: &Linker<HostState>,
    file: &ComponentFile<'_>,
    cache: Option<&CompileCache>,
) -> Result<Loaded, LoadError> {
    let start = Instant::now();
    let (component, outcome) = cache::load_or_compile(engine, file.path, &file.sha, cache)
        .map_err(|e| LoadError::invalid(file.path, format!("{e:#}")))?;
    ready(engine, linker, file, component, outcome, start)
}

/// The component in `file` from `cache` if it holds a valid
/// artifact for `engine`, validated; `Ok(None)` on a miss (nothing compiled).
pub(crate) fn load_cached_component(
    engine: &Engine,
    linker: &Linker<HostState>,
    file: &ComponentFile<'_>,
    cache: &CompileCache,
) -> Result<Option<Loaded>, LoadError> {
    let start = Instant::now();
    let Some(component) = cache::load_cached(engine, &file.sha, cache) else {
        return Ok(None);
    };
    ready(engine, linker, file, component, CacheOutcome::Hit, start).map(Some)
}

/// Validates a compiled or loaded component and makes its memory images.
pub(crate) fn ready(
    engine: &Engine,
    linker: &Linker<HostState>,
    file: &ComponentFile<'_>,
    component: Component,
    outcome: CacheOutcome,
    start: Instant,
) -> Result<Loaded, LoadError> {
    let pre = validate(engine, linker, &component).map_err(|why| LoadError::NotAProvider {
        path: file.path.to_owned(),
        why,
    })?;
    prepare_memory_images(&component);
    Ok(Loaded {
        component,
        pre,
        outcome,
        load_time: start.elapsed(),
        bytes_len: file.len,
    })
}

/// Makes the copy-on-write images of the component's memories now, on the
/// loading thread, instead of at the first instantiation (the first Initialize).
/// A failure only means the first instantiation makes them (or copies).
fn prepare_memory_images(component: &Component) {
    if let Err(e) = component.initialize_copy_on_write_image() {
        tracing::debug!(error = %format!("{e:#}"), "memory images left for the first instance");
    }
}

/// Type-checks `component` against our world: the export must exist with the
/// right functions, and every import must be one the host links; otherwise
/// what does not fit, and the fix.
fn validate(
    engine: &Engine,
    linker: &Linker<HostState>,
    component: &Component,
) -> Result<ProvisioningProviderPre<HostState>, String> {
    let ty = component.component_type();
    let exports: Vec<&str> = ty.exports(engine).map(|(name, _)| name).collect();
    if !exports.contains(&PROVIDER_EXPORT) {
        let found = if exports.is_empty() {
            "nothing".to_owned()
        } else {
            exports.join(", ")
        };
        return Err(format!(
            "it does not export `{PROVIDER_EXPORT}` (it exports {found}): it was built for another \
             world; build it for {WORLD}"
        ));
    }
    let provider = ty
        .exports(engine)
        .find(|(name, _)| *name == PROVIDER_EXPORT)
        .map(|(_, export)| export.ty);
    if let Some(wasmtime::component::types::ComponentItem::ComponentInstance(provider)) = provider {
        let present: Vec<&str> = provider.exports(engine).map(|(name, _)| name).collect();
        // The functions of the export: one per request kind, named as the kind.
        let missing: Vec<&str> = RequestKind::ALL
            .into_iter()
            .map(RequestKind::name)
            .filter(|f| !present.contains(f))
            .collect();
        if !missing.is_empty() {
            return Err(format!(
                "its `{PROVIDER_EXPORT}` lacks the function{} `{}` (rebuild it against this \
                 host's WIT, {WORLD})",
                if missing.len() == 1 { "" } else { "s" },
                missing.join("`, `")
            ));
        }
    }
    let instance_pre = linker.instantiate_pre(component).map_err(|e| {
        format!("it imports something this host cannot provide: {e:#} (the host provides WASI 0.2 and {WORLD})")
    })?;
    ProvisioningProviderPre::new(instance_pre).map_err(|e| {
        format!("its `{PROVIDER_EXPORT}` does not match {WORLD}: {e:#} (rebuild it against this host's WIT)")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_provider_interface_has_one_function_per_request_kind_named_as_it() {
        let mut resolve = wit_parser::Resolve::default();
        resolve
            .push_dir(azd_wasm_host_fixtures::wit_dir())
            .expect("the repository's WIT");
        let (_, provider) = resolve
            .interfaces
            .iter()
            .find(|(id, i)| {
                i.name.as_deref() == Some("provider")
                    && resolve.id_of(*id).as_deref() == Some(PROVIDER_EXPORT)
            })
            .expect("the provider interface");
        let mut functions: Vec<&str> = provider.functions.keys().map(String::as_str).collect();
        let mut kinds: Vec<&str> = RequestKind::ALL
            .into_iter()
            .map(RequestKind::name)
            .collect();
        functions.sort_unstable();
        kinds.sort_unstable();
        assert_eq!(functions, kinds);
    }
}
