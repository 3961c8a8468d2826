//! The code a package ships: `azd-wasm-host package` compiles the component
//! for each platform it ships into that archive's `precompiled/`, and
//! `listen` loads it from there, memory-mapped, when it sits beside the very
//! binary that runs it.
//!
//! `precompiled/` holds two files: `provider.cwasm`, wasmtime's serialized
//! component for one platform's baseline CPU (`targets`), and `binding.toml`,
//! what the code belongs to: the component's sha256, the host version, the
//! wasmtime version and the platform, with the code's own sha256. A start
//! checks the binding before it maps anything, so code of another component,
//! another host version or another platform is refused by name; wasmtime then
//! checks its own header (its version, the engine's settings, the CPU's
//! features). The development CLI compiles instead of what it refuses; the
//! sidecar, which has no compiler, fails with the fix (repackage).
//!
//! Before the code is mapped its sha256 is checked against the binding's
//! `code_sha256` and, for a signed provider, against the value the signature
//! gives it ([`SignedCode::Digests`]); the binding's own bytes against the
//! signed value too. A provider whose verified signature names no code
//! ([`SignedCode::NoCode`]) has any code that appears refused. A mismatch
//! is [`LoadError::Untrusted`]: the provider is refused as untrusted, naming the
//! file. The code file is opened once, hashed through that handle, and the
//! same open file is what wasmtime maps (`opened`): a file renamed over it
//! after the check is never the one that runs.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::code::cache::{self, CacheOutcome};
use crate::code::engine::{self, ComponentFile};
use crate::code::targets;
use crate::error::LoadError;
use azd_wasm_host_manifest::Manifest;

use azd_wasm_host_manifest::package::{PRECOMPILED_DIR, ShippedDigests, SignedCode};

use crate::code::opened::OpenedCode;

/// The serialized component in [`PRECOMPILED_DIR`].
const CODE_FILE: &str = "provider.cwasm";
/// What the code belongs to, in [`PRECOMPILED_DIR`].
const BINDING_FILE: &str = "binding.toml";

/// The layout of [`Binding`].
const BINDING_FORMAT: u32 = 1;
/// The version of this host: precompiled code is bound to it.
const HOST_VERSION: &str = env!("CARGO_PKG_VERSION");

/// What a `precompiled/` folder's code belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Binding {
    format: u32,
    /// sha256 of the component the code was compiled from (hex).
    component_sha256: String,
    /// The azd-wasm-host version that compiled it.
    host_version: String,
    /// The wasmtime version that compiled it.
    wasmtime: String,
    /// The platform it runs on, as azd names it (`linux/amd64`).
    platform: String,
    /// The target triple it was compiled for.
    target: String,
    /// sha256 of `provider.cwasm` (hex).
    code_sha256: String,
}

impl Binding {
    /// What code for `component_sha` on `platform` made by this host says.
    fn for_this_host(component_sha: &[u8; 32], platform: &str) -> Self {
        Self {
            format: BINDING_FORMAT,
            component_sha256: hex::encode(component_sha),
            host_version: HOST_VERSION.to_owned(),
            wasmtime: cache::WASMTIME_VERSION.to_owned(),
            platform: platform.to_owned(),
            target: String::new(),
            code_sha256: String::new(),
        }
    }

    /// Why this code does not fit `expected` (made for this machine and
    /// component by this host), or `None` when it does.
    fn mismatch(&self, expected: &Self) -> Option<String> {
        if self.format != expected.format {
            return Some(format!(
                "its binding is format {}, this host reads format {}",
                self.format, expected.format
            ));
        }
        if self.platform != expected.platform {
            return Some(format!(
                "it was compiled for {}, and this is {}",
                self.platform, expected.platform
            ));
        }
        if self.host_version != expected.host_version || self.wasmtime != expected.wasmtime {
            return Some(format!(
                "it was compiled by azd-wasm-host {} (wasmtime {}), and this is azd-wasm-host {} \
                 (wasmtime {})",
                self.host_version, self.wasmtime, expected.host_version, expected.wasmtime
            ));
        }
        if self.component_sha256 != expected.component_sha256 {
            return Some(format!(
                "it was compiled from another component (sha256 {}), not the one beside it \
                 (sha256 {})",
                short(&self.component_sha256),
                short(&expected.component_sha256)
            ));
        }
        None
    }
}

fn short(sha: &str) -> &str {
    sha.get(..12).unwrap_or(sha)
}

