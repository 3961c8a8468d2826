//! Which changes start a cycle: anything in the provider's folder (its
//! manifest, its sources, its tests, its config schema) and in a `[build]
//! source` outside it, except what the cycle itself writes and the noise of
//! tools and editors.

use std::path::{Component, Path, PathBuf};

use azd_wasm_host_manifest::lexical;

/// Folders whose changes never start a cycle, wherever they are: outputs
/// (`build/`, `target/`, `dist/`), tools' caches, version control, the azd
/// environments `run` writes, editors' settings, and test cassettes (written
/// by `test --record`).
const IGNORED_DIRS: &[&str] = &[
    ".azure",
    ".git",
    ".hg",
    ".idea",
    ".mypy_cache",
    ".pytest_cache",
    ".svn",
    ".venv",
    ".vscode",
    ".zig-cache",
    "__pycache__",
    "build",
    "cassettes",
    "dist",
    "node_modules",
    "target",
    "zig-cache",
];

/// Files the build's own tools write beside the sources (`npm install`,
/// `cargo build`): a first build would otherwise start a second.
const IGNORED_FILES: &[&str] = &["package-lock.json", "Cargo.lock", ".DS_Store", "4913"];

/// Whether a file name is an editor's or a tool's scratch file: vim's swap
/// files (and its `4913` write test), emacs's lock and autosave files, `~`
/// backups, JetBrains' safe-write files, `*.tmp`.
fn scratch_name(name: &str) -> bool {
    IGNORED_FILES.contains(&name)
        || name.ends_with('~')
        || name.starts_with(".#")
        || (name.starts_with('#') && name.ends_with('#'))
        || [
            ".swp",
            ".swo",
            ".swx",
            ".tmp",
            "___jb_tmp___",
            "___jb_old___",
        ]
        .iter()
        .any(|suffix| name.ends_with(suffix))
}

/// What a provider is made from, as `watch` sees it.
#[derive(Debug, Clone)]
pub(crate) struct Watched {
    /// The provider manifest (absolute).
    pub(crate) manifest: PathBuf,
    /// The provider's folder (canonical).
    pub(crate) dir: PathBuf,
    /// A `[build] source` outside the provider's folder: a folder, or a file
    /// (then its folder is watched, not below).
    pub(crate) outside: Option<PathBuf>,
    /// The component and the build's files beside it (`.building`, `.previous`).
    outputs: Vec<PathBuf>,
}

impl Watched {
    /// Reads what it can of `manifest` (a manifest that does not parse is
    /// still watched: the next build says what is wrong with it).
    pub(crate) fn new(manifest: &Path) -> anyhow::Result<Self> {
        let manifest = std::fs::canonicalize(manifest)
            .map_err(|e| anyhow::anyhow!("no provider manifest at {}: {e}", manifest.display()))?;
        let dir = manifest
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("/"));
        let text = std::fs::read_to_string(&manifest).unwrap_or_default();
        let table: toml::Table = text.parse().unwrap_or_default();
        let mut outputs = Vec::new();
        if let Some(component) = table.get("component").and_then(|c| c.as_str()) {
            let component = dir.join(component.replace('\\', "/"));
            let component = lexical(&component);
            for suffix in ["", ".building", ".previous"] {
                let mut name = component.clone().into_os_string();
                name.push(suffix);
                outputs.push(PathBuf::from(name));
            }
        }
        let outside = table
            .get("build")
            .and_then(|b| b.get("source"))
            .and_then(|s| s.as_str())
            .and_then(|s| std::fs::canonicalize(dir.join(s)).ok())
            .filter(|source| !source.starts_with(&dir));
        Ok(Self {
            manifest,
            dir,
            outside,
            outputs,
        })
    }

    /// The folder a source outside the provider's folder is watched in,
    /// and whether below it too.
    pub(crate) fn outside_root(&self) -> Option<(PathBuf, bool)> {
        let source = self.outside.as_ref()?;
        if source.is_dir() {
            Some((source.clone(), true))
        } else {
            source.parent().map(|p| (p.to_path_buf(), false))
        }
    }

    /// Whether a change to `path` starts a cycle.
    pub(crate) fn matters(&self, path: &Path) -> bool {
        let path = lexical(path);
        if self.outputs.contains(&path) {
            return false;
        }
        let relative = match path.strip_prefix(&self.dir) {
            Ok(rel) => rel,
            Err(_) => match self.outside_root() {
                Some((root, deep)) => match path.strip_prefix(&root) {
                    Ok(rel) if deep || rel.components().count() == 1 => rel,
                    _ => return false,
                },
                None => return false,
            },
        };
        let names: Vec<&str> = relative
            .components()
            .filter_map(|c| match c {
                Component::Normal(name) => name.to_str(),
                _ => None,
            })
            .collect();
        let Some((last, folders)) = names.split_last() else {
            return false;
        };
        !folders
            .iter()
            .chain(std::iter::once(last))
            .any(|name| ignored_dir(name))
            && !scratch_name(last)
    }
}

