//! The compile cache: precompiled components, so a big guest starts in
//! milliseconds instead of seconds.
//!
//! An entry is the output of `Component::serialize()`, stored as
//! `<key>.cwasm`, with its tag in `<key>.mac`; the key is the sha256 of the
//! component bytes, the wasmtime version and the engine's
//! `precompile_compatibility_hash()`. An entry is native code the host will
//! run, so it is **authenticated before it is mapped**: the tag is an
//! HMAC-SHA256, under the user's secret ([`CacheKey`], kept in the trust
//! folder, never in the cache), of the entry's key and the sha256 of the
//! artifact; a load opens the artifact once (never through a link), hashes
//! it through that handle, checks the tag, and wasmtime maps that same open
//! file (`opened`). An entry planted, changed, truncated or written under
//! another secret is refused, logged and recompiled over; never trusted.
//!
//! Files are written to a temporary file in the cache directory and renamed
//! into place, so concurrent writers cannot corrupt each other. The artifacts
//! are kept under 2 GiB, oldest evicted first. Any cache failure (read-only
//! directory, full disk) only costs a compile.
//!
//! The folder is held to the trust folder's checks as well ([`trusted_dir`]):
//! never inside a git work tree or an azd project (what arrives with a
//! clone), created private (0700), used only while it belongs to the user
//! and nobody else may write to it, and each entry must belong to the user
//! too. Otherwise the component is compiled without the cache, and the debug
//! log says why.

#[cfg(feature = "compiler")]
use std::hash::{Hash, Hasher};
use std::io::Write as _;
use std::path::{Path, PathBuf};

use azd_wasm_host_core::files;
use ring::hmac;
use sha2::{Digest, Sha256};
use wasmtime::Engine;
use wasmtime::component::Component;

use crate::code::opened::OpenedCode;

/// The cache keeps its artifacts under this many bytes, evicting the oldest.
const MAX_CACHE_BYTES: u64 = 2 << 30;
/// Version of the entry layout; part of the key and of every tag, so a new
/// layout never meets an old file.
const ENTRY_FORMAT: &[u8] = b"azd-wasm-host cache 3\0";
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
    /// Compiled; the cache entry was refused (corrupt, stale, or not
    /// authenticated) and was rebuilt.
    Rebuilt,
    /// Compiled; no cache is in use or it could not be written.
    Uncached,
}

/// The secret the cache's entries are authenticated with: the user's
/// (the trust folder's `keys/cache.key`, read by the binary), so that whoever
/// can write the cache's folder still cannot make an entry the host maps.
#[derive(Clone)]
pub struct CacheKey(hmac::Key);

impl CacheKey {
    /// The key of `secret`.
    pub fn new(secret: &[u8; 32]) -> Self {
        Self(hmac::Key::new(hmac::HMAC_SHA256, secret))
    }

    /// A key of this process alone (its entries are refused by any other
    /// process): for tests, and where no secret can be kept. `None` when the
    /// system has no random bytes to give.
    pub fn ephemeral() -> Option<Self> {
        hmac::Key::generate(hmac::HMAC_SHA256, &ring::rand::SystemRandom::new())
            .ok()
            .map(Self)
    }

    /// The tag of the entry `name` whose artifact's sha256 is `sha256` (hex).
    fn tag_input(name: &str, sha256: &str) -> Vec<u8> {
        [ENTRY_FORMAT, name.as_bytes(), b"\0", sha256.as_bytes()].concat()
    }

    fn sign(&self, name: &str, sha256: &str) -> String {
        hex::encode(hmac::sign(&self.0, &Self::tag_input(name, sha256)))
    }

    fn verify(&self, name: &str, sha256: &str, tag: &str) -> bool {
        hex::decode(tag.trim())
            .is_ok_and(|tag| hmac::verify(&self.0, &Self::tag_input(name, sha256), &tag).is_ok())
    }
}

impl std::fmt::Debug for CacheKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CacheKey(…)")
    }
}

/// A compile cache: its folder and the key its entries are authenticated with.
#[derive(Clone, Debug)]
pub struct CompileCache {
    dir: PathBuf,
    key: CacheKey,
}

