//! Signing a provider's folder and verifying it against the trusted keys.
//!
//! What is signed is a [`Statement`]: the component, `provider.toml` and the
//! config schema it names (`[config] schema`, when it names one) with their
//! sha256, and the provider's name and version. Verifying checks,
//! in order: the bundle reads; its signature verifies with a trusted key;
//! the statement names this provider; each file hashes to what was signed.
//! Each failure is its own [`TrustError`], naming what did not match.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use azd_wasm_host_runtime::Manifest;

use crate::envelope::{
    BUNDLE_FILE, BUNDLE_MEDIA_TYPE, Bundle, PAYLOAD_TYPE, PREDICATE_TYPE, Statement, Subject,
    decode_b64, pae,
};
use crate::error::TrustError;
use crate::keys::{KeyPair, PublicKey};
use crate::store::TrustDir;

/// The name `provider.toml` has among a statement's subjects.
const MANIFEST_SUBJECT: &str = "provider.toml";

/// What is signed: a provider's folder as it ships.
#[derive(Debug, Clone)]
pub struct SignInputs<'a> {
    /// `provider.toml` in the folder (the component it names must be inside the folder).
    pub manifest: &'a Path,
    /// The provider's version.
    pub version: &'a str,
}

/// A provider whose signature verified.
#[derive(Debug, Clone)]
pub struct Verified {
    /// The trusted key's file.
    pub key_file: PathBuf,
    /// The key's short id.
    pub key: String,
    /// What was signed.
    pub statement: Statement,
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

/// Signs the folder of `inputs.manifest` with `key`; returns the bundle's
/// JSON, to be written as [`BUNDLE_FILE`] beside the manifest.
pub fn sign(inputs: &SignInputs<'_>, key: &KeyPair) -> anyhow::Result<String> {
    let manifest = Manifest::load(inputs.manifest)?;
    let dir = folder(inputs.manifest);
    let component = relative_name(&manifest.component, dir).with_context(|| {
        format!(
            "the component {} must be inside the provider's folder {} to be signed",
            manifest.component.display(),
            dir.display()
        )
    })?;
    let mut subjects = vec![
        Subject::sha256(component, sha256_file(&manifest.component)?),
        Subject::sha256(MANIFEST_SUBJECT, sha256_file(inputs.manifest)?),
    ];
    if let Some(schema) = &manifest.config_schema {
        let name = relative_name(&schema.path, dir).with_context(|| {
            format!(
                "the config schema {} must be inside the provider's folder {} to be signed",
                schema.path.display(),
                dir.display()
            )
        })?;
        subjects.push(Subject::sha256(name, sha256_file(&schema.path)?));
    }
    let statement = Statement::new(subjects, &manifest.name, inputs.version);
    let payload = serde_json::to_vec(&statement)?;
    let public = key.public();
    let sig = key.sign(&pae(PAYLOAD_TYPE, &payload))?;
    let bundle = Bundle::new(&payload, &public.id(), &sig);
    Ok(serde_json::to_string_pretty(&bundle)? + "\n")
}

/// Verifies the provider of `manifest` (its [`BUNDLE_FILE`] beside it)
/// against the keys `trust` holds. A provider that is unsigned, or signed by
/// a key not trusted, runs only when the user allows unsigned providers; one
/// whose signature or files do not match never runs.
pub fn verify(manifest_path: &Path, trust: &TrustDir) -> Result<Verdict, TrustError> {
    let manifest =
        Manifest::load(manifest_path).map_err(|e| TrustError::Mismatch(format!("{e:#}")))?;
    let bundle_path = folder(manifest_path).join(BUNDLE_FILE);
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
    let (statement, key) = match open(&text, &bundle_path, trust)? {
        Opened::Trusted(statement, key) => (statement, key),
        Opened::Untrusted(refusal) => return allowed_or(trust, refusal),
    };
    check_statement(&statement, &manifest, manifest_path, &bundle_path)?;
    Ok(Verdict::Verified(Verified {
        key: key.1.short_id(),
        key_file: key.0,
        statement,
    }))
}

fn allowed_or(trust: &TrustDir, refusal: TrustError) -> Result<Verdict, TrustError> {
    if trust.allows_unsigned() {
        Ok(Verdict::Allowed(refusal))
    } else {
        Err(refusal)
    }
}

enum Opened {
    Trusted(Statement, (PathBuf, PublicKey)),
    Untrusted(TrustError),
}

/// Reads the bundle and verifies its signature with the trusted key it names.
fn open(text: &str, path: &Path, trust: &TrustDir) -> Result<Opened, TrustError> {
    let (bundle, payload) = read_bundle(text, path)?;
    let envelope = &bundle.dsse_envelope;
    let signed = pae(&envelope.payload_type, &payload);
    let keys = trust.trusted_keys();
    let hint = &bundle.verification_material.public_key.hint;
    let mut named_trusted = None;
    for signature in &envelope.signatures {
        let Some(sig) = decode_b64(&signature.sig) else {
            return Err(malformed(path, "a signature is not base64".into()));
        };
        for (file, key) in &keys {
            if key.verifies(&signed, &sig) {
                let statement = statement_of(&payload, path)?;
                return Ok(Opened::Trusted(statement, (file.clone(), key.clone())));
            }
            if key.id() == signature.keyid || key.id() == *hint {
                named_trusted = Some(key.short_id());
            }
        }
    }
    if let Some(key) = named_trusted {
        // A key the user trusts is named, but its signature does not verify: tampered.
        return Err(TrustError::BadSignature {
            file: path.display().to_string(),
            key,
        });
    }
    // Not signed by a trusted key: say by which (the statement, unverified, names the provider).
    let statement = statement_of(&payload, path)?;
    let key = if hint.is_empty() {
        envelope
            .signatures
            .first()
            .map(|s| s.keyid.clone())
            .unwrap_or_default()
    } else {
        hint.clone()
    };
    Ok(Opened::Untrusted(TrustError::UntrustedKey {
        provider: statement.predicate.provider,
        version: statement.predicate.version,
        key: key.chars().take(16).collect(),
        trusted: match keys.len() {
            0 => "you trust no key yet".to_owned(),
            n => format!("you trust {n} other key(s)"),
        },
        folder: trust.keys_dir().display().to_string(),
    }))
}

/// The bundle, checked for what this host signs, and its payload.
fn read_bundle(text: &str, path: &Path) -> Result<(Bundle, Vec<u8>), TrustError> {
    let bundle: Bundle = serde_json::from_str(text)
        .map_err(|e| malformed(path, format!("not a Sigstore bundle ({e})")))?;
    if bundle.media_type != BUNDLE_MEDIA_TYPE {
        return Err(malformed(
            path,
            format!(
                "media type {:?}, not {BUNDLE_MEDIA_TYPE}",
                bundle.media_type
            ),
        ));
    }
    let envelope = &bundle.dsse_envelope;
    if envelope.payload_type != PAYLOAD_TYPE {
        return Err(malformed(
            path,
            format!(
                "payload type {:?}, not {PAYLOAD_TYPE}",
                envelope.payload_type
            ),
        ));
    }
    let payload = decode_b64(&envelope.payload)
        .ok_or_else(|| malformed(path, "the payload is not base64".into()))?;
    Ok((bundle, payload))
}

fn statement_of(payload: &[u8], path: &Path) -> Result<Statement, TrustError> {
    let statement: Statement = serde_json::from_slice(payload).map_err(|e| {
        malformed(
            path,
            format!("the signed payload is not an in-toto statement ({e})"),
        )
    })?;
    if statement.predicate_type != PREDICATE_TYPE {
        return Err(malformed(
            path,
            format!("it signs a {:?}, not a provider", statement.predicate_type),
        ));
    }
    Ok(statement)
}

/// The statement is about this provider, and its files are unchanged.
fn check_statement(
    statement: &Statement,
    manifest: &Manifest,
    manifest_path: &Path,
    bundle_path: &Path,
) -> Result<(), TrustError> {
    if statement.predicate.provider != manifest.name {
        return Err(TrustError::Mismatch(format!(
            "{} signs provider `{}`, but {} is provider `{}`",
            bundle_path.display(),
            statement.predicate.provider,
            manifest_path.display(),
            manifest.name
        )));
    }
    for (name, path) in signed_files(manifest, manifest_path)? {
        let name = name.as_str();
        let signed = statement.sha256_of(name).ok_or_else(|| {
            TrustError::Mismatch(format!(
                "{} does not sign {name}, which the provider loads (it signs: {})",
                bundle_path.display(),
                statement
                    .subject
                    .iter()
                    .map(|s| s.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })?;
        let actual = sha256_file(path).map_err(|e| TrustError::Mismatch(format!("{e:#}")))?;
        if !actual.eq_ignore_ascii_case(signed) {
            return Err(TrustError::Changed {
                file: path.display().to_string(),
                actual,
                signed: signed.to_owned(),
            });
        }
    }
    Ok(())
}

/// The files a provider's signature must cover, each with its name in the
/// statement: the manifest, the component and the config schema, if any.
fn signed_files<'m>(
    manifest: &'m Manifest,
    manifest_path: &'m Path,
) -> Result<Vec<(String, &'m Path)>, TrustError> {
    let dir = folder(manifest_path);
    let name = |what: &str, path: &Path| {
        relative_name(path, dir).ok_or_else(|| {
            TrustError::Mismatch(format!(
                "the {what} {} is outside the signed folder {}",
                path.display(),
                dir.display()
            ))
        })
    };
    let mut files = vec![
        (MANIFEST_SUBJECT.to_owned(), manifest_path),
        (
            name("component", &manifest.component)?,
            manifest.component.as_path(),
        ),
    ];
    if let Some(schema) = &manifest.config_schema {
        files.push((name("config schema", &schema.path)?, schema.path.as_path()));
    }
    Ok(files)
}

fn malformed(path: &Path, reason: String) -> TrustError {
    TrustError::Malformed {
        file: path.display().to_string(),
        reason,
    }
}

fn folder(manifest: &Path) -> &Path {
    manifest.parent().unwrap_or(Path::new("."))
}

/// `path` relative to `dir`, with `/`, when it is inside it.
fn relative_name(path: &Path, dir: &Path) -> Option<String> {
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
pub(crate) fn sha256_file(path: &Path) -> anyhow::Result<String> {
    azd_wasm_host_runtime::sha256_file(path)
        .map(hex::encode)
        .with_context(|| format!("cannot read {}", path.display()))
}
