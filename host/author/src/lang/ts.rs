//! TypeScript: `tsc -p .` (the project's `tsconfig.json`: its `outDir` is
//! `build/js`), then ComponentizeJS on the JavaScript it wrote, as
//! [`super::js`] builds it; the files `new` writes, what it says of it.

use std::path::Path;

use anyhow::bail;

use super::guest::Guest;
use super::js::{Node, componentize_js, npm_tool};
use crate::templates::{File, repo_file, template};
use crate::tools::Vars;

/// Where `tsc` writes (the template's `tsconfig.json` says the same).
const TS_OUT: &str = "build/js";

/// TypeScript: `tsc`, then ComponentizeJS on what it wrote.
fn ts(dir: &Path, source: Option<&str>, staged: &Path) -> anyhow::Result<()> {
    let source = source.unwrap_or("provider.ts");
    if !dir.join(source).is_file() {
        bail!(
            "no TypeScript module at {} ([build] source)",
            dir.join(source).display()
        );
    }
    if !dir.join("tsconfig.json").is_file() {
        bail!(
            "no tsconfig.json in {} (azd-wasm-host new ts writes one)",
            dir.display()
        );
    }
    let node = Node::find(&Vars::process())?;
    let tsc = npm_tool(&node, dir, "tsc", "typescript")?;
    let out = dir.join(TS_OUT);
    let _ = std::fs::remove_dir_all(&out);
    node.step("tsc (type-check, then JavaScript into build/js)", tsc, dir)
        .args(["-p", "."])
        .run()?;
    let module = out.join(Path::new(source).with_extension("js"));
    if !module.is_file() {
        bail!(
            "tsc wrote no {} (tsconfig.json's outDir must be \"{TS_OUT}\", rootDir \".\")",
            module.display()
        );
    }
    componentize_js(&node, dir, &module, staged)
}

/// TypeScript: what `new` writes and how `build` makes the component.
pub(super) const GUEST: Guest = Guest {
    name: "ts",
    title: "TypeScript",
    summary: "TypeScript, type-checked by tsc, then built as JavaScript",
    files: FILES,
    example: "js-hello",
    memory_mb: "128",
    build_extra: "source = \"provider.ts\"\n",
    gitignore_extra: "/node_modules/",
    notes: NOTES,
    build: |r| ts(r.dir, r.source, r.staged),
};

/// TypeScript: the module, `tsconfig.json`, the JavaScript helpers (their JSDoc
/// types are the provider's types) and the pinned ComponentizeJS, jco and TypeScript.
const FILES: &[File] = &[
    template!("package.json", "ts/package.json"),
    template!("tsconfig.json", "ts/tsconfig.json"),
    template!("provider.ts", "ts/provider.ts"),
    repo_file!("lib/azd-provider.js", "guest-sdk/js/azd-provider.js"),
    repo_file!("lib/azd-io.js", "guest-sdk/js/azd-io.js"),
    repo_file!(
        "lib/azd-provisioning.d.ts",
        "guest-sdk/js/azd-provisioning.d.ts"
    ),
];

/// What a new project's README says of building it.
const NOTES: &str = "`build` runs `npm install` the first time (TypeScript, ComponentizeJS and jco are \
             pinned in `package.json`), then `tsc -p .`, which type-checks `provider.ts` against \
             the types generated from the WIT (`lib/azd-provisioning.d.ts`) and writes JavaScript into `build/js/`, then ComponentizeJS \
             (about 15 MB). `fetch` reaches the origins `[policy.http] allow` grants; files, \
             environment variables, azd's access tokens and HTTP errors are in `lib/azd-io.js`, everything else in \
             `lib/azd-provider.js`. Methods may be `async`.";
