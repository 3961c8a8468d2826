//! `azd-wasm-host run`: drive a provider without azd.
//!
//! It plays azd's part: starts a [simulated azd](crate::sim) on loopback, spawns
//! this very binary as `listen` exactly as azd would (same arguments and
//! environment, same Ready rule), reads the project's `azure.yaml` like azd does
//! for the `infra` section, and sends the requests azd sends for the command:
//!
//! | command      | requests                         | like                        |
//! |--------------|----------------------------------|-----------------------------|
//! | `provision`  | Initialize → Deploy              | `azd provision`             |
//! | `preview`    | Initialize → Preview             | `azd provision --preview`   |
//! | `down`       | Initialize → Destroy{force,purge}| `azd down --force --purge`  |
//! | `state`      | Initialize → State               | `azd env refresh`           |
//! | `parameters` | Initialize → Parameters → PlannedOutputs | `azd pipeline config` |
//!
//! Progress shows live (a spinner on a terminal, plain lines otherwise, on
//! stderr); results print as a table or JSON on stdout; outputs are written to
//! `.azure/<env>/.env` the way azd writes them, and keys a destroy invalidated are
//! removed from it.

use std::collections::BTreeMap;
use std::io::{IsTerminal as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context as _, bail};
use azd_wasm_host_proto::azdext as pb;
use clap::ValueEnum;

use crate::sim::{CallError, SimAzd, SimOptions};

/// Arguments of `run`.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// What to do.
    #[arg(value_enum)]
    pub action: Action,
    /// The provider: a manifest (`provider.toml`) or a bare component (`.wasm`).
    #[arg(long, short = 'p')]
    pub provider: PathBuf,
    /// The azd project directory (holds `azure.yaml`).
    #[arg(long, default_value = ".")]
    pub project: PathBuf,
    /// The azd environment name.
    #[arg(long, short = 'e', default_value = "dev")]
    pub env: String,
    /// How to print results.
    #[arg(long, short = 'o', value_enum, default_value_t = Output::Table)]
    pub output: Output,
    /// Provider name, when `--provider` is a bare component.
    #[arg(long)]
    pub provider_name: Option<String>,
}

/// The commands `run` can play.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Action {
    /// Initialize → Deploy (`azd provision`).
    Provision,
    /// Initialize → Preview (`azd provision --preview`).
    Preview,
    /// Initialize → Destroy{force, purge} (`azd down --force --purge`).
    Down,
    /// Initialize → State (`azd env refresh`).
    State,
    /// Initialize → Parameters → PlannedOutputs (`azd pipeline config`).
    Parameters,
}

/// Result formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Output {
    /// A table for people.
    Table,
    /// JSON for programs.
    Json,
}

/// The `infra` section of `azure.yaml`, as far as a provider needs it.
#[derive(Debug, Default, serde::Deserialize)]
struct AzureYaml {
    #[serde(default)]
    infra: Infra,
}

#[derive(Debug, Default, serde::Deserialize)]
struct Infra {
    provider: Option<String>,
    path: Option<String>,
    module: Option<String>,
    #[serde(default)]
    config: Option<serde_json::Value>,
}

