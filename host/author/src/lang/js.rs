//! JavaScript: the recipe, the files `new` writes, what it says of it. The tools come from the project's
//! own `node_modules`, pinned in its `package.json` (`npm ci`, or `npm
//! install` without a lock file, on the first build).
//!
//! - **ComponentizeJS** (the default engine): the Bytecode Alliance's
//!   StarlingMonkey, a SpiderMonkey build for components. JavaScript gets
//!   `fetch` (over wasi:http, under `[policy.http]`) and, through the helpers,
//!   files (wasi:filesystem, which StarlingMonkey does not give JS itself),
//!   granted environment variables and azd's access tokens. The world the
//!   component targets is written for each build into a scratch folder: ours,
//!   plus `azd:credentials`, `wasi:cli/environment`, `wasi:filesystem` and
//!   `wasi:http/outgoing-handler`, with the WASI 0.2.12
//!   WIT that the pinned jco ships. About 15 MB.
//! - **QuickJS** (`engine = "quickjs"`): componentize-qjs, the provider world
//!   alone. About 1.7 MB and a faster first start, but no files and no fetch.
//!
//! TypeScript ([`super::ts`]) is compiled to JavaScript, then built by
//! ComponentizeJS as here.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};

use super::guest::Guest;
use super::guest::JsEngine;
use crate::build::step::Step;
use crate::templates::{File, repo_file, template};
use crate::tools::{Need, Vars};

/// The world's name inside the scratch WIT folder.
const WORLD: &str = "provider";
/// The WASI WIT the world takes, as the pinned jco ships it.
const WASI_WIT: &str = "node_modules/@bytecodealliance/jco/lib/wit/builtin/0.2.12";

/// The world a ComponentizeJS provider targets.
const WORLD_WIT: &str = "\
// Written by azd-wasm-host build: the provider world, azd's credentials, and the
// WASI interfaces JavaScript reaches through the helpers (environment variables, files)
// and fetch (HTTP).
package local:provider;

world provider {
    include azd:provisioning/provisioning-provider@0.2.0;
    import azd:credentials/credentials@0.1.0;
    import wasi:cli/environment@0.2.12;
    import wasi:filesystem/types@0.2.12;
    import wasi:filesystem/preopens@0.2.12;
    import wasi:http/outgoing-handler@0.2.12;
}
";

/// JavaScript, with `engine`'s recipe.
fn js(
    dir: &Path,
    source: Option<&str>,
    engine: Option<JsEngine>,
    staged: &Path,
) -> anyhow::Result<()> {
    let module = dir.join(source.unwrap_or("provider.js"));
    if !module.is_file() {
        bail!(
            "no JavaScript module at {} ([build] source)",
            module.display()
        );
    }
    let node = Node::find(&Vars::process())?;
    match engine.unwrap_or(JsEngine::ComponentizeJs) {
        JsEngine::ComponentizeJs => componentize_js(&node, dir, &module, staged),
        JsEngine::Quickjs => quickjs(&node, dir, &module, staged),
    }
}

/// ComponentizeJS on `module`, against the world assembled in a scratch folder.
pub(super) fn componentize_js(
    node: &Node,
    dir: &Path,
    module: &Path,
    staged: &Path,
) -> anyhow::Result<()> {
    let bin = npm_tool(
        node,
        dir,
        "componentize-js",
        "@bytecodealliance/componentize-js",
    )?;
    let scratch = crate::build::step::scratch(staged, dir, "js", "JavaScript")?;
    let wit = assemble_world(dir, scratch.path())?;
    node.step("componentize-js (ComponentizeJS, StarlingMonkey)", bin, dir)
        .arg(module)
        .arg("-w")
        .arg(&wit)
        .args(["-n", WORLD])
        .arg("-o")
        .arg(staged)
        .run()
}

/// The scratch WIT folder: the world, the project's WIT as its dependency
/// (this host's own when the project has no `wit/`, as the repository's
/// examples do), and the WASI WIT from the pinned jco.
fn assemble_world(dir: &Path, scratch: &Path) -> anyhow::Result<PathBuf> {
    let wasi = dir.join(WASI_WIT);
    if !wasi.join("wasi-filesystem").is_dir() {
        bail!(
            "no WASI 0.2.12 WIT at {} (pin @bytecodealliance/jco in package.json, as azd-wasm-host new does)",
            wasi.display()
        );
    }
    let wit = scratch.join("wit");
    let deps = wit.join("deps");
    let ours = deps.join("azd-provisioning-0.2.0");
    std::fs::create_dir_all(&ours)?;
    if let Some(project_wit) = crate::build::wit::project_wit(dir) {
        std::fs::copy(
            project_wit.join("provisioning.wit"),
            ours.join("provisioning.wit"),
        )?;
        copy_tree(&project_wit.join("deps"), &deps)?;
    } else {
        for file in crate::templates::WIT {
            let to = match file.path.strip_prefix("wit/deps/") {
                Some(rest) => deps.join(rest),
                None => ours.join("provisioning.wit"),
            };
            std::fs::create_dir_all(to.parent().unwrap_or(&deps))?;
            std::fs::write(&to, file.text)?;
        }
    }
    copy_tree(&wasi, &deps)?;
    std::fs::write(wit.join("world.wit"), WORLD_WIT)?;
    Ok(wit)
}

