//! The compile cache: precompiled components, so a big guest starts in
//! milliseconds instead of seconds.
//!
//! An entry is the output of `Component::serialize()`, stored as
//! `<key>.cwasm`, with its own sha256 in `<key>.sha256`; the key is the
//! sha256 of the component bytes, the wasmtime version and the engine's
//! `precompile_compatibility_hash()`. A load checks the artifact against its
//! checksum, so a truncated or corrupt entry is detected and rebuilt, never
//! trusted; then wasmtime maps the file (no copy). Files are written to a
//! temporary file in the cache directory and renamed into place, so
//! concurrent writers cannot corrupt each other. The artifacts are kept under
//! 2 GiB, oldest evicted first. Any cache failure (read-only directory, full
//! disk) only costs a compile.
//!
//! A cache entry is native code the host will run, so the cache is trusted
//! only when nobody else could have written it ([`trusted_dir`]): the directory
//! is created private (0700) and used only while it belongs to the user and
//! no one else may write to it, and each entry must belong to the user too.
//! Otherwise the component is compiled without the cache, and the debug log
//! says why.

#[cfg(feature = "compiler")]
use std::hash::{Hash, Hasher};
use std::io::Write as _;
use std::path::{Path, PathBuf};

use azd_wasm_host_core::files;
use sha2::{Digest, Sha256};
use wasmtime::Engine;
use wasmtime::component::Component;

/// The cache keeps its artifacts under this many bytes, evicting the oldest.
const MAX_CACHE_BYTES: u64 = 2 << 30;
/// Version of the entry layout; part of the key, so a new layout never meets an old file.
const ENTRY_FORMAT: &[u8] = b"azd-wasm-host cache 2\0";
/// The wasmtime the workspace pins (`=48.0.8`). wasmtime exports no version
/// constant; its compatibility hash covers the version too, so this is belt
/// and braces.
pub(crate) const WASMTIME_VERSION: &str = "48.0.8";

/// Why a build without compilers (the sidecar) cannot start a component that
/// has no usable precompiled code.
pub(crate) const NO_COMPILER: &str = "this azd-wasm-host is the packaged sidecar, which carries no \
    compiler: it runs only the code `azd-wasm-host package` precompiled beside it";

/// Where a component came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheOutcome {
    /// Loaded from a valid cache entry.
    Hit,
    /// Compiled, and the artifact was stored.
    Stored,
    /// Compiled; the cache entry was corrupt or stale and was rebuilt.
    Rebuilt,
    /// Compiled; no cache is in use or it could not be written.
    Uncached,
}

/// The user's cache directory for the host: `azd-wasm-host` in
/// `$XDG_CACHE_HOME` or `~/.cache` on Linux, `~/Library/Caches` on macOS,
/// `%LOCALAPPDATA%` on Windows. (`AZD_WASM_HOST_CACHE_DIR`, which overrides
/// it, is read by the binary.)
pub fn user_cache_dir() -> Option<PathBuf> {
    dirs::cache_dir().map(|d| d.join("azd-wasm-host"))
}

/// Creates `dir` if missing (private to the user) and checks that only the
/// user can write to it. `Err` says why it cannot be trusted.
pub(crate) fn trusted_dir(dir: &Path) -> Result<(), String> {
    files::create_private_dir(dir).map_err(|e| format!("cannot create it: {e}"))?;
    let meta = std::fs::metadata(dir).map_err(|e| format!("cannot inspect it: {e}"))?;
    if !meta.is_dir() {
        return Err("it is not a directory".to_owned());
    }
    files::owned_by_user_alone(&meta)?;
    trusted_place(dir)
}

/// On Windows the trust check is by place: only a folder beneath the user's
/// own profile is trusted (`%LOCALAPPDATA%`, the default, and azd's
/// `.azd\extensions` lie there, and the profile's ACL admits only the user,
/// administrators and the system). A cache set elsewhere, such as
/// `C:\ProgramData` or a share, is refused and every start compiles. Owners and
/// ACLs themselves are read only through the Win32 security API, which this
/// crate does not call (it has no unsafe code).
#[cfg(windows)]
fn trusted_place(dir: &Path) -> Result<(), String> {
    let profile = dirs::home_dir()
        .and_then(|home| std::fs::canonicalize(home).ok())
        .ok_or("the user's profile folder is unknown")?;
    let dir = std::fs::canonicalize(dir).map_err(|e| format!("cannot resolve it: {e}"))?;
    if dir.starts_with(&profile) {
        Ok(())
    } else {
        Err(format!(
            "it is outside the user's profile {} (on Windows the compiled code is kept only \
             beneath it)",
            profile.display()
        ))
    }
}

