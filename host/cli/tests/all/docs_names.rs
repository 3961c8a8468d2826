//! What the documentation names is there, and it says what is, not what was:
//! - every type `docs/architecture.md` names in a code span (`ProvisioningManager`,
//!   `Policy::fields`) is defined in the workspace's Rust (a struct, enum, trait, type alias or
//!   union; and its member, a `fn`, `const` or `static`) or is a message, enum or service of our
//!   protos; a type of another crate is written with its crate (`wasmtime::Store`) and not
//!   checked here;
//! - no page of `docs/` or `README.md` keeps a history note ("(was …)", "used to", "before the
//!   reorganisation"): what changed is in the commit log and the issue notes.
//!   `docs/benchmarks.md` is the exception: its dated tables and their "before" columns are the
//!   measurements themselves.

use std::collections::BTreeSet;
use std::fs;
use std::path::PathBuf;

use crate::tree::{files, named, repo_root};

/// The names the sources define after one of `keywords` (`struct Name`, `message Name`).
fn defined(sources: &[PathBuf], keywords: &[&str]) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for path in sources {
        let text = fs::read_to_string(path).unwrap_or_default();
        let words: Vec<&str> = text
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty())
            .collect();
        for pair in words.windows(2) {
            if keywords.contains(&pair[0]) {
                names.insert(pair[1].to_owned());
            }
        }
    }
    names
}

/// The code spans of `text` that read as a type of ours: `Name` or `Name::member`, `Name`
/// written in CamelCase (a capital, then a lower-case letter).
fn named_types(text: &str) -> BTreeSet<(String, Option<String>)> {
    let mut named = BTreeSet::new();
    let mut in_fence = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        for (i, span) in line.split('`').enumerate() {
            if i % 2 == 0 {
                continue; // outside a code span
            }
            let mut parts = span.splitn(2, "::");
            let ty = parts.next().unwrap_or_default();
            let member = parts.next();
            let mut chars = ty.chars();
            let camel = chars.next().is_some_and(|c| c.is_ascii_uppercase())
                && chars.next().is_some_and(|c| c.is_ascii_lowercase())
                && ty.chars().all(|c| c.is_ascii_alphanumeric());
            let plain_member = member.is_none_or(|m| {
                !m.is_empty() && m.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            });
            if camel && plain_member {
                named.insert((ty.to_owned(), member.map(str::to_owned)));
            }
        }
    }
    named
}

#[test]
fn every_type_the_architecture_names_is_defined() {
    let root = repo_root();
    let mut rust = Vec::new();
    for dir in ["host", "proto", "guest-sdk"] {
        files(&root.join(dir), &|p| named(p, ".rs"), &mut rust);
    }
    let mut protos = Vec::new();
    files(&root.join("proto"), &|p| named(p, ".proto"), &mut protos);
    assert!(
        rust.len() > 100 && !protos.is_empty(),
        "the sources were not found"
    );
    let types = defined(&rust, &["struct", "enum", "trait", "type", "union"])
        .union(&defined(&protos, &["message", "enum", "service"]))
        .cloned()
        .collect::<BTreeSet<_>>();
    let members = defined(&rust, &["fn", "const", "static"]);

    let text = fs::read_to_string(root.join("docs/architecture.md")).unwrap();
    let named = named_types(&text);
    assert!(
        named.len() > 30,
        "only {} types named: {named:?}",
        named.len()
    );
    let missing: Vec<String> = named
        .iter()
        .filter(|(ty, member)| {
            !types.contains(ty) || member.as_ref().is_some_and(|m| !members.contains(m))
        })
        .map(|(ty, member)| match member {
            Some(m) => format!("{ty}::{m}"),
            None => ty.clone(),
        })
        .collect();
    assert!(
        missing.is_empty(),
        "docs/architecture.md names what the code does not define (rename it, or write another \
         crate's type with its crate): {missing:?}"
    );
}

#[test]
fn a_code_span_names_a_type_only_in_camel_case() {
    let named = named_types(
        "`ProvisioningManager`, `Policy::fields`, `FORBIDDEN`, `wasmtime::Store`, `a::B`\n\
         ```\n`InFence`\n```\n`Name::with space`",
    );
    let names: Vec<String> = named
        .iter()
        .map(|(t, m)| {
            format!(
                "{t}{}",
                m.as_deref().map(|m| format!("::{m}")).unwrap_or_default()
            )
        })
        .collect();
    assert_eq!(names, ["Policy::fields", "ProvisioningManager"]);
}

#[test]
fn no_page_keeps_a_history_note() {
    let root = repo_root();
    let mut pages = vec![root.join("README.md")];
    files(&root.join("docs"), &|p| named(p, ".md"), &mut pages);
    let notes = [
        "(was ",
        "used to be",
        "used to ",
        "before the reorganisation",
        "formerly",
    ];
    let mut found = Vec::new();
    for page in &pages {
        if page.ends_with("docs/benchmarks.md") {
            continue; // its dated measurements are the page itself
        }
        let text = fs::read_to_string(page).unwrap();
        for (n, line) in text.lines().enumerate() {
            let lower = line.to_lowercase();
            if let Some(note) = notes.iter().find(|note| lower.contains(*note)) {
                let shown = page.strip_prefix(&root).unwrap_or(page).display();
                found.push(format!("{shown}:{}: {note:?}", n + 1));
            }
        }
    }
    assert!(pages.len() > 5, "the pages were not found");
    assert!(
        found.is_empty(),
        "history notes (say what is; what changed is in the log): {found:#?}"
    );
}
