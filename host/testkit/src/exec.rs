//! Runs one test: lays its project down in a fresh temporary folder, then
//! plays each step with `azd-wasm-host run … --output json` as a child
//! process (so through the same `listen` path azd uses: a simulated azd on
//! loopback gRPC, this binary started as the extension), and checks what
//! came out.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::Context as _;

use super::cassette::{self, CassetteStep, Mode};
use super::expect::{self, Outcome};
use super::fault;
use super::results::{StepResult, TestResult};
use super::spec::{Answer, Command, Spec, Step};
use azd_wasm_host_runner::{DotEnv, Environment};

/// A test file, read, with the provider it drives.
pub(super) struct Case {
    pub(super) file: PathBuf,
    pub(super) name: String,
    pub(super) spec: Spec,
    /// The provider's manifest or component, canonical.
    pub(super) provider: PathBuf,
    /// The name it registers (azure.yaml's `infra.provider`).
    pub(super) provider_name: String,
    /// Live, recording or replaying its traffic.
    pub(super) traffic: Mode,
    /// A golden conversation to replay instead of steps.
    pub(super) conversation: Option<super::conversation::Conversation>,
}

/// A test that did not start: its provider's component cannot load.
pub(super) fn not_started(case: &Case, why: &str) -> TestResult {
    TestResult::stopped(
        case.name.clone(),
        case.file.clone(),
        &format!("the provider {} cannot run: {why}", case.provider.display()),
    )
}

/// The longest a step may take before the test gives up on it (the
/// provider's own call deadline normally ends it long before).
const STEP_LIMIT: Duration = Duration::from_secs(600);

/// Runs `case`: a fresh project, then the steps in order; a step that fails
/// does not stop the ones after it, whose results often say why.
pub(super) async fn run(case: &Case, debug: bool) -> TestResult {
    let started = Instant::now();
    let mut result = TestResult::new(case.name.clone(), case.file.clone());
    let project = match Project::lay_down(case) {
        Ok(p) => p,
        Err(e) => {
            result.setup_error = Some(format!("{e:#}"));
            result.duration = started.elapsed();
            return result;
        }
    };
    let mut recorded = Vec::new();
    for (i, step) in case.spec.steps.iter().enumerate() {
        let (step, traffic) = project.play(case, i + 1, step, debug).await;
        result.steps.push(step);
        recorded.extend(traffic);
    }
    let (traffic, refused) = cassette::settle(
        &case.traffic,
        &case.name,
        result.passed(),
        recorded,
        &case.spec.safe,
    );
    result.traffic = traffic;
    if let (Some(refused), Some(last)) = (refused, result.steps.last_mut()) {
        last.failures.push(refused);
    }
    if std::env::var_os(KEEP_VAR).is_some() {
        eprintln!(
            "kept {}'s project: {}",
            case.name,
            project.dir.keep().display()
        );
    }
    result.duration = started.elapsed();
    result
}

/// A test's project: a temporary folder removed when the test ends.
struct Project {
    dir: tempfile::TempDir,
    /// Beside the project, out of the provider's sight: tightened manifests.
    scratch: tempfile::TempDir,
    made: std::sync::atomic::AtomicUsize,
    /// The folder, canonical (as `run` and the provider see it).
    path: PathBuf,
    environment: String,
}

impl Project {
    fn lay_down(case: &Case) -> anyhow::Result<Self> {
        let spec = &case.spec.project;
        let dir = tempfile::Builder::new()
            .prefix("azd-wasm-host-test-")
            .tempdir()
            .context("making the test's project folder")?;
        let path = std::fs::canonicalize(dir.path())?;
        let base = case.file.parent().unwrap_or(Path::new("."));
        if let Some(from) = &spec.from {
            let from = base.join(from);
            copy_dir(&from, &path)
                .with_context(|| format!("copying project.from {}", from.display()))?;
        }
        let yaml = path.join("azure.yaml");
        if spec.config.is_some() || !yaml.exists() {
            write_azure_yaml(&path, &case.provider_name, spec.config.as_ref())?;
        }
        for (rel, text) in &spec.files {
            let file = inside(&path, rel)?;
            if let Some(parent) = file.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(&file, text).with_context(|| format!("writing project file {rel}"))?;
        }
        let environment = spec.environment.clone().unwrap_or_else(|| "dev".into());
        // The environment as `azd env new` leaves it (quietly: the test's own).
        let azure = path.join(".azure");
        if !azure.join(&environment).is_dir() {
            std::fs::create_dir_all(azure.join(&environment))?;
            let config = serde_json::json!({ "version": 1, "defaultEnvironment": environment });
            std::fs::write(azure.join("config.json"), format!("{config}\n"))?;
        }
        let env = Environment::open(&path, Some(&environment), false)?;
        env.save(spec.env.iter().map(|(k, v)| (k.as_str(), v.as_str())), [])?;
        Ok(Self {
            dir,
            scratch: tempfile::Builder::new()
                .prefix("azd-wasm-host-test-policy-")
                .tempdir()?,
            made: std::sync::atomic::AtomicUsize::new(0),
            path,
            environment,
        })
    }

