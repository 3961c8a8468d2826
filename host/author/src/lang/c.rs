//! The C recipe: a C compiler is the only tool it needs.
//!
//! 1. The bindings of the project's world (`wit/`, world
//!    `provisioning-provider`) are generated here, by wit-bindgen's C
//!    generator linked into this binary ([`GENERATOR`]): the header, the
//!    source, and `<world>_component_type.o`, a wasm object whose custom
//!    section carries the world's type (what `wit-bindgen c` writes);
//! 2. every `.c` of the source folder is compiled with them, the object
//!    linked in, by a wasm32-wasi C compiler ([`compiler`]);
//! 3. the core module is made a component here (WASI preview1 adapter).
//!
//! [`c_bindings`] is step 1 alone, for scripts: the hidden `c-bindings`
//! command, which `scripts/build-examples.sh` runs for the repository's C
//! guests instead of the `wit-bindgen` CLI.

use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

use anyhow::{Context as _, bail};
use wit_parser::Resolve;

use super::guest::Guest;
use crate::build::step::{Step, write_component};
use crate::build::wit::WORLD_NAME;
use crate::templates::{File, repo_file};
use crate::tools::{Program, Vars};

/// The generator this binary carries (the wit-bindgen of wasm-tools 0.254,
/// whose WIT parser the rest of the host uses).
pub(crate) const GENERATOR: &str = "wit-bindgen-c 0.60.0";

/// The zig the repository's scripts pin and test with (PyPI `ziglang`).
const ZIG_TESTED: &str = "0.15.1";

/// What the hidden `c-bindings` command does (the CLI reads its command line into it).
#[derive(Debug, Clone)]
pub struct CBindingsOptions {
    /// The WIT package: a folder (its `deps/` beside it) or a file.
    pub wit: PathBuf,
    /// The world to write bindings for.
    pub world: String,
    /// WIT features to turn on (`@unstable(feature = …)`), comma-separated.
    pub features: Vec<String>,
    /// Where to write them (made if missing).
    pub out_dir: PathBuf,
}

/// `c-bindings`: writes the C bindings of a world, as `wit-bindgen c` would.
pub fn c_bindings(args: &CBindingsOptions) -> anyhow::Result<()> {
    let written = bindings(&args.wit, &args.world, &args.features, &args.out_dir)?;
    for file in written {
        eprintln!("wrote {}", file.display());
    }
    Ok(())
}

/// C: the bindings, every `.c` of the source folder compiled with them for
/// wasm32-wasi, then made a component.
pub(super) fn c(dir: &Path, source: Option<&str>, staged: &Path) -> anyhow::Result<()> {
    let wit = crate::build::wit::wit_dir(dir)?;
    let src = source.map_or_else(|| dir.to_path_buf(), |s| dir.join(s));
    let (cc, cc_pre) = compiler(&Vars::process())?;
    let mut inputs = c_files(&src)?;
    let scratch = crate::build::step::scratch(staged, dir, "c", "C")?;
    let gen_dir = scratch.path().join("gen");
    eprintln!("==> C bindings of world {WORLD_NAME} ({GENERATOR}, in this binary)");
    let generated = bindings(&wit, WORLD_NAME, &[], &gen_dir)?;
    let is = |p: &PathBuf, suffix: &str| p.to_string_lossy().ends_with(suffix);
    let sources = generated.iter().filter(|p| is(p, ".c"));
    inputs.extend(sources.map(|p| p.clone().into_os_string()));
    let object = generated
        .iter()
        .find(|p| is(p, "_component_type.o"))
        .with_context(|| format!("{GENERATOR} wrote no *_component_type.o"))?;
    inputs.push(object.clone().into_os_string());
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

/// Writes the C bindings of `world` in the WIT at `wit` (with `features`
/// on) into `out_dir`; returns the files, sorted.
pub(crate) fn bindings(
    wit: &Path,
    world: &str,
    features: &[String],
    out_dir: &Path,
) -> anyhow::Result<Vec<PathBuf>> {
    let mut resolve = Resolve::default();
    resolve.features.extend(features.iter().cloned());
    let (package, _) = resolve
        .push_path(wit)
        .with_context(|| format!("cannot read the WIT package at {}", wit.display()))?;
    let world_id = resolve
        .select_world(&[package], Some(world))
        .with_context(|| format!("no world `{world}` in {}", wit.display()))?;
    let mut files = wit_bindgen_core::Files::default();
    let mut generator = wit_bindgen_c::Opts::default().build();
    // The generator is another project's code: a world it cannot handle must
    // fail this build, not stop the process.
    let generated = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        generator.generate(&mut resolve, world_id, &mut files)
    }));
    match generated {
        Ok(result) => {
            result.with_context(|| format!("{GENERATOR} cannot write bindings for `{world}`"))?
        }
        Err(_) => bail!("{GENERATOR} stopped on world `{world}` (its message is above)"),
    }
    std::fs::create_dir_all(out_dir)
        .with_context(|| format!("cannot create {}", out_dir.display()))?;
    let mut written = Vec::new();
    for (name, bytes) in files.iter() {
        let name = Path::new(name);
        if !name.components().all(|c| matches!(c, Component::Normal(_))) {
            bail!(
                "{GENERATOR} named a file outside its folder: {}",
                name.display()
            );
        }
        let path = out_dir.join(name);
        std::fs::write(&path, bytes).with_context(|| format!("cannot write {}", path.display()))?;
        written.push(path);
    }
    written.sort();
    Ok(written)
}

