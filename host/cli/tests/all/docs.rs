//! The documentation's links hold: every relative link in `README.md` and
//! `docs/**/*.md` names a file or folder that exists, and every `#anchor`
//! names a heading of the markdown file it points into (GitHub's slugs).
//! Links inside fenced code blocks and code spans are not links. The README
//! stays short (at most 220 lines); the rest lives under `docs/`.
//!
//! Standard library only, so it also compiles alone:
//! `CARGO_MANIFEST_DIR=$PWD/host/cli rustc --edition 2024 --test host/cli/tests/all/docs.rs`.

use std::collections::{BTreeMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The most lines `README.md` may have.
const README_MAX_LINES: usize = 220;

/// The repository root: the first folder above this crate holding both
/// `Cargo.toml` and `wit/`.
fn repo_root() -> PathBuf {
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest_dir
        .ancestors()
        .find(|dir| dir.join("Cargo.toml").is_file() && dir.join("wit").is_dir())
        .unwrap_or_else(|| {
            panic!(
                "no folder above {} holds Cargo.toml and wit/",
                manifest_dir.display()
            )
        })
        .to_path_buf()
}

/// `README.md` and every `.md` file under `docs/`, sorted.
fn doc_files(root: &Path) -> Vec<PathBuf> {
    let mut files = vec![root.join("README.md")];
    let mut folders = vec![root.join("docs")];
    while let Some(folder) = folders.pop() {
        let Ok(entries) = fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries {
            let path = entry.expect("a docs/ entry").path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// GitHub's anchor for a heading: lowercase, characters other than
/// alphanumerics, spaces, hyphens and underscores dropped, spaces made hyphens.
fn slug(heading: &str) -> String {
    heading
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The text with fenced code blocks and code spans blanked (their characters
/// made spaces, newlines kept, so offsets still give lines).
fn prose(text: &str) -> String {
    blank_code_spans(&blank_fences(text))
}

/// The text with fenced code blocks (``` or ~~~) blanked.
fn blank_fences(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut fence: Option<(char, usize)> = None;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        let marker = trimmed.chars().next().filter(|c| matches!(c, '`' | '~'));
        let run = marker.map_or(0, |m| trimmed.chars().take_while(|&c| c == m).count());
        let is_fence_line = match (fence, marker) {
            (None, Some(m)) if run >= 3 => {
                fence = Some((m, run));
                true
            }
            (Some((m, n)), Some(c)) if c == m && run >= n && trimmed[run..].trim().is_empty() => {
                fence = None;
                true
            }
            _ => fence.is_some(),
        };
        if is_fence_line {
            out.extend(line.chars().map(blank));
        } else {
            out.push_str(line);
        }
    }
    out
}

/// A character of code, blanked: newlines stay so that lines can be counted.
fn blank(c: char) -> char {
    if c == '\n' { '\n' } else { ' ' }
}

/// Code spans blanked: a run of n backticks up to the next run of exactly n.
fn blank_code_spans(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let run_at = |i: usize| chars[i..].iter().take_while(|&&c| c == '`').count();
    let mut out = chars.clone();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '`' {
            i += 1;
            continue;
        }
        let n = run_at(i);
        let mut j = i + n;
        let close = loop {
            if j >= chars.len() {
                break None;
            }
            if chars[j] == '`' {
                let m = run_at(j);
                if m == n {
                    break Some(j);
                }
                j += m;
            } else {
                j += 1;
            }
        };
        match close {
            Some(j) => {
                for c in &mut out[i..j + n] {
                    *c = blank(*c);
                }
                i = j + n;
            }
            None => i += n,
        }
    }
    out.into_iter().collect()
}

/// Every inline link or image `[text](target)` outside code: its line
/// (1-based) and its target (a title after the target left out).
fn links(text: &str) -> Vec<(usize, String)> {
    let prose = prose(text);
    let chars: Vec<char> = prose.chars().collect();
    let mut found = Vec::new();
    let mut line = 1;
    let mut i = 0;
    while i < chars.len() {
        if chars[i] == '\n' {
            line += 1;
        }
        if chars[i] != '[' {
            i += 1;
            continue;
        }
        let Some(close) = matching(&chars, i, '[', ']') else {
            i += 1;
            continue;
        };
        if chars.get(close + 1) != Some(&'(') {
            i += 1;
            continue;
        }
        let Some(end) = matching(&chars, close + 1, '(', ')') else {
            i += 1;
            continue;
        };
        let inner: String = chars[close + 2..end].iter().collect();
        let target = inner.split_whitespace().next().unwrap_or("");
        let target = target.trim_start_matches('<').trim_end_matches('>');
        found.push((line, target.to_owned()));
        line += chars[i..end].iter().filter(|&&c| c == '\n').count();
        i = end + 1;
    }
    found
}

/// The index of the bracket closing the one at `open`, nesting counted.
fn matching(chars: &[char], open: usize, left: char, right: char) -> Option<usize> {
    let mut depth = 0usize;
    for (k, &c) in chars.iter().enumerate().skip(open) {
        if c == left {
            depth += 1;
        } else if c == right {
            depth -= 1;
            if depth == 0 {
                return Some(k);
            }
        }
    }
    None
}

/// The anchors of a markdown file's headings (ATX headings outside code;
/// a repeated heading gets `-1`, `-2`, … as on GitHub).
fn anchors(text: &str) -> HashSet<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut anchors = HashSet::new();
    for line in blank_fences(text).lines() {
        let trimmed = line.trim_start();
        let level = trimmed.chars().take_while(|&c| c == '#').count();
        if !(1..=6).contains(&level) || !trimmed[level..].starts_with([' ', '\t']) {
            continue;
        }
        let title = trimmed[level..].trim().trim_end_matches('#').trim_end();
        let base = slug(&link_texts(title));
        let count = seen.entry(base.clone()).or_insert(0);
        let anchor = if *count == 0 {
            base.clone()
        } else {
            format!("{base}-{count}")
        };
        *count += 1;
        anchors.insert(anchor);
    }
    anchors
}

/// A heading's text as rendered: `[text](target)` becomes `text`.
fn link_texts(title: &str) -> String {
    let chars: Vec<char> = title.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] == '['
            && let Some(close) = matching(&chars, i, '[', ']')
            && chars.get(close + 1) == Some(&'(')
            && let Some(end) = matching(&chars, close + 1, '(', ')')
        {
            out.extend(&chars[i + 1..close]);
            i = end + 1;
            continue;
        }
        out.push(chars[i]);
        i += 1;
    }
    out
}

/// Whether a link leaves the repository (and is not checked).
fn is_external(target: &str) -> bool {
    ["http://", "https://", "mailto:"]
        .iter()
        .any(|scheme| target.to_ascii_lowercase().starts_with(scheme))
}

/// What is wrong with the links of these markdown files, one line each.
fn broken_links(root: &Path, files: &[PathBuf]) -> Vec<String> {
    let mut problems = Vec::new();
    let mut anchor_cache: BTreeMap<PathBuf, Option<HashSet<String>>> = BTreeMap::new();
    let mut anchors_of = |path: &Path| -> Option<HashSet<String>> {
        anchor_cache
            .entry(path.to_path_buf())
            .or_insert_with(|| fs::read_to_string(path).ok().map(|t| anchors(&t)))
            .clone()
    };
    for file in files {
        let text = fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let shown = file
            .strip_prefix(root)
            .unwrap_or(file)
            .display()
            .to_string();
        for (line, target) in links(&text) {
            if target.is_empty() {
                problems.push(format!("{shown}:{line}: a link with no target"));
                continue;
            }
            if is_external(&target) {
                continue;
            }
            let (path, anchor) = target.split_once('#').unwrap_or((&target, ""));
            let resolved = if path.is_empty() {
                file.clone()
            } else if let Some(from_root) = path.strip_prefix('/') {
                root.join(from_root)
            } else {
                file.parent().unwrap_or(root).join(path)
            };
            if !resolved.exists() {
                problems.push(format!(
                    "{shown}:{line}: `{target}`: {} does not exist",
                    resolved.strip_prefix(root).unwrap_or(&resolved).display()
                ));
                continue;
            }
            if anchor.is_empty() {
                continue;
            }
            let markdown = if resolved.is_dir() {
                resolved.join("README.md")
            } else {
                resolved
            };
            if markdown.extension().is_none_or(|e| e != "md") {
                continue;
            }
            match anchors_of(&markdown) {
                Some(found) if found.contains(anchor) => {}
                Some(_) => problems.push(format!(
                    "{shown}:{line}: `{target}`: {} has no heading whose anchor is #{anchor}",
                    markdown.strip_prefix(root).unwrap_or(&markdown).display()
                )),
                None => problems.push(format!(
                    "{shown}:{line}: `{target}`: {} cannot be read",
                    markdown.display()
                )),
            }
        }
    }
    problems
}

#[test]
fn every_relative_link_and_anchor_of_the_docs_resolves() {
    let root = repo_root();
    let files = doc_files(&root);
    assert!(
        files.iter().any(|f| f.starts_with(root.join("docs"))),
        "no markdown file under {}",
        root.join("docs").display()
    );
    let problems = broken_links(&root, &files);
    assert!(
        problems.is_empty(),
        "{} broken link(s) in the docs:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn the_readme_stays_short() {
    let readme = fs::read_to_string(repo_root().join("README.md")).expect("README.md");
    let lines = readme.lines().count();
    assert!(
        lines <= README_MAX_LINES,
        "README.md has {lines} lines, more than {README_MAX_LINES}: move material into docs/"
    );
}

#[test]
fn slugs_follow_githubs_rule() {
    assert_eq!(slug("The two commands"), "the-two-commands");
    assert_eq!(slug("`check` and `check --diff`"), "check-and-check---diff");
    assert_eq!(slug("azd's contract versions"), "azds-contract-versions");
    assert_eq!(
        slug("The manifest: `provider.toml`"),
        "the-manifest-providertoml"
    );
    assert_eq!(
        slug("`[step.fault]` and `[[step.fault.http]]`"),
        "stepfault-and-stepfaulthttp"
    );
    assert_eq!(slug("snake_case & Ünïcode"), "snake_case--ünïcode");
    assert_ne!(slug("Two Words"), "Two-Words");
}

#[test]
fn links_are_found_outside_code_only() {
    let text = "See [a](docs/a.md#top) and ![img](pic.png \"title\").\n\
                `[not](a-link.md)` and [external](https://example.com)\n\
                ```sh\n\
                [fenced](nope.md)\n\
                ```\n\
                [wrapped\n\
                text](b.md) [same](#here) [nested [x]](c.md) [not a link] (d.md)\n";
    assert_eq!(
        links(text),
        [
            (1, "docs/a.md#top".to_owned()),
            (1, "pic.png".to_owned()),
            (2, "https://example.com".to_owned()),
            (6, "b.md".to_owned()),
            (7, "#here".to_owned()),
            (7, "c.md".to_owned()),
        ]
    );
    assert!(is_external("https://example.com") && is_external("mailto:a@b.c"));
    assert!(!is_external("docs/a.md"));
}

#[test]
fn anchors_come_from_headings_outside_code() {
    let text = "# Title\n## `listen` from start\n```md\n## Not a heading\n```\n#nospace\n## Title\n\
                ## A [linked](x.md) heading ##\n";
    let found = anchors(text);
    for anchor in ["title", "listen-from-start", "title-1", "a-linked-heading"] {
        assert!(found.contains(anchor), "{anchor} missing from {found:?}");
    }
    assert!(!found.contains("not-a-heading") && !found.contains("nospace"));
}

#[test]
fn a_broken_link_or_anchor_is_reported() {
    let dir = std::env::temp_dir().join(format!("azd-wasm-host-docs-{}", std::process::id()));
    fs::create_dir_all(dir.join("docs")).unwrap();
    fs::write(
        dir.join("README.md"),
        "# Top\n[ok](docs/a.md#part) [gone](docs/missing.md) [bad](docs/a.md#nope) [self](#top) [lost](#gone)\n",
    )
    .unwrap();
    fs::write(dir.join("docs/a.md"), "## Part\n[up](../README.md#top)\n").unwrap();
    let files = [dir.join("README.md"), dir.join("docs/a.md")];
    let problems = broken_links(&dir, &files);
    fs::remove_dir_all(&dir).unwrap();
    assert_eq!(problems.len(), 3, "{problems:#?}");
    assert!(problems[0].contains("docs/missing.md") && problems[0].starts_with("README.md:2:"));
    assert!(problems[1].contains("#nope"));
    assert!(problems[2].contains("#gone"));
}
