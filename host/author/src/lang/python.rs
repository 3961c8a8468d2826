//! Python: the recipe (componentize-py), the files `new` writes, what it
//! says of it.

use anyhow::Context as _;

use super::guest::{Guest, Recipe};
use crate::build::step::Step;
use crate::build::wit::{WORLD_NAME, wit_dir};
use crate::templates::{File, repo_file, template};
use crate::tools::{Need, Program, Vars};

/// Python: componentize-py, with the project's folder and `lib/` on its path.
fn build(recipe: &Recipe<'_>) -> anyhow::Result<()> {
    let Recipe {
        dir,
        source,
        staged,
        ..
    } = *recipe;
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
        var: azd_wasm_host_core::settings::COMPONENTIZE_PY,
    };
    NEED.find(vars, &["componentize-py"])
}

/// Python: what `new` writes and how `build` makes the component.
pub(super) const GUEST: Guest = Guest {
    name: "python",
    title: "Python",
    summary: "Python, built with componentize-py",
    files: FILES,
    example: "python-hello",
    memory_mb: "256",
    build_extra: "source = \"provider.py\"\n",
    gitignore_extra: "__pycache__/",
    notes: NOTES,
    build,
};

/// Python: the module and its helper (`lib/`).
const FILES: &[File] = &[
    template!("provider.py", "python/provider.py"),
    repo_file!("lib/azd_provider.py", "guest-sdk/python/azd_provider.py"),
];

/// What a new project's README says of building it.
const NOTES: &str = "`build` runs componentize-py (`pip install componentize-py==0.25.1` puts it on PATH). \
             componentize-py makes a new `Provider` object for every call: keep state at module \
             level. The helpers are in `lib/azd_provider.py`.";

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
        assert!(std::path::Path::new(&componentize_py(&vars).unwrap().0).starts_with(bin.path()));
    }
}
