//! `azd-wasm-host check`: the runtime's [`CheckReport`] as text, on stdout.
//!
//! ```text
//! provider:  localfiles
//! component: build/localfiles.wasm (19081234 bytes) targets azd:provisioning/provisioning-provider@0.2.0: OK
//! manifest:  provider.toml
//!
//! imports (capabilities the component asks for):
//!   wasi:filesystem/types@0.2.6                  files (only the fs grants below)
//!
//! policy (what the sandbox grants):
//!   fs                      . (read)
//!   memory_mb               256 MiB (all memories and tables of an instance together)
//!   call_timeout_secs       300 s (per call)
//!
//! config schema (azure.yaml's infra.config, checked at every Initialize): config.schema.json
//!   { "type": "object", ... }
//! ```
//!
//! What the manifest names (the provider, its grants) is quoted by
//! `text::shown`, and paths and the schema's lines have their control and
//! invisible characters escaped, whatever the report holds.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use azd_wasm_host_core::Exit;
use azd_wasm_host_core::text::{escape_invisible, shown};
use azd_wasm_host_manifest::{Policy, PolicyDiff};
use azd_wasm_host_runtime::{CheckReport, RuntimeOptions};

/// `check`: validate and describe a component, on stdout.
pub(crate) async fn check(path: PathBuf) -> anyhow::Result<()> {
    let opts = RuntimeOptions {
        cache: azd_wasm_host_sidecar::env::compile_cache(),
        ..RuntimeOptions::default()
    };
    let report = tokio::task::spawn_blocking(move || inspect(&path, &opts))
        .await
        .context("the check stopped unexpectedly")??;
    let mut text = render(&report);
    if let Some(manifest) = &report.manifest.source {
        text.push_str(&ceiling_section(manifest));
    }
    use std::io::Write as _;
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(text.as_bytes())?;
    Ok(())
}

/// What this machine's ceiling allows and refuses of the provider of
/// `manifest` (nothing when there is no ceiling), as `policy check` judges it.
fn ceiling_section(manifest: &Path) -> String {
    let judged = azd_wasm_host_sidecar::machine_policy().and_then(|c| {
        let empty = c.is_empty();
        crate::policy::judge(&c, manifest).map(|j| (empty, j))
    });
    let mut out = String::new();
    match judged {
        Ok((true, _)) => {}
        Ok((false, (who, judged))) => {
            let _ = writeln!(out, "\nthis machine's provider policy, for {who}:");
            let _ = writeln!(out, "{}", azd_wasm_host_sidecar::judged_lines(&judged));
            if judged.iter().all(|j| j.within) {
                let _ = writeln!(out, "  within the ceiling");
            }
        }
        Err(e) => {
            let _ = writeln!(out, "\nthis machine's provider policy: {e:#}");
        }
    }
    out
}

/// `check --diff OLD NEW`: what NEW's policy grants beyond OLD's (`+`) and
/// what it no longer grants (`-`), on stdout. Exit codes as diff(1)'s: 0 NEW
/// asks for nothing more, 1 it asks for more, 2 a manifest cannot be read.
pub(crate) fn diff(old: &Path, new: &Path) -> anyhow::Result<ExitCode> {
    match compare(old, new) {
        Ok(code) => Ok(code),
        Err(e) => {
            eprintln!("azd-wasm-host: error: {e:#}");
            Ok(Exit::Trouble.into())
        }
    }
}

fn compare(old: &Path, new: &Path) -> anyhow::Result<ExitCode> {
    let read = |p: &Path| {
        azd_wasm_host_manifest::Manifest::resolve(p, None)
            .with_context(|| format!("reading {}", p.display()))
    };
    let (a, b) = (read(old)?, read(new)?);
    let d = PolicyDiff::between(&a.policy, &b.policy);
    let text = render_diff(&d, (&a.name, old), (&b.name, new));
    use std::io::Write as _;
    std::io::stdout().lock().write_all(text.as_bytes())?;
    Ok(Exit::holds(d.asks_for_nothing_more()).into())
}

