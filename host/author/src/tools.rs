//! Finding the programs the author's commands run: on PATH, as a path, or
//! named by an environment variable.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The first of `names` found on PATH (or as a path, when it holds a separator).
pub(crate) fn find_program(names: &[&str]) -> Option<PathBuf> {
    names.iter().find_map(|name| {
        let path = Path::new(name);
        if path.components().count() > 1 {
            return path.is_file().then(|| path.to_path_buf());
        }
        on_path(name).into_iter().next()
    })
}

/// The system's `strip` (or LLVM's), for `package`.
pub(crate) fn find_strip() -> Option<PathBuf> {
    find_program(&["strip", "llvm-strip"])
}

/// Every executable called `name` in PATH's folders, in PATH's order.
pub(crate) fn on_path(name: &str) -> Vec<PathBuf> {
    let Some(paths) = std::env::var_os("PATH") else {
        return Vec::new();
    };
    // A name with an extension (`npm.cmd`) is looked for as it is.
    let file_name = if Path::new(name).extension().is_some() {
        name.to_owned()
    } else {
        format!("{name}{}", std::env::consts::EXE_SUFFIX)
    };
    let exe = |dir: PathBuf| {
        let file = dir.join(&file_name);
        is_executable(&file).then_some(file)
    };
    std::env::split_paths(&paths).filter_map(exe).collect()
}

#[cfg(unix)]
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(path: &Path) -> bool {
    path.is_file()
}

/// A tool named by an environment variable (split on whitespace, so it may
/// carry arguments), else the first of `names` on PATH.
pub(crate) fn tool(var: &str, names: &[&str]) -> Option<(OsString, Vec<OsString>)> {
    if let Some(value) = std::env::var_os(var).filter(|v| !v.is_empty()) {
        let text = value.to_string_lossy().into_owned();
        let mut words = text.split_whitespace().map(OsString::from);
        let program = words.next()?;
        return Some((program, words.collect()));
    }
    find_program(names).map(|p| (p.into_os_string(), Vec::new()))
}