/// The outcome of looking for shipped code.
pub(crate) enum Shipped {
    /// Loaded and validated.
    Loaded(engine::Loaded),
    /// There is none to use here (why).
    Absent(String),
    /// There is some, and it does not belong to this component, host or
    /// platform, or wasmtime refused it (why).
    Refused(String),
    /// There is some, and it is not the code that was signed or bound (why,
    /// naming the file): never run, never compiled around
    /// ([`LoadError::Untrusted`]).
    Untrusted(String),
}

/// The code `package` shipped beside the manifest (`precompiled/`), when it
/// is there, beside the running binary, and made for this component, this
/// host and this platform, and its bytes are those its binding and its
/// signature (`signed`) name. A component that does not fit the world is an
/// error, as when it is compiled.
pub(crate) fn shipped_code(
    manifest: &Manifest,
    file: &ComponentFile<'_>,
    signed_code: &SignedCode,
) -> Result<Shipped, LoadError> {
    let dir = match shipped_dir(manifest) {
        Ok(dir) => dir,
        Err(why) => return Ok(Shipped::Absent(why)),
    };
    let code = dir.join(CODE_FILE);
    let signed = match signed_digests(signed_code, &dir) {
        Ok(signed) => signed,
        Err(untrusted) => return Ok(Shipped::Untrusted(untrusted)),
    };
    let binding = match read_binding(&dir, signed.map(|s| s.binding.as_str())) {
        Ok(binding) => binding,
        Err(Checked::Refused(why)) => return Ok(Shipped::Refused(why)),
        Err(Checked::Untrusted(why)) => return Ok(Shipped::Untrusted(why)),
    };
    let expected = Binding::for_this_host(&file.sha, &targets::this_platform());
    if let Some(why) = binding.mismatch(&expected) {
        return Ok(Shipped::Refused(format!(
            "the code in {} does not fit: {why}",
            dir.display()
        )));
    }
    let start = std::time::Instant::now();
    let opened = match check_code(&code, &dir.join(BINDING_FILE), &binding, signed) {
        Ok(opened) => opened,
        Err(Checked::Refused(why)) => return Ok(Shipped::Refused(why)),
        Err(Checked::Untrusted(why)) => return Ok(Shipped::Untrusted(why)),
    };
    let hashed = start.elapsed();
    let engine = engine::shared_engine()?;
    let component = match opened.deserialize(&engine) {
        Ok(component) => component,
        Err(e) => {
            return Ok(Shipped::Refused(format!(
                "wasmtime refused {}: {e:#}",
                code.display()
            )));
        }
    };
    let linker = engine::linker(&engine)?;
    let loaded = engine::ready(&engine, &linker, file, component, CacheOutcome::Hit, start)?;
    tracing::debug!(provider = %manifest.name, code = %code.display(), hash_ms = hashed.as_secs_f64() * 1e3, ms = loaded.load_time.as_secs_f64() * 1e3, signed = signed.is_some(), "provider component loaded from its package's precompiled code (no compile)");
    Ok(Shipped::Loaded(loaded))
}

/// What the code in `dir` is held to: the signed digests, its binding alone
/// (nothing was verified), or nothing at all: a verified signature that
/// names no code refuses any code found.
fn signed_digests<'a>(
    signed_code: &'a SignedCode,
    dir: &Path,
) -> Result<Option<&'a ShippedDigests>, String> {
    match signed_code {
        SignedCode::Digests(digests) => Ok(Some(digests)),
        SignedCode::NotVerified => Ok(None),
        SignedCode::NoCode => Err(format!(
            "{} holds precompiled code, and the provider's signature names none: code that was \
             not signed never runs; reinstall the provider from its publisher",
            dir.display()
        )),
    }
}

/// Why shipped code is not used.
enum Checked {
    Refused(String),
    Untrusted(String),
}

/// The code, opened once, its sha256 (read through that handle) checked
/// against its binding's `code_sha256` and the signed value, before anything
/// maps it.
fn check_code(
    code: &Path,
    binding_path: &Path,
    binding: &Binding,
    signed: Option<&ShippedDigests>,
) -> Result<OpenedCode, Checked> {
    let opened = OpenedCode::open(code)
        .map_err(|e| Checked::Refused(format!("cannot read {}: {e}", code.display())))?;
    let actual = opened.sha256().to_owned();
    if let Some(signed) = signed
        && !actual.eq_ignore_ascii_case(&signed.code)
    {
        return Err(Checked::Untrusted(changed(code, &actual, &signed.code)));
    }
    if !actual.eq_ignore_ascii_case(&binding.code_sha256) {
        return Err(Checked::Untrusted(format!(
            "{} is not the code its binding {} names: its sha256 is {actual}, the binding says \
             {:?}; reinstall the provider from its publisher",
            code.display(),
            binding_path.display(),
            binding.code_sha256
        )));
    }
    Ok(opened)
}

