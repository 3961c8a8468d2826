//! Verifying a provider's folder against the trusted keys.
//!
//! In order: the trust folder is one only the user can change; the bundle
//! reads; its signature verifies with a trusted key; the statement names this
//! provider, and every file the host runs or reads as policy; each file it
//! names hashes to what was signed. Precompiled code the provider's own
//! statement does not name must be named by a code statement
//! ([`CODE_BUNDLE_FILE`]) signed by a trusted key and tied to that very
//! signature. Each failure is its own [`TrustError`], naming what did not
//! match.

use std::path::{Path, PathBuf};

use azd_wasm_host_manifest::Manifest;
use azd_wasm_host_manifest::package::{PRECOMPILED_BINDING, PRECOMPILED_CODE, ShippedDigests};

use crate::bundle::{Opened, malformed, open, read_bundle, statement_of};
use crate::envelope::{BUNDLE_FILE, CODE_PREDICATE_TYPE, PREDICATE_TYPE, Statement};
use crate::error::TrustError;
use crate::signing::{CODE_BUNDLE_FILE, CODE_FILES, folder, sha256_file, signed_files, unchanged};
use crate::store::TrustDir;

/// A provider whose signature verified.
#[derive(Debug, Clone)]
pub struct Verified {
    /// The trusted key's file.
    pub key_file: PathBuf,
    /// The key's short id.
    pub key: String,
    /// The key's whole id (what consent records are kept under).
    pub key_id: String,
    /// What was signed.
    pub statement: Statement,
    /// What the signatures give the precompiled code and its binding, when
    /// the folder holds them.
    pub shipped: Option<ShippedDigests>,
    /// The whole id of the key that signed the precompiled code apart
    /// (`pull --package`: a code statement), when that signature is not the
    /// provider's own: the native code's signer, which a ceiling judges too.
    pub code_key_id: Option<String>,
}

/// The outcome of [`verify`] for a provider that may run.
#[derive(Debug)]
pub enum Verdict {
    /// Signed by a trusted key, and nothing changed since.
    Verified(Verified),
    /// Not verified (unsigned, or signed by a key not trusted), and run
    /// because the user allows unsigned providers: why, for the log.
    Allowed(TrustError),
}

/// How much of the folder is hashed now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hashing {
    /// Every signed file.
    All,
    /// All but the precompiled code, whose signed sha256 the runtime checks
    /// right before it maps the code (so it is read once per start).
    DeferCode,
}

/// Verifies the provider of `manifest` (its [`BUNDLE_FILE`] beside it)
/// against the keys `trust` holds, hashing every file it names. A provider
/// that is unsigned, or signed by a key not trusted, runs only when the user
/// allows unsigned providers; one whose signature or files do not match
/// never runs.
pub fn verify(manifest_path: &Path, trust: &TrustDir) -> Result<Verdict, TrustError> {
    verify_with(manifest_path, trust, Hashing::All)
}

/// [`verify`] as `listen` does before a start: the precompiled code is not
/// hashed here; its signed sha256 is in [`Verified::shipped`], for the
/// runtime to check right before it maps the code.
pub fn verify_to_run(manifest_path: &Path, trust: &TrustDir) -> Result<Verdict, TrustError> {
    verify_with(manifest_path, trust, Hashing::DeferCode)
}

fn verify_with(
    manifest_path: &Path,
    trust: &TrustDir,
    hashing: Hashing,
) -> Result<Verdict, TrustError> {
    trust.check_private()?;
    let manifest = Manifest::load(manifest_path)
        .map_err(|e| TrustError::Mismatch(azd_wasm_host_core::report::chain(&e)))?;
    let dir = folder(manifest_path);
    let bundle_path = dir.join(BUNDLE_FILE);
    let text = match std::fs::read_to_string(&bundle_path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let refusal = TrustError::Unsigned {
                provider: manifest.name.clone(),
                file: BUNDLE_FILE,
                manifest: manifest_path.display().to_string(),
                config: trust.config_file().display().to_string(),
            };
            return allowed_or(trust, refusal);
        }
        Err(e) => return Err(malformed(&bundle_path, format!("cannot read it ({e})"))),
    };
    let (statement, (key_file, key)) = match open(&text, &bundle_path, trust, PREDICATE_TYPE)? {
        Opened::Trusted(statement, key) => (statement, key),
        Opened::Untrusted(refusal) => return allowed_or(trust, refusal),
    };
    let coverage = check_files(&statement, &manifest, manifest_path, &bundle_path, hashing)?;
    let (shipped, code_key_id) = match coverage {
        Coverage::NoCode => (None, None),
        Coverage::Named => (Some(digests(&statement)), None),
        Coverage::Apart => {
            match code_statement(dir, &manifest.name, &bundle_path, Some(trust), hashing)? {
                Ok((digests, code_key)) => (Some(digests), code_key),
                Err(refusal) => return allowed_or(trust, refusal),
            }
        }
    };
    Ok(Verdict::Verified(Verified {
        key: key.short_id(),
        key_id: key.id(),
        key_file,
        statement,
        shipped,
        code_key_id,
    }))
}

