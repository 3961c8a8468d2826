//! The repository's files as the tests that read sources, scripts and pages walk them: build
//! output, installed packages and the pinned tools left out.

use std::path::{Path, PathBuf};

pub(crate) use azd_wasm_host_fixtures::repo_root;

/// Every file under `dir` that `keep` accepts, `target/`, `node_modules/`, `.tools/` and `.git/`
/// aside, appended to `into`.
pub(crate) fn files(dir: &Path, keep: &dyn Fn(&Path) -> bool, into: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            let name = entry.file_name();
            if !matches!(
                name.to_str(),
                Some("target" | "node_modules" | ".tools" | ".git")
            ) {
                files(&path, keep, into);
            }
        } else if keep(&path) {
            into.push(path);
        }
    }
}

/// Whether `path`'s name ends with `suffix` (`.rs`, `.md`).
pub(crate) fn named(path: &Path, suffix: &str) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.ends_with(suffix))
}
