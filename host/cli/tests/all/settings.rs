//! The tool's environment settings have one source, `azd_wasm_host_core::settings`:
//! - `docs/commands.md`'s table ("Environment variables") is its catalogue, row for row;
//! - no production file but that module spells an `AZD_WASM_HOST_*` name in a string (every
//!   reader names the constant), but for the one `option_env!` must take as written;
//! - every `AZD_WASM_HOST_*` name a page of the docs or a script mentions is in the catalogue, or
//!   in its list of internal settings.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

use azd_wasm_host_core::settings::{CATALOGUE, INTERNAL, PREFIX, RELEASE_KEY};

use crate::tree::{files, named, repo_root};

/// The part of a source file before its test module.
fn production_part(text: &str) -> &str {
    let cut = text
        .match_indices("#[cfg(test)]")
        .find(|(at, _)| {
            text[at + "#[cfg(test)]".len()..]
                .trim_start()
                .starts_with("mod ")
        })
        .map_or(text.len(), |(at, _)| at);
    &text[..cut]
}

/// Every `AZD_WASM_HOST_*` name in `text` (the bare prefix aside).
fn names_in(text: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for (at, _) in text.match_indices(PREFIX) {
        let rest = &text[at + PREFIX.len()..];
        let len = rest
            .find(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
            .unwrap_or(rest.len());
        let tail = rest[..len].trim_end_matches('_');
        if !tail.is_empty() {
            names.insert(format!("{PREFIX}{tail}"));
        }
    }
    names
}

#[test]
fn the_docs_table_is_the_catalogue_row_for_row() {
    let page = fs::read_to_string(repo_root().join("docs/commands.md")).unwrap();
    let header = "| variable | read by | what it does |";
    let start = page
        .find(header)
        .expect("the table of environment variables");
    let rows: Vec<&str> = page[start..]
        .lines()
        .skip(2)
        .take_while(|line| line.starts_with('|'))
        .collect();
    let catalogue: Vec<String> = CATALOGUE.iter().map(|s| s.row()).collect();
    assert!(catalogue.len() > 15, "{catalogue:#?}");
    for (n, (row, want)) in rows.iter().zip(&catalogue).enumerate() {
        assert_eq!(
            row,
            want,
            "row {} of docs/commands.md's table is not the catalogue's \
             (azd_wasm_host_core::settings::CATALOGUE)",
            n + 1
        );
    }
    assert_eq!(rows.len(), catalogue.len(), "the table has {rows:#?}");
}

#[test]
fn no_production_file_but_the_catalogue_spells_a_setting() {
    let root = repo_root();
    let mut sources = Vec::new();
    let rust = |p: &Path| {
        named(p, ".rs")
            && !p.to_string_lossy().ends_with("_tests.rs")
            && p.components().any(|c| c.as_os_str() == "src")
    };
    for dir in ["host", "proto/src", "guest-sdk/src"] {
        files(&root.join(dir), &rust, &mut sources);
    }
    let catalogue = root.join("host/core/src/settings.rs");
    assert!(sources.contains(&catalogue) && sources.len() > 100);
    let quoted = format!("\"{PREFIX}");
    let mut spelled = Vec::new();
    for path in &sources {
        let relative = path.strip_prefix(&root).unwrap();
        let test_support = ["host/fixtures", "host/fuzz"]
            .iter()
            .any(|crate_dir| relative.starts_with(crate_dir));
        if path == &catalogue || test_support {
            continue;
        }
        let text = fs::read_to_string(path).unwrap();
        for (n, line) in production_part(&text).lines().enumerate() {
            let allowed = format!("option_env!(\"{RELEASE_KEY}\")");
            if line.contains(&quoted) && !line.contains(&allowed) {
                spelled.push(format!("{}:{}: {}", relative.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(
        spelled.is_empty(),
        "settings spelled outside azd_wasm_host_core::settings (name its constant): {spelled:#?}"
    );
}

#[test]
fn every_setting_the_docs_and_scripts_name_is_catalogued() {
    let root = repo_root();
    let mut known: BTreeSet<String> = INTERNAL.iter().map(|n| n.to_string()).collect();
    for setting in CATALOGUE {
        known.extend(setting.names.iter().map(|n| n.to_string()));
    }
    let mut pages = vec![root.join("README.md")];
    files(&root.join("docs"), &|p| named(p, ".md"), &mut pages);
    files(
        &root.join("scripts"),
        &|p| named(p, ".sh") || named(p, ".py"),
        &mut pages,
    );
    assert!(pages.len() > 10, "{pages:?}");
    let mut unknown = BTreeSet::new();
    for file in &pages {
        let text = fs::read_to_string(file).unwrap();
        for name in names_in(&text) {
            if !known.contains(&name) {
                unknown.insert(format!(
                    "{name} ({})",
                    file.strip_prefix(&root).unwrap().display()
                ));
            }
        }
    }
    assert!(
        unknown.is_empty(),
        "settings named that the catalogue does not hold: {unknown:#?}"
    );
}

#[test]
fn names_are_read_whole_from_text() {
    let names =
        names_in("set AZD_WASM_HOST_GO=/x, `AZD_WASM_HOST_CC` or AZD_WASM_HOST_* (AZD_WASM_HOST_)");
    assert_eq!(
        names.into_iter().collect::<Vec<_>>(),
        ["AZD_WASM_HOST_CC", "AZD_WASM_HOST_GO"]
    );
}