    /// Plays `step` (the `number`th) with `run` and checks its result; when
    /// recording, what it exchanged.
    async fn play(
        &self,
        case: &Case,
        number: usize,
        step: &Step,
        debug: bool,
    ) -> (StepResult, Option<CassetteStep>) {
        let started = Instant::now();
        let mut result = StepResult {
            command: step.command.name(),
            duration: Duration::ZERO,
            failures: Vec::new(),
            stderr: String::new(),
        };
        let traffic = cassette::plan_step(
            &case.traffic,
            number,
            &step.fault.http,
            &case.spec.safe,
            self.scratch.path(),
        );
        let traffic = match traffic {
            Ok(t) => t,
            Err(e) => {
                result
                    .failures
                    .push(format!("writing the step's traffic plan: {e:#}"));
                return (result, None);
            }
        };
        let plan = traffic.as_ref().map(|t| t.plan.as_path());
        match self.run_step(case, step, plan, debug).await {
            Ok((doc, stderr)) => {
                let dotenv = self.dotenv().unwrap_or_default();
                let outcome = Outcome {
                    doc: &doc,
                    dotenv: &dotenv,
                    project: &self.path,
                };
                result.failures = expect::check(&step.expect, &outcome);
                if !result.failures.is_empty() {
                    result.stderr = stderr;
                }
            }
            Err(e) => result.failures.push(format!("{e:#}")),
        }
        let mut recorded = None;
        if let Some(traffic) = traffic {
            match traffic.finish(number, step.command.name()) {
                Ok((failures, step)) => {
                    result.failures.extend(failures);
                    recorded = Some(step);
                }
                Err(e) => result
                    .failures
                    .push(format!("reading the step's traffic: {e:#}")),
            }
        }
        result.duration = started.elapsed();
        (result, recorded)
    }

