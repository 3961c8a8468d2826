//! # azd-wasm-host-trust
//!
//! Who built a provider, and what the user agreed it may touch.
//!
//! - **Signatures** ([`sign`], [`verify`]). A provider is signed as a
//!   [Sigstore bundle] (`provider.sigstore.json` beside `provider.toml`)
//!   holding a DSSE envelope over an [in-toto statement]: the statement's
//!   subjects are the component and `provider.toml` with their sha256, its
//!   predicate names the provider and its version. The key is ECDSA P-256
//!   with SHA-256, in the PEM files cosign reads and writes (`PRIVATE KEY` as
//!   PKCS#8, `PUBLIC KEY` as SubjectPublicKeyInfo), so `cosign
//!   import-key-pair` takes our key and our trust folder takes a `cosign.pub`.
//!   Verification is offline: no transparency log, no certificate, only the
//!   keys the user put in their trust folder.
//! - **The trust folder** ([`TrustDir`]): `wasm-host/` in azd's config folder
//!   (`$AZD_CONFIG_DIR`, else `~/.azd`): `trusted-keys/*.pub`, `config.toml`
//!   (`allow_unsigned`), the default signing key in `keys/`, and in
//!   `consent/` the manifest of each provider as the user last allowed it.
//! - **Consent** ([`consent`]): what a provider's manifest grants beyond what
//!   the user allowed for it last ([`azd_wasm_host_runtime::PolicyDiff`]);
//!   the caller asks, or refuses naming the command that approves.
//!
//! [Sigstore bundle]: https://github.com/sigstore/protobuf-specs
//! [in-toto statement]: https://github.com/in-toto/attestation/blob/main/spec/v1/statement.md

pub mod consent;
mod envelope;
mod keys;
mod signing;
mod store;

pub use envelope::{BUNDLE_FILE, Statement, Subject};
pub use keys::{KeyPair, PublicKey};
pub use signing::{SignInputs, Verdict, Verified, sign, verify};
pub use store::{ALLOW_UNSIGNED_ENV, CONFIG_DIR_ENV, TrustDir, read_key, write_key};

/// Why a provider is not run: each names what did not match and the fix.
#[derive(Debug, thiserror::Error)]
pub enum TrustError {
    /// No signature beside the manifest, and unsigned providers are not allowed.
    #[error(
        "provider `{provider}` is not signed (no {file} beside {manifest}); this host runs only providers signed by a key you trust. \
         Ask its author for a signed package (azd-wasm-host package signs it), or allow unsigned providers: \
         AZD_WASM_HOST_ALLOW_UNSIGNED=true, or `allow_unsigned = true` in {config}"
    )]
    Unsigned {
        provider: String,
        file: &'static str,
        manifest: String,
        config: String,
    },
    /// Signed by a key that is not in the trust folder.
    #[error(
        "provider `{provider}` {version} is signed by key {key}, which you do not trust ({trusted}). \
         If you trust its author, add their public key: `azd-wasm-host trust add KEY.pub`, or copy it into {folder}"
    )]
    UntrustedKey {
        provider: String,
        version: String,
        key: String,
        trusted: String,
        folder: String,
    },
    /// The signature does not verify with the key it names.
    #[error(
        "the signature in {file} does not verify with trusted key {key}: the signed statement or the signature was changed after signing"
    )]
    BadSignature { file: String, key: String },
    /// A signed file's contents differ from what was signed.
    #[error(
        "{file} was changed after it was signed: its sha256 is {actual}, the signature covers {signed}; reinstall the provider from its publisher"
    )]
    Changed {
        file: String,
        actual: String,
        signed: String,
    },
    /// The signature is for something else (another provider, or a file it does not list).
    #[error("{0}")]
    Mismatch(String),
    /// The signature file cannot be read as a bundle.
    #[error("{file} is not a signature this host can read: {reason}")]
    Malformed { file: String, reason: String },
}
