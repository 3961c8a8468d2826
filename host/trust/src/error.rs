//! Why a provider is refused ([`TrustError`]), why the trust folder could
//! not be read or written ([`StoreError`]), why a folder could not be
//! signed ([`SignError`]), and why consent could not be read
//! ([`ConsentError`]).

use std::path::PathBuf;

use crate::keys::KeyError;

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
    /// The trust folder (or a file in it) could be changed by someone else.
    #[error(
        "the trust folder cannot be trusted: {path}: {why}. Keys, consent and settings there decide \
         what runs, so only you may be able to change them: `chmod go-w {path}` (and `chown` it \
         to yourself if it is not yours), then run the command again"
    )]
    UnsafeFolder {
        path: String,
        /// Why (in the message, so not a `source`: a chain would say it twice).
        why: azd_wasm_host_core::files::Unsafe,
    },
    /// The trust folder is inside a git work tree or an azd project, which a
    /// clone could carry.
    #[error(
        "the trust folder cannot be trusted: {path} is inside {what} {inside}, and a folder a \
         repository or project carries must not decide what runs: keep the trust folder in azd's \
         config folder (~/.azd, or AZD_CONFIG_DIR set to a folder outside any repository and project)"
    )]
    CarriedFolder {
        /// The trust folder.
        path: String,
        /// The work tree's or project's folder.
        inside: String,
        /// "the git work tree" or "the azd project".
        what: &'static str,
    },
    /// The signature file cannot be read as a bundle.
    #[error("{file} is not a signature this host can read: {reason}")]
    Malformed { file: String, reason: String },
}

/// What went wrong reading or writing the trust folder: its keys, the
/// compile cache's secret, a consent record. Each names the file; the cause,
/// when there is one, is its `source`.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// Neither `AZD_CONFIG_DIR` nor a home folder says where the folder is.
    #[error("no home folder to keep trusted keys in (set AZD_CONFIG_DIR)")]
    NoHome,
    /// The trust folder could be changed by someone else, or is carried by a
    /// repository or project.
    #[error(transparent)]
    Untrusted(#[from] TrustError),
    /// A signing key file others may read or write: refused unread.
    #[error("the signing key {} is refused: {why}", .path.display())]
    KeyRefused {
        path: PathBuf,
        why: azd_wasm_host_core::files::Unsafe,
    },
    /// The compile cache's secret is not private to the user.
    #[error("{} cannot be trusted: {why}", .path.display())]
    SecretRefused {
        path: PathBuf,
        why: azd_wasm_host_core::files::Unsafe,
    },
    /// A signing key file that cannot be read.
    #[error("cannot read the signing key {}", .path.display())]
    ReadKey {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A signing key file that holds no signing key.
    #[error("{} is not a signing key", .path.display())]
    NotAKey { path: PathBuf, source: KeyError },
    /// A file that is not the compile cache's secret.
    #[error(
        "{} is not a compile cache secret ({len} bytes); remove it to make a new one",
        .path.display()
    )]
    NotASecret { path: PathBuf, len: usize },
    /// A key is never written over another.
    #[error("{} exists: a key is never overwritten", .path.display())]
    KeyExists { path: PathBuf },
    /// A new key that cannot be written (or appeared meanwhile).
    #[error("{} exists, or cannot be written: a key is never overwritten", .path.display())]
    WriteKey {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A trusted key's file name taken by another key.
    #[error("{} exists and holds another key", .path.display())]
    OtherKey { path: PathBuf },
    /// A folder of the trust folder that cannot be made.
    #[error("cannot create {}", .path.display())]
    CreateDir {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A file that cannot be read.
    #[error("cannot read {}", .path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A file that cannot be written.
    #[error("cannot write {}", .path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A record that cannot be written as TOML.
    #[error("cannot write {}", .path.display())]
    Encode {
        path: PathBuf,
        source: toml::ser::Error,
    },
    /// The system gave no random bytes for a new secret.
    #[error("no random bytes for the compile cache's secret")]
    NoRandom,
    /// A new key cannot be made.
    #[error(transparent)]
    Key(#[from] KeyError),
}

/// Why a folder could not be signed: a provider's, or the tool's sidecars'.
#[derive(Debug, thiserror::Error)]
pub enum SignError {
    /// The provider's `provider.toml` cannot be read.
    #[error(transparent)]
    Manifest(#[from] azd_wasm_host_manifest::ManifestError),
    /// A file the signature must name lies outside the provider's folder.
    #[error(
        "the {what} {} must be inside the provider's folder {} to be signed",
        .path.display(),
        .folder.display()
    )]
    Outside {
        /// `component` or `config schema`.
        what: &'static str,
        path: PathBuf,
        folder: PathBuf,
    },
    /// A file or folder to sign cannot be read.
    #[error("cannot read {}", .path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// Something in the sidecars' folder that is not a platform's folder.
    #[error(
        "{} is not a platform's folder (the sidecars' folder holds <os>-<arch>/ folders only)",
        .path.display()
    )]
    NotAPlatform { path: PathBuf },
    /// Something in a platform's folder that is not a plain file.
    #[error("{} is not a plain file", .path.display())]
    NotAFile { path: PathBuf },
    /// The sidecars' folder holds no sidecar.
    #[error("{} holds no sidecar to sign", .path.display())]
    Empty { path: PathBuf },
    /// The statement cannot be written as JSON.
    #[error("cannot encode the signed statement")]
    Encode(#[source] serde_json::Error),
    /// The key cannot sign.
    #[error(transparent)]
    Key(#[from] KeyError),
}

/// Why a provider's grants could not be compared with what the user allowed it.
#[derive(Debug, thiserror::Error)]
pub enum ConsentError {
    /// The trust folder, the manifest or the record cannot be read or trusted.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The provider's `provider.toml` is not valid.
    #[error(transparent)]
    Manifest(#[from] azd_wasm_host_manifest::ManifestError),
    /// The manifest is another provider's.
    #[error("{} is provider `{is}`, not `{expected}`", .path.display())]
    OtherProvider {
        path: PathBuf,
        is: String,
        expected: String,
    },
    /// A consent record that cannot be read as one.
    #[error("{} is not a consent record (delete it to be asked afresh)", .path.display())]
    NotARecord {
        path: PathBuf,
        source: toml::de::Error,
    },
    /// The manifest a consent record holds is not valid.
    #[error("the manifest recorded in {}", .path.display())]
    Recorded {
        path: PathBuf,
        source: azd_wasm_host_manifest::ManifestError,
    },
}