#[cfg(not(windows))]
fn trusted_place(_dir: &Path) -> Result<(), String> {
    Ok(())
}

/// Feeds `Hash` output into sha256 (stable across runs, unlike `DefaultHasher`).
#[cfg(feature = "compiler")]
struct ShaHasher<'a>(&'a mut Sha256);

#[cfg(feature = "compiler")]
impl Hasher for ShaHasher<'_> {
    fn finish(&self) -> u64 {
        0
    }
    fn write(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }
}

/// The cache key of `component_sha` compiled by `engine`.
fn key(engine: &Engine, component_sha: &[u8]) -> String {
    let mut h = Sha256::new();
    h.update(ENTRY_FORMAT);
    h.update(component_sha);
    h.update(b"\0wasmtime ");
    h.update(WASMTIME_VERSION.as_bytes());
    h.update(b"\0");
    #[cfg(feature = "compiler")]
    engine
        .precompile_compatibility_hash()
        .hash(&mut ShaHasher(&mut h));
    // Without compilers (the sidecar) the key matches no entry: only shipped code runs.
    #[cfg(not(feature = "compiler"))]
    {
        let _ = engine;
        h.update(b"no compiler");
    }
    hex::encode(h.finalize())
}

/// Loads the component at `path`, whose sha256 is `component_sha`, from the
/// cache in `dir`, or compiles it (reading it only then) and stores the artifact.
pub(crate) fn load_or_compile(
    engine: &Engine,
    path: &Path,
    component_sha: &[u8; 32],
    dir: Option<&Path>,
) -> wasmtime::Result<(Component, CacheOutcome)> {
    let compile = || compile_file(engine, path, component_sha);
    let Some(dir) = dir else {
        return Ok((compile()?, CacheOutcome::Uncached));
    };
    if let Err(why) = trusted_dir(dir) {
        tracing::debug!(dir = %dir.display(), %why, "compile cache not trusted; compiling without it");
        return Ok((compile()?, CacheOutcome::Uncached));
    }
    let key = key(engine, component_sha);
    let artifact = dir.join(format!("{key}.cwasm"));
    let checksum = dir.join(format!("{key}.sha256"));
    let mut outcome = CacheOutcome::Stored;
    match load_entry(engine, &artifact, &checksum) {
        Ok(Some(component)) => return Ok((component, CacheOutcome::Hit)),
        Ok(None) => {}
        Err(why) => {
            tracing::warn!(entry = %artifact.display(), %why, "compile cache entry rejected; recompiling");
            outcome = CacheOutcome::Rebuilt;
        }
    }
    let component = compile()?;
    match store_entry(&component, dir, &artifact, &checksum) {
        Ok(()) => Ok((component, outcome)),
        Err(e) => {
            tracing::debug!(dir = %dir.display(), error = %e, "compile cache not written; continuing without it");
            Ok((component, CacheOutcome::Uncached))
        }
    }
}

/// Compiles the component at `path`, checking it is still the one whose
/// sha256 is `component_sha`.
#[cfg(feature = "compiler")]
fn compile_file(
    engine: &Engine,
    path: &Path,
    component_sha: &[u8; 32],
) -> wasmtime::Result<Component> {
    let bytes = std::fs::read(path)?;
    if Sha256::digest(&bytes).as_slice() != component_sha {
        wasmtime::bail!("the file changed while it was being loaded; try again");
    }
    Component::new(engine, &bytes)
}

/// A build without wasmtime's compilers (the shipped sidecar) compiles nothing.
#[cfg(not(feature = "compiler"))]
fn compile_file(_: &Engine, _: &Path, _: &[u8; 32]) -> wasmtime::Result<Component> {
    wasmtime::bail!("{NO_COMPILER}")
}

/// The cached artifact of `component_sha` for `engine`, if `dir` holds a valid
/// one (a rejected entry is logged and left for the next compile to rebuild).
pub(crate) fn load_cached(
    engine: &Engine,
    component_sha: &[u8; 32],
    dir: &Path,
) -> Option<Component> {
    if let Err(why) = trusted_dir(dir) {
        tracing::debug!(dir = %dir.display(), %why, "compile cache not trusted");
        return None;
    }
    let key = key(engine, component_sha);
    let artifact = dir.join(format!("{key}.cwasm"));
    let checksum = dir.join(format!("{key}.sha256"));
    match load_entry(engine, &artifact, &checksum) {
        Ok(found) => found,
        Err(why) => {
            tracing::warn!(entry = %artifact.display(), %why, "compile cache entry rejected");
            None
        }
    }
}

