//! `publish` and `pull`: a provider as an OCI artifact, in the layout of the
//! Wasm OCI artifact spec (CNCF TAG Runtime): config
//! `application/vnd.wasm.config.v0+json`, the component as the first layer
//! (`application/wasm`), so tools that pull "the wasm layer" (wkg, Spin)
//! find it. Further layers carry what `package` and `listen` need: the
//! manifest, `extension.yaml` and the signature (a Sigstore bundle). Each
//! layer names its file in the provider's folder with the standard
//! `org.opencontainers.image.title` annotation.
//!
//! Plain HTTP only to a registry on loopback; TLS (rustls, the platform's
//! roots) everywhere else. Credentials: `--user` with the password in
//! `AZD_WASM_HOST_REGISTRY_PASSWORD` (never on the command line), else anonymous.

mod bounded;
#[cfg(test)]
mod hostile_tests;
mod publish;
mod pull;
mod registry;

pub use publish::{PublishOptions, Published, publish};
pub use pull::{PullOptions, Pulled, pull};
