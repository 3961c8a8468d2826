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

/// The id of the author's tool as an azd extension (`host/cli/extension.yaml`):
/// azd installs it into `~/.azd/extensions/<id>/`.
const TOOL_EXTENSION_ID: &str = "azd-wasm-host.tools";

/// How the author reaches this binary, for the commands a message suggests:
/// `azd wasm` when it runs as the author's tool installed into azd, else
/// `azd-wasm-host`.
pub(crate) fn command_name() -> &'static str {
    let exe = std::env::current_exe().ok();
    command_name_of(exe.as_deref())
}

fn command_name_of(exe: Option<&Path>) -> &'static str {
    let installed = exe
        .and_then(Path::parent)
        .and_then(Path::file_name)
        .is_some_and(|dir| dir == TOOL_EXTENSION_ID);
    if installed {
        "azd wasm"
    } else {
        "azd-wasm-host"
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::command_name_of;

    #[test]
    fn the_installed_tool_suggests_azd_wasm() {
        let installed = Path::new("/home/a/.azd/extensions/azd-wasm-host.tools/azd-wasm-host");
        assert_eq!(command_name_of(Some(installed)), "azd wasm");
        let checkout = Path::new("/src/azd-wasm-host/target/debug/azd-wasm-host");
        assert_eq!(command_name_of(Some(checkout)), "azd-wasm-host");
        // A provider's extension (local.todo) is not the tool.
        let provider = Path::new("/home/a/.azd/extensions/local.todo/azd-wasm-host");
        assert_eq!(command_name_of(Some(provider)), "azd-wasm-host");
        assert_eq!(command_name_of(None), "azd-wasm-host");
    }
}
