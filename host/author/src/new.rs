//! `azd-wasm-host new <LANGUAGE> NAME`: a provider project anywhere, in any
//! language of [`crate::lang`].
//!
//! The project holds everything it needs, from this binary: the WIT package
//! (`wit/`), the language's guest helpers, a provider that greets (the
//! repository's tested example, renamed), `provider.toml` with a `[build]`
//! section and a deny-all policy, a sample `azure.yaml` that selects the
//! provider, and the `extension.yaml` `package` ships it with.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};

use crate::lang::Language;
use crate::names::{check_name, shell_word};
use crate::templates::{self, File};

/// What `new` does (the CLI reads its command line into it).
#[derive(Debug, Clone)]
pub struct NewOptions {
    /// The provider's language.
    pub language: Language,
    /// The provider's name (`infra.provider` in azure.yaml): lower-case letters,
    /// digits and inner hyphens, starting with a letter.
    pub name: String,
    /// The folder to create (default: NAME in the current folder). It must not
    /// exist yet, or be empty.
    pub dir: Option<PathBuf>,
    /// The azd extension id `package` ships it as (default: `local.NAME`).
    pub extension_id: Option<String>,
}

/// `new`: writes the project; returns its folder.
pub fn new(args: &NewOptions) -> anyhow::Result<PathBuf> {
    check_name(&args.name)?;
    let extension_id = args
        .extension_id
        .clone()
        .unwrap_or_else(|| format!("local.{}", args.name));
    crate::names::check_extension_id(&extension_id)?;
    let dir = args
        .dir
        .clone()
        .unwrap_or_else(|| PathBuf::from(&args.name));
    ensure_empty_dir(&dir)?;
    let files = project_files(args.language, &args.name, &extension_id);
    for (path, text) in &files {
        let dest = dir.join(path);
        if let Some(parent) = dest.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        std::fs::write(&dest, text).with_context(|| format!("cannot write {}", dest.display()))?;
    }
    let shown = crate::paths::shown(&dir);
    let tool = crate::paths::command_name();
    eprintln!(
        "Created the {} provider `{}` in {shown} ({} files). Next:\n  cd {}\n  {tool} build\n  {tool} run provision",
        args.language.name(),
        args.name,
        files.len(),
        shell_word(&shown),
    );
    Ok(dir)
}

/// Creates `dir`, or accepts it when it exists and is empty.
fn ensure_empty_dir(dir: &Path) -> anyhow::Result<()> {
    match std::fs::read_dir(dir) {
        Ok(mut entries) => {
            if entries.next().is_some() {
                bail!(
                    "{} already exists and is not empty; name another folder with --dir",
                    dir.display()
                );
            }
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))
        }
        Err(e) => Err(e).with_context(|| format!("cannot use {}", dir.display())),
    }
}

