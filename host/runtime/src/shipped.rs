//! The code a package ships: `azd-wasm-host package` compiles the component
//! into `precompiled/` beside the manifest, and `listen` loads it from there
//! when it sits beside the very binary that runs it.

use std::path::{Path, PathBuf};

use anyhow::Context as _;

use crate::cache::{self, CacheOutcome, create_private_dir};
use crate::engine::{self, ComponentFile};
use crate::manifest::Manifest;

/// The folder beside a packaged manifest that holds the component's code,
/// compiled by `azd-wasm-host package` for the archive's platform.
pub const PRECOMPILED_DIR: &str = "precompiled";

/// The code `package` shipped beside the manifest (`precompiled/`), when it
/// is there, trusted like a cache (the user's alone) and made by this very
/// host for this component; `None` otherwise (the caller compiles).
pub(crate) fn shipped_code(
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
/// still find the entry stale and compile anyway. `cache_dir` is the cache a
/// start would use.
pub fn is_compiled(path: &Path, cache_dir: Option<&Path>) -> bool {
    let Ok(manifest) = Manifest::resolve(path, None) else {
        return false;
    };
    let Ok(sha) = cache::sha256_file(&manifest.component) else {
        return false;
    };
    let shipped = shipped_dir(&manifest);
    let dirs: Vec<PathBuf> = cache_dir
        .map(Path::to_path_buf)
        .into_iter()
        .chain(shipped)
        .collect();
    engine::shared_engine()
        .ok()
        .into_iter()
        .chain(engine::quick_engine())
        .any(|engine| dirs.iter().any(|dir| cache::has_entry(&engine, &sha, dir)))
}