/// Checks, without verifying any signature, that the statements beside
/// `manifest_path` name every file the host runs or reads as policy and that
/// each file hashes to what they say: what `package` checks of a folder
/// before it ships it.
pub fn check_signed_files(manifest_path: &Path) -> Result<(), TrustError> {
    let manifest = Manifest::load(manifest_path)
        .map_err(|e| TrustError::Mismatch(azd_wasm_host_core::report::chain(&e)))?;
    let dir = folder(manifest_path);
    let bundle_path = dir.join(BUNDLE_FILE);
    let text = std::fs::read_to_string(&bundle_path)
        .map_err(|e| malformed(&bundle_path, format!("cannot read it ({e})")))?;
    let (_, payload) = read_bundle(&text, &bundle_path)?;
    let statement = statement_of(&payload, &bundle_path, PREDICATE_TYPE)?;
    let coverage = check_files(
        &statement,
        &manifest,
        manifest_path,
        &bundle_path,
        Hashing::All,
    )?;
    if coverage == Coverage::Apart {
        code_statement(dir, &manifest.name, &bundle_path, None, Hashing::All)??;
    }
    Ok(())
}

/// Where the precompiled code's signature is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Coverage {
    /// There is no precompiled code.
    NoCode,
    /// The provider's statement names it.
    Named,
    /// A code statement must name it.
    Apart,
}

/// The statement of `bundle_path` is about this provider, names every file
/// it runs or reads (the precompiled code may be left to a code statement)
/// and every file it names is unchanged.
fn check_files(
    statement: &Statement,
    manifest: &Manifest,
    manifest_path: &Path,
    bundle_path: &Path,
    hashing: Hashing,
) -> Result<Coverage, TrustError> {
    if statement.predicate.provider != manifest.name {
        return Err(TrustError::Mismatch(format!(
            "{} signs provider `{}`, but {} is provider `{}`",
            bundle_path.display(),
            statement.predicate.provider,
            manifest_path.display(),
            manifest.name
        )));
    }
    let files = signed_files(manifest, manifest_path)
        .map_err(|e| TrustError::Mismatch(azd_wasm_host_core::report::chain(&e)))?;
    let has_code = files.iter().any(|(name, _)| name == PRECOMPILED_CODE);
    let coverage = match (has_code, statement.sha256_of(PRECOMPILED_CODE).is_some()) {
        (false, _) => Coverage::NoCode,
        (true, true) => Coverage::Named,
        (true, false) => Coverage::Apart,
    };
    // What was signed is checked first: a file changed since signing (say a
    // manifest that now names a schema) is the cause, a file it names but the
    // statement does not is the consequence.
    check_subjects(statement, folder(manifest_path), bundle_path, hashing)?;
    for (name, _) in &files {
        if coverage == Coverage::Apart && CODE_FILES.contains(&name.as_str()) {
            continue;
        }
        require_named(statement, name, bundle_path)?;
    }
    Ok(coverage)
}

