//! A signature file opened: the bundle read, its signature verified with a
//! trusted key, its statement of the kind expected.

use std::path::{Path, PathBuf};

use crate::envelope::{BUNDLE_MEDIA_TYPE, Bundle, PAYLOAD_TYPE, Statement, decode_b64, pae};
use crate::error::TrustError;
use crate::keys::PublicKey;
use crate::store::TrustDir;

/// A bundle whose signature verified with a trusted key, or why it is not trusted.
pub(crate) enum Opened {
    Trusted(Statement, (PathBuf, PublicKey)),
    Untrusted(TrustError),
}

/// Reads the bundle and verifies its signature with the trusted key it
/// names; its statement must be of `predicate_type`.
pub(crate) fn open(
    text: &str,
    path: &Path,
    trust: &TrustDir,
    predicate_type: &str,
) -> Result<Opened, TrustError> {
    let keys = trust.trusted_keys();
    Ok(match open_among(text, path, &keys, predicate_type)? {
        Among::Signed(statement, key) => Opened::Trusted(statement, key),
        Among::Unknown(statement, key) => Opened::Untrusted(TrustError::UntrustedKey {
            provider: statement.predicate.provider,
            version: statement.predicate.version,
            key,
            trusted: match keys.len() {
                0 => "you trust no key yet".to_owned(),
                n => format!("you trust {n} other key(s)"),
            },
            folder: trust.keys_dir().display().to_string(),
        }),
    })
}

/// What [`open_among`] found.
pub(crate) enum Among {
    /// Signed by one of the keys (its file or origin, and the key).
    Signed(Statement, (PathBuf, PublicKey)),
    /// Signed by none of them: the statement, unverified, and the start of
    /// the id of the key that did sign it.
    Unknown(Statement, String),
}

/// Reads the bundle and verifies its signature with whichever of `keys`
/// made it; its statement must be of `predicate_type`. A signature by a
/// key of `keys` that does not verify is an error: the bundle was changed.
pub(crate) fn open_among(
    text: &str,
    path: &Path,
    keys: &[(PathBuf, PublicKey)],
    predicate_type: &str,
) -> Result<Among, TrustError> {
    let (bundle, payload) = read_bundle(text, path)?;
    let envelope = &bundle.dsse_envelope;
    let signed = pae(&envelope.payload_type, &payload);
    let hint = &bundle.verification_material.public_key.hint;
    let mut named_trusted = None;
    for signature in &envelope.signatures {
        let Some(sig) = decode_b64(&signature.sig) else {
            return Err(malformed(path, "a signature is not base64".into()));
        };
        for (file, key) in keys {
            if key.verifies(&signed, &sig) {
                let statement = statement_of(&payload, path, predicate_type)?;
                return Ok(Among::Signed(statement, (file.clone(), key.clone())));
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
    // Not signed by one of the keys: say by which (the statement, unverified, names what it signs).
    let statement = statement_of(&payload, path, predicate_type)?;
    let key = if hint.is_empty() {
        envelope
            .signatures
            .first()
            .map(|s| s.keyid.clone())
            .unwrap_or_default()
    } else {
        hint.clone()
    };
    Ok(Among::Unknown(statement, key.chars().take(16).collect()))
}

/// The bundle, checked for what this host signs, and its payload.
pub(crate) fn read_bundle(text: &str, path: &Path) -> Result<(Bundle, Vec<u8>), TrustError> {
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

pub(crate) fn statement_of(
    payload: &[u8],
    path: &Path,
    predicate_type: &str,
) -> Result<Statement, TrustError> {
    let statement: Statement = serde_json::from_slice(payload).map_err(|e| {
        malformed(
            path,
            format!("the signed payload is not an in-toto statement ({e})"),
        )
    })?;
    if statement.predicate_type != predicate_type {
        return Err(malformed(
            path,
            format!(
                "it signs a {:?}, not a {predicate_type:?}",
                statement.predicate_type
            ),
        ));
    }
    check_strings(&statement).map_err(|why| malformed(path, why))?;
    Ok(statement)
}

/// What a statement says that reaches the user (the provider's name, its
/// version, its extension, the files it names) holds no control or invisible
/// character, as a manifest's strings may hold none: checked even before its
/// signature is trusted, since a refusal quotes them.
fn check_strings(statement: &Statement) -> Result<(), String> {
    let p = &statement.predicate;
    let subjects = statement
        .subject
        .iter()
        .map(|s| ("a subject's `name`", s.name.as_str()));
    let fields = [
        ("`predicate.provider`", p.provider.as_str()),
        ("`predicate.version`", p.version.as_str()),
        (
            "`predicate.extension`",
            p.extension.as_deref().unwrap_or_default(),
        ),
    ];
    for (field, value) in fields.into_iter().chain(subjects) {
        if let Some((_, c)) = azd_wasm_host_core::text::find_invisible(value) {
            return Err(format!(
                "the signed statement's {field} holds {}, a control or invisible character",
                azd_wasm_host_core::text::code_point(c)
            ));
        }
    }
    Ok(())
}

pub(crate) fn malformed(path: &Path, reason: String) -> TrustError {
    TrustError::Malformed {
        file: path.display().to_string(),
        reason,
    }
}
