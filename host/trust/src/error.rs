//! Why a provider is refused.

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