/// Copies every entry of `from` into `to` (folders whole).
fn copy_tree(from: &Path, to: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(to)?;
    let entries =
        std::fs::read_dir(from).with_context(|| format!("cannot read {}", from.display()))?;
    for entry in entries {
        let entry = entry?;
        let dest = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_tree(&entry.path(), &dest)?;
        } else {
            std::fs::copy(entry.path(), &dest)
                .with_context(|| format!("cannot copy {}", entry.path().display()))?;
        }
    }
    Ok(())
}

/// QuickJS: componentize-qjs `--sync` on the provider world.
fn quickjs(node: &Node, dir: &Path, module: &Path, staged: &Path) -> anyhow::Result<()> {
    let wit = crate::build::wit::wit_dir(dir)?;
    let bin = npm_tool(node, dir, "componentize-qjs", "componentize-qjs")?;
    node.step("componentize-qjs", &bin, dir)
        .arg("--sync")
        .arg("-w")
        .arg(&wit)
        .args(["-n", crate::build::wit::WORLD_NAME])
        .arg("-j")
        .arg(module)
        .arg("--module-root")
        .arg(dir)
        .arg("-o")
        .arg(staged)
        .run()
}

/// The project's `node_modules/.bin/NAME`, installed by npm from
/// `package.json` first when it is not there yet.
pub(super) fn npm_tool(
    node: &Node,
    dir: &Path,
    name: &str,
    package: &str,
) -> anyhow::Result<PathBuf> {
    let bin = dir
        .join("node_modules")
        .join(".bin")
        .join(if cfg!(windows) {
            format!("{name}.cmd")
        } else {
            name.to_owned()
        });
    if bin.is_file() {
        return Ok(bin);
    }
    if !dir.join("package.json").is_file() {
        bail!(
            "no package.json in {} to install {package} from (npm install --save-dev --save-exact {package})",
            dir.display()
        );
    }
    let npm = node.npm()?;
    let install = if dir.join("package-lock.json").is_file() {
        "ci"
    } else {
        "install"
    };
    node.step(
        format!("npm {install} (the tools package.json pins)"),
        npm,
        dir,
    )
    .args([install, "--no-audit", "--no-fund"])
    .run()?;
    if !bin.is_file() {
        bail!(
            "npm installed no {name} ({}); add {package} to devDependencies",
            bin.display()
        );
    }
    Ok(bin)
}

/// Node.js, which npm and every tool it installs run on.
const NODE: Need = Need {
    tool: "node",
    version: Some("Node.js 20 or newer"),
    get: "install it from https://nodejs.org",
    var: azd_wasm_host_core::settings::NODE,
};

/// The Node.js the JavaScript recipes run: `AZD_WASM_HOST_NODE` (a `node`,
/// npm beside it), else `node` and `npm` on PATH. npm and the tools'
/// launchers start `node` through PATH, so a named one's folder goes first
/// on the PATH of every step.
pub(super) struct Node {
    /// PATH with the named node's folder first; `None`: PATH as it is.
    path: Option<OsString>,
    /// Where npm is looked for.
    vars: Vars,
}

impl Node {
    /// Finds node, or says what is missing and how to get it.
    pub(super) fn find(vars: &Vars) -> anyhow::Result<Self> {
        let Some((node, _)) = crate::tools::named_by(vars, NODE.var)? else {
            if crate::tools::find_program(vars, &["node"]).is_none() {
                bail!("{}", NODE.missing());
            }
            return Ok(Self {
                path: None,
                vars: vars.clone(),
            });
        };
        let folder = Path::new(&node).parent().unwrap_or(Path::new("."));
        let rest = vars.get("PATH").unwrap_or_default();
        let path = std::env::join_paths(
            std::iter::once(folder.to_path_buf()).chain(std::env::split_paths(&rest)),
        )
        .map_err(|e| {
            anyhow::anyhow!("{} ({}) cannot go on PATH: {e}", NODE.var, folder.display())
        })?;
        Ok(Self {
            vars: Vars::path_only(path.clone()),
            path: Some(path),
        })
    }

