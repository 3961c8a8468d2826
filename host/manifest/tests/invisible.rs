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

/// Whether Unicode says `c` renders as nothing or as a blank other than an ASCII space: its
/// `Default_Ignorable_Code_Point` property, its `White_Space` property outside ASCII, or one of
/// the symbols drawn with no ink (U+2800 BRAILLE PATTERN BLANK, U+1D159 MUSICAL SYMBOL NULL
/// NOTEHEAD). From Unicode's data (ICU4X), not from the code under test.
fn blank_or_ignorable(c: char) -> bool {
    use icu_properties::CodePointSetData;
    use icu_properties::props::{DefaultIgnorableCodePoint, WhiteSpace};
    CodePointSetData::new::<DefaultIgnorableCodePoint>().contains(c)
        || (!c.is_ascii() && CodePointSetData::new::<WhiteSpace>().contains(c))
        || matches!(c, '\u{2800}' | '\u{1d159}')
}

/// Every code point Unicode makes default-ignorable (variation selectors, Hangul fillers, the
/// combining grapheme joiner, Khmer inherent vowels, Mongolian selectors, tags, …) and every
/// blank that is not an ASCII space (no-break, ideographic, em and thin spaces, the braille
/// blank), in a string or a key, is refused naming its code point and never echoing it; the
/// letters of every script still read.
#[test]
fn every_default_ignorable_or_blank_character_is_refused_naming_its_code_point() {
    let path = Path::new("/p/provider.toml");
    let mut checked = 0;
    for c in (0..=0x10_FFFF_u32).filter_map(char::from_u32) {
        if !blank_or_ignorable(c) {
            continue;
        }
        let code = format!("U+{:04X}", u32::from(c));
        let escaped = format!("\\U{:08X}", u32::from(c));
        for (text, field) in [
            (
                format!("name = \"to{escaped}do\"\ncomponent = \"c.wasm\"\n"),
                "`name`",
            ),
            (
                format!(
                    "name = \"todo\"\ncomponent = \"c.wasm\"\n[policy]\nenv = [\"HOME{escaped}\"]\n"
                ),
                "`policy.env[0]`",
            ),
            (
                format!("name = \"todo\"\ncomponent = \"c.wasm\"\n\"k{escaped}\" = 1\n"),
                "a key of the manifest's top level",
            ),
        ] {
            let e = format!("{:#}", Manifest::parse(&text, path).unwrap_err());
            assert!(
                e.contains(field) && e.contains(&code),
                "{code} was not refused in {field}: {e}"
            );
            assert!(!e.contains(c), "the error echoes {code}: {e:?}");
        }
        let e = format!(
            "{:#}",
            Manifest::for_component(Path::new("/p/x.wasm"), Some(&format!("to{c}do"))).unwrap_err()
        );
        assert!(e.contains(&code) && !e.contains(c), "{code}: {e:?}");
        checked += 1;
    }
    // Unicode has some 4,170 default-ignorable code points and two dozen blanks beyond ASCII.
    assert!(checked > 4_000, "only {checked} code points were tried");
    // Written raw in a comment, too.
    for c in [
        '\u{a0}',
        '\u{3000}',
        '\u{2800}',
        '\u{3164}',
        '\u{fe0f}',
        '\u{e0101}',
    ] {
        let text = format!("name = \"todo\" # a{c}b\ncomponent = \"c.wasm\"\n");
        let e = format!("{:#}", Manifest::parse(&text, path).unwrap_err());
        let code = format!("U+{:04X}", u32::from(c));
        assert!(
            e.contains("line 1, column 18") && e.contains(&code) && !e.contains(c),
            "{e}"
        );
    }
    // Letters, marks and symbols of many scripts, and emoji without a variation selector, still
    // read: in a string, in a key and in a comment.
    for word in [
        "données",
        "Straße",
        "данные",
        "δεδομένα",
        "数据存储",
        "データ",
        "데이터",
        "بيانات",
        "נתונים",
        "डेटा",
        "ข้อมูล",
        "ডেটা",
        "ტექსტი",
        "Ձայն",
        "ᏣᎳᎩ",
        "😀🚀✅",
        "a\u{301}",
    ] {
        assert!(
            word.chars().all(|c| !blank_or_ignorable(c)),
            "{word} holds an ignorable character"
        );
        let text = format!(
            "name = \"{word}\" # {word}\ncomponent = \"c.wasm\"\n[build]\ncommand = \"echo {word}\"\n\"{word}\" = 1\n"
        );
        let m = Manifest::parse(&text, path).unwrap_or_else(|e| panic!("{word}: {e:#}"));
        assert_eq!(m.name, word);
        Manifest::for_component(Path::new("/p/x.wasm"), Some(word)).unwrap();
    }
}
