//! The provider author's toolchain: `new`, `build` and `package`.
//!
//! - [`new`]: a provider project anywhere, from files packaged in this binary
//!   (the WIT package, the guest helpers of each language, a provider that
//!   greets, its manifest, a sample `azure.yaml` and an `extension.yaml`).
//! - [`build`]: the component, from the manifest's `[build]` section: a
//!   built-in recipe per language, or the author's own command. Core modules
//!   (Rust for `wasm32-wasip1`, C) are made components here, with the WASI
//!   preview1 adapter this host was built with.
//! - [`package`]: an azd extension source for the provider: `registry.json`
//!   and an archive for this platform with the stripped host, the manifest,
//!   the component and its precompiled code, after checking every name azd
//!   will match.
//!
//! None of it runs while azd is talking to the host: these are commands for
//! the author's terminal, and they print what they do on stderr.

pub mod build;
mod componentize;
pub mod new;
pub mod package;
mod templates;

use std::path::{Path, PathBuf};

use anyhow::Context as _;

/// The manifest a command works on: the one named, else `provider.toml` in
/// the current folder.
fn manifest_path(explicit: Option<&Path>) -> anyhow::Result<PathBuf> {
    let path = explicit.map_or_else(|| PathBuf::from("provider.toml"), Path::to_path_buf);
    if !path.is_file() {
        anyhow::bail!(
            "no provider manifest at {}: run this in the provider's folder, or name its provider.toml",
            path.display()
        );
    }
    std::path::absolute(&path).with_context(|| format!("cannot resolve {}", path.display()))
}

/// A path for messages: relative to the current folder when inside it.
fn shown(path: &Path) -> String {
    let cwd = std::env::current_dir().ok();
    cwd.as_deref()
        .and_then(|cwd| path.strip_prefix(cwd).ok())
        .filter(|rel| !rel.as_os_str().is_empty())
        .unwrap_or(path)
        .display()
        .to_string()
}
