//! The Rust recipe: finds a toolchain that can build for WASI, builds the
//! crate's `cdylib` with it, and makes the result a component when it is a
//! core module.
//!
//! Every `cargo` on PATH is a candidate (rustup's proxy first when it comes
//! first, then e.g. Debian's `/usr/bin/cargo`), or only `AZD_WASM_HOST_CARGO`
//! when set. Each is asked for its rustc's sysroot (in the crate's folder, so
//! a `rust-toolchain.toml` counts), and the best route wins:
//!
//! 1. `wasm32-wasip2` std installed (`rustup target add wasm32-wasip2`): rustc
//!    links the component itself.
//! 2. `wasm32-wasip1` std installed: a core module, made a component here.
//! 3. the std's source (`rust-src`, or Debian's `rust-web-src`), a `wasm-ld`
//!    and wasi-libc (Debian's `wasi-libc`, or `WASI_SYSROOT`): std is built
//!    for `wasm32-wasip1` from source (`-Zbuild-std`, with `RUSTC_BOOTSTRAP`),
//!    then as 2. This is the route on Debian 12 without rustup's targets.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context as _, bail};

use super::guest::Guest;
use crate::build::step::{Step, write_component};
use crate::templates::{File, repo_file, template};
use crate::tools::Vars;

/// How a toolchain can build for WASI, best first.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Route {
    /// `wasm32-wasip2` std: rustc writes a component.
    Wasip2,
    /// `wasm32-wasip1` std: a core module.
    Wasip1,
    /// `wasm32-wasip1` with std built from source.
    BuildStd { linker: PathBuf, libc_dir: PathBuf },
}

/// A cargo and what it can do.
struct Toolchain {
    cargo: PathBuf,
    /// The rustc beside it (what `RUSTC` is set to, so cargo never picks another).
    rustc: PathBuf,
    route: Result<Route, String>,
}

/// The route's target triple.
fn target(route: &Route) -> &'static str {
    match route {
        Route::Wasip2 => "wasm32-wasip2",
        Route::Wasip1 | Route::BuildStd { .. } => "wasm32-wasip1",
    }
}

/// Builds the crate in `dir` (or `source`, relative to it) into `staged`.
pub(super) fn build(dir: &Path, source: Option<&str>, staged: &Path) -> anyhow::Result<()> {
    let krate = source.map_or_else(|| dir.to_path_buf(), |s| dir.join(s));
    let cargo_toml = krate.join("Cargo.toml");
    if !cargo_toml.is_file() {
        bail!(
            "[build] language = \"rust\" needs a crate: no {}",
            cargo_toml.display()
        );
    }
    let toolchains = candidates(&Vars::process(), &krate);
    let Some((chosen, route)) = toolchains
        .iter()
        .filter_map(|t| t.route.as_ref().ok().map(|r| (t, r)))
        .min_by(|a, b| a.1.cmp(b.1))
    else {
        bail!("{}", no_toolchain_message(&toolchains));
    };
    let target = target(route);
    let (lib, target_dir) = cdylib(&chosen.cargo, &cargo_toml)?;
    let mut step = Step::new(format!("cargo build for {target}"), &chosen.cargo, &krate)
        .args(["build", "--release", "--target", target, "--manifest-path"])
        .arg(&cargo_toml)
        .env("RUSTC", &chosen.rustc);
    if let Route::BuildStd { linker, libc_dir } = route {
        step = step
            .arg("-Zbuild-std=std,panic_abort")
            .env("RUSTC_BOOTSTRAP", "1")
            .env("CARGO_TARGET_WASM32_WASIP1_LINKER", linker)
            .env("CARGO_ENCODED_RUSTFLAGS", build_std_flags(libc_dir));
    }
    step.run()?;
    let built = target_dir
        .join(target)
        .join("release")
        .join(format!("{lib}.wasm"));
    let bytes = std::fs::read(&built)
        .with_context(|| format!("cargo succeeded but wrote no {}", built.display()))?;
    write_component(&bytes, staged)
}

