//! Finding the programs the author's commands run: on PATH, as a path, or
//! named by an environment variable; and, when one is missing, an error that
//! names it, the version it must be, how to get it and what overrides it
//! ([`Need`]).
//!
//! Every lookup reads its variables (PATH, the overrides) through [`Vars`]:
//! the process's environment, or, in tests, a fixed set of them, so that a
//! test can take a tool away without touching the process's environment.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use anyhow::bail;

/// The environment variables tool lookups read.
#[derive(Debug, Clone, Default)]
pub(crate) struct Vars {
    /// `None`: the process's environment.
    fixed: Option<BTreeMap<String, OsString>>,
}

impl Vars {
    /// The process's environment.
    pub(crate) fn process() -> Self {
        Self::default()
    }

    /// Only PATH, set to `path`.
    pub(crate) fn path_only(path: OsString) -> Self {
        let map = BTreeMap::from([("PATH".to_owned(), path)]);
        Self { fixed: Some(map) }
    }

    /// Only these variables (PATH among them, or no PATH at all).
    #[cfg(test)]
    pub(crate) fn fixed<const N: usize>(pairs: [(&str, &std::ffi::OsStr); N]) -> Self {
        let map = pairs
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect();
        Self { fixed: Some(map) }
    }

    /// The variable's value, when it is set and not empty.
    pub(crate) fn get(&self, name: &str) -> Option<OsString> {
        match &self.fixed {
            None => std::env::var_os(name),
            Some(map) => map.get(name).cloned(),
        }
        .filter(|v| !v.is_empty())
    }
}

/// The first of `names` found on PATH (or as a path, when it holds a separator).
pub(crate) fn find_program(vars: &Vars, names: &[&str]) -> Option<PathBuf> {
    names.iter().find_map(|name| {
        let path = Path::new(name);
        if path.components().count() > 1 {
            return path.is_file().then(|| path.to_path_buf());
        }
        on_path(vars, name).into_iter().next()
    })
}

/// The system's `strip` (or LLVM's), for `package`.
pub(crate) fn find_strip() -> Option<PathBuf> {
    find_program(&Vars::process(), &["strip", "llvm-strip"])
}

/// Every executable called `name` in PATH's folders, in PATH's order.
pub(crate) fn on_path(vars: &Vars, name: &str) -> Vec<PathBuf> {
    let Some(paths) = vars.get("PATH") else {
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

/// A program and the words that come before the recipe's own arguments.
pub(crate) type Program = (OsString, Vec<OsString>);

/// A tool a recipe runs, and what its error says when it is missing.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Need {
    /// The program, as the author knows it (`componentize-py`).
    pub(crate) tool: &'static str,
    /// The version it must be, in words (`0.25.1`, `1.25 or newer`), if any.
    pub(crate) version: Option<&'static str>,
    /// One way to get it: a command or a URL.
    pub(crate) get: &'static str,
    /// The environment variable that names it instead of PATH.
    pub(crate) var: &'static str,
}

impl Need {
    /// The error when it is neither named by [`Need::var`] nor on PATH.
    pub(crate) fn missing(&self) -> String {
        let version = self.version.map(|v| format!(" ({v})")).unwrap_or_default();
        format!(
            "`{}`{version} is not on PATH: {}, or set {} to it",
            self.tool, self.get, self.var
        )
    }

    /// The program: [`Need::var`] when set, else the first of `names` on PATH.
    pub(crate) fn find(&self, vars: &Vars, names: &[&str]) -> anyhow::Result<Program> {
        if let Some(found) = named_by(vars, self.var)? {
            return Ok(found);
        }
        match find_program(vars, names) {
            Some(program) => Ok((program.into_os_string(), Vec::new())),
            None => bail!("{}", self.missing()),
        }
    }
}

/// The program `var` names (split on whitespace, so it may carry
/// arguments), when it is set; an error when what it names is not there.
pub(crate) fn named_by(vars: &Vars, var: &str) -> anyhow::Result<Option<Program>> {
    let Some(value) = vars.get(var) else {
        return Ok(None);
    };
    let text = value.to_string_lossy().into_owned();
    let mut words = text.split_whitespace().map(OsString::from);
    let Some(program) = words.next() else {
        return Ok(None);
    };
    let found = if Path::new(&program).components().count() > 1 {
        // A relative path means the same in the folder a step runs in.
        let path = Path::new(&program);
        path.is_file()
            .then(|| std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf()))
    } else {
        on_path(vars, &program.to_string_lossy()).into_iter().next()
    };
    match found {
        Some(path) => Ok(Some((path.into_os_string(), words.collect()))),
        None => bail!(
            "{var} is set to `{text}`, but `{}` is neither a file nor a program on PATH",
            program.to_string_lossy()
        ),
    }
}

