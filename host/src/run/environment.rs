//! The azd environment `run` plays in: `.azure/<env>/` (made as `azd env new`
//! makes it) and its `.env` file.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::Path;

use anyhow::Context as _;
use azd_wasm_host_sim::SimEnvironment;

/// Creates `.azure/<env>/` (and `.azure/config.json` naming it the default) when
/// missing, as `azd env new` does: azd always has the folder before it provisions.
pub(super) fn prepare(project: &Path, env: &str) -> anyhow::Result<()> {
    azd_wasm_host::EnvironmentName::parse(env)?;
    let azure = project.join(".azure");
    let dir = azure.join(env);
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let config = azure.join("config.json");
    if !config.exists() {
        let body = serde_json::json!({ "version": 1, "defaultEnvironment": env });
        std::fs::write(&config, format!("{body}\n"))
            .with_context(|| format!("writing {}", config.display()))?;
    }
    Ok(())
}

/// The environment as the simulated azd serves it: its name and the values
/// of its `.env`.
pub(super) fn load(project: &Path, env: &str) -> anyhow::Result<SimEnvironment> {
    let path = project.join(".azure").join(env).join(".env");
    Ok(SimEnvironment {
        name: env.to_owned(),
        values: DotEnv::load(&path)?.values,
    })
}

/// Saves to `.env` the values the extension set while the command ran (azd
/// saves them the same way).
pub(super) fn save_changes(
    project: &Path,
    before: &SimEnvironment,
    after: &SimEnvironment,
) -> anyhow::Result<()> {
    let changed: Vec<(&String, &String)> = after
        .values
        .iter()
        .filter(|(k, v)| before.values.get(*k) != Some(*v))
        .collect();
    if changed.is_empty() {
        return Ok(());
    }
    let path = project.join(".azure").join(&after.name).join(".env");
    let mut dotenv = DotEnv::load(&path)?;
    for (k, v) in changed {
        dotenv.set(k, v);
    }
    dotenv.save(&path)
}

/// An azd `.env` file: `KEY="value"` lines, keys sorted, values quoted and escaped.
#[derive(Debug, Default)]
pub(super) struct DotEnv {
    values: BTreeMap<String, String>,
}

impl DotEnv {
    /// Reads `path` (an absent file is empty).
    pub fn load(path: &Path) -> anyhow::Result<Self> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
        };
        Ok(Self::parse(&text))
    }

    /// Parses `.env` text.
    pub fn parse(text: &str) -> Self {
        let mut values = BTreeMap::new();
        for line in text.lines() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let Some((k, v)) = line.split_once('=') else {
                continue;
            };
            values.insert(k.trim().to_owned(), unquote(v.trim()));
        }
        Self { values }
    }

    /// A value.
    #[cfg(test)]
    pub fn get(&self, key: &str) -> Option<&str> {
        self.values.get(key).map(String::as_str)
    }

    /// Sets a value.
    pub fn set(&mut self, key: &str, value: &str) {
        self.values.insert(key.to_owned(), value.to_owned());
    }

    /// Removes a key.
    pub fn remove(&mut self, key: &str) {
        self.values.remove(key);
    }

    /// The file text.
    pub fn render(&self) -> String {
        let mut s = String::new();
        for (k, v) in &self.values {
            s.push_str(k);
            s.push_str("=\"");
            for c in v.chars() {
                match c {
                    '"' => s.push_str("\\\""),
                    '\\' => s.push_str("\\\\"),
                    '\n' => s.push_str("\\n"),
                    '\r' => s.push_str("\\r"),
                    c => s.push(c),
                }
            }
            s.push_str("\"\n");
        }
        s
    }

    /// Writes the file atomically.
    pub fn save(&self, path: &Path) -> anyhow::Result<()> {
        let dir = path.parent().unwrap_or(Path::new("."));
        let mut tmp = tempfile::NamedTempFile::new_in(dir)
            .with_context(|| format!("writing {}", path.display()))?;
        tmp.write_all(self.render().as_bytes())?;
        tmp.persist(path)
            .with_context(|| format!("writing {}", path.display()))?;
        Ok(())
    }
}

fn unquote(v: &str) -> String {
    if v.len() >= 2 && v.starts_with('\'') && v.ends_with('\'') {
        return v[1..v.len() - 1].to_owned();
    }
    if !(v.len() >= 2 && v.starts_with('"') && v.ends_with('"')) {
        return v.to_owned();
    }
    let inner = &v[1..v.len() - 1];
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('n') => out.push('\n'),
                Some('r') => out.push('\r'),
                Some(o) => out.push(o),
                None => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dotenv_round_trips_awkward_values() {
        let mut d = DotEnv::default();
        d.set("B", "line1\nline2 \"quoted\" back\\slash");
        d.set("A", "{\"k\":[1,2]}");
        let text = d.render();
        assert!(text.starts_with("A="), "keys are sorted: {text}");
        let back = DotEnv::parse(&text);
        assert_eq!(back.get("B"), d.get("B"));
        assert_eq!(back.get("A"), d.get("A"));
        let plain = DotEnv::parse("# c\nX=1\nY='two'\n");
        assert_eq!(plain.get("X"), Some("1"));
        assert_eq!(plain.get("Y"), Some("two"));
    }
}