/// The rustflags of the build-std route, after the user's own: cargo takes
/// `CARGO_ENCODED_RUSTFLAGS` over `RUSTFLAGS` and the per-target setting, so
/// the user's flags are carried over rather than lost (or, the other way
/// round, ours dropped because `RUSTFLAGS` is set, as in many CI setups).
/// Encoded flags are separated by `\x1f`, so a path with spaces stays whole.
fn build_std_flags(libc_dir: &Path) -> OsString {
    let mut flags: Vec<OsString> = match std::env::var_os("CARGO_ENCODED_RUSTFLAGS") {
        Some(encoded) if !encoded.is_empty() => encoded
            .to_string_lossy()
            .split('\x1f')
            .map(OsString::from)
            .collect(),
        _ => std::env::var_os("RUSTFLAGS")
            .map(|f| {
                f.to_string_lossy()
                    .split_whitespace()
                    .map(OsString::from)
                    .collect()
            })
            .unwrap_or_default(),
    };
    flags.extend(["-C", "link-self-contained=no", "-L"].map(OsString::from));
    flags.push(libc_dir.as_os_str().to_owned());
    let mut joined = OsString::new();
    for (i, flag) in flags.iter().enumerate() {
        if i > 0 {
            joined.push("\x1f");
        }
        joined.push(flag);
    }
    joined
}

/// Every cargo to consider, with its route.
fn candidates(vars: &Vars, krate: &Path) -> Vec<Toolchain> {
    let cargos = match vars.get(azd_wasm_host_core::settings::CARGO) {
        Some(cargo) => vec![PathBuf::from(cargo)],
        None => {
            let mut seen = Vec::new();
            crate::tools::on_path(vars, "cargo")
                .into_iter()
                .filter(|c| {
                    let real = std::fs::canonicalize(c).unwrap_or_else(|_| c.clone());
                    let fresh = !seen.contains(&real);
                    seen.push(real);
                    fresh
                })
                .collect()
        }
    };
    cargos
        .into_iter()
        .map(|cargo| {
            let rustc = cargo.with_file_name(format!("rustc{}", std::env::consts::EXE_SUFFIX));
            let route = route_of(vars, &rustc, krate);
            Toolchain {
                cargo,
                rustc,
                route,
            }
        })
        .collect()
}

/// What the toolchain of `rustc` can do for WASI, or why it cannot.
fn route_of(vars: &Vars, rustc: &Path, krate: &Path) -> Result<Route, String> {
    let out = Command::new(rustc)
        .args(["--print", "sysroot"])
        .current_dir(krate)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", rustc.display()))?;
    if !out.status.success() {
        return Err(format!("{} --print sysroot failed", rustc.display()));
    }
    let sysroot = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    let rustlib = sysroot.join("lib").join("rustlib");
    if rustlib.join("wasm32-wasip2").join("lib").is_dir() {
        return Ok(Route::Wasip2);
    }
    if rustlib.join("wasm32-wasip1").join("lib").is_dir() {
        return Ok(Route::Wasip1);
    }
    if !rustlib.join("src").join("rust").join("library").is_dir() {
        return Err("no wasm32-wasip2 or wasm32-wasip1 std, and no std source to build one".into());
    }
    let linker = crate::tools::find_program(
        vars,
        &[
        "wasm-ld",
        "wasm-ld-21",
        "wasm-ld-20",
        "wasm-ld-19",
            "wasm-ld-18",
        ],
    )
    .ok_or("has the std source, but no `wasm-ld` on PATH (Debian: apt-get install lld-19; or put an LLVM's bin folder on PATH)")?;
    let libc_dir = wasi_libc_dir(vars)
        .ok_or("has the std source, but no wasi-libc (Debian: apt-get install wasi-libc, or set WASI_SYSROOT)")?;
    Ok(Route::BuildStd { linker, libc_dir })
}