    /// npm, beside the named node or on PATH.
    fn npm(&self) -> anyhow::Result<PathBuf> {
        crate::tools::find_program(&self.vars, &["npm", "npm.cmd"]).with_context(|| {
            format!(
                "`npm` is not on PATH (it comes with {}): install Node.js from https://nodejs.org, \
                 or set {} to a `node` with npm beside it",
                NODE.version.unwrap_or("Node.js"),
                NODE.var
            )
        })
    }

    /// A step that runs on this node.
    pub(super) fn step(
        &self,
        what: impl Into<String>,
        program: impl Into<OsString>,
        dir: &Path,
    ) -> Step {
        let step = Step::new(what, program, dir);
        match &self.path {
            Some(path) => step.env("PATH", path),
            None => step,
        }
    }
}

/// JavaScript: what `new` writes and how `build` makes the component.
pub(super) const GUEST: Guest = Guest {
    name: "js",
    title: "JavaScript",
    summary: "JavaScript, built with ComponentizeJS (files, fetch, azd's credentials), or componentize-qjs (`engine = \"quickjs\"`)",
    files: FILES,
    example: "js-hello",
    memory_mb: "128",
    build_extra: "source = \"provider.js\"\n",
    gitignore_extra: "/node_modules/",
    notes: NOTES,
    build: |r| js(r.dir, r.source, r.engine, r.staged),
};

/// JavaScript: the module, its helpers (`lib/`) and the pinned ComponentizeJS and jco.
const FILES: &[File] = &[
    template!("package.json", "js/package.json"),
    repo_file!("provider.js", "examples/js-hello/provider.js"),
    repo_file!("lib/azd-provider.js", "guest-sdk/js/azd-provider.js"),
    repo_file!("lib/azd-io.js", "guest-sdk/js/azd-io.js"),
    repo_file!(
        "lib/azd-provisioning.d.ts",
        "guest-sdk/js/azd-provisioning.d.ts"
    ),
];

/// What a new project's README says of building it.
const NOTES: &str = "`build` runs `npm install` the first time (ComponentizeJS and jco are pinned in \
             `package.json`), then ComponentizeJS: the component carries SpiderMonkey \
             (StarlingMonkey), about 15 MB. `fetch` reaches the origins `[policy.http] allow` \
             grants; files (folders `[policy] fs` grants), environment variables (`[policy] env`), azd's access tokens and HTTP errors \
             are in `lib/azd-io.js`, everything else in `lib/azd-provider.js`. Methods may be \
             `async`. For a 1.7 MB component without files or fetch, set `engine = \"quickjs\"` \
             under `[build]` and pin `componentize-qjs` in `package.json`.";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::folder_with;

    #[test]
    fn without_node_the_error_says_how_to_get_it() {
        let empty = tempfile::tempdir().unwrap();
        let vars = Vars::fixed([("PATH", empty.path().as_os_str())]);
        let err = Node::find(&vars).err().unwrap().to_string();
        assert!(
            err.contains("`node` (Node.js 20 or newer) is not on PATH")
                && err.contains("https://nodejs.org")
                && err.contains("AZD_WASM_HOST_NODE"),
            "{err}"
        );
    }

    /// node but no npm, and a project whose tools npm has not installed yet.
    #[test]
    fn without_npm_the_error_names_it_and_installs_nothing() {
        let bin = folder_with("node");
        let vars = Vars::fixed([("PATH", bin.path().as_os_str())]);
        let node = Node::find(&vars).unwrap();
        let project = tempfile::tempdir().unwrap();
        std::fs::write(project.path().join("package.json"), "{}").unwrap();
        let err = npm_tool(&node, project.path(), "tsc", "typescript")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("`npm` is not on PATH")
                && err.contains("Node.js 20 or newer")
                && err.contains("https://nodejs.org")
                && err.contains("AZD_WASM_HOST_NODE"),
            "{err}"
        );
        assert!(!project.path().join("node_modules").exists());
    }

    /// AZD_WASM_HOST_NODE: its npm is found beside it, and its folder leads PATH.
    #[test]
    fn a_named_node_brings_its_npm_and_leads_path() {
        let bin = folder_with("node");
        let npm = bin
            .path()
            .join(format!("npm{}", std::env::consts::EXE_SUFFIX));
        std::fs::copy(
            bin.path()
                .join(format!("node{}", std::env::consts::EXE_SUFFIX)),
            &npm,
        )
        .unwrap();
        let empty = tempfile::tempdir().unwrap();
        let named = bin
            .path()
            .join(format!("node{}", std::env::consts::EXE_SUFFIX));
        let vars = Vars::fixed([
            ("PATH", empty.path().as_os_str()),
            ("AZD_WASM_HOST_NODE", named.as_os_str()),
        ]);
        let node = Node::find(&vars).unwrap();
        assert_eq!(node.npm().unwrap(), npm);
        let path = node.path.unwrap();
        let first = std::env::split_paths(&path).next().unwrap();
        assert_eq!(first, bin.path());
    }
}
