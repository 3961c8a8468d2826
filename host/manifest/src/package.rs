//! What a package lays out beside its manifest (as `azd-wasm-host package`
//! writes it and azd unpacks it): the names the packager, the signature and
//! the runtime agree on.

/// The folder beside a packaged manifest that holds the component's code,
/// compiled by `azd-wasm-host package` for the archive's platform.
pub const PRECOMPILED_DIR: &str = "precompiled";
/// azd's metadata for the extension (its `metadata` capability), which
/// `package` writes beside the binary and `<binary> metadata` prints.
pub const AZD_METADATA_FILE: &str = "azd-metadata.json";
/// The precompiled code's path in a provider's folder, as a signature names it.
pub const PRECOMPILED_CODE: &str = "precompiled/provider.cwasm";
/// Its binding's path in a provider's folder, as a signature names it.
pub const PRECOMPILED_BINDING: &str = "precompiled/binding.toml";

/// What a provider's signature says of its precompiled code: what `listen`
/// holds `precompiled/` to right before it maps the code.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum SignedCode {
    /// No signature was verified (an unsigned provider run because the user
    /// allows it, or a project in development): the code is held to its
    /// binding alone.
    #[default]
    NotVerified,
    /// A signature verified and names no precompiled code: any code that
    /// appears beside the manifest (before or after the check) is refused,
    /// never mapped nor compiled around.
    NoCode,
    /// A signature verified and gives the code and its binding these sha256.
    Digests(ShippedDigests),
}

/// The sha256 (hex) a provider's signature gives its precompiled code and its
/// binding: what `listen` checks the files against right before it maps them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShippedDigests {
    /// sha256 of `precompiled/provider.cwasm`.
    pub code: String,
    /// sha256 of `precompiled/binding.toml`.
    pub binding: String,
}
