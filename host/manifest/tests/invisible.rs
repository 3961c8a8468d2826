//! A manifest whose strings hold a control or invisible character is refused
//! when it is read, whichever field holds it, naming the field and the
//! character's code point, never echoing the character; the examples still
//! read.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::path::{Path, PathBuf};

use azd_wasm_host_manifest::Manifest;

/// What spoofs a prompt, as TOML escapes (so this file holds none of them):
/// an ANSI erase-line sequence, a carriage return, a newline, a tab, the
/// right-to-left override, a zero-width space, the line separator, the
/// byte-order mark, a private-use character.
const HOSTILE: [(&str, &str); 9] = [
    ("\\u001b[2K", "U+001B"),
    ("\\r", "U+000D"),
    ("\\n", "U+000A"),
    ("\\t", "U+0009"),
    ("\\u202e", "U+202E"),
    ("\\u200b", "U+200B"),
    ("\\u2028", "U+2028"),
    ("\\ufeff", "U+FEFF"),
    ("\\ue000", "U+E000"),
];

/// A manifest with `x` (TOML-escaped) spliced into one field; the field's
/// TOML path.
fn manifests(x: &str) -> Vec<(String, &'static str)> {
    let base = |policy: &str, tail: &str| {
        format!("name = \"todo\"\ncomponent = \"c.wasm\"\n{tail}[policy]\n{policy}\n")
    };
    vec![
        (
            format!("name = \"to{x}do\"\ncomponent = \"c.wasm\"\n"),
            "`name`",
        ),
        (
            format!("name = \"todo\"\ncomponent = \"c{x}.wasm\"\n"),
            "`component`",
        ),
        (
            base(
                &format!(
                    "fs = [{{ path = \"out\", access = \"read\" }}, {{ path = \"certs{x}\", access = \"read-write\" }}]"
                ),
                "",
            ),
            "`policy.fs[1].path`",
        ),
        (base(&format!("env = [\"HOME{x}\"]"), ""), "`policy.env[0]`"),
        (
            base(&format!("network = [\"db.example.com{x}:5432\"]"), ""),
            "`policy.network[0]`",
        ),
        (
            base(
                &format!(
                    "[policy.http]\nallow = [\"https://ok.example\", \"https://example.com{x}\"]"
                ),
                "",
            ),
            "`policy.http.allow[1]`",
        ),
        (
            base(
                &format!(
                    "[policy.azd]\ncredential_scopes = [\"https://storage.azure.com/{x}.default\"]"
                ),
                "",
            ),
            "`policy.azd.credential_scopes[0]`",
        ),
        (
            base("", &format!("[config]\nschema = \"config{x}.json\"\n")),
            "`config.schema`",
        ),
        (
            base("", &format!("[build]\ncommand = \"make{x}\"\n")),
            "`build.command`",
        ),
        (
            base("", &format!("[build]\nsource = \"src{x}\"\n")),
            "`build.source`",
        ),
        (
            format!("name = \"todo\"\ncomponent = \"c.wasm\"\n\"extra{x}\" = 1\n"),
            "a key of the manifest's top level",
        ),
    ]
}

#[test]
fn a_control_or_invisible_character_in_any_field_is_refused_naming_the_field_and_code_point() {
    let path = Path::new("/p/provider.toml");
    for (x, code) in HOSTILE {
        for (text, field) in manifests(x) {
            let e = format!("{:#}", Manifest::parse(&text, path).unwrap_err());
            assert!(
                e.contains(field) && e.contains(code) && e.contains("/p/provider.toml"),
                "{text:?} was refused without naming {field} and {code}: {e}"
            );
            assert!(
                !e.chars().any(azd_wasm_host_core::text::is_invisible),
                "the error echoes the character: {e:?}"
            );
            // What a consent record keeps is read the same way.
            assert!(Manifest::policy_of(&text, path).is_err(), "{text:?}");
        }
    }
}

#[test]
fn a_character_written_raw_in_a_comment_is_refused_with_its_line() {
    let text = "name = \"todo\" # \u{202e}elif\ncomponent = \"c.wasm\"\n";
    let e = format!(
        "{:#}",
        Manifest::parse(text, Path::new("/p/provider.toml")).unwrap_err()
    );
    assert!(
        e.contains("line 1, column 17") && e.contains("U+202E"),
        "{e}"
    );
    // Raw in a string: the field is named.
    let text = "name = \"to\u{200b}do\"\ncomponent = \"c.wasm\"\n";
    let e = format!(
        "{:#}",
        Manifest::parse(text, Path::new("/p/provider.toml")).unwrap_err()
    );
    assert!(e.contains("`name` (line 1)") && e.contains("U+200B"), "{e}");
}

#[test]
fn a_name_given_on_the_command_line_follows_the_same_rule() {
    let e = format!(
        "{:#}",
        Manifest::for_component(Path::new("/p/x.wasm"), Some("to\u{1b}[2Kdo")).unwrap_err()
    );
    assert!(e.contains("U+001B") && e.contains("name"), "{e}");
}

#[test]
fn every_example_manifest_still_reads() {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut read: Vec<PathBuf> = Vec::new();
    for entry in std::fs::read_dir(&examples).unwrap() {
        let manifest = entry.unwrap().path().join("provider.toml");
        if manifest.is_file() {
            Manifest::load(&manifest).unwrap_or_else(|e| panic!("{}: {e:#}", manifest.display()));
            read.push(manifest);
        }
    }
    assert!(read.len() >= 8, "{read:?}");
}