/// Whether `dir` has an entry for `component_sha` compiled by `engine` (a look
/// at the file names only: loading it may still find it stale).
pub(crate) fn has_entry(engine: &Engine, component_sha: &[u8; 32], dir: &Path) -> bool {
    let key = key(engine, component_sha);
    dir.join(format!("{key}.cwasm")).is_file() && dir.join(format!("{key}.sha256")).is_file()
}

/// Checks an entry against its recorded checksum, then loads it. `Ok(None)`
/// when there is no entry; `Err` says why an entry cannot be trusted.
fn load_entry(
    engine: &Engine,
    artifact: &Path,
    checksum: &Path,
) -> Result<Option<Component>, String> {
    let want = match std::fs::read_to_string(checksum) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return if artifact.exists() {
                Err("its checksum file is missing".to_owned())
            } else {
                Ok(None)
            };
        }
        Err(e) => return Err(format!("cannot read its checksum: {e}")),
    };
    if let Err(why) = std::fs::metadata(artifact)
        .map_err(|e| e.to_string())
        .and_then(|meta| files::owned_by_user_alone(&meta))
    {
        return if artifact.exists() {
            Err(format!("it cannot be trusted: {why}"))
        } else {
            Ok(None)
        };
    }
    let got = match files::sha256_file(artifact) {
        Ok(sha) => hex::encode(sha),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read it: {e}")),
    };
    if got != want.trim() {
        return Err("checksum mismatch (corrupt or truncated)".to_owned());
    }
    deserialize_file(engine, artifact, want.trim())
        .map(Some)
        .map_err(|e| format!("wasmtime refused it: {e:#}"))
}

/// Maps a precompiled artifact into memory; where the platform cannot map
/// it executable (Wine's file mappings refuse, for one), loads a copy read
/// into memory instead, after checking that copy against `sha256`. Used for
/// cache entries and for the code a package ships (`shipped`).
#[allow(
    unsafe_code,
    reason = "Component::deserialize_file and ::deserialize trust their input to be wasmtime's own \
              output (and a mapped file to stay unchanged). Two callers: an entry of the user's own \
              cache directory whose sha256 just matched the checksum written with it (the copy is \
              checked again), named by the engine's compatibility hash, replaced only by atomic \
              rename; and the code `package` shipped beside the host binary itself, trusted exactly \
              as far as that binary (the same folder of the installed extension)"
)]
pub(crate) fn deserialize_file(
    engine: &Engine,
    artifact: &Path,
    sha256: &str,
) -> wasmtime::Result<Component> {
    // SAFETY: see the reason above; wasmtime also checks the artifact's header
    // and engine settings.
    let mapped = match unsafe { Component::deserialize_file(engine, artifact) } {
        Ok(component) => return Ok(component),
        Err(e) => e,
    };
    let bytes = std::fs::read(artifact)?;
    if hex::encode(Sha256::digest(&bytes)) != sha256 {
        return Err(mapped.context("and the file changed since its checksum was checked"));
    }
    tracing::debug!(entry = %artifact.display(), error = %format!("{mapped:#}"), "cannot map the cached code; loading a copy");
    // SAFETY: as above, for bytes whose checksum matched just now.
    unsafe { Component::deserialize(engine, &bytes) }
        .map_err(|e| e.context(format!("mapping it failed too: {mapped:#}")))
}

/// Writes an entry: the artifact, then its checksum, each to a temp file in
/// `dir` renamed into place (atomic; a reader never sees a partial file, and a
/// checksum that does not match its artifact only causes a rebuild).
fn store_entry(
    component: &Component,
    dir: &Path,
    artifact: &Path,
    checksum: &Path,
) -> anyhow::Result<()> {
    let bytes = component.serialize()?;
    write_atomic(dir, artifact, &bytes)?;
    write_atomic(
        dir,
        checksum,
        hex::encode(Sha256::digest(&bytes)).as_bytes(),
    )?;
    prune(dir, MAX_CACHE_BYTES, artifact);
    Ok(())
}