/// The `.c` files directly in `dir`, sorted.
fn c_files(dir: &Path) -> anyhow::Result<Vec<OsString>> {
    let mut files: Vec<OsString> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read {}", dir.display()))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "c"))
        .map(PathBuf::into_os_string)
        .collect();
    files.sort();
    Ok(files)
}

/// A C compiler for wasm32-wasi, with the arguments that pick the target:
/// `AZD_WASM_HOST_CC` (its own words, plus the target flag), else `zig cc`
/// (`zig`, or `python-zig`, which PyPI's `ziglang` puts on PATH), else clang
/// with a wasi-libc sysroot (`WASI_SYSROOT`, else Debian's `/usr`).
fn compiler(vars: &Vars) -> anyhow::Result<Program> {
    if let Some((program, mut pre)) =
        crate::tools::named_by(vars, azd_wasm_host_core::settings::CC)?
    {
        pre.extend(["-target", "wasm32-wasi"].map(OsString::from));
        return Ok((program, pre));
    }
    if let Some(zig) = crate::tools::find_program(vars, &["zig", "python-zig"]) {
        let pre = ["cc", "-target", "wasm32-wasi"].map(OsString::from);
        return Ok((zig.into_os_string(), pre.to_vec()));
    }
    let clang = crate::tools::find_program(vars, &["clang"]);
    let sysroot = wasi_sysroot(vars);
    if let (Some(clang), Ok(sysroot)) = (&clang, &sysroot) {
        let mut root = OsString::from("--sysroot=");
        root.push(sysroot);
        let pre = vec!["--target=wasm32-wasi".into(), root];
        return Ok((clang.clone().into_os_string(), pre));
    }
    let found = match (clang, sysroot) {
        (Some(clang), Err(why)) => format!("\n  {} is on PATH, but {why}", clang.display()),
        (None, Ok(root)) => format!(
            "\n  wasi-libc is at {}, but no `clang` is on PATH",
            root.display()
        ),
        _ => String::new(),
    };
    bail!(
        "no C compiler for wasm32-wasi (no `zig`, `python-zig` or `clang` on PATH, AZD_WASM_HOST_CC not set){found}\n\
         Get one: `pip install ziglang=={ZIG_TESTED}` (puts `python-zig` on PATH; or zig from \
         https://ziglang.org/download), or clang with wasi-libc (Debian: `apt-get install clang lld \
         wasi-libc libclang-rt-dev-wasm32`; WASI_SYSROOT names another wasi-libc), or set \
         AZD_WASM_HOST_CC to a C compiler that targets wasm32-wasi"
    )
}

/// The wasi-libc sysroot clang is given: `WASI_SYSROOT`, else Debian's `/usr`.
fn wasi_sysroot(vars: &Vars) -> Result<PathBuf, String> {
    let has_libc = |root: &Path| {
        ["wasm32-wasi", "wasm32-wasip1"]
            .iter()
            .any(|t| root.join("lib").join(t).is_dir())
    };
    match vars.get("WASI_SYSROOT").map(PathBuf::from) {
        Some(root) if has_libc(&root) => Ok(root),
        Some(root) => Err(format!(
            "WASI_SYSROOT ({}) holds no lib/wasm32-wasi",
            root.display()
        )),
        None if has_libc(Path::new("/usr")) => Ok(PathBuf::from("/usr")),
        None => Err("no wasi-libc in /usr/lib/wasm32-wasi and WASI_SYSROOT is not set".into()),
    }
}

/// C: what `new` writes and how `build` makes the component.
pub(super) const GUEST: Guest = Guest {
    name: "c",
    title: "C",
    summary: "C, with a wasm32-wasi C compiler (the bindings are generated by `build`)",
    files: FILES,
    example: "c-hello",
    memory_mb: "16",
    build_extra: "",
    gitignore_extra: "",
    notes: NOTES,
    build: |r| c(r.dir, r.source, r.staged),
};

/// C: the provider and its helper header (`include/`).
const FILES: &[File] = &[
    repo_file!("provider.c", "examples/c-hello/provider.c"),
    repo_file!("include/azd_provider.h", "guest-sdk/c/azd_provider.h"),
];