/// The refusal of a file whose bytes are not the signed ones.
fn changed(path: &Path, actual: &str, signed: &str) -> String {
    format!(
        "{} was changed after it was signed: its sha256 is {actual}, the signature covers \
         {signed}; reinstall the provider from its publisher",
        path.display()
    )
}

/// The error of a build that cannot compile, for a component whose shipped
/// code is absent or refused (`why`): what is wrong and the fix.
pub(crate) fn no_runnable_code(manifest: &Manifest, why: String) -> LoadError {
    LoadError::NoRunnableCode {
        provider: manifest.name.clone(),
        why,
        fix: format!(
            "{}, for this component, this host version ({HOST_VERSION}) and this platform ({}). \
             Repackage the provider with `azd-wasm-host package` and install it again",
            cache::NO_COMPILER,
            targets::this_platform()
        ),
    }
}

/// `binding.toml` in `dir`; its bytes, when `signed` gives their sha256,
/// must be those.
fn read_binding(dir: &Path, signed: Option<&str>) -> Result<Binding, Checked> {
    let path = dir.join(BINDING_FILE);
    let bytes = std::fs::read(&path)
        .map_err(|e| Checked::Refused(format!("cannot read {}: {e}", path.display())))?;
    if let Some(signed) = signed {
        let actual = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(&bytes));
        if !actual.eq_ignore_ascii_case(signed) {
            return Err(Checked::Untrusted(changed(&path, &actual, signed)));
        }
    }
    std::str::from_utf8(&bytes)
        .map_err(|e| e.to_string())
        .and_then(|text| toml::from_str(text).map_err(|e| e.to_string()))
        .map_err(|e| {
            Checked::Refused(format!(
                "{} is not a binding this host reads: {e}",
                path.display()
            ))
        })
}

/// `precompiled/` beside the manifest, when there is one and the manifest
/// sits beside the running binary (the layout of an installed extension);
/// otherwise why not.
///
/// Precompiled code is native code that runs outside the sandbox, so it is
/// trusted exactly as far as the binary itself: only from the binary's own
/// folder, never from a project or download that merely ships a
/// `precompiled/` beside its manifest.
fn shipped_dir(manifest: &Manifest) -> Result<PathBuf, String> {
    let base = manifest
        .source
        .as_deref()
        .and_then(Path::parent)
        .ok_or("the provider is a bare component, with no package around it")?;
    let dir = base.join(PRECOMPILED_DIR);
    if !dir.is_dir() {
        return Err(format!("there is no {}", dir.display()));
    }
    let exe_dir = azd_wasm_host_core::files::exe_dir();
    let base = std::fs::canonicalize(base).ok();
    if exe_dir.is_none() || exe_dir != base {
        return Err(format!(
            "{} is ignored: precompiled code is used only beside the host binary that runs it",
            dir.display()
        ));
    }
    Ok(dir)
}

/// Compiles the component of `manifest` for `platform` (`linux/amd64`;
/// default: this machine's) and writes the code and its binding into `dir`.
/// The code for this machine is also loaded back and type-checked against
/// the world, as a start would. Returns the files written.
#[cfg(feature = "compiler")]
pub fn precompile_into(
    manifest: &Manifest,
    dir: &Path,
    platform: Option<&str>,
) -> Result<Vec<PathBuf>, LoadError> {
    let here = targets::this_platform();
    let target = targets::target_of(platform.unwrap_or(&here))?;
    let file = ComponentFile::open(&manifest.component)?;
    let bytes = std::fs::read(&manifest.component).map_err(LoadError::read(&manifest.component))?;
    let engine_error = |e: wasmtime::Error| LoadError::Engine(format!("{e:#}"));
    let mut config = engine::config();
    config.target(target.triple).map_err(engine_error)?;
    let engine = wasmtime::Engine::new(&config).map_err(engine_error)?;
    let code = engine
        .precompile_component(&bytes)
        .map_err(|e| LoadError::invalid(&manifest.component, format!("{e:#}")))?;
    azd_wasm_host_core::files::create_private_dir(dir).map_err(|source| LoadError::Create {
        path: dir.to_owned(),
        source,
    })?;
    let code_path = dir.join(CODE_FILE);
    let written = |path: &Path| {
        let path = path.to_owned();
        move |source| LoadError::Write { path, source }
    };
    std::fs::write(&code_path, &code).map_err(written(&code_path))?;
    let binding = Binding {
        target: target.triple.to_owned(),
        code_sha256: hex::encode(<sha2::Sha256 as sha2::Digest>::digest(&code)),
        ..Binding::for_this_host(&file.sha, &target.key())
    };
    let binding_path = dir.join(BINDING_FILE);
    let text = toml::to_string(&binding).map_err(std::io::Error::other);
    text.and_then(|text| std::fs::write(&binding_path, text))
        .map_err(written(&binding_path))?;
    if target.key() == here {
        let engine = engine::shared_engine()?;
        let component = cache::deserialize_file(&engine, &code_path, &binding.code_sha256)
            .map_err(|e| LoadError::Reload(format!("{e:#}")))?;
        let linker = engine::linker(&engine)?;
        engine::ready(
            &engine,
            &linker,
            &file,
            component,
            CacheOutcome::Hit,
            std::time::Instant::now(),
        )?;
    }
    Ok(vec![code_path, binding_path])
}

