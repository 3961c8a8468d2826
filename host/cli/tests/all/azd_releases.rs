//! What the project says of azd's releases is true: no azd release up to 1.34.0 serves the
//! versioned contract (`azd.extensions.v1`), so no comment, doc or message may say that one
//! does (the claims this replaced named the minor release after 1.32 as the first to serve it).
//!
//! The rule, over the text of `proto/`, `docs/`, `host/`, `scripts/`, the README and the
//! manifests: a version of azd from 1.32 on may be named only as the bound of what is known,
//! "up to 1.34.0" (every azd released so far speaks `azdext` only) or "after 1.34" (where the
//! versioned contract is expected). When azd ships it, the release that does is named here
//! and in the docs together, and the end-to-end suite (`scripts/azd-e2e.sh`, which runs every
//! azd release the Go module proxy serves) shows it against the real binary.

use std::path::{Path, PathBuf};

/// The newest azd release known not to serve `azd.extensions.v1`.
const NEWEST_KNOWN: &str = "1.34";
/// How a sentence may name it: as the end of what is known, or the start of what is not.
const ALLOWED_BEFORE: [&str; 3] = ["up to ", "after ", "to "];
/// How close before a version "azd" must be for the version to be azd's.
const AZD_WINDOW: usize = 40;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every text file under `dir` worth reading (sources, docs, scripts, manifests), without
/// build output, fuzz regressions or this test.
fn texts(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            if !matches!(
                name.as_str(),
                "target" | "node_modules" | "regressions" | ".tools"
            ) {
                texts(&path, out);
            }
        } else if name != "azd_releases.rs"
            && [
                "rs", "md", "proto", "sh", "toml", "yaml", "py", "go", "wit", "json",
            ]
            .iter()
            .any(|ext| name.ends_with(&format!(".{ext}")))
        {
            out.push(path);
        }
    }
}

/// The text with line breaks and the comment markers that start lines (`//!`, `///`, `//`,
/// `#`, `*`) turned into single spaces, so a claim wrapped over two comment lines reads as
/// one sentence.
fn as_prose(text: &str) -> String {
    text.lines()
        .map(|line| {
            line.trim_start()
                .trim_start_matches("//!")
                .trim_start_matches("///")
                .trim_start_matches("//")
                .trim_start_matches('#')
                .trim_start_matches('*')
                .trim()
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Each place in `text` that names an azd version from 1.32 on other than as the bound of
/// what is known: the version and the words around it.
fn claims(text: &str) -> Vec<String> {
    let prose = as_prose(text);
    let bytes = prose.as_bytes();
    let lower = prose.to_lowercase();
    let mut found = Vec::new();
    let mut at = 0;
    while let Some(i) = prose[at..].find("1.").map(|i| i + at) {
        at = i + 2;
        // A version starts at a word boundary: `1.40` but not `11.40` or `v0.1.40`.
        if i > 0 && (bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'.') {
            continue;
        }
        let digits: String = prose[i + 2..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        let Ok(minor) = digits.parse::<u32>() else {
            continue;
        };
        let end = i + 2 + digits.len();
        // `1.40×` is a ratio, not a version.
        if minor < 32 || prose[end..].starts_with('×') {
            continue;
        }
        let window_start = floor_char(&prose, i.saturating_sub(AZD_WINDOW));
        if !lower[window_start..i].contains("azd") {
            continue;
        }
        let version = &prose[i..end];
        let allowed = version == NEWEST_KNOWN
            && ALLOWED_BEFORE
                .iter()
                .any(|before| prose[..i].ends_with(before));
        if !allowed {
            let from = floor_char(&prose, i.saturating_sub(60));
            let to = floor_char(&prose, (end + 40).min(prose.len()));
            found.push(format!("{version}: …{}…", &prose[from..to]));
        }
    }
    found
}

/// The nearest char boundary at or before `i`.
fn floor_char(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[test]
fn the_rule_finds_the_claims_it_is_for_and_lets_the_true_ones_pass() {
    // The claims this test was written against, built here so that the text of this file names
    // no release (a grep of the repository for them finds none).
    let first = format!("1.{}", 32 + 1);
    let wrong = [
        format!("//! azd {first}.0 and later serve them under `azd.extensions.v1`"),
        format!("serve `azdext` only (azd ≤ 1.32), both (azd ≥ {first}; the default)"),
        "/// `azd.extensions.v1`: azd\n/// 1.35 and later.".to_owned(),
        "the bridge azd 1.34 keeps".to_owned(),
        "# azd 2 speaks it from azd 1.40".to_owned(),
    ];
    for text in &wrong {
        assert!(!claims(text).is_empty(), "not found in {text:?}");
    }
    assert_eq!(claims(&wrong[1]).len(), 2, "{:?}", claims(&wrong[1]));
    let true_ones = [
        "every azd released so far (1.31.x up to 1.34.0) serves only `azdext`",
        "the versioned contract, expected in an azd release after 1.34",
        "| progress | 336k msg/s | 1.40× | azd",
        "azd 1.31.2 from the Go module proxy",
        "wasmtime 1.40 is not azd's and is far enough away from anything that names the tool",
    ];
    for text in true_ones {
        assert_eq!(claims(text), Vec::<String>::new(), "{text:?}");
    }
}

#[test]
fn no_file_names_an_azd_release_that_speaks_the_versioned_contract() {
    let root = root();
    let mut files = Vec::new();
    for dir in [
        "proto",
        "docs",
        "host",
        "scripts",
        "guest-sdk",
        "examples",
        "wit",
    ] {
        texts(&root.join(dir), &mut files);
    }
    for file in ["README.md", "extension.yaml", "Cargo.toml"] {
        files.push(root.join(file));
    }
    assert!(
        files.len() > 200,
        "only {} files found under {}",
        files.len(),
        root.display()
    );
    let mut wrong = Vec::new();
    for file in &files {
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        for claim in claims(&text) {
            let shown = file.strip_prefix(&root).unwrap_or(file);
            wrong.push(format!("{}: {claim}", shown.display()));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} place(s) name an azd release past {NEWEST_KNOWN} or say one speaks \
         `azd.extensions.v1` (no release up to {NEWEST_KNOWN}.0 does; say \"expected in an azd \
         release after {NEWEST_KNOWN}\" or \"every azd released so far (up to {NEWEST_KNOWN}.0)\"):\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}
