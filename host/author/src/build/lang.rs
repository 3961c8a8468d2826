//! The Python and C recipes (and the project's WIT every recipe reads).

use std::ffi::OsString;
use std::path::Path;

use anyhow::{Context as _, bail};
use azd_wasm_host_runtime::WORLD;

use super::step::{Step, write_component};

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
    let (program, pre) = crate::tools::tool("AZD_WASM_HOST_COMPONENTIZE_PY", &["componentize-py"])
        .context("`componentize-py` is not on PATH: pip install componentize-py==0.25.1 (or set AZD_WASM_HOST_COMPONENTIZE_PY)")?;
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

/// C: wit-bindgen's bindings into `build/gen`, every `.c` of the source
/// folder compiled with them for wasm32-wasi, then made a component.
pub(super) fn c(dir: &Path, source: Option<&str>, staged: &Path) -> anyhow::Result<()> {
    let wit = wit_dir(dir)?;
    let src = source.map_or_else(|| dir.to_path_buf(), |s| dir.join(s));
    let (bindgen, bindgen_pre) = crate::tools::tool("AZD_WASM_HOST_WIT_BINDGEN", &["wit-bindgen"])
        .context("`wit-bindgen` is not on PATH: cargo install --locked wit-bindgen-cli --version 0.46.0 (or set AZD_WASM_HOST_WIT_BINDGEN)")?;
    let (cc, cc_pre) = c_compiler()?;
    let scratch = super::step::scratch(staged, dir, "c", "C")?;
    let gen_dir = scratch.path().join("gen");
    Step::new("wit-bindgen c", bindgen, dir)
        .args(bindgen_pre)
        .arg("c")
        .arg(&wit)
        .args(["--world", WORLD_NAME, "--out-dir"])
        .arg(&gen_dir)
        .run()?;
    let mut inputs = c_files(&src)?;
    inputs.extend(c_files(&gen_dir)?);
    let object = std::fs::read_dir(&gen_dir)
        .with_context(|| format!("cannot read {}", gen_dir.display()))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.to_string_lossy().ends_with("_component_type.o"))
        .context("wit-bindgen wrote no *_component_type.o")?;
    inputs.push(object.into_os_string());
    let core = scratch.path().join("core.wasm");
    Step::new("compile the C provider for wasm32-wasi", cc, dir)
        .args(cc_pre)
        .args([
            "-mexec-model=reactor",
            "-O2",
            "-s",
            "-Wall",
            "-Wl,-z,stack-size=262144",
            "-I",
        ])
        .arg(&gen_dir)
        .arg("-I")
        .arg(dir.join("include"))
        .args(inputs)
        .arg("-o")
        .arg(&core)
        .run()?;
    let bytes = std::fs::read(&core).with_context(|| format!("cannot read {}", core.display()))?;
    write_component(&bytes, staged)
}

/// The `.c` files directly in `dir`, sorted.
fn c_files(dir: &Path) -> anyhow::Result<Vec<OsString>> {
    let mut files: Vec<OsString> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read {}", dir.display()))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "c"))
        .map(std::path::PathBuf::into_os_string)
        .collect();
    files.sort();
    Ok(files)
}

/// A C compiler for wasm32-wasi, with the arguments that pick the target:
/// `AZD_WASM_HOST_CC` (its own words, plus the target flag), else `zig cc`,
/// else clang with a wasi-libc sysroot (Debian's `/usr`, or `WASI_SYSROOT`).
fn c_compiler() -> anyhow::Result<(OsString, Vec<OsString>)> {
    if let Some((program, mut pre)) = crate::tools::tool("AZD_WASM_HOST_CC", &[]) {
        pre.extend(["-target", "wasm32-wasi"].map(OsString::from));
        return Ok((program, pre));
    }
    if let Some(zig) = crate::tools::find_program(&["zig"]) {
        let pre = ["cc", "-target", "wasm32-wasi"]
            .map(OsString::from)
            .to_vec();
        return Ok((zig.into_os_string(), pre));
    }
    let sysroot = std::env::var_os("WASI_SYSROOT")
        .map(std::path::PathBuf::from)
        .or_else(|| {
            Path::new("/usr/lib/wasm32-wasi")
                .is_dir()
                .then(|| "/usr".into())
        });
    if let (Some(clang), Some(sysroot)) = (crate::tools::find_program(&["clang"]), sysroot) {
        let mut root = OsString::from("--sysroot=");
        root.push(sysroot);
        return Ok((
            clang.into_os_string(),
            vec!["--target=wasm32-wasi".into(), root],
        ));
    }
    bail!(
        "no C compiler for wasm32-wasi: put `zig` on PATH (pip install ziglang gives `python -m ziglang`, \
         usable as AZD_WASM_HOST_CC=\"python -m ziglang cc\"), or install clang with wasi-libc"
    )
}
