//! Where `listen` finds the provider's manifest.

use std::path::{Path, PathBuf};

use anyhow::bail;

/// Names the manifest (as `--manifest` does).
pub(crate) const ENV_MANIFEST: &str = azd_wasm_host_core::settings::MANIFEST;
/// File name looked for beside the executable.
const DEFAULT_MANIFEST_NAME: &str = "provider.toml";

/// Finds the manifest: `explicit` (`--manifest`, or `AZD_WASM_HOST_MANIFEST`
/// through it), else `provider.toml` beside the executable. The error lists
/// every place tried.
pub(crate) fn locate_manifest(explicit: Option<&Path>) -> anyhow::Result<PathBuf> {
    if let Some(p) = explicit {
        if p.is_file() {
            return Ok(p.to_path_buf());
        }
        bail!(
            "provider manifest {} (from --manifest or {ENV_MANIFEST}) does not exist",
            p.display()
        );
    }
    let mut tried = vec![format!("--manifest / {ENV_MANIFEST}: not given")];
    match azd_wasm_host_core::files::exe_dir() {
        Some(dir) => {
            let p = dir.join(DEFAULT_MANIFEST_NAME);
            if p.is_file() {
                return Ok(p);
            }
            tried.push(format!("{}: not found", p.display()));
        }
        None => tried.push("beside the executable: cannot locate it".to_owned()),
    }
    bail!(
        "no provider manifest found; tried:\n  - {}\npass --manifest PATH (a provider.toml or a .wasm component)",
        tried.join("\n  - ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_explicit_manifest_must_exist() {
        let e = locate_manifest(Some(Path::new("/nonexistent/provider.toml"))).unwrap_err();
        let e = e.to_string();
        assert!(
            e.contains("/nonexistent/provider.toml") && e.contains(ENV_MANIFEST),
            "{e}"
        );
    }
}