/// Whether a folder of this name is never watched.
pub(crate) fn ignored_dir(name: &str) -> bool {
    IGNORED_DIRS.contains(&name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn provider(manifest: &str) -> (tempfile::TempDir, Watched) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("provider.toml"), manifest).unwrap();
        let watched = Watched::new(&dir.path().join("provider.toml")).unwrap();
        (dir, watched)
    }

    #[test]
    fn sources_manifest_and_tests_matter() {
        let (_tmp, w) = provider("name = \"x\"\ncomponent = \"build/x.wasm\"\n");
        for rel in [
            "provider.toml",
            "provider.js",
            "src/lib.rs",
            "lib/azd-provider.js",
            "tests/greeting.test.toml",
            "config.schema.json",
            "package.json",
        ] {
            assert!(w.matters(&w.dir.join(rel)), "{rel}");
        }
    }

    #[test]
    fn outputs_and_noise_do_not() {
        let (_tmp, w) = provider("name = \"x\"\ncomponent = \"out/x.wasm\"\n");
        for rel in [
            "out/x.wasm",
            "out/x.wasm.building",
            "out/x.wasm.previous",
            "build/js/provider.js",
            "target/wasm32-wasip2/release/x.wasm",
            "node_modules/.bin/jco",
            "dist/registry.json",
            ".git/index",
            "__pycache__/provider.cpython-312.pyc",
            "lib/__pycache__/azd_provider.cpython-312.pyc",
            "tests/cassettes/greeting.json",
            ".azure/dev/.env",
            "package-lock.json",
            ".provider.js.swp",
            "provider.js~",
            ".#provider.js",
            "#provider.js#",
            "4913",
            "provider.js___jb_tmp___",
            "build",
            "",
        ] {
            assert!(!w.matters(&w.dir.join(rel)), "{rel}");
        }
        // Outside the provider's folder, nothing matters.
        assert!(!w.matters(Path::new("/elsewhere/provider.js")));
        // Another file in the component's folder still does.
        assert!(w.matters(&w.dir.join("out/notes.txt")));
    }

    #[test]
    fn a_source_outside_the_folder_is_watched_too() {
        let tmp = tempfile::tempdir().unwrap();
        let provider_dir = tmp.path().join("provider");
        let shared = tmp.path().join("shared");
        std::fs::create_dir_all(&provider_dir).unwrap();
        std::fs::create_dir_all(shared.join("src")).unwrap();
        std::fs::write(
            provider_dir.join("provider.toml"),
            "name = \"x\"\ncomponent = \"build/x.wasm\"\n[build]\nlanguage = \"rust\"\nsource = \"../shared\"\n",
        )
        .unwrap();
        let w = Watched::new(&provider_dir.join("provider.toml")).unwrap();
        let shared = std::fs::canonicalize(&shared).unwrap();
        assert_eq!(w.outside_root(), Some((shared.clone(), true)));
        assert!(w.matters(&shared.join("src/lib.rs")));
        assert!(!w.matters(&shared.join("target/release/x.wasm")));
        assert!(!w.matters(&tmp.path().join("other/file")));
    }

    #[test]
    fn a_manifest_that_does_not_parse_is_still_watched() {
        let (_tmp, w) = provider("name = \n");
        assert!(w.matters(&w.dir.join("provider.toml")));
        assert!(!w.matters(&w.dir.join("build/x.wasm")));
    }
}