impl CompileCache {
    /// The cache in `dir`, its entries authenticated with `key`.
    pub fn new(dir: impl Into<PathBuf>, key: CacheKey) -> Self {
        Self {
            dir: dir.into(),
            key,
        }
    }

    /// Its folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

/// The user's cache directory for the host: `azd-wasm-host` in
/// `$XDG_CACHE_HOME` or `~/.cache` on Linux, `~/Library/Caches` on macOS,
/// `%LOCALAPPDATA%` on Windows. (`AZD_WASM_HOST_CACHE_DIR`, which overrides
/// it, is read by the binary.)
pub fn user_cache_dir() -> Option<PathBuf> {
    dirs::cache_dir().map(|d| d.join("azd-wasm-host"))
}

/// Creates `dir` if missing (private to the user) and checks that it is not
/// one a repository or project carries and only the user can write to it.
/// `Err` says why it cannot be trusted.
pub(crate) fn trusted_dir(dir: &Path) -> Result<(), String> {
    if let Some(carried) = files::carried_by(dir, dirs::home_dir().as_deref()) {
        return Err(format!(
            "it is inside {} {} (what arrives with a clone never holds code the host runs)",
            carried.what,
            carried.inside.display()
        ));
    }
    files::create_private_dir(dir).map_err(|e| format!("cannot create it: {e}"))?;
    let meta = std::fs::metadata(dir).map_err(|e| format!("cannot inspect it: {e}"))?;
    if !meta.is_dir() {
        return Err("it is not a directory".to_owned());
    }
    files::owned_by_user_alone(&meta).map_err(|why| why.to_string())?;
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

/// An entry's files in `dir`: its artifact and its tag.
fn entry_paths(dir: &Path, name: &str) -> (PathBuf, PathBuf) {
    (
        dir.join(format!("{name}.cwasm")),
        dir.join(format!("{name}.mac")),
    )
}

/// Loads the component at `path`, whose sha256 is `component_sha`, from the
/// cache, or compiles it (reading it only then) and stores the artifact.
pub(crate) fn load_or_compile(
    engine: &Engine,
    path: &Path,
    component_sha: &[u8; 32],
    cache: Option<&CompileCache>,
) -> wasmtime::Result<(Component, CacheOutcome)> {
    let compile = || compile_file(engine, path, component_sha);
    let Some(cache) = cache else {
        return Ok((compile()?, CacheOutcome::Uncached));
    };
    if let Err(why) = trusted_dir(&cache.dir) {
        tracing::debug!(dir = %cache.dir.display(), %why, "compile cache not trusted; compiling without it");
        return Ok((compile()?, CacheOutcome::Uncached));
    }
    let name = key(engine, component_sha);
    let mut outcome = CacheOutcome::Stored;
    match load_entry(engine, cache, &name) {
        Ok(Some(component)) => return Ok((component, CacheOutcome::Hit)),
        Ok(None) => {}
        Err(why) => {
            tracing::warn!(entry = %entry_paths(&cache.dir, &name).0.display(), %why, "compile cache entry refused; recompiling");
            outcome = CacheOutcome::Rebuilt;
        }
    }
    let component = compile()?;
    match store_entry(&component, cache, &name) {
        Ok(()) => Ok((component, outcome)),
        Err(e) => {
            tracing::debug!(dir = %cache.dir.display(), error = %e, "compile cache not written; continuing without it");
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

/// The cached artifact of `component_sha` for `engine`, if the cache holds a
/// valid one (a refused entry is logged and left for the next compile to
/// rebuild).
pub(crate) fn load_cached(
    engine: &Engine,
    component_sha: &[u8; 32],
    cache: &CompileCache,
) -> Option<Component> {
    if let Err(why) = trusted_dir(&cache.dir) {
        tracing::debug!(dir = %cache.dir.display(), %why, "compile cache not trusted");
        return None;
    }
    let name = key(engine, component_sha);
    match load_entry(engine, cache, &name) {
        Ok(found) => found,
        Err(why) => {
            tracing::warn!(entry = %entry_paths(&cache.dir, &name).0.display(), %why, "compile cache entry refused");
            None
        }
    }
}

/// Whether `dir` has an entry for `component_sha` compiled by `engine` (a look
/// at the file names only: loading it may still refuse it).
pub(crate) fn has_entry(engine: &Engine, component_sha: &[u8; 32], dir: &Path) -> bool {
    let (artifact, tag) = entry_paths(dir, &key(engine, component_sha));
    artifact.is_file() && tag.is_file()
}

/// Authenticates the entry `name`, then loads it from the very file it
/// authenticated. `Ok(None)` when there is no entry; `Err` says why an entry
/// is refused.
fn load_entry(
    engine: &Engine,
    cache: &CompileCache,
    name: &str,
) -> Result<Option<Component>, String> {
    let (artifact, tag_path) = entry_paths(&cache.dir, name);
    let tag = match std::fs::read_to_string(&tag_path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return if artifact.exists() {
                Err("it has no tag: it was not written by this host".to_owned())
            } else {
                Ok(None)
            };
        }
        Err(e) => return Err(format!("cannot read its tag: {e}")),
    };
    let opened = match OpenedCode::open(&artifact) {
        Ok(opened) => opened,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot open it: {e}")),
    };
    opened
        .metadata()
        .map_err(|e| e.to_string())
        .and_then(|meta| files::owned_by_user_alone(&meta).map_err(|why| why.to_string()))
        .map_err(|why| format!("it cannot be trusted: {why}"))?;
    if !cache.key.verify(name, opened.sha256(), &tag) {
        return Err(
            "it is not authenticated: its tag does not match (planted, changed, truncated, or \
             written under another secret)"
                .to_owned(),
        );
    }
    opened
        .deserialize(engine)
        .map(Some)
        .map_err(|e| format!("wasmtime refused it: {e:#}"))
}

/// Maps a precompiled artifact into memory; where the platform cannot map
/// it executable (Wine's file mappings refuse, for one), loads a copy read
/// into memory instead, after checking that copy against `sha256`. Used for
/// the code `package` has just compiled (`shipped`).
#[cfg(feature = "compiler")]
#[allow(
    unsafe_code,
    reason = "Component::deserialize_file and ::deserialize trust their input to be wasmtime's own \
              output (and a mapped file to stay unchanged). One caller: the code `package` has just \
              compiled and written into the provider's folder (the copy is checked against the \
              sha256 of what it wrote)"
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

/// Writes an entry: the artifact, then its tag, each to a temp file in the
/// cache renamed into place (atomic; a reader never sees a partial file, and
/// a tag that does not match its artifact only causes a rebuild).
fn store_entry(component: &Component, cache: &CompileCache, name: &str) -> anyhow::Result<()> {
    let bytes = component.serialize()?;
    let (artifact, tag) = entry_paths(&cache.dir, name);
    write_atomic(&cache.dir, &artifact, &bytes)?;
    let sha256 = hex::encode(Sha256::digest(&bytes));
    write_atomic(&cache.dir, &tag, cache.key.sign(name, &sha256).as_bytes())?;
    prune(&cache.dir, MAX_CACHE_BYTES, &artifact);
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
        // The tag first: an artifact without one is never trusted.
        let _ = std::fs::remove_file(path.with_extension("mac"));
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

    fn cache(dir: &Path) -> CompileCache {
        CompileCache::new(dir, CacheKey::ephemeral().unwrap())
    }

    #[test]
    fn garbage_entries_are_rejected() {
        let engine = Engine::default();
        let dir = tempfile::tempdir().unwrap();
        let cache = cache(dir.path());
        let (artifact, tag) = entry_paths(dir.path(), "k");
        assert!(matches!(load_entry(&engine, &cache, "k"), Ok(None)));
        std::fs::write(&artifact, b"artifact").unwrap();
        let why = load_entry(&engine, &cache, "k").unwrap_err();
        assert!(why.contains("no tag"), "{why}");
        std::fs::write(&tag, hex::encode([0u8; 32])).unwrap();
        let why = load_entry(&engine, &cache, "k").unwrap_err();
        assert!(why.contains("not authenticated"), "{why}");
        // Authenticated but not wasmtime's: still refused, by wasmtime.
        let sha = hex::encode(Sha256::digest(b"artifact"));
        std::fs::write(&tag, cache.key.sign("k", &sha)).unwrap();
        let why = load_entry(&engine, &cache, "k").unwrap_err();
        assert!(why.contains("wasmtime"), "{why}");
    }

    /// What an attacker who can write the cache's folder (or point the
    /// cache at one) plants is never mapped: a real artifact with a
    /// checksum as the old layout kept it, one with a tag made under another
    /// secret, and a good entry whose artifact is swapped for another
    /// component's; each is refused and compiled over.
    #[cfg(feature = "compiler")]
    #[test]
    fn a_planted_or_changed_entry_is_refused_and_recompiled() {
        let engine = Engine::default();
        let dir = tempfile::tempdir().unwrap();
        let ours = cache(dir.path());
        let wasm = dir.path().join("c.wasm");
        std::fs::write(&wasm, wat::parse_str("(component)").unwrap()).unwrap();
        let sha = files::sha256_file(&wasm).unwrap();
        let (_, outcome) = load_or_compile(&engine, &wasm, &sha, Some(&ours)).unwrap();
        assert_eq!(outcome, CacheOutcome::Stored);
        let (_, outcome) = load_or_compile(&engine, &wasm, &sha, Some(&ours)).unwrap();
        assert_eq!(outcome, CacheOutcome::Hit);
        let name = key(&engine, &sha);
        let (artifact, tag) = entry_paths(dir.path(), &name);

        // Another component's code in its place (its own entry, valid under
        // its own name): refused.
        let other = dir.path().join("o.wasm");
        std::fs::write(&other, wat::parse_str("(component (core module))").unwrap()).unwrap();
        let other_sha = files::sha256_file(&other).unwrap();
        load_or_compile(&engine, &other, &other_sha, Some(&ours)).unwrap();
        let (other_artifact, _) = entry_paths(dir.path(), &key(&engine, &other_sha));
        std::fs::copy(&other_artifact, &artifact).unwrap();
        let (_, outcome) = load_or_compile(&engine, &wasm, &sha, Some(&ours)).unwrap();
        assert_eq!(outcome, CacheOutcome::Rebuilt, "a swapped artifact");
        assert_eq!(
            load_or_compile(&engine, &wasm, &sha, Some(&ours))
                .unwrap()
                .1,
            CacheOutcome::Hit,
            "rebuilt over"
        );

        // Tagged under another secret (a planted entry): refused.
        let theirs = cache(dir.path());
        std::fs::remove_file(&artifact).unwrap();
        std::fs::remove_file(&tag).unwrap();
        load_or_compile(&engine, &wasm, &sha, Some(&theirs)).unwrap();
        let (_, outcome) = load_or_compile(&engine, &wasm, &sha, Some(&ours)).unwrap();
        assert_eq!(outcome, CacheOutcome::Rebuilt, "another secret's entry");
        assert!(load_cached(&engine, &sha, &theirs).is_none());
    }

    #[test]
    fn a_cache_a_repository_or_project_carries_is_not_trusted() {
        for marker in [".git", "azure.yaml"] {
            let tmp = tempfile::tempdir().unwrap();
            let marked = tmp.path().join(marker);
            if marker == ".git" {
                std::fs::create_dir(&marked).unwrap();
            } else {
                std::fs::write(&marked, "name: p\n").unwrap();
            }
            let why = trusted_dir(&tmp.path().join(".cache/azd-wasm-host")).unwrap_err();
            assert!(why.contains("is inside"), "{marker}: {why}");
            assert!(
                !tmp.path().join(".cache").exists(),
                "{marker}: nothing is made there"
            );
        }
    }

    #[test]
    fn prune_evicts_the_oldest_entries_first() {
        let dir = tempfile::tempdir().unwrap();
        let now = std::time::SystemTime::now();
        let path = |n: u32| dir.path().join(format!("{n}.cwasm"));
        for n in 0..4u32 {
            std::fs::write(path(n), [0u8; 100]).unwrap();
            std::fs::write(path(n).with_extension("mac"), "x").unwrap();
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
        assert!(!path(1).with_extension("mac").exists());
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
