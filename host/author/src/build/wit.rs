//! The project's WIT, which every recipe reads.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use azd_wasm_host_runtime::WORLD;

/// The world's name inside the project's `wit/` package.
pub const WORLD_NAME: &str = "provisioning-provider";

/// The project's WIT folder, when it has one (`new` writes it; the
/// repository's examples have none).
pub(crate) fn project_wit(dir: &Path) -> Option<PathBuf> {
    let wit = dir.join("wit");
    wit.join("provisioning.wit").is_file().then_some(wit)
}

/// The project's WIT folder, for the recipes whose tools read it from disk.
pub(crate) fn wit_dir(dir: &Path) -> anyhow::Result<PathBuf> {
    project_wit(dir).with_context(|| {
        format!(
            "no WIT package at {} (azd-wasm-host new writes it; the world is {WORLD})",
            dir.join("wit").display()
        )
    })
}