/// Runs `run`; returns the exit code (non-zero when the provider failed).
pub async fn run(args: RunArgs, debug: bool) -> anyhow::Result<ExitCode> {
    let project = std::fs::canonicalize(&args.project)
        .with_context(|| format!("project directory {}", args.project.display()))?;
    let provider_path = std::fs::canonicalize(&args.provider)
        .with_context(|| format!("provider {}", args.provider.display()))?;
    let infra = read_infra(&project)?;
    let name = provider_name(
        &provider_path,
        args.provider_name.as_deref(),
        infra.provider.as_deref(),
    )?;

    prepare_environment(&project, &args.env)?;

    let sim = SimAzd::start(SimOptions::default()).await?;
    let exe = std::env::current_exe().context("finding this executable")?;
    let mut cmd = tokio::process::Command::new(exe);
    cmd.env("AZD_WASM_HOST_MANIFEST", &provider_path)
        .env("AZD_ENVIRONMENT", &args.env)
        .env("AZD_CWD", &project)
        .current_dir(&project);
    if let Some(n) = &args.provider_name {
        cmd.env("AZD_WASM_HOST_PROVIDER_NAME", n);
    }
    if debug {
        cmd.env("AZD_DEBUG", "true");
    }
    // Not azd's 15 s: the first start compiles the component (seconds for a large
    // one), and `run` is for trying things out.
    let spawn = crate::sim::SpawnOptions {
        ready_timeout: Some(Duration::from_secs(300)),
        ..Default::default()
    };
    let mut process = sim.spawn_extension_with(cmd, spawn).await?;
    let handle = sim.provider(&name, Duration::from_secs(15)).await?;

    let options = pb::ProvisioningOptions {
        provider: name.clone(),
        path: infra.path.clone().unwrap_or_else(|| "infra".into()),
        module: infra.module.clone().unwrap_or_else(|| "main".into()),
        config: infra
            .config
            .as_ref()
            .and_then(serde_json::Value::as_object)
            .map(crate::runtime::convert::object_to_struct),
        ..Default::default()
    };
    let project_str = project.to_string_lossy().into_owned();
    let progress = ProgressView::new();
    let outcome = drive(&handle, &project_str, options, &args, &progress).await;
    progress.finish();

    sim.close_streams();
    let _ = process.wait(Duration::from_secs(5)).await;
    sim.shutdown().await;

    match outcome {
        Ok(report) => {
            report.apply(&project, &args.env)?;
            report.print(args.output)?;
            Ok(ExitCode::SUCCESS)
        }
        Err(CallError::Extension(e)) => {
            eprintln!("ERROR: {}", e.message);
            if !e.suggestion.is_empty() {
                eprintln!("Suggestion: {}", e.suggestion);
            }
            for link in &e.links {
                eprintln!("  {} {}", link.title, link.url);
            }
            Ok(ExitCode::from(1))
        }
        Err(other) => Err(anyhow::anyhow!(
            "the provider did not answer properly: {other}"
        )),
    }
}

/// Creates `.azure/<env>/` (and `.azure/config.json` naming it the default) when
/// missing, as `azd env new` does: azd always has the folder before it provisions.
fn prepare_environment(project: &Path, env: &str) -> anyhow::Result<()> {
    if env.is_empty() || env.contains(['/', '\\']) || env.starts_with('.') {
        bail!("{env:?} is not a valid environment name");
    }
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

fn read_infra(project: &Path) -> anyhow::Result<Infra> {
    let path = project.join("azure.yaml");
    match std::fs::read_to_string(&path) {
        Ok(text) => {
            let y: AzureYaml = serde_norway::from_str(&text)
                .with_context(|| format!("reading {}", path.display()))?;
            Ok(y.infra)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Infra::default()),
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}

/// The provider name: flag, else the manifest's, else azure.yaml's, else the file stem.
fn provider_name(
    path: &Path,
    flag: Option<&str>,
    from_yaml: Option<&str>,
) -> anyhow::Result<String> {
    if let Some(n) = flag {
        return Ok(n.to_owned());
    }
    if path.extension().is_some_and(|e| e == "toml") {
        #[derive(serde::Deserialize)]
        struct NameOnly {
            name: String,
        }
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let m: NameOnly = toml::from_str(&text)
            .with_context(|| format!("reading the name in {}", path.display()))?;
        return Ok(m.name);
    }
    if let Some(n) = from_yaml {
        return Ok(n.to_owned());
    }
    match path.file_stem() {
        Some(s) => Ok(s.to_string_lossy().into_owned()),
        None => bail!(
            "cannot tell the provider name of {}; pass --provider-name",
            path.display()
        ),
    }
}

/// What a command produced.
#[derive(Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct Report {
    command: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    outputs: Option<BTreeMap<String, OutputValue>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    preview: Option<PreviewReport>,
    #[serde(skip_serializing_if = "Option::is_none")]
    invalidated_env_keys: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    resources: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    parameters: Option<Vec<ParameterReport>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    planned_outputs: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    skipped: Option<bool>,
}

#[derive(Debug, serde::Serialize)]
struct OutputValue {
    #[serde(rename = "type")]
    ty: String,
    value: String,
}

#[derive(Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct PreviewReport {
    summary: String,
    changes: Vec<ChangeReport>,
}

#[derive(Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct ChangeReport {
    change_type: String,
    resource_type: String,
    name: String,
    resource_id: String,
}

