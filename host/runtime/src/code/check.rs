//! `azd-wasm-host check`'s findings, as a value: what a component imports,
//! what each import lets it reach under its manifest's policy, and the
//! manifest itself. The binary renders it.

use std::path::Path;

use crate::code::engine::{self, ComponentFile};
use crate::error::LoadError;
use crate::options::RuntimeOptions;
use crate::world::WORLD;
use azd_wasm_host_manifest::{Manifest, Policy};

/// What `check` found: the component fits the host, and what it asks for.
#[derive(Debug, Clone)]
pub struct CheckReport {
    /// The manifest (synthesised deny-all for a bare component, whose
    /// `source` is then `None`).
    pub manifest: Manifest,
    /// The component's size in bytes.
    pub component_bytes: u64,
    /// The world it was built for (0.1.0's when it imports nothing of 0.2.0).
    pub world: &'static str,
    /// Its imports, sorted by name.
    pub imports: Vec<Import>,
}

/// One import of a component and what it reaches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Import {
    /// The import's name (`wasi:filesystem/types@0.2.6`).
    pub name: String,
    /// What it lets the guest do under the policy, in a few words (empty
    /// when there is nothing to say).
    pub reach: &'static str,
}

/// Validates a component (or the component of a manifest), compiling it (or
/// loading it from `opts.cache`), and says what it asks for.
pub fn check(
    component_or_manifest: &Path,
    opts: &RuntimeOptions,
) -> Result<CheckReport, LoadError> {
    let manifest = Manifest::resolve(component_or_manifest, None)?;
    let engine = engine::shared_engine()?;
    let linker = engine::linker(&engine)?;
    let file = ComponentFile::open(&manifest.component)?;
    let loaded = engine::load_component(&engine, &linker, &file, opts.cache.as_ref())?;
    let ty = loaded.component.component_type();
    let mut names: Vec<&str> = ty.imports(&engine).map(|(name, _)| name).collect();
    names.sort_unstable();
    // A component that imports nothing of 0.2.0 was built for 0.1.0's world.
    let world = if names
        .iter()
        .any(|i| i.starts_with("azd:provisioning/") && i.contains("@0.2."))
    {
        WORLD
    } else {
        "azd:provisioning/provisioning-provider@0.1.0"
    };
    let imports = names
        .into_iter()
        .map(|name| Import {
            name: name.to_owned(),
            reach: describe_import(name, &manifest.policy),
        })
        .collect();
    Ok(CheckReport {
        component_bytes: loaded.bytes_len,
        manifest,
        world,
        imports,
    })
}

/// What an import lets the guest do under `policy`, in a few words: the
/// words of the capability that serves it (`crate::sandbox::capability`),
/// else what every guest has. An import is only what the component *could*
/// call: a toolchain's runtime (QuickJS's libc, CPython's) imports files even
/// when the provider's code has no way to open one, and the policy decides
/// what any call reaches.
fn describe_import(name: &str, policy: &Policy) -> &'static str {
    let iface = name.split('@').next().unwrap_or(name);
    if let Some(words) = crate::sandbox::reach(iface, policy) {
        return words;
    }
    match iface {
        "azd:provisioning/progress" => "progress on azd's spinner",
        "azd:provisioning/log" => "host debug log",
        "azd:provisioning/types" => "types only",
        "wasi:cli/stdout" | "wasi:cli/stderr" => "output (goes to the host's debug log)",
        "wasi:cli/stdin" => "input (always empty)",
        "wasi:cli/exit" => "exit (crashes the instance)",
        "wasi:random/random" | "wasi:random/insecure" | "wasi:random/insecure-seed" => "randomness",
        "wasi:clocks/wall-clock" | "wasi:clocks/monotonic-clock" => "clocks",
        n if n.starts_with("wasi:io/") => "streams and polling",
        n if n.starts_with("wasi:cli/terminal") => "terminal queries (never a terminal)",
        _ => "",
    }
}