/// Removes the oldest entries (by modification time) until the artifacts in
/// `dir` take at most `cap` bytes; `keep` is never removed. Best effort: an
/// entry another process removes first is simply skipped.
fn prune(dir: &Path, cap: u64, keep: &Path) {
    let Ok(read) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<(std::time::SystemTime, u64, PathBuf)> = read
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "cwasm"))
        .filter_map(|p| {
            let meta = std::fs::metadata(&p).ok()?;
            Some((meta.modified().ok()?, meta.len(), p))
        })
        .collect();
    let mut total: u64 = entries.iter().map(|(_, len, _)| len).sum();
    entries.sort();
    for (_, len, path) in entries {
        if total <= cap {
            break;
        }
        if path == keep {
            continue;
        }
        // Checksum first: an artifact without one is never trusted.
        let _ = std::fs::remove_file(path.with_extension("sha256"));
        if std::fs::remove_file(&path).is_ok() {
            tracing::debug!(entry = %path.display(), "compile cache entry evicted");
        }
        total = total.saturating_sub(len);
    }
}

fn write_atomic(dir: &Path, dest: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let mut tmp = tempfile::Builder::new().prefix(".tmp-").tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(dest)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_depends_on_content() {
        let engine = Engine::default();
        assert_eq!(key(&engine, b"a"), key(&engine, b"a"));
        assert_ne!(key(&engine, b"a"), key(&engine, b"b"));
    }

    #[test]
    fn garbage_entries_are_rejected() {
        let engine = Engine::default();
        let dir = tempfile::tempdir().unwrap();
        let artifact = dir.path().join("k.cwasm");
        let checksum = dir.path().join("k.sha256");
        assert!(matches!(
            load_entry(&engine, &artifact, &checksum),
            Ok(None)
        ));
        std::fs::write(&artifact, b"artifact").unwrap();
        assert!(
            load_entry(&engine, &artifact, &checksum)
                .unwrap_err()
                .contains("missing")
        );
        std::fs::write(&checksum, hex::encode([0u8; 32])).unwrap();
        assert!(
            load_entry(&engine, &artifact, &checksum)
                .unwrap_err()
                .contains("checksum")
        );
        std::fs::write(&checksum, hex::encode(Sha256::digest(b"artifact"))).unwrap();
        assert!(
            load_entry(&engine, &artifact, &checksum)
                .unwrap_err()
                .contains("wasmtime")
        );
    }

    #[test]
    fn prune_evicts_the_oldest_entries_first() {
        let dir = tempfile::tempdir().unwrap();
        let now = std::time::SystemTime::now();
        let path = |n: u32| dir.path().join(format!("{n}.cwasm"));
        for n in 0..4u32 {
            std::fs::write(path(n), [0u8; 100]).unwrap();
            std::fs::write(path(n).with_extension("sha256"), "x").unwrap();
            let age = std::time::Duration::from_secs(u64::from(100 - n));
            std::fs::File::options()
                .write(true)
                .open(path(n))
                .unwrap()
                .set_modified(now - age)
                .unwrap();
        }
        // Keep the oldest (it was just written by this process), evict the next.
        prune(dir.path(), 300, &path(0));
        let left: Vec<bool> = (0..4).map(|n| path(n).exists()).collect();
        assert_eq!(left, [true, false, true, true]);
        assert!(!path(1).with_extension("sha256").exists());
        prune(dir.path(), 1000, &path(0));
        assert!(path(2).exists(), "nothing is evicted under the cap");
    }

    #[cfg(unix)]
    #[test]
    fn a_cache_others_can_write_to_is_not_trusted() {
        use std::os::unix::fs::PermissionsExt as _;
        let tmp = tempfile::tempdir().unwrap();
        let fresh = tmp.path().join("a/b/cache");
        trusted_dir(&fresh).expect("a directory we create is trusted");
        let mode = std::fs::metadata(&fresh).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700, "created private");
        let shared = tmp.path().join("shared");
        std::fs::create_dir(&shared).unwrap();
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o777)).unwrap();
        let why = trusted_dir(&shared).unwrap_err();
        assert!(why.contains("others may write"), "{why}");
    }

    #[test]
    fn file_hash_matches_in_memory_hash() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let data: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&path, &data).unwrap();
        assert_eq!(
            files::sha256_file(&path).unwrap().as_slice(),
            Sha256::digest(&data).as_slice()
        );
    }
}