/// What a new project's README says of building it.
const NOTES: &str = "`build` needs a wasm32-wasi C compiler and nothing else (it generates the \
             bindings itself): `zig` on PATH (`pip install ziglang==0.15.1` puts `python-zig` there), \
             clang with wasi-libc (Debian: clang, lld, wasi-libc, libclang-rt-dev-wasm32), or \
             `AZD_WASM_HOST_CC`. The helpers are in `include/azd_provider.h`.";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::folder_with;

    #[test]
    fn without_a_compiler_the_error_names_each_and_how_to_get_it() {
        let empty = tempfile::tempdir().unwrap();
        let vars = Vars::fixed([("PATH", empty.path().as_os_str())]);
        let err = compiler(&vars).unwrap_err().to_string();
        for needed in [
            "no C compiler for wasm32-wasi",
            "`zig`",
            "`clang`",
            "pip install ziglang==0.15.1",
            "https://ziglang.org/download",
            "apt-get install clang lld wasi-libc libclang-rt-dev-wasm32",
            "WASI_SYSROOT",
            "AZD_WASM_HOST_CC",
        ] {
            assert!(err.contains(needed), "no {needed:?} in: {err}");
        }
    }

    #[test]
    fn clang_without_wasi_libc_says_which_half_is_missing() {
        let bin = folder_with("clang");
        let no_libc = tempfile::tempdir().unwrap();
        let vars = Vars::fixed([
            ("PATH", bin.path().as_os_str()),
            ("WASI_SYSROOT", no_libc.path().as_os_str()),
        ]);
        let err = compiler(&vars).unwrap_err().to_string();
        assert!(
            err.contains("clang is on PATH, but WASI_SYSROOT")
                && err.contains("no lib/wasm32-wasi"),
            "{err}"
        );
        // With wasi-libc there, clang is the compiler, given the sysroot.
        std::fs::create_dir_all(no_libc.path().join("lib/wasm32-wasi")).unwrap();
        let (program, pre) = compiler(&vars).unwrap();
        assert!(Path::new(&program).starts_with(bin.path()));
        assert_eq!(pre[0], "--target=wasm32-wasi");
        assert!(pre[1].to_string_lossy().starts_with("--sysroot="));
    }

    #[test]
    fn zig_from_pypi_and_the_variable_are_found() {
        let bin = folder_with("python-zig");
        let vars = Vars::fixed([("PATH", bin.path().as_os_str())]);
        let (program, pre) = compiler(&vars).unwrap();
        assert!(Path::new(&program).starts_with(bin.path()));
        assert_eq!(pre, ["cc", "-target", "wasm32-wasi"]);
        let vars = Vars::fixed([
            ("PATH", bin.path().as_os_str()),
            ("AZD_WASM_HOST_CC", "python-zig cc".as_ref()),
        ]);
        let (_, pre) = compiler(&vars).unwrap();
        assert_eq!(pre, ["cc", "-target", "wasm32-wasi"]);
        let vars = Vars::fixed([("AZD_WASM_HOST_CC", "no-such-cc".as_ref())]);
        let err = compiler(&vars).unwrap_err().to_string();
        assert!(
            err.contains("AZD_WASM_HOST_CC is set to `no-such-cc`"),
            "{err}"
        );
    }

    /// The bindings of this host's own world: the header and source, and the
    /// object whose custom section carries the world's type.
    #[test]
    fn the_bindings_of_the_provider_world_are_written_here() {
        let wit = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../wit");
        let out = tempfile::tempdir().unwrap();
        let gen_dir = out.path().join("gen");
        let written = bindings(&wit, WORLD_NAME, &[], &gen_dir).unwrap();
        let names: Vec<String> = written
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            names,
            [
                "provisioning_provider.c",
                "provisioning_provider.h",
                "provisioning_provider_component_type.o"
            ]
        );
        let header = std::fs::read_to_string(gen_dir.join("provisioning_provider.h")).unwrap();
        // The export the provider implements, under the names azd_provider.h uses.
        assert!(
            header.contains("bool exports_azd_provisioning_0_1_0_provider_initialize("),
            "{}",
            &header[..header.len().min(2000)]
        );
        let object = std::fs::read(gen_dir.join("provisioning_provider_component_type.o")).unwrap();
        let sections: Vec<String> = wasmparser::Parser::new(0)
            .parse_all(&object)
            .filter_map(|p| match p.unwrap() {
                wasmparser::Payload::CustomSection(c) => Some(c.name().to_owned()),
                _ => None,
            })
            .collect();
        assert!(
            sections.iter().any(|s| s.starts_with("component-type:")),
            "{sections:?}"
        );
        assert!(sections.iter().any(|s| s == "linking"), "{sections:?}");
    }

    #[test]
    fn a_world_that_is_not_there_is_an_error_not_a_file() {
        let wit = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../wit");
        let out = tempfile::tempdir().unwrap();
        let err = format!(
            "{:#}",
            bindings(&wit, "no-such-world", &[], &out.path().join("gen")).unwrap_err()
        );
        assert!(err.contains("no world `no-such-world`"), "{err}");
        assert!(!out.path().join("gen").exists());
        let err = format!(
            "{:#}",
            bindings(&out.path().join("nothing"), WORLD_NAME, &[], out.path()).unwrap_err()
        );
        assert!(err.contains("cannot read the WIT package"), "{err}");
    }
}