/// The code statement beside a kept signature: for this provider, tied to
/// the signature at `bundle_path`, naming the code and its binding with
/// their sha256, and (given `trust`) signed by a trusted key, whose whole id
/// comes back with the digests. `Ok(Err(_))`: signed by a key not trusted.
fn code_statement(
    dir: &Path,
    provider: &str,
    bundle_path: &Path,
    trust: Option<&TrustDir>,
    hashing: Hashing,
) -> Result<Result<(ShippedDigests, Option<String>), TrustError>, TrustError> {
    let path = dir.join(CODE_BUNDLE_FILE);
    let text = std::fs::read_to_string(&path).map_err(|e| {
        TrustError::Mismatch(format!(
            "{} does not sign the precompiled code {}, and there is no code signature {} ({e}): \
             the host maps that code as native code, so a signature must name it; repackage \
             the provider",
            bundle_path.display(),
            dir.join(PRECOMPILED_CODE).display(),
            path.display()
        ))
    })?;
    let (statement, signer) = match trust {
        Some(trust) => match open(&text, &path, trust, CODE_PREDICATE_TYPE)? {
            Opened::Trusted(statement, (_, key)) => (statement, Some(key.id())),
            Opened::Untrusted(refusal) => return Ok(Err(refusal)),
        },
        None => {
            let (_, payload) = read_bundle(&text, &path)?;
            (statement_of(&payload, &path, CODE_PREDICATE_TYPE)?, None)
        }
    };
    if statement.predicate.provider != provider {
        return Err(TrustError::Mismatch(format!(
            "{} signs the code of provider `{}`, not of `{provider}`",
            path.display(),
            statement.predicate.provider
        )));
    }
    let signature = sha256_file(bundle_path)
        .map_err(|e| TrustError::Mismatch(azd_wasm_host_core::report::chain(&e)))?;
    let tied = statement
        .sha256_of(BUNDLE_FILE)
        .is_some_and(|s| s.eq_ignore_ascii_case(&signature));
    if !tied {
        return Err(TrustError::Mismatch(format!(
            "{} signs code compiled for another signature than {}: repackage the provider",
            path.display(),
            bundle_path.display()
        )));
    }
    for name in CODE_FILES {
        require_named(&statement, name, &path)?;
    }
    check_subjects(&statement, dir, &path, hashing)?;
    Ok(Ok((digests(&statement), signer)))
}

/// The signed sha256 of the code and its binding (both named: checked before).
fn digests(statement: &Statement) -> ShippedDigests {
    let of = |name| statement.sha256_of(name).unwrap_or_default().to_owned();
    ShippedDigests {
        code: of(PRECOMPILED_CODE),
        binding: of(PRECOMPILED_BINDING),
    }
}

/// The statement of `bundle` names `name`, a file the host runs or reads.
fn require_named(statement: &Statement, name: &str, bundle: &Path) -> Result<(), TrustError> {
    if statement.sha256_of(name).is_some() {
        return Ok(());
    }
    Err(TrustError::Mismatch(format!(
        "{} does not sign {name}, which the host runs or reads as policy (it signs: {}); \
         repackage the provider",
        bundle.display(),
        statement
            .subject
            .iter()
            .map(|s| s.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    )))
}

/// Every file the statement of `bundle` names is a plain path inside `dir`,
/// is there, and hashes to what was signed (the precompiled code only under
/// [`Hashing::All`]).
fn check_subjects(
    statement: &Statement,
    dir: &Path,
    bundle: &Path,
    hashing: Hashing,
) -> Result<(), TrustError> {
    for subject in &statement.subject {
        let name = &subject.name;
        if !plain_relative(name) {
            return Err(TrustError::Mismatch(format!(
                "{} names {name:?}, which is not a plain path inside the provider's folder",
                bundle.display()
            )));
        }
        let signed = subject.digest.get("sha256").ok_or_else(|| {
            TrustError::Mismatch(format!("{} gives {name} no sha256", bundle.display()))
        })?;
        let path = dir.join(name);
        if !path.is_file() {
            return Err(TrustError::Mismatch(format!(
                "{} is signed by {} but is not there: reinstall the provider from its publisher",
                path.display(),
                bundle.display()
            )));
        }
        if hashing == Hashing::DeferCode && name == PRECOMPILED_CODE {
            continue;
        }
        unchanged(&path, signed)?;
    }
    Ok(())
}

/// A relative path of plain names, with `/` (what a statement may name).
fn plain_relative(name: &str) -> bool {
    !name.is_empty()
        && !name.contains('\\')
        && name
            .split('/')
            .all(|part| !part.is_empty() && part != "." && part != ".." && !part.contains(':'))
}

fn allowed_or(trust: &TrustDir, refusal: TrustError) -> Result<Verdict, TrustError> {
    if trust.allows_unsigned() {
        Ok(Verdict::Allowed(refusal))
    } else {
        Err(refusal)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_relative_names_are_files_of_the_folder() {
        for good in [
            "provider.toml",
            "build/x.wasm",
            "precompiled/provider.cwasm",
        ] {
            assert!(plain_relative(good), "{good}");
        }
        for bad in [
            "",
            "/etc/passwd",
            "../x",
            "a/../../x",
            "./x",
            "a//b",
            "C:\\x",
            "c:x",
            "a\\..\\b",
        ] {
            assert!(!plain_relative(bad), "{bad}");
        }
    }
}