/// The difference as `check --diff` prints it.
fn render_diff(
    d: &PolicyDiff,
    (old_name, old): (&str, &Path),
    (new_name, new): (&str, &Path),
) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "old: {} ({})", shown(old_name), path_shown(old));
    let _ = writeln!(out, "new: {} ({})", shown(new_name), path_shown(new));
    if d.more.is_empty() && d.less.is_empty() {
        let _ = writeln!(out, "\nthe same capabilities");
        return out;
    }
    if !d.more.is_empty() {
        let _ = writeln!(out, "\nasks for more ({}):", d.more.len());
        for line in &d.more {
            let _ = writeln!(out, "  + {line}");
        }
    }
    if !d.less.is_empty() {
        let _ = writeln!(out, "\nno longer asks for ({}):", d.less.len());
        for line in &d.less {
            let _ = writeln!(out, "  - {line}");
        }
    }
    out
}

/// A path as the report shows it: its control and invisible characters escaped.
fn path_shown(path: &Path) -> String {
    escape_invisible(&path.display().to_string()).into_owned()
}

/// The runtime's findings, once the manifest's `[build]` section (which only
/// the author's toolchain reads) is found valid too.
fn inspect(path: &std::path::Path, opts: &RuntimeOptions) -> anyhow::Result<CheckReport> {
    let report = azd_wasm_host_runtime::check(path, opts).context("check failed")?;
    if let Some(manifest) = &report.manifest.source {
        azd_wasm_host_author::check_build_section(manifest).context("check failed")?;
    }
    Ok(report)
}

/// The report as `check` prints it.
pub(crate) fn render(report: &CheckReport) -> String {
    let manifest = &report.manifest;
    let mut out = String::new();
    let _ = writeln!(out, "provider:  {}", shown(&manifest.name));
    let _ = writeln!(
        out,
        "component: {} ({} bytes) targets {}: OK",
        path_shown(&manifest.component),
        report.component_bytes,
        report.world
    );
    match &manifest.source {
        Some(src) => {
            let _ = writeln!(out, "manifest:  {}", path_shown(src));
        }
        None => {
            let _ = writeln!(
                out,
                "manifest:  none (bare component: deny-all policy, default limits)"
            );
        }
    }
    let _ = writeln!(out, "\nimports (capabilities the component asks for):");
    for import in &report.imports {
        let _ = writeln!(
            out,
            "  {:<44} {}",
            escape_invisible(&import.name),
            import.reach
        );
    }
    write_policy(&mut out, &manifest.policy);
    write_config_schema(&mut out, manifest);
    out
}

