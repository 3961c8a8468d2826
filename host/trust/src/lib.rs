//! # azd-wasm-host-trust
//!
//! Who built a provider, and what the user agreed it may touch.
//!
//! - **Signatures** ([`sign`], [`verify`]). A provider is signed as a
//!   [Sigstore bundle] (`provider.sigstore.json` beside `provider.toml`)
//!   holding a DSSE envelope over an [in-toto statement]: the statement's
//!   subjects are every file the host runs or reads as policy (the
//!   component, `provider.toml`, `extension.yaml`, the precompiled code and
//!   its binding) with their sha256, its predicate names the provider, its
//!   version and its extension. Precompiled code added to a publisher's
//!   signed provider (`pull --package`) is signed apart ([`sign_code`]). The key is ECDSA P-256
//!   with SHA-256, in the PEM files cosign reads and writes (`PRIVATE KEY` as
//!   PKCS#8, `PUBLIC KEY` as SubjectPublicKeyInfo), so `cosign
//!   import-key-pair` takes our key and our trust folder takes a `cosign.pub`.
//!   Verification is offline: no transparency log, no certificate, only the
//!   keys the user put in their trust folder.
//! - **The tool's sidecars** ([`sign_sidecars`], [`verify_sidecars`]): a
//!   release of the author's tool signs the sidecars it carries as one list
//!   (a bundle of the same form), which `package` holds them to before it
//!   ships one: signed by the release key the tool was built with, or by a
//!   key the user trusts for the tool (`tool-keys/`), never by one trusted
//!   for providers only.
//! - **The trust folder** ([`TrustDir`]): `wasm-host/` in azd's config folder
//!   (`$AZD_CONFIG_DIR`, else `~/.azd`): `trusted-keys/*.pub`, `tool-keys/*.pub`, `config.toml`
//!   (`allow_unsigned`), the default signing key and the compile cache's
//!   secret ([`TrustDir::cache_secret`]) in `keys/`, and in
//!   `consent/` the manifest of each provider as the user last allowed it;
//!   used only while nobody else can change it.
//! - **The ceiling** ([`ceiling`]): what an administrator lets no provider
//!   on this machine be granted (signers, names, each `[policy]` field,
//!   whether consent may be given at a prompt), read from a machine-wide
//!   file and azd's config folder; the tighter wins, and no consent lifts it.
//! - **Consent** ([`consent`]): what a provider's manifest grants beyond what
//!   the user allowed for it last, or beyond the deny-all default the first
//!   time ([`azd_wasm_host_manifest::PolicyDiff`]), keyed by signer, extension
//!   and name; the caller asks, or refuses naming the command that approves.
//!
//! [Sigstore bundle]: https://github.com/sigstore/protobuf-specs
//! [in-toto statement]: https://github.com/in-toto/attestation/blob/main/spec/v1/statement.md

mod bundle;
mod cache_key;
pub mod ceiling;
pub mod consent;
mod envelope;
mod error;
mod keys;
mod sidecars;
mod signing;
mod store;
mod verify;

pub use envelope::{BUNDLE_FILE, Statement, Subject};
pub use error::{ConsentError, SignError, StoreError, TrustError};
pub use keys::{KeyError, KeyPair, PublicKey};
pub use sidecars::{
    SIDECARS_BUNDLE_FILE, TOOL_SIDECARS, sign_sidecars, verify_sidecars, verify_tool_sidecars,
};
pub use signing::{CODE_BUNDLE_FILE, SignInputs, sign, sign_code};
pub use store::{ALLOW_UNSIGNED_ENV, CONFIG_DIR_ENV, TrustDir, read_key, write_key};
pub use verify::{Verdict, Verified, check_signed_files, verify, verify_to_run};