/// The folder holding wasi-libc's `libc.a` for wasm32-wasi (preview1).
fn wasi_libc_dir(vars: &Vars) -> Option<PathBuf> {
    let mut roots: Vec<PathBuf> = vars
        .get("WASI_SYSROOT")
        .map(|r| vec![PathBuf::from(r).join("lib")])
        .unwrap_or_default();
    roots.push(PathBuf::from("/usr/lib"));
    roots.into_iter().find_map(|root| {
        ["wasm32-wasip1", "wasm32-wasi"]
            .iter()
            .map(|t| root.join(t))
            .find(|dir| dir.join("libc.a").is_file())
    })
}

/// `cargo metadata --no-deps` of the crate, as JSON.
fn cargo_metadata(cargo: &Path, cargo_toml: &Path) -> anyhow::Result<serde_json::Value> {
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--manifest-path",
        ])
        .arg(cargo_toml)
        .output()
        .with_context(|| format!("cannot run {} metadata", cargo.display()))?;
    if !out.status.success() {
        bail!(
            "cargo metadata failed for {}:\n{}",
            cargo_toml.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    serde_json::from_slice(&out.stdout).context("cargo metadata printed no JSON")
}

/// The crate's cdylib file stem and cargo's target folder, from `cargo metadata`.
fn cdylib(cargo: &Path, cargo_toml: &Path) -> anyhow::Result<(String, PathBuf)> {
    let meta = cargo_metadata(cargo, cargo_toml)?;
    let wanted = std::fs::canonicalize(cargo_toml).unwrap_or_else(|_| cargo_toml.to_path_buf());
    let package = meta["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| {
            p["manifest_path"]
                .as_str()
                .map(|m| std::fs::canonicalize(m).unwrap_or_else(|_| PathBuf::from(m)))
                == Some(wanted.clone())
        })
        .with_context(|| {
            format!(
                "cargo metadata does not list the crate of {}",
                cargo_toml.display()
            )
        })?;
    let lib = package["targets"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|t| {
            t["kind"]
                .as_array()
                .is_some_and(|k| k.iter().any(|k| k == "cdylib"))
        })
        .and_then(|t| t["name"].as_str())
        .with_context(|| {
            format!(
                "{} builds no cdylib: add `[lib] crate-type = [\"cdylib\"]`",
                cargo_toml.display()
            )
        })?
        .replace('-', "_");
    let target_dir = meta["target_directory"]
        .as_str()
        .map(PathBuf::from)
        .context("cargo metadata gave no target_directory")?;
    Ok((lib, target_dir))
}

/// Why no toolchain fits, and how to get one.
fn no_toolchain_message(toolchains: &[Toolchain]) -> String {
    let mut text = String::from("no Rust toolchain here can build for WASI");
    if toolchains.is_empty() {
        text.push_str(" (no `cargo` on PATH, AZD_WASM_HOST_CARGO not set)");
    }
    for t in toolchains {
        if let Err(why) = &t.route {
            text.push_str(&format!("\n  {}: {why}", t.cargo.display()));
        }
    }
    text.push_str(
        "\nInstall one: rustup (https://rustup.rs), then `rustup target add wasm32-wasip2`; or on Debian 12 \
         `apt-get install rustc-web cargo-web rust-web-src wasi-libc lld-19`. \
         AZD_WASM_HOST_CARGO names the cargo to use (its rustc beside it).",
    );
    text
}

/// Rust: what `new` writes and how `build` makes the component.
pub(super) const GUEST: Guest = Guest {
    name: "rust",
    title: "Rust",
    summary: "Rust, on the azd-provider-sdk crate (cargo, for `wasm32-wasip2` or `wasm32-wasip1`)",
    files: FILES,
    example: "rust-hello",
    memory_mb: "32",
    build_extra: "",
    gitignore_extra: "/target/",
    notes: NOTES,
    build: |r| build(r.dir, r.source, r.staged),
};