#[derive(Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct ParameterReport {
    name: String,
    secret: bool,
    /// Secret values are never printed.
    value: String,
    env_var_mapping: Vec<String>,
}

impl Report {
    fn new(command: &'static str) -> Self {
        Self {
            command,
            outputs: None,
            preview: None,
            invalidated_env_keys: None,
            resources: None,
            parameters: None,
            planned_outputs: None,
            skipped: None,
        }
    }

    /// Writes outputs to `.azure/<env>/.env` (provision, state) or removes the
    /// invalidated keys (down), as azd does.
    fn apply(&self, project: &Path, env: &str) -> anyhow::Result<()> {
        let dir = project.join(".azure").join(env);
        let path = dir.join(".env");
        if let Some(outputs) = &self.outputs {
            let mut dotenv = DotEnv::load(&path)?;
            for (k, v) in outputs {
                dotenv.set(k, &v.value);
            }
            std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
            dotenv.save(&path)?;
        }
        if let Some(keys) = &self.invalidated_env_keys
            && path.exists()
        {
            let mut dotenv = DotEnv::load(&path)?;
            for k in keys {
                dotenv.remove(k);
            }
            dotenv.save(&path)?;
        }
        Ok(())
    }

    fn print(&self, format: Output) -> anyhow::Result<()> {
        let mut out = std::io::stdout().lock();
        if format == Output::Json {
            serde_json::to_writer_pretty(&mut out, self)?;
            writeln!(out)?;
            return Ok(());
        }
        if self.skipped == Some(true) {
            writeln!(
                out,
                "Deployment skipped: nothing changed since the last deployment."
            )?;
        }
        if let Some(p) = &self.preview {
            writeln!(out, "{}", p.summary)?;
            let rows: Vec<[String; 3]> = p
                .changes
                .iter()
                .map(|c| {
                    [
                        c.change_type.clone(),
                        c.resource_type.clone(),
                        c.name.clone(),
                    ]
                })
                .collect();
            table(&mut out, ["CHANGE", "TYPE", "NAME"], &rows)?;
        }
        if let Some(outputs) = &self.outputs {
            let rows: Vec<[String; 3]> = outputs
                .iter()
                .map(|(k, v)| [k.clone(), v.ty.clone(), v.value.clone()])
                .collect();
            if rows.is_empty() {
                writeln!(out, "No outputs.")?;
            } else {
                table(&mut out, ["OUTPUT", "TYPE", "VALUE"], &rows)?;
            }
        }
        if let Some(res) = &self.resources {
            for r in res {
                writeln!(out, "resource  {r}")?;
            }
        }
        if let Some(keys) = &self.invalidated_env_keys {
            if keys.is_empty() {
                writeln!(out, "Destroyed. No environment keys invalidated.")?;
            } else {
                writeln!(
                    out,
                    "Destroyed. Removed from the environment: {}",
                    keys.join(", ")
                )?;
            }
        }
        if let Some(params) = &self.parameters {
            let rows: Vec<[String; 3]> = params
                .iter()
                .map(|p| [p.name.clone(), p.value.clone(), p.env_var_mapping.join(",")])
                .collect();
            table(&mut out, ["PARAMETER", "VALUE", "ENV"], &rows)?;
        }
        if let Some(planned) = &self.planned_outputs {
            writeln!(out, "Planned outputs: {}", planned.join(", "))?;
        }
        Ok(())
    }
}

fn table(
    out: &mut impl std::io::Write,
    head: [&str; 3],
    rows: &[[String; 3]],
) -> std::io::Result<()> {
    let mut width = head.map(str::len);
    for r in rows {
        for (w, c) in width.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count()).min(60);
        }
    }
    let head = head.map(str::to_owned);
    for r in std::iter::once(&head).chain(rows) {
        writeln!(
            out,
            "{:<w0$}  {:<w1$}  {}",
            r[0],
            r[1],
            r[2],
            w0 = width[0],
            w1 = width[1]
        )?;
    }
    Ok(())
}

fn outputs_of(
    map: &std::collections::HashMap<String, pb::ProvisioningOutputParameter>,
) -> BTreeMap<String, OutputValue> {
    map.iter()
        .map(|(k, v)| {
            (
                k.clone(),
                OutputValue {
                    ty: v.r#type.clone(),
                    value: v.value.clone(),
                },
            )
        })
        .collect()
}

