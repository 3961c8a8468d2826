//! The Python recipe (and the project's WIT every recipe reads).

use std::path::Path;

use anyhow::Context as _;
use azd_wasm_host_runtime::WORLD;

use super::step::Step;
use crate::tools::{Need, Program, Vars};

/// The world's name inside the project's `wit/` package.
pub(super) const WORLD_NAME: &str = "provisioning-provider";

/// The project's WIT folder, when it has one (`new` writes it; the
/// repository's examples have none).
pub(super) fn project_wit(dir: &Path) -> Option<std::path::PathBuf> {
    let wit = dir.join("wit");
    wit.join("provisioning.wit").is_file().then_some(wit)
}

/// The project's WIT folder, for the recipes whose tools read it from disk.
pub(super) fn wit_dir(dir: &Path) -> anyhow::Result<std::path::PathBuf> {
    project_wit(dir).with_context(|| {
        format!(
            "no WIT package at {} (azd-wasm-host new writes it; the world is {WORLD})",
            dir.join("wit").display()
        )
    })
}

/// Python: componentize-py, with the project's folder and `lib/` on its path.
pub(super) fn python(dir: &Path, source: Option<&str>, staged: &Path) -> anyhow::Result<()> {
    let wit = wit_dir(dir)?;
    let file = dir.join(source.unwrap_or("provider.py"));
    let module = file
        .file_stem()
        .and_then(|s| s.to_str())
        .filter(|_| file.is_file())
        .with_context(|| format!("no Python module at {} ([build] source)", file.display()))?;
    let (program, pre) = componentize_py(&Vars::process())?;
    let base = file.parent().unwrap_or(dir);
    Step::new("componentize-py", program, dir)
        .args(pre)
        .arg("-d")
        .arg(&wit)
        .args(["-w", WORLD_NAME, "componentize", module, "-p"])
        .arg(base)
        .arg("-p")
        .arg(dir.join("lib"))
        .arg("-o")
        .arg(staged)
        .run()
}

/// componentize-py: `AZD_WASM_HOST_COMPONENTIZE_PY`, else PATH.
fn componentize_py(vars: &Vars) -> anyhow::Result<Program> {
    const NEED: Need = Need {
        tool: "componentize-py",
        version: Some("0.25.1"),
        get: "pip install componentize-py==0.25.1",
        var: "AZD_WASM_HOST_COMPONENTIZE_PY",
    };
    NEED.find(vars, &["componentize-py"])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_componentize_py_the_error_says_how_to_get_it() {
        let empty = tempfile::tempdir().unwrap();
        let vars = Vars::fixed([("PATH", empty.path().as_os_str())]);
        let err = componentize_py(&vars).unwrap_err().to_string();
        assert!(
            err.contains("`componentize-py` (0.25.1) is not on PATH")
                && err.contains("pip install componentize-py==0.25.1")
                && err.contains("AZD_WASM_HOST_COMPONENTIZE_PY"),
            "{err}"
        );
        let bin = crate::tools::folder_with("componentize-py");
        let vars = Vars::fixed([("PATH", bin.path().as_os_str())]);
        assert!(Path::new(&componentize_py(&vars).unwrap().0).starts_with(bin.path()));
    }
}
