//! A step's faults in the provider's policy: a copy of its manifest with
//! grants withdrawn or limits lowered, used for that step only. A fault can
//! only take away: asking for more memory or time than the policy grants, or
//! withdrawing what it does not grant, is the test's mistake and fails it.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use toml::{Table, Value};

use super::spec::Fault;

/// The kinds `withdraw` names (as [`super::spec::WITHDRAWN_KINDS`]), each with
/// where its grants live in `[policy]`.
const LISTS: [(&str, &[&str]); 5] = [
    ("fs", &["fs"]),
    ("env", &["env"]),
    ("network", &["network"]),
    ("http", &["http", "allow"]),
    ("credentials", &["azd", "credential_scopes"]),
];

/// Writes `provider`'s manifest, tightened by `fault`, into `dir`; its path.
pub(super) fn tightened(
    provider: &Path,
    name: &str,
    fault: &Fault,
    dir: &Path,
) -> anyhow::Result<PathBuf> {
    let base = provider.parent().unwrap_or(Path::new("."));
    let mut manifest: Table = if provider.extension().is_some_and(|e| e == "wasm") {
        let mut t = Table::new();
        t.insert("name".into(), name.into());
        t.insert(
            "component".into(),
            provider.to_string_lossy().as_ref().into(),
        );
        t
    } else {
        let text = std::fs::read_to_string(provider)
            .with_context(|| format!("reading {}", provider.display()))?;
        toml::from_str(&text).with_context(|| format!("reading {}", provider.display()))?
    };
    // The copy lives elsewhere: its component is named by its full path.
    if let Some(Value::String(c)) = manifest.get("component") {
        let full = base.join(c).to_string_lossy().into_owned();
        manifest.insert("component".into(), full.into());
    }
    manifest.remove("build");
    let policy = table(&mut manifest, "policy")?;
    for entry in &fault.withdraw {
        withdraw(policy, entry)?;
    }
    if let Some(mb) = fault.memory_mb {
        lower(policy, "memory_mb", Value::Integer(i64::try_from(mb)?))?;
    }
    if let Some(secs) = fault.call_timeout_secs {
        lower(policy, "call_timeout_secs", Value::Float(secs))?;
    }
    let path = dir.join("provider.toml");
    std::fs::write(&path, toml::to_string(&manifest)?)?;
    Ok(path)
}

/// The table `key` of `parent`, made when missing.
fn table<'a>(parent: &'a mut Table, key: &str) -> anyhow::Result<&'a mut Table> {
    parent
        .entry(key)
        .or_insert_with(|| Value::Table(Table::new()))
        .as_table_mut()
        .with_context(|| format!("`{key}` in the provider's manifest is not a table"))
}

fn withdraw(policy: &mut Table, entry: &str) -> anyhow::Result<()> {
    match entry {
        "azd.environment" => {
            table(policy, "azd")?.insert("environment".into(), "none".into());
            return Ok(());
        }
        "azd.prompt" => {
            table(policy, "azd")?.insert("prompt".into(), false.into());
            return Ok(());
        }
        _ => {}
    }
    let (kind, item) = match entry.split_once(':') {
        Some((k, i)) => (k, Some(i)),
        None => (entry, None),
    };
    let Some((_, path)) = LISTS.iter().find(|(k, _)| *k == kind) else {
        bail!(
            "fault.withdraw: {entry:?} is not a grant (fs, env, network, http, credentials, azd.environment, azd.prompt)"
        );
    };
    let (last, parents) = path.split_last().context("a grant's place")?;
    let mut at = &mut *policy;
    for p in parents {
        at = table(at, p)?;
    }
    let Some(Value::Array(list)) = at.get_mut(*last) else {
        bail!("fault.withdraw: {entry:?}: the policy grants no {kind}");
    };
    let before = list.len();
    match item {
        None => list.clear(),
        Some(item) => list.retain(|v| granted_name(v) != Some(item)),
    }
    if list.len() == before {
        bail!("fault.withdraw: {entry:?}: the policy does not grant it");
    }
    Ok(())
}

/// What a grant is called in `withdraw`: a string as it is, an fs grant by its path.
fn granted_name(v: &Value) -> Option<&str> {
    match v {
        Value::String(s) => Some(s),
        Value::Table(t) => t.get("path").and_then(Value::as_str),
        _ => None,
    }
}

/// Sets `key` to `value`, which must not be more than the policy grants.
fn lower(policy: &mut Table, key: &str, value: Value) -> anyhow::Result<()> {
    let number = |v: &Value| v.as_float().or_else(|| v.as_integer().map(|i| i as f64));
    if let (Some(now), Some(new)) = (policy.get(key).and_then(number), number(&value))
        && new > now
    {
        bail!("fault.{key} = {new} is more than the policy grants ({now}): a fault only tightens");
    }
    policy.insert(key.into(), value);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const MANIFEST: &str = r#"
name = "files"
component = "build/files.wasm"
[build]
language = "python"
[policy]
fs = [{ path = ".", access = "read" }, { path = "out", access = "read-write" }]
env = ["A", "B"]
memory_mb = 64
call_timeout_secs = 30
[policy.azd]
environment = "read"
prompt = true
"#;

    fn tighten(fault: Fault) -> anyhow::Result<Table> {
        let dir = tempfile::tempdir()?;
        let provider = dir.path().join("provider.toml");
        std::fs::write(&provider, MANIFEST)?;
        let out = tempfile::tempdir()?;
        let path = tightened(&provider, "files", &fault, out.path())?;
        Ok(toml::from_str(&std::fs::read_to_string(path)?)?)
    }

    #[test]
    fn withdrawn_grants_and_lowered_limits_are_gone_from_the_copy_only() {
        let m = tighten(Fault {
            withdraw: vec!["fs:out".into(), "env".into(), "azd.prompt".into()],
            memory_mb: Some(8),
            call_timeout_secs: Some(0.5),
            ..Fault::default()
        })
        .unwrap();
        let policy = m["policy"].as_table().unwrap();
        let fs = policy["fs"].as_array().unwrap();
        assert_eq!(fs.len(), 1);
        assert_eq!(fs[0]["path"].as_str(), Some("."));
        assert!(policy["env"].as_array().unwrap().is_empty());
        assert_eq!(policy["azd"]["prompt"].as_bool(), Some(false));
        assert_eq!(policy["azd"]["environment"].as_str(), Some("read"));
        assert_eq!(policy["memory_mb"].as_integer(), Some(8));
        assert!(
            m["component"]
                .as_str()
                .unwrap()
                .ends_with("build/files.wasm")
        );
        assert!(Path::new(m["component"].as_str().unwrap()).is_absolute());
        assert!(!m.contains_key("build"));
    }

    #[test]
    fn a_fault_that_would_grant_more_or_withdraw_nothing_is_refused() {
        let e = tighten(Fault {
            memory_mb: Some(128),
            ..Fault::default()
        })
        .unwrap_err();
        assert!(e.to_string().contains("only tightens"), "{e}");
        let e = tighten(Fault {
            withdraw: vec!["fs:elsewhere".into()],
            ..Fault::default()
        })
        .unwrap_err();
        assert!(e.to_string().contains("does not grant"), "{e}");
        let e = tighten(Fault {
            withdraw: vec!["http".into()],
            ..Fault::default()
        })
        .unwrap_err();
        assert!(e.to_string().contains("grants no http"), "{e}");
    }
}
