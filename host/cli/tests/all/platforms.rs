//! The scripts and the release workflow, which cannot read `azd_wasm_host_core::azd::PLATFORMS`,
//! name the same platforms with the same architecture, OS and executable suffix: every list of
//! platforms they hold is the table's (or the table's but this machine's own, where a script
//! builds that one apart), and every target triple they build for is the table's platform's
//! architecture and OS (the C library may differ: MinGW or MSVC on Windows).

use std::collections::BTreeSet;
use std::fs;

use azd_wasm_host_core::azd::{PLATFORMS, Platform};

use crate::tree::repo_root;

fn read(relative: &str) -> String {
    fs::read_to_string(repo_root().join(relative)).unwrap()
}

fn all() -> BTreeSet<String> {
    PLATFORMS.iter().map(|p| p.slug()).collect()
}

fn but_linux_amd64() -> BTreeSet<String> {
    let mut set = all();
    set.remove("linux-amd64");
    set
}

/// The words after `prefix` on the line that starts with it, up to `end`.
fn list_after(text: &str, prefix: &str, end: char) -> BTreeSet<String> {
    let line = text
        .lines()
        .map(str::trim_start)
        .find_map(|l| l.strip_prefix(prefix))
        .unwrap_or_else(|| panic!("no line starting {prefix:?}"));
    let list = line.split(end).next().unwrap_or_default();
    list.split_whitespace().map(str::to_owned).collect()
}

/// Whether `triple` is `platform`'s architecture and OS.
fn same_machine(triple: &str, platform: Platform) -> bool {
    let arch = triple.split('-').next().unwrap_or_default();
    let os = |t: &str| {
        ["darwin", "windows", "linux"]
            .into_iter()
            .find(|os| t.contains(os))
            .unwrap_or_default()
    };
    arch == platform.triple.split('-').next().unwrap_or_default()
        && os(triple) == os(platform.triple)
}

#[test]
fn the_scripts_list_the_tables_platforms() {
    for script in ["scripts/release.sh", "scripts/release-tools.sh"] {
        let text = read(script);
        assert_eq!(list_after(&text, "ALL_PLATFORMS=(", ')'), all(), "{script}");
    }
    let test = read("scripts/test.sh");
    assert_eq!(
        list_after(&test, "[ \"$platforms\" = 1 ] && platforms=\"", '"'),
        but_linux_amd64(),
        "scripts/test.sh's AZD_WASM_HOST_CROSS=1"
    );
    let bench = read("scripts/bench.sh");
    assert_eq!(
        list_after(&bench, "for p in ", ';'),
        but_linux_amd64(),
        "scripts/bench.sh's other platforms"
    );
}

#[test]
fn the_release_script_builds_each_platform_for_its_machine() {
    let text = read("scripts/release.sh");
    let body = text
        .split("triple_of() {")
        .nth(1)
        .and_then(|rest| rest.split("esac").next())
        .expect("scripts/release.sh's triple_of");
    let mut seen = BTreeSet::new();
    for line in body.lines() {
        let Some((slug, rest)) = line.trim().split_once(") echo ") else {
            continue;
        };
        let triple = rest.trim_end_matches(";;").trim();
        let platform = Platform::named(slug).unwrap_or_else(|| panic!("{slug} is not azd's"));
        assert!(
            same_machine(triple, platform),
            "{slug}: {triple} is not {}",
            platform.triple
        );
        seen.insert(slug.to_owned());
    }
    assert_eq!(seen, all());
}

#[test]
fn the_release_workflow_builds_each_platform_for_its_machine() {
    let text = read(".github/workflows/release-tools.yml");
    let mut seen = BTreeSet::new();
    for line in text.lines().map(str::trim) {
        let Some(row) = line.strip_prefix("- { platform: ") else {
            continue;
        };
        let field = |name: &str| {
            row.split(", ")
                .find_map(|f| f.strip_prefix(&format!("{name}: ")))
                .map(|v| v.trim_end_matches(" }").trim_matches('"'))
                .unwrap_or_else(|| panic!("no {name} in {line}"))
        };
        let slug = row.split(',').next().unwrap_or_default();
        let platform = Platform::named(slug).unwrap_or_else(|| panic!("{slug} is not azd's"));
        assert!(same_machine(field("target"), platform), "{line}");
        assert_eq!(field("exe"), platform.exe_suffix(), "{line}");
        seen.insert(slug.to_owned());
    }
    assert_eq!(seen, all());
}

#[test]
fn a_triple_of_another_machine_is_told_apart() {
    let linux = Platform::named("linux/arm64").unwrap();
    assert!(same_machine("aarch64-unknown-linux-musl", linux));
    assert!(!same_machine("x86_64-unknown-linux-gnu", linux));
    assert!(!same_machine("aarch64-apple-darwin", linux));
}
