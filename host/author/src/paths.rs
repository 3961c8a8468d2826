//! Paths the author's commands take and show: the manifest a command works
//! on, and paths in messages.

use std::path::{Path, PathBuf};

use anyhow::Context as _;

/// The manifest a command works on: the one named, else `provider.toml` in
/// the current folder.
pub(crate) fn manifest_path(explicit: Option<&Path>) -> anyhow::Result<PathBuf> {
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
pub(crate) fn shown(path: &Path) -> String {
    let cwd = std::env::current_dir().ok();
    cwd.as_deref()
        .and_then(|cwd| path.strip_prefix(cwd).ok())
        .filter(|rel| !rel.as_os_str().is_empty())
        .unwrap_or(path)
        .display()
        .to_string()
}