/// The config schema (`[config] schema`), printed as written: the manifest
/// loaded only if it is a valid JSON Schema.
fn write_config_schema(out: &mut String, manifest: &azd_wasm_host_manifest::Manifest) {
    let Some(schema) = &manifest.config_schema else {
        let _ = writeln!(
            out,
            "
config schema: none (infra.config reaches the provider unchecked; see [config] schema)"
        );
        return;
    };
    let _ = writeln!(
        out,
        "
config schema (azure.yaml's infra.config, checked at every Initialize): {}",
        path_shown(&schema.path)
    );
    for line in schema.text.lines() {
        let _ = writeln!(out, "  {}", escape_invisible(line));
    }
}

/// The policy section of [`render`]: what the sandbox grants, one line per
/// entry of each of the policy's fields ([`Policy::fields`]), by its key in
/// `[policy]`.
fn write_policy(out: &mut String, policy: &Policy) {
    let _ = writeln!(out, "\npolicy (what the sandbox grants):");
    if policy.is_deny_all() {
        let _ = writeln!(
            out,
            "  deny-all: no files, no environment variables, no network, no HTTP, nothing of azd's"
        );
    }
    let fields = policy.fields();
    let width = fields.iter().map(|f| f.key.len()).max().unwrap_or(0);
    for field in fields {
        for value in field.value.shown() {
            let _ = write!(out, "  {:<width$} {value}", field.key);
            if !field.about.is_empty() {
                let _ = write!(out, " ({})", field.about);
            }
            out.push('\n');
        }
    }
}

#[cfg(test)]
mod tests {
    use azd_wasm_host_fixtures::harness::Setup;
    use azd_wasm_host_fixtures::wasi_component;

    use super::*;

    fn report_of(policy: &str) -> String {
        let setup = Setup::new(&wasi_component(), policy);
        let opts = RuntimeOptions {
            cache: Some(setup.compile_cache()),
            ..RuntimeOptions::default()
        };
        render(&azd_wasm_host_runtime::check(&setup.manifest(), &opts).unwrap())
    }

    #[test]
    fn the_report_lists_imports_and_what_the_policy_grants() {
        let report = report_of("fs = [{ path = \".\", access = \"read\" }]\nenv = [\"PATH\"]");
        assert!(report.starts_with("provider:  fixture\n"), "{report}");
        assert!(
            report.contains("targets azd:provisioning/provisioning-provider@0.1.0: OK"),
            "{report}"
        );
        assert!(report.contains("wasi:filesystem/preopens"), "{report}");
        assert!(report.contains("wasi:cli/environment"), "{report}");
        assert!(
            report.contains(&format!("  {:<24}. (read)\n", "fs")),
            "{report}"
        );
        assert!(
            report.contains(&format!("  {:<24}PATH\n", "env")),
            "{report}"
        );
        assert!(!report.contains("disk"), "{report}");
        assert!(report.ends_with('\n'), "{report}");
    }

    #[test]
    fn a_bare_component_is_deny_all() {
        let setup = Setup::new(&wasi_component(), "");
        let bare = setup.dir.path().join("build/fixture.wasm");
        let report =
            render(&azd_wasm_host_runtime::check(&bare, &RuntimeOptions::default()).unwrap());
        assert!(
            report.contains("manifest:  none (bare component"),
            "{report}"
        );
        assert!(report.contains("deny-all: no files"), "{report}");
    }

    #[test]
    fn a_build_section_build_could_not_follow_fails_the_check() {
        let setup = Setup::new(&wasi_component(), "\n[build]\nlanguage = \"cobol\"");
        let e = format!(
            "{:#}",
            inspect(&setup.manifest(), &RuntimeOptions::default()).unwrap_err()
        );
        assert!(e.contains("cobol") && e.contains("provider.toml"), "{e}");
        let setup = Setup::new(&wasi_component(), "\n[build]\nlanguage = \"c\"");
        inspect(&setup.manifest(), &RuntimeOptions::default()).expect("a valid [build] passes");
    }

    #[test]
    fn the_config_schema_is_printed_and_a_broken_one_fails_the_check() {
        let setup = Setup::new(
            &wasi_component(),
            "\n[config]\nschema = \"config.schema.json\"",
        );
        let schema = r#"{ "type": "object", "required": ["name"], "properties": { "name": { "type": "string" } } }"#;
        std::fs::write(setup.dir.path().join("config.schema.json"), schema).unwrap();
        let opts = RuntimeOptions {
            cache: Some(setup.compile_cache()),
            ..RuntimeOptions::default()
        };
        let report = render(&inspect(&setup.manifest(), &opts).unwrap());
        assert!(
            report.contains(
                "config schema (azure.yaml's infra.config, checked at every Initialize): "
            ) && report.contains("config.schema.json\n"),
            "{report}"
        );
        assert!(report.ends_with(&format!("  {schema}\n")), "{report}");
        std::fs::write(
            setup.dir.path().join("config.schema.json"),
            r#"{ "type": "object", "required": "name" }"#,
        )
        .unwrap();
        let e = format!("{:#}", inspect(&setup.manifest(), &opts).unwrap_err());
        assert!(
            e.contains("config.schema.json") && e.contains("not a valid JSON Schema"),
            "{e}"
        );
        assert!(report_of("").contains("config schema: none"));
    }

    #[test]
    fn the_report_and_the_diff_show_only_escaped_text_of_a_manifest_made_without_the_parser() {
        let setup = Setup::new(&wasi_component(), "");
        let opts = RuntimeOptions {
            cache: Some(setup.compile_cache()),
            ..RuntimeOptions::default()
        };
        let mut report = azd_wasm_host_runtime::check(&setup.manifest(), &opts).unwrap();
        let policy = &mut report.manifest.policy;
        policy.fs.push(azd_wasm_host_manifest::FsGrant {
            path: "out\u{1b}[2K".into(),
            access: azd_wasm_host_manifest::FsAccess::Read,
            outside_project: false,
        });
        policy.env.push("HOME\r".into());
        policy.network.push("db\u{200b}:5432".into());
        policy.http.allow.push("https://a.example\u{202e}".into());
        policy
            .azd
            .credential_scopes
            .push("https://s/.default\u{2028}".into());
        report.manifest.name = "fixture\u{1b}]0;x\u{7}".into();
        let text = render(&report);
        assert!(
            !text
                .chars()
                .any(|c| c != '\n' && azd_wasm_host_core::text::is_invisible(c)),
            "{text:?}"
        );
        for line in [
            r#"provider:  "fixture\u{1b}]0;x\u{7}""#,
            r#"fs                      "out\u{1b}[2K" (read)"#,
            r#"env                     "HOME\u{d}""#,
            r#"network                 "db\u{200b}:5432""#,
            r#"http.allow              "https://a.example\u{202e}""#,
            r#"azd.credential_scopes   "https://s/.default\u{2028}""#,
        ] {
            assert!(text.contains(line), "{line} is not in:\n{text}");
        }
        let d = PolicyDiff::between(&Policy::default(), &report.manifest.policy);
        let diff = render_diff(
            &d,
            ("old", Path::new("old/provider.toml")),
            (&report.manifest.name, Path::new("new/provider.toml")),
        );
        assert!(
            !diff
                .chars()
                .any(|c| c != '\n' && azd_wasm_host_core::text::is_invisible(c)),
            "{diff:?}"
        );
        assert!(
            diff.contains(r#"new: "fixture\u{1b}]0;x\u{7}" (new/provider.toml)"#),
            "{diff}"
        );
        assert!(
            diff.contains(r#"  + environment variable "HOME\u{d}""#),
            "{diff}"
        );
    }

    #[test]
    fn every_field_of_a_maximal_policy_is_shown_by_its_key() {
        let policy: Policy = toml::from_str(
            "fs = [{ path = \"out\", access = \"read-write\" }]\nenv = [\"HOME\"]\n\
             network = [\"db:5432\"]\n[http]\nallow = [\"https://a.example\"]\n\
             [azd]\nenvironment = \"read\"\nprompt = true\n\
             credential_scopes = [\"https://s.example/.default\"]\n",
        )
        .unwrap();
        let mut out = String::new();
        write_policy(&mut out, &policy);
        for field in policy.fields() {
            let shown = field.value.shown();
            assert!(!shown.is_empty(), "{} shows nothing", field.key);
            for value in shown {
                let line = format!("  {:<24}{value}", field.key);
                assert!(out.contains(&line), "{line:?} is not in:\n{out}");
            }
        }
        assert!(!out.contains("deny-all"), "{out}");
    }

    #[test]
    fn grants_outside_the_project_and_the_disk_bound_are_said() {
        let report =
            report_of("fs = [{ path = \"../shared\", access = \"read\", outside_project = true }]");
        assert!(
            report.contains("../shared (read, OUTSIDE the project)"),
            "{report}"
        );
        assert!(!report.contains("disk_mb"), "{report}");
        let report = report_of("fs = [{ path = \"out\", access = \"read-write\" }]");
        assert!(
            report.contains("disk_mb                 64 MiB (what an instance may write into its read-write grants"),
            "{report}"
        );
        let report = report_of("fs = [{ path = \"out\", access = \"read-write\" }]\ndisk_mb = 5");
        assert!(report.contains("disk_mb                 5 MiB"), "{report}");
    }
}