/// Rust: the crate, and the guest SDK beside it (`azd-provider-sdk/`).
const FILES: &[File] = &[
    template!("Cargo.toml", "rust/Cargo.toml"),
    repo_file!("src/lib.rs", "examples/rust-hello/src/lib.rs"),
    template!("azd-provider-sdk/Cargo.toml", "rust/sdk-Cargo.toml"),
    repo_file!("azd-provider-sdk/src/lib.rs", "guest-sdk/src/lib.rs"),
    repo_file!("azd-provider-sdk/src/azd.rs", "guest-sdk/src/azd.rs"),
    repo_file!(
        "azd-provider-sdk/src/credentials.rs",
        "guest-sdk/src/credentials.rs"
    ),
    repo_file!("azd-provider-sdk/src/http.rs", "guest-sdk/src/http.rs"),
    repo_file!(
        "azd-provider-sdk/src/bindings.rs",
        "guest-sdk/src/bindings.rs"
    ),
    repo_file!("azd-provider-sdk/src/error.rs", "guest-sdk/src/error.rs"),
    repo_file!("azd-provider-sdk/src/log.rs", "guest-sdk/src/log.rs"),
    repo_file!("azd-provider-sdk/src/output.rs", "guest-sdk/src/output.rs"),
    repo_file!(
        "azd-provider-sdk/src/provider.rs",
        "guest-sdk/src/provider.rs"
    ),
    repo_file!("azd-provider-sdk/src/types.rs", "guest-sdk/src/types.rs"),
];

/// What a new project's README says of building it.
const NOTES: &str = "`build` uses cargo: `rustup target add wasm32-wasip2` once (or, on Debian 12 without \
             rustup's targets, `apt-get install rustc-web cargo-web rust-web-src wasi-libc lld-19`). \
             `cargo test` runs the provider's unit tests natively. The guest SDK is in \
             `azd-provider-sdk/`.";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_rust_projects_ship_every_source_file_of_the_sdk() {
        let sdk = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../guest-sdk/src");
        let mut missing = Vec::new();
        for entry in std::fs::read_dir(&sdk).unwrap() {
            let name = entry.unwrap().file_name().to_string_lossy().into_owned();
            let shipped = format!("azd-provider-sdk/src/{name}");
            if name.ends_with(".rs") && !FILES.iter().any(|f| f.path == shipped) {
                missing.push(name);
            }
        }
        assert!(
            missing.is_empty(),
            "FILES does not ship guest-sdk/src/{missing:?}"
        );
    }

    #[test]
    fn without_cargo_the_error_says_how_to_get_a_toolchain() {
        let empty = tempfile::tempdir().unwrap();
        let vars = Vars::fixed([("PATH", empty.path().as_os_str())]);
        let toolchains = candidates(&vars, empty.path());
        assert!(toolchains.is_empty());
        let text = no_toolchain_message(&toolchains);
        for needed in [
            "no `cargo` on PATH",
            "https://rustup.rs",
            "rustup target add wasm32-wasip2",
            "apt-get install rustc-web cargo-web rust-web-src wasi-libc lld-19",
            "AZD_WASM_HOST_CARGO",
        ] {
            assert!(text.contains(needed), "no {needed:?} in: {text}");
        }
    }

    #[test]
    fn a_cargo_named_by_the_variable_that_is_not_there_is_named() {
        let empty = tempfile::tempdir().unwrap();
        let cargo = empty.path().join("bin").join("cargo");
        let vars = Vars::fixed([("AZD_WASM_HOST_CARGO", cargo.as_os_str())]);
        let toolchains = candidates(&vars, empty.path());
        assert_eq!(toolchains.len(), 1);
        let text = no_toolchain_message(&toolchains);
        assert!(
            text.contains(&format!("{}: cannot run", cargo.display())) && text.contains("rustc"),
            "{text}"
        );
    }

    #[test]
    fn build_std_flags_keep_a_path_with_spaces_whole() {
        let flags = build_std_flags(Path::new("/opt/wasi libc/lib"));
        let words: Vec<String> = flags
            .to_string_lossy()
            .split('\x1f')
            .map(str::to_owned)
            .collect();
        assert!(
            words.ends_with(&[
                "-C".to_owned(),
                "link-self-contained=no".to_owned(),
                "-L".to_owned(),
                "/opt/wasi libc/lib".to_owned()
            ]),
            "{words:?}"
        );
    }
}
