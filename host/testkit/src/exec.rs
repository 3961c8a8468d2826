//! Runs one test: lays its project down in a fresh temporary folder, then
//! plays each step as `azd-wasm-host run` plays it, through the runner
//! library in this process (`azd_wasm_host_runner::execute`: a simulated azd
//! on loopback gRPC, this binary started as the extension, so through the same
//! `listen` path azd uses; the extension is the only process a step starts),
//! and checks the typed report that came out.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Context as _;

use super::cassette::{self, CassetteStep, Mode};
use super::expect::{self, Outcome};
use super::fault;
use super::results::{StepResult, TestResult};
use super::spec::{Answer, Command, Spec, Step};
use azd_wasm_host_runner::{DotEnv, EnvOverlay, Environment, Exit, RunOptions, RunReport, Session};

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

/// How a test's extension starts: the program (`PROGRAM listen`, as azd starts an
/// extension) and whether it writes debug logs.
#[derive(Debug, Clone)]
pub(super) struct Launch {
    pub(super) extension: PathBuf,
    pub(super) debug: bool,
}

impl Launch {
    /// The session a step or a golden replay plays in: quiet, the extension's
    /// stderr captured, this process's environment changed by `vars`.
    pub(super) fn session(&self, vars: EnvOverlay) -> Session {
        Session::library(self.extension.clone(), self.debug, vars)
    }
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
pub(super) async fn run(case: &Case, launch: &Launch) -> TestResult {
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
        let (step, traffic) = project.play(case, i + 1, step, launch).await;
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

    /// Plays `step` (the `number`th) as `run` does and checks its result; when
    /// recording, what it exchanged.
    async fn play(
        &self,
        case: &Case,
        number: usize,
        step: &Step,
        launch: &Launch,
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
        match self.run_step(case, step, plan, launch).await {
            Ok((report, stderr)) => self.check(step, &report, stderr, &mut result),
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

    /// Checks `report` and the project against `step`'s expectations; the
    /// extension's `stderr` is kept beside failures.
    fn check(&self, step: &Step, report: &RunReport, stderr: String, result: &mut StepResult) {
        let dotenv = self.dotenv().unwrap_or_default();
        let outcome = Outcome {
            report,
            dotenv: &dotenv,
            project: &self.path,
        };
        result.failures = expect::check(&step.expect, &outcome);
        if !result.failures.is_empty() {
            result.stderr = stderr;
        }
    }

    /// Prepares the project for `step` and plays it, in this process; the
    /// report and what the extension wrote to stderr.
    async fn run_step(
        &self,
        case: &Case,
        step: &Step,
        traffic: Option<&Path>,
        launch: &Launch,
    ) -> anyhow::Result<(RunReport, String)> {
        if let Some(config) = &step.config {
            write_azure_yaml(&self.path, &case.provider_name, Some(config))?;
        }
        if !step.env.is_empty() {
            let env = Environment::open(&self.path, Some(&self.environment), false)?;
            env.save(step.env.iter().map(|(k, v)| (k.as_str(), v.as_str())), [])?;
        }
        let vars = step_environment(case, traffic);
        let args = self.args(case, step, &vars)?;
        let session = launch.session(vars);
        let outcome =
            tokio::time::timeout(STEP_LIMIT, azd_wasm_host_runner::execute(&args, &session))
                .await
                .map_err(|_| anyhow::anyhow!("the step ran over {} s", STEP_LIMIT.as_secs()))?;
        // Usage errors are the test's, not the provider's: nothing ran.
        if outcome.exit == Exit::Usage {
            let error = outcome.report.error.as_ref();
            anyhow::bail!(
                "the step could not run: {}",
                error.map_or("(no message)", |e| e.message.as_str())
            );
        }
        Ok((outcome.report, outcome.extension_stderr))
    }

    /// What `run <command> … --project P -e ENV` would play for `step`, on this
    /// project: `--provider` (a tightened manifest when the step changes the
    /// policy), `--yes`/`--no`, `--cancel-after-progress`, `--force`/`--purge`.
    fn args(&self, case: &Case, step: &Step, vars: &EnvOverlay) -> anyhow::Result<RunOptions> {
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
        let mut args = RunOptions::new(step.command.action(), provider, self.path.clone());
        args.env = Some(self.environment.clone());
        args.azd_contract = azd_wasm_host_runner::contract_from(vars)
            .map_err(|e| anyhow::anyhow!("the step could not run: {e}"))?;
        args.answer = step.answer.map(|answer| answer == Answer::Yes);
        args.cancel_after_progress = step.fault.cancel_after_progress;
        if step.command == Command::Down {
            args.force = step.force.unwrap_or(true);
            args.purge = step.purge.unwrap_or(true);
        }
        Ok(args)
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
pub(super) const KEEP_VAR: &str = azd_wasm_host_core::settings::TEST_KEEP;

/// The environment a step's run sees (and its extension inherits): this
/// process's, without `AZURE_ENV_NAME` (the step names its environment) or a
/// recording of azd's session, with the test's `process_env` and the step's
/// traffic plan. The runner reads its own variables through it too
/// (`AZD_WASM_HOST_AZD_CONTRACT`, `AZD_WASM_HOST_EXTENSION_COMMAND`, …), as a
/// `run` child given this environment would have.
fn step_environment(case: &Case, traffic: Option<&Path>) -> EnvOverlay {
    let mut vars = EnvOverlay::default();
    vars.remove("AZURE_ENV_NAME")
        .remove(azd_wasm_host_core::settings::RECORD)
        .set_all(&case.spec.project.process_env);
    if let Some(plan) = traffic {
        vars.set(azd_wasm_host_core::settings::TRAFFIC, plan);
    }
    vars
}

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