/// A folder with an executable `name` in it.
#[cfg(test)]
pub(crate) fn folder_with(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let file = dir
        .path()
        .join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    std::fs::write(&file, "#!/bin/sh\n").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    dir
}

#[cfg(test)]
mod tests {
    use super::*;

    const NEED: Need = Need {
        tool: "frob",
        version: Some("2.0 or newer"),
        get: "https://example.invalid/frob",
        var: "AZD_WASM_HOST_FROB",
    };

    #[test]
    fn a_missing_tool_is_named_with_its_version_remedy_and_variable() {
        let empty = tempfile::tempdir().unwrap();
        let vars = Vars::fixed([("PATH", empty.path().as_os_str())]);
        let err = NEED.find(&vars, &["frob"]).unwrap_err().to_string();
        assert_eq!(
            err,
            "`frob` (2.0 or newer) is not on PATH: https://example.invalid/frob, or set AZD_WASM_HOST_FROB to it"
        );
        // No PATH at all is no tool either.
        assert!(NEED.find(&Vars::fixed([]), &["frob"]).is_err());
    }

    #[test]
    fn a_tool_is_found_on_path_or_by_its_variable_with_arguments() {
        let bin = folder_with("frob");
        let vars = Vars::fixed([("PATH", bin.path().as_os_str())]);
        let (program, pre) = NEED.find(&vars, &["frob"]).unwrap();
        assert_eq!(
            Path::new(&program),
            bin.path()
                .join(format!("frob{}", std::env::consts::EXE_SUFFIX))
        );
        assert!(pre.is_empty());
        let vars = Vars::fixed([
            ("PATH", bin.path().as_os_str()),
            ("AZD_WASM_HOST_FROB", "frob --fast  -x".as_ref()),
        ]);
        let (program, pre) = NEED.find(&vars, &["other"]).unwrap();
        assert!(Path::new(&program).starts_with(bin.path()));
        assert_eq!(pre, ["--fast", "-x"]);
    }

    #[test]
    fn a_variable_naming_nothing_says_so() {
        let empty = tempfile::tempdir().unwrap();
        let vars = Vars::fixed([
            ("PATH", empty.path().as_os_str()),
            ("AZD_WASM_HOST_FROB", "no-such-frob cc".as_ref()),
        ]);
        let err = NEED.find(&vars, &["frob"]).unwrap_err().to_string();
        assert!(
            err.contains("AZD_WASM_HOST_FROB is set to `no-such-frob cc`")
                && err.contains("`no-such-frob` is neither a file nor a program on PATH"),
            "{err}"
        );
        let missing = empty.path().join("frob");
        let vars = Vars::fixed([("AZD_WASM_HOST_FROB", missing.as_os_str())]);
        assert!(NEED.find(&vars, &["frob"]).is_err());
        // An empty variable is as good as unset.
        let vars = Vars::fixed([("AZD_WASM_HOST_FROB", "".as_ref())]);
        assert!(
            NEED.find(&vars, &["frob"])
                .unwrap_err()
                .to_string()
                .contains("is not on PATH")
        );
    }
}