/// Whether this machine's code for the provider at `path` (a manifest or a
/// component) is ready: shipped beside this binary for this component, or in
/// the compile cache `cache_dir`. A quick look that compiles nothing, so that
/// a caller can say a first start will compile; a start may still find the
/// code stale and compile anyway.
pub fn is_compiled(path: &Path, cache_dir: Option<&Path>) -> bool {
    let Ok(manifest) = Manifest::resolve(path, None) else {
        return false;
    };
    let Ok(sha) = azd_wasm_host_core::files::sha256_file(&manifest.component) else {
        return false;
    };
    let shipped = shipped_dir(&manifest).is_ok_and(|dir| {
        read_binding(&dir, None).is_ok_and(|b| {
            b.mismatch(&Binding::for_this_host(&sha, &targets::this_platform()))
                .is_none()
        })
    });
    shipped
        || cache_dir.is_some_and(|dir| {
            engine::shared_engine()
                .ok()
                .into_iter()
                .chain(engine::quick_engine())
                .any(|engine| cache::has_entry(&engine, &sha, dir))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A signature that verified and names no code is not the same as no
    /// signature: code that appears beside such a provider (after the
    /// signature was checked at start) is refused, never held to its binding
    /// alone.
    #[test]
    fn code_beside_a_provider_signed_without_code_is_untrusted() {
        let dir = Path::new("/x/precompiled");
        let e = signed_digests(&SignedCode::NoCode, dir).unwrap_err();
        assert!(
            e.contains("/x/precompiled") && e.contains("names none"),
            "{e}"
        );
        assert_eq!(signed_digests(&SignedCode::NotVerified, dir).unwrap(), None);
        let digests = ShippedDigests {
            code: "c".into(),
            binding: "b".into(),
        };
        let signed = SignedCode::Digests(digests.clone());
        assert_eq!(signed_digests(&signed, dir).unwrap(), Some(&digests));
        assert_ne!(SignedCode::NoCode, SignedCode::default());
    }

    fn binding() -> Binding {
        Binding {
            target: "x86_64-unknown-linux-gnu".into(),
            code_sha256: "00".repeat(32),
            ..Binding::for_this_host(&[7; 32], "linux/amd64")
        }
    }

    #[test]
    fn a_binding_names_what_does_not_fit() {
        let expected = Binding::for_this_host(&[7; 32], "linux/amd64");
        assert_eq!(binding().mismatch(&expected), None);
        let other_platform = Binding {
            platform: "linux/arm64".into(),
            ..binding()
        };
        let why = other_platform.mismatch(&expected).unwrap();
        assert!(
            why.contains("compiled for linux/arm64, and this is linux/amd64"),
            "{why}"
        );
        let other_host = Binding {
            host_version: "0.0.1".into(),
            ..binding()
        };
        let why = other_host.mismatch(&expected).unwrap();
        assert!(
            why.contains("azd-wasm-host 0.0.1") && why.contains(HOST_VERSION),
            "{why}"
        );
        let other_component = Binding {
            component_sha256: "ab".repeat(32),
            ..binding()
        };
        let why = other_component.mismatch(&expected).unwrap();
        assert!(
            why.contains("another component (sha256 abababababab)"),
            "{why}"
        );
    }

    #[test]
    fn a_binding_round_trips_and_unknown_fields_are_refused() {
        let text = toml::to_string(&binding()).unwrap();
        assert_eq!(toml::from_str::<Binding>(&text).unwrap(), binding());
        assert!(toml::from_str::<Binding>(&format!("{text}\nextra = 1\n")).is_err());
    }
}