/// The files of a new project: relative path and contents.
pub(crate) fn project_files(
    language: Language,
    name: &str,
    extension_id: &str,
) -> Vec<(String, String)> {
    let component = format!("build/{name}.wasm");
    let cjs = templates::js_tool_version("@bytecodealliance/componentize-js");
    let jco = templates::js_tool_version("@bytecodealliance/jco");
    let typescript = templates::js_tool_version("typescript");
    let preview2_shim = templates::js_tool_version("@bytecodealliance/preview2-shim");
    let parts = language.guest();
    let values = [
        ("name", name),
        ("language", parts.name),
        ("language_title", parts.title),
        ("component", component.as_str()),
        ("memory_mb", parts.memory_mb),
        ("build_extra", parts.build_extra),
        ("extension_id", extension_id),
        ("gitignore_extra", parts.gitignore_extra),
        ("language_notes", parts.notes),
        ("host_version", env!("CARGO_PKG_VERSION")),
        ("componentize_js_version", cjs.as_str()),
        ("jco_version", jco.as_str()),
        ("typescript_version", typescript.as_str()),
        ("preview2_shim_version", preview2_shim.as_str()),
    ];
    templates::WIT
        .iter()
        .chain(templates::COMMON)
        .chain(parts.files.iter())
        .map(|File { path, text }| {
            // The helpers, the SDK and the WIT go as the repository ships them.
            let shipped = ["lib/", "include/", "azd-provider-sdk/src/", "wit/", "azdext/"];
            if shipped.iter().any(|dir| path.starts_with(dir)) {
                return ((*path).to_owned(), (*text).to_owned());
            }
            let text = templates::fill(text, &values)
                .replace("../../guest-sdk/js/azd-provider.js", "./lib/azd-provider.js")
                .replace(
                    "Build: scripts/build-examples.sh (see guest-sdk/js/azd-provider.js for the command).",
                    "Build: azd-wasm-host build ([build] in provider.toml).",
                )
                .replace(
                    "Build: scripts/build-examples.sh c-hello (see guest-sdk/c/azd_provider.h).",
                    "Build: azd-wasm-host build ([build] in provider.toml).",
                )
                .replace(parts.example, name);
            ((*path).to_owned(), text)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_azd_and_every_tool_accept() {
        for ok in ["todo", "a", "storage-accounts", "x9", "my-provider-2"] {
            check_name(ok).unwrap();
        }
        for bad in [
            "",
            "Todo",
            "9lives",
            "-x",
            "x-",
            "a--b",
            "my provider",
            "x:y",
            "a\nb",
            "bicep",
            "terraform",
            "ünï",
            "a_b",
            "a.b",
        ] {
            assert!(check_name(bad).is_err(), "{bad:?} was accepted");
        }
        assert!(check_name(&"a".repeat(65)).is_err());
    }

    #[test]
    fn every_language_gets_a_manifest_a_sample_project_and_the_wit() {
        for &language in Language::all() {
            let files = project_files(language, "todo", "local.todo");
            let get = |path: &str| {
                files
                    .iter()
                    .find(|(p, _)| p == path)
                    .map(|(_, t)| t.as_str())
                    .unwrap_or_else(|| panic!("{language:?}: no {path}"))
            };
            // The manifest reads its config schema beside it.
            let dir = tempfile::tempdir().unwrap();
            std::fs::write(dir.path().join("provider.toml"), get("provider.toml")).unwrap();
            std::fs::write(
                dir.path().join("config.schema.json"),
                get("config.schema.json"),
            )
            .unwrap();
            let manifest =
                azd_wasm_host_manifest::Manifest::load(&dir.path().join("provider.toml")).unwrap();
            assert_eq!(manifest.name, "todo");
            assert_eq!(manifest.component, dir.path().join("build/todo.wasm"));
            let schema = manifest.config_schema.expect("new writes a config schema");
            assert_eq!(schema.document["required"], serde_json::json!(["name"]));
            // The sample project's config matches it; one without `name` does not.
            let sample = serde_json::json!({ "name": "world", "greeting": "Hello" });
            assert!(get("azure.yaml").contains("    name: world\n    greeting: Hello\n"));
            schema.check(&sample, "todo").unwrap();
            let e = schema
                .check(&serde_json::json!({ "greeting": "Hi" }), "todo")
                .unwrap_err();
            assert!(
                e.message.contains("missing properties 'name'"),
                "{}",
                e.message
            );
            assert!(
                manifest.policy.is_deny_all(),
                "{language:?}: the new policy grants something"
            );
            let build = crate::settings::BuildSettings::parse(
                get("provider.toml"),
                Path::new("/p/provider.toml"),
            )
            .unwrap()
            .unwrap();
            assert_eq!(build.language, Some(language));
            assert!(get("azure.yaml").contains("provider: todo"));
            assert!(get("extension.yaml").contains("id: local.todo"));
            assert!(get("wit/provisioning.wit").contains("package azd:provisioning@0.2.0"));
            for (path, text) in &files {
                assert!(
                    !text.contains("{{name}}"),
                    "{language:?}: {path} keeps a placeholder"
                );
                if path.starts_with("lib/") || path.starts_with("include/") {
                    continue; // the helpers as the repository ships them
                }
                for old in [
                    "rust-hello",
                    "js-hello",
                    "c-hello",
                    "guest-sdk/",
                    "scripts/",
                ] {
                    assert!(!text.contains(old), "{language:?}: {path} still says {old}");
                }
            }
        }
    }

    /// A document of the repository.
    fn doc(path: &str) -> String {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        std::fs::read_to_string(root.join(path)).unwrap()
    }

    #[test]
    fn the_docs_name_new_s_languages_and_files_as_the_code_does() {
        let names: Vec<&str> = Language::all().iter().map(|l| l.name()).collect();
        for path in ["README.md", "docs/authoring.md", "docs/commands.md"] {
            let text = doc(path);
            // `azd-wasm-host new js todo   # or: new ts|rust|… NAME [--dir DIR] […]`
            let line = text
                .lines()
                .find(|l| l.starts_with("azd-wasm-host new "))
                .unwrap_or_else(|| panic!("{path} shows no `azd-wasm-host new`"));
            let (example, or) = line.split_once("# or: new ").expect("the other languages");
            let first = example.split_whitespace().nth(2).unwrap_or_default();
            let (others, _flags) = or.split_once(' ').unwrap_or((or, ""));
            let mut shown: Vec<&str> = others.split('|').chain([first]).collect();
            shown.sort_unstable();
            let mut all = names.clone();
            all.sort_unstable();
            assert_eq!(shown, all, "{path}: {line}");
        }
        // What `new` writes: every file every language gets, and each
        // language's own folders, by the names the guide gives them.
        let guide = doc("docs/authoring.md");
        let section = guide
            .split("## `new` and `build`")
            .nth(1)
            .and_then(|s| s.split("\n## ").next())
            .expect("the guide's `new` section");
        for file in templates::COMMON {
            let top = file.path.split('/').next().unwrap_or_default();
            assert!(
                section.contains(&format!("`{}`", file.path)) || top == "wit",
                "the guide's `new` section does not name {}",
                file.path
            );
        }
        for &language in Language::all() {
            for (path, _) in project_files(language, "todo", "local.todo") {
                // A folder is named as such (`lib/`) or by a file in it; a
                // Rust crate's `src/` is "the provider's source".
                if let Some((folder, _)) = path.split_once('/')
                    && !section.contains(&format!("`{folder}/"))
                    && folder != "src"
                {
                    panic!("the guide's `new` section does not name {folder}/ ({path})");
                }
            }
        }
    }

    #[test]
    fn a_non_empty_folder_is_refused_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("mine.txt"), "keep").unwrap();
        let args = NewOptions {
            language: Language::Js,
            name: "todo".into(),
            dir: Some(dir.path().to_path_buf()),
            extension_id: None,
        };
        let err = new(&args).unwrap_err().to_string();
        assert!(err.contains("not empty"), "{err}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn shell_words_are_quoted_when_needed() {
        assert_eq!(shell_word("todo"), "todo");
        assert_eq!(shell_word("my dir/it's"), r"'my dir/it'\''s'");
    }
}