async fn drive(
    handle: &crate::sim::ProviderHandle,
    project: &str,
    options: pb::ProvisioningOptions,
    args: &RunArgs,
    progress: &ProgressView,
) -> Result<Report, CallError> {
    handle.initialize(project, options).await?;
    let on_progress = |m: &pb::ProvisioningProgressMessage| progress.show(&m.message);
    Ok(match args.action {
        Action::Provision => {
            let r = handle.deploy(on_progress).await?;
            let mut report = Report::new("provision");
            report.skipped =
                Some(r.skipped_reason == pb::ProvisioningSkippedReason::DeploymentState as i32);
            report.outputs = Some(
                r.deployment
                    .map(|d| outputs_of(&d.outputs))
                    .unwrap_or_default(),
            );
            report
        }
        Action::Preview => {
            let r = handle.preview(on_progress).await?;
            let p = r.preview.unwrap_or_default();
            let mut report = Report::new("preview");
            report.preview = Some(PreviewReport {
                summary: p.summary,
                changes: p
                    .changes
                    .into_iter()
                    .map(|c| ChangeReport {
                        change_type: c.change_type,
                        resource_type: c.resource_type,
                        name: c.name,
                        resource_id: c.resource_id,
                    })
                    .collect(),
            });
            report
        }
        Action::Down => {
            let r = handle
                .destroy(
                    pb::ProvisioningDestroyOptions {
                        force: true,
                        purge: true,
                    },
                    on_progress,
                )
                .await?;
            let mut report = Report::new("down");
            report.invalidated_env_keys = Some(r.invalidated_env_keys);
            report
        }
        Action::State => {
            let r = handle
                .state(pb::ProvisioningStateOptions {
                    hint: String::new(),
                })
                .await?;
            let s = r.state.unwrap_or_default();
            let mut report = Report::new("state");
            report.outputs = Some(outputs_of(&s.outputs));
            report.resources = Some(s.resources.into_iter().map(|r| r.id).collect());
            report
        }
        Action::Parameters => {
            let params = handle.parameters().await?;
            let planned = handle.planned_outputs().await?;
            let mut report = Report::new("parameters");
            report.parameters = Some(
                params
                    .into_iter()
                    .map(|p| ParameterReport {
                        value: if p.secret { "********".into() } else { p.value },
                        name: p.name,
                        secret: p.secret,
                        env_var_mapping: p.env_var_mapping,
                    })
                    .collect(),
            );
            report.planned_outputs = Some(planned.into_iter().map(|p| p.name).collect());
            report
        }
    })
}

/// Live progress on stderr: a spinner with the latest step on a terminal, plain
/// lines otherwise.
struct ProgressView {
    bar: Option<indicatif::ProgressBar>,
}

impl ProgressView {
    fn new() -> Self {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = indicatif::ProgressBar::new_spinner();
            bar.enable_steady_tick(Duration::from_millis(100));
            bar
        });
        Self { bar }
    }

    fn show(&self, message: &str) {
        if message.is_empty() {
            return;
        }
        match &self.bar {
            Some(bar) => {
                bar.println(format!("  {message}"));
                bar.set_message(message.to_owned());
            }
            None => eprintln!("  {message}"),
        }
    }

    fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// An azd `.env` file: `KEY="value"` lines, keys sorted, values quoted and escaped.
#[derive(Debug, Default)]
pub struct DotEnv {
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

    #[test]
    fn provider_name_prefers_flag_then_manifest() {
        let dir = tempfile::tempdir().unwrap();
        let m = dir.path().join("provider.toml");
        std::fs::write(&m, "name = \"files\"\ncomponent = \"x.wasm\"\n").unwrap();
        assert_eq!(provider_name(&m, None, Some("other")).unwrap(), "files");
        assert_eq!(provider_name(&m, Some("flag"), None).unwrap(), "flag");
        let w = dir.path().join("thing.wasm");
        assert_eq!(provider_name(&w, None, Some("yaml")).unwrap(), "yaml");
        assert_eq!(provider_name(&w, None, None).unwrap(), "thing");
    }
}