    /// Prepares the project for `step`, runs it; `run`'s JSON document and stderr.
    async fn run_step(
        &self,
        case: &Case,
        step: &Step,
        traffic: Option<&Path>,
        debug: bool,
    ) -> anyhow::Result<(serde_json::Value, String)> {
        if let Some(config) = &step.config {
            write_azure_yaml(&self.path, &case.provider_name, Some(config))?;
        }
        if !step.env.is_empty() {
            let env = Environment::open(&self.path, Some(&self.environment), false)?;
            env.save(step.env.iter().map(|(k, v)| (k.as_str(), v.as_str())), [])?;
        }
        let mut cmd = self.command(case, step, debug)?;
        cmd.envs(&case.spec.project.process_env);
        if let Some(plan) = traffic {
            cmd.env(azd_wasm_host_sidecar::env::TRAFFIC, plan);
        }
        let out = tokio::time::timeout(STEP_LIMIT, cmd.output())
            .await
            .map_err(|_| anyhow::anyhow!("the step ran over {} s", STEP_LIMIT.as_secs()))?
            .context("starting `run`")?;
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let code = out.status.code();
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).map_err(|_| {
            anyhow::anyhow!(
                "`run` printed no result (exit {}); its stderr:\n{}",
                code.map_or("by a signal".into(), |c| c.to_string()),
                stderr.trim_end()
            )
        })?;
        // Usage errors are the test's, not the provider's: nothing ran.
        if code == Some(64) {
            let message = doc.pointer("/error/message").and_then(|m| m.as_str());
            anyhow::bail!(
                "the step could not run: {}",
                message.unwrap_or("(no message)")
            );
        }
        Ok((doc, stderr))
    }

    /// `azd-wasm-host run <command> … --output json` for `step`, on this project.
    fn command(
        &self,
        case: &Case,
        step: &Step,
        debug: bool,
    ) -> anyhow::Result<tokio::process::Command> {
        let provider = if step.fault.changes_policy() {
            let dir = self
                .scratch
                .path()
                .join(format!("step-{}", self.steps_made()));
            std::fs::create_dir_all(&dir)?;
            fault::tightened(&case.provider, &case.provider_name, &step.fault, &dir)?
        } else {
            case.provider.clone()
        };
        let exe = std::env::current_exe().context("finding this executable")?;
        let mut cmd = tokio::process::Command::new(exe);
        cmd.arg("run")
            .arg(step.command.run_word())
            .arg("--project")
            .arg(&self.path)
            .arg("--provider")
            .arg(provider)
            .args(["-e", &self.environment, "--output", "json"])
            .env_remove("AZURE_ENV_NAME")
            .env_remove("AZD_WASM_HOST_RECORD")
            .current_dir(&self.path)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        match step.answer {
            Some(Answer::Yes) => cmd.arg("--yes"),
            Some(Answer::No) => cmd.arg("--no"),
            None => &mut cmd,
        };
        if let Some(n) = step.fault.cancel_after_progress {
            cmd.arg("--cancel-after-progress").arg(n.to_string());
        }
        if step.command == Command::Down {
            if step.force.unwrap_or(true) {
                cmd.arg("--force");
            }
            if step.purge.unwrap_or(true) {
                cmd.arg("--purge");
            }
        }
        if debug {
            cmd.arg("--debug");
        }
        Ok(cmd)
    }

    /// A number for each tightened manifest this test makes.
    fn steps_made(&self) -> usize {
        self.made.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    }

    /// `.azure/<env>/.env` as it is now (empty if the step left none).
    fn dotenv(&self) -> anyhow::Result<BTreeMap<String, String>> {
        let path = self
            .path
            .join(".azure")
            .join(&self.environment)
            .join(".env");
        Ok(DotEnv::load(&path)?.values())
    }
}

/// `AZD_WASM_HOST_TEST_KEEP=1` keeps every test's project folder, for a look afterwards.
pub(super) const KEEP_VAR: &str = "AZD_WASM_HOST_TEST_KEEP";

/// `rel` (`/`-separated, relative) inside `root`; `..` and absolute paths
/// are refused, so a test file cannot write outside its project.
fn inside(root: &Path, rel: &str) -> anyhow::Result<PathBuf> {
    let path = Path::new(rel);
    let plain = path
        .components()
        .all(|c| matches!(c, std::path::Component::Normal(_)));
    anyhow::ensure!(
        plain && !rel.is_empty(),
        "project file {rel:?}: a path inside the project is relative, without `..`"
    );
    Ok(root.join(path))
}

/// `azure.yaml` naming the provider, with `config` as `infra.config`.
fn write_azure_yaml(
    project: &Path,
    provider: &str,
    config: Option<&toml::Table>,
) -> anyhow::Result<()> {
    let path = project.join("azure.yaml");
    let mut doc: serde_json::Value = match std::fs::read_to_string(&path) {
        Ok(text) => {
            serde_norway::from_str(&text).with_context(|| format!("reading {}", path.display()))?
        }
        Err(_) => serde_json::json!({ "name": "azd-wasm-host-test" }),
    };
    let fields = doc.as_object_mut().context("azure.yaml is not a mapping")?;
    let infra = fields
        .entry("infra")
        .or_insert_with(|| serde_json::json!({}));
    let infra = infra
        .as_object_mut()
        .context("azure.yaml's infra is not a mapping")?;
    infra.insert("provider".into(), provider.into());
    if let Some(config) = config {
        infra.insert("config".into(), serde_json::to_value(config)?);
    }
    std::fs::write(&path, serde_norway::to_string(&doc)?)
        .with_context(|| format!("writing {}", path.display()))
}

/// Copies the folder `from` into `to` (files and folders; links are not followed).
fn copy_dir(from: &Path, to: &Path) -> anyhow::Result<()> {
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let ty = entry.file_type()?;
        let target = to.join(entry.file_name());
        if ty.is_dir() {
            std::fs::create_dir_all(&target)?;
            copy_dir(&entry.path(), &target)?;
        } else if ty.is_file() {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}
