//! Signing a provider's folder.
//!
//! What is signed is a [`Statement`]: every file of the folder the host runs
//! or reads as policy ([`signed_files`]: the component, `provider.toml`, the
//! config schema it names (`[config] schema`), `extension.yaml`, and the
//! precompiled code and its binding when the folder holds them), with their sha256, and the provider's name, version
//! and extension id. `package` signs after it precompiles, so the native
//! code the sidecar maps is named by the signature like the rest.
//!
//! A folder that ships a publisher's signature as it is (`pull --package`)
//! gets its precompiled code signed apart, by whoever packaged it
//! ([`sign_code`]): a code statement naming the code, its binding and the
//! publisher's signature file itself, so that the code is tied to exactly
//! that signed provider.

use std::path::{Path, PathBuf};

use azd_wasm_host_manifest::Manifest;
use azd_wasm_host_manifest::package::{PRECOMPILED_BINDING, PRECOMPILED_CODE};

use crate::envelope::{BUNDLE_FILE, Bundle, PAYLOAD_TYPE, Statement, Subject, pae};
use crate::error::{SignError, TrustError};
use crate::keys::KeyPair;

/// The name `provider.toml` has among a statement's subjects.
pub(crate) const MANIFEST_SUBJECT: &str = "provider.toml";
/// The extension's manifest, beside `provider.toml` in a package.
pub(crate) const EXTENSION_SUBJECT: &str = "extension.yaml";
/// The code statement of a package that ships its publisher's signature as
/// it is: in the precompiled folder, signed by whoever compiled the code.
pub const CODE_BUNDLE_FILE: &str = "precompiled/code.sigstore.json";

/// The files beside the manifest that, when present, a signature must name:
/// what the host reads (`extension.yaml`) or maps as code (the precompiled
/// code and its binding).
pub(crate) const RUN_FILES: [&str; 3] = [EXTENSION_SUBJECT, PRECOMPILED_CODE, PRECOMPILED_BINDING];
/// The files a code statement names besides the provider's signature.
pub(crate) const CODE_FILES: [&str; 2] = [PRECOMPILED_CODE, PRECOMPILED_BINDING];

/// What is signed: a provider's folder as it ships.
#[derive(Debug, Clone)]
pub struct SignInputs<'a> {
    /// `provider.toml` in the folder (the component it names must be inside the folder).
    pub manifest: &'a Path,
    /// The provider's version.
    pub version: &'a str,
    /// The id of the azd extension that ships it.
    pub extension: Option<&'a str>,
}

/// Signs the folder of `inputs.manifest` with `key`; returns the bundle's
/// JSON, to be written as [`BUNDLE_FILE`] beside the manifest.
pub fn sign(inputs: &SignInputs<'_>, key: &KeyPair) -> Result<String, SignError> {
    let manifest = Manifest::load(inputs.manifest)?;
    let subjects = signed_files(&manifest, inputs.manifest)?
        .into_iter()
        .map(|(name, path)| Ok(Subject::sha256(name, sha256_file(&path)?)))
        .collect::<Result<Vec<_>, SignError>>()?;
    let statement = Statement::new(subjects, &manifest.name, inputs.version, inputs.extension);
    bundle_of(&statement, key)
}

/// Signs the precompiled code beside `manifest` for the provider signed by
/// the [`BUNDLE_FILE`] beside it (kept as its publisher made it); returns the
/// code statement's bundle, to be written as [`CODE_BUNDLE_FILE`].
pub fn sign_code(manifest: &Path, version: &str, key: &KeyPair) -> Result<String, SignError> {
    let parsed = Manifest::load(manifest)?;
    let dir = folder(manifest);
    let mut subjects = vec![Subject::sha256(
        BUNDLE_FILE,
        sha256_file(&dir.join(BUNDLE_FILE))?,
    )];
    for name in CODE_FILES {
        subjects.push(Subject::sha256(name, sha256_file(&dir.join(name))?));
    }
    bundle_of(&Statement::code(subjects, &parsed.name, version), key)
}

pub(crate) fn bundle_of(statement: &Statement, key: &KeyPair) -> Result<String, SignError> {
    let payload = serde_json::to_vec(statement).map_err(SignError::Encode)?;
    let public = key.public();
    let sig = key.sign(&pae(PAYLOAD_TYPE, &payload))?;
    let bundle = Bundle::new(&payload, &public.id(), &sig);
    Ok(serde_json::to_string_pretty(&bundle).map_err(SignError::Encode)? + "\n")
}

/// The files of the provider at `manifest_path` that its signature names,
/// each with its name in the statement: `provider.toml`, the component, the
/// config schema it names, and those of [`RUN_FILES`] that are there.
pub(crate) fn signed_files(
    manifest: &Manifest,
    manifest_path: &Path,
) -> Result<Vec<(String, PathBuf)>, SignError> {
    let dir = folder(manifest_path);
    let inside = |what, path: &Path| {
        relative_name(path, dir).ok_or_else(|| SignError::Outside {
            what,
            path: path.to_path_buf(),
            folder: dir.to_path_buf(),
        })
    };
    let component = inside("component", &manifest.component)?;
    let mut files = vec![
        (component, manifest.component.clone()),
        (MANIFEST_SUBJECT.to_owned(), manifest_path.to_path_buf()),
    ];
    if let Some(schema) = &manifest.config_schema {
        files.push((inside("config schema", &schema.path)?, schema.path.clone()));
    }
    for name in RUN_FILES {
        let path = dir.join(name);
        if path.is_file() {
            files.push((name.to_owned(), path));
        }
    }
    Ok(files)
}

pub(crate) fn folder(manifest: &Path) -> &Path {
    match manifest.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// `path` relative to `dir`, with `/`, when it is inside it.
pub(crate) fn relative_name(path: &Path, dir: &Path) -> Option<String> {
    let rel = path.strip_prefix(dir).ok()?;
    let parts: Option<Vec<&str>> = rel
        .components()
        .map(|c| match c {
            std::path::Component::Normal(s) => s.to_str(),
            _ => None,
        })
        .collect();
    parts.filter(|p| !p.is_empty()).map(|p| p.join("/"))
}

/// The sha256 of a file, in hex (the runtime's, which the compile cache keys by).
pub(crate) fn sha256_file(path: &Path) -> Result<String, SignError> {
    azd_wasm_host_core::files::sha256_file(path)
        .map(hex::encode)
        .map_err(|source| SignError::Read {
            path: path.to_path_buf(),
            source,
        })
}

/// The file at `path` hashes to `signed` (hex, either case), or
/// [`TrustError::Changed`] says what it hashes to now.
pub(crate) fn unchanged(path: &Path, signed: &str) -> Result<(), TrustError> {
    let actual = sha256_file(path)
        .map_err(|e| TrustError::Mismatch(azd_wasm_host_core::report::chain(&e)))?;
    if actual.eq_ignore_ascii_case(signed) {
        return Ok(());
    }
    Err(TrustError::Changed {
        file: path.display().to_string(),
        actual,
        signed: signed.to_owned(),
    })
}
