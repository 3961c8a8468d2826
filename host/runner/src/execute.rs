//! One command played, as a library call: [`execute`] checks the project
//! ([`Setup`]), starts the simulated azd and the extension under it, sends azd's
//! requests, saves what changed in `.env`, and returns a typed [`RunOutcome`]: the
//! exit and the report `run --output json` prints. It prints nothing unless its
//! [`Session`] lets it use the console (live progress, questions on the terminal).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use azd_wasm_host_sim::{ExtensionProcess, ProviderHandle, SimAzd, SimOptions};
use tokio_util::sync::CancellationToken;

use super::environment::Environment;
use super::extension::{EXTENSION_PROJECT_PATH_VAR, Extension, extension_command_line};
use super::options::{Action, RunOptions};
use super::outcome::Failure;
use super::report::RunReport;
use super::session::Session;
use super::view::ProgressView;
use super::{ask, drive, project};
use azd_wasm_host_core::Exit;

/// What a command came to.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    /// How it ended: `run`'s exit code ([`Exit::code`]).
    pub exit: Exit,
    /// What it produced, or why it failed: `run --output json`'s document.
    pub report: RunReport,
    /// What the extension wrote to stderr (the newest 256 KiB), when the session
    /// captures it ([`Session::capture_extension_stderr`]); else empty.
    pub extension_stderr: String,
}

/// Plays `args` in `session`: everything `azd-wasm-host run` does but print.
pub async fn execute(args: &RunOptions, session: &Session) -> RunOutcome {
    play(args, session).await.outcome
}

/// A command played, with what `run` prints besides the report ([`Played::print_table`],
/// [`Played::print_json`]).
#[derive(Debug)]
pub struct Played {
    /// How it ended and what it came to.
    pub outcome: RunOutcome,
    /// Why it did not end well, with every cause (for stderr).
    pub(crate) failure: Option<Failure>,
    /// Whether the provider answered the command (the report holds its result).
    pub(crate) answered: bool,
}

impl Played {
    /// As `run` prints it for people: the result as a table (when the provider answered)
    /// on stdout, and the error on stderr.
    pub fn print_table(&self) {
        if self.answered
            && let Err(e) = self.outcome.report.print()
        {
            eprintln!("azd-wasm-host: cannot print the result: {e}");
        }
        if let Some(failure) = &self.failure {
            failure.print();
        }
    }

    /// As `run --output json` prints it: the error on stderr, then the report (the error
    /// in it too) as one JSON document on stdout.
    pub fn print_json(&self) {
        if let Some(failure) = &self.failure {
            failure.print();
        }
        let doc = serde_json::to_value(&self.outcome.report).unwrap_or_default();
        println!("{doc:#}");
    }
}

/// [`execute`], keeping the failure whole for `run` to print.
pub async fn play(args: &RunOptions, session: &Session) -> Played {
    // A child: cancelling this command (`--cancel-after-progress`) leaves the
    // session's token, and the next command played in it, alone.
    let interrupt = session.interrupt.child_token();
    let progress =
        ProgressView::new(session.console).cancel_after(args.cancel_after_progress, &interrupt);
    let (result, extension_stderr) = match Setup::new(args, session) {
        Err(e) => (Err(Failure::Usage(e)), String::new()),
        Ok(setup) => {
            let (result, stderr) = command(args, &setup, session, &interrupt, &progress).await;
            (result.map(|report| (report, setup)), stderr)
        }
    };
    let (exit, mut report, failure, answered) = match result {
        Err(failure) => {
            let mut report = RunReport::new(args.action);
            report.error = Some(failure.to_error());
            (failure.exit(), report, Some(failure), false)
        }
        Ok((report, setup)) => match save_outputs(&report, &setup.env) {
            Err(e) => {
                let failure = Failure::Host(e);
                let mut report = report;
                report.error = Some(failure.to_error());
                (Exit::Fault, report, Some(failure), true)
            }
            Ok(()) if args.detailed_exitcode && report.changes_pending() => {
                (Exit::ChangesPending, report, None, true)
            }
            Ok(()) => (Exit::Done, report, None, true),
        },
    };
    report.progress = progress.reported();
    report.prompts = progress.questions();
    Played {
        outcome: RunOutcome {
            exit,
            report,
            extension_stderr,
        },
        failure,
        answered,
    }
}

/// What `run` checked before starting anything.
struct Setup {
    project: project::Project,
    provider_path: PathBuf,
    name: String,
    env: Environment,
}

impl Setup {
    /// Reads the project, the provider's name and the environment; any
    /// failure here is a usage error and nothing has run.
    fn new(args: &RunOptions, session: &Session) -> anyhow::Result<Self> {
        let project = project::Project::open(&args.project)?;
        let provider_path = std::fs::canonicalize(&args.provider).with_context(|| {
            format!(
                "provider {} (name a provider.toml or .wasm with --provider)",
                args.provider.display()
            )
        })?;
        let name = project.provider_name(&provider_path, args.provider_name.as_deref())?;
        let creates = args.action == Action::Provision;
        let env = Environment::open_seeing(
            &project.dir,
            args.env.as_deref(),
            &session.env,
            creates,
            !session.console,
        )?;
        Ok(Self {
            project,
            provider_path,
            name,
            env,
        })
    }
}

/// Starts the simulated azd and the extension, plays the command, and saves
/// what the extension changed in the environment; the report (or why there is
/// none) and what the extension wrote to stderr, when captured.
async fn command(
    args: &RunOptions,
    setup: &Setup,
    session: &Session,
    interrupt: &CancellationToken,
    progress: &ProgressView,
) -> (Result<RunReport, Failure>, String) {
    let cold = session.console && !compiled(setup, session).await;
    let env_before = setup.env.served();
    let sim = SimAzd::start(SimOptions {
        environment: Some(env_before.clone()),
        prompter: ask::prompter(
            args.answer,
            session.console,
            progress.bar(),
            progress.asked(),
        ),
        contract: args.azd_contract,
        ..SimOptions::default()
    })
    .await;
    let sim = match sim {
        Ok(sim) => sim,
        Err(e) => return (Err(Failure::Host(e.into())), String::new()),
    };
    let (mut process, handle) = match start_extension(&sim, args, setup, session).await {
        Ok(started) => started,
        Err(e) => {
            sim.shutdown().await;
            return (Err(Failure::Host(e)), String::new());
        }
    };
    let outcome = answer(args, setup, session, &handle, interrupt, progress, cold).await;
    // Closing azd's side ends the extension's stream: it stops the guest's
    // call and exits, as under azd.
    sim.close_streams();
    let _ = process.wait(Duration::from_secs(10)).await;
    let stderr = process.stderr_text();
    let env_after = sim.environment();
    sim.shutdown().await;
    if let Some(after) = env_after
        && let Err(e) = save_service_changes(&setup.env, &env_before.values, &after.values)
    {
        return (Err(Failure::Host(e)), stderr);
    }
    (outcome, stderr)
}

/// Whether the provider's code is compiled for this machine already, as the
/// session's probe says (none: taken as compiled). An extension started by
/// another command (another platform's build) has its own code and cache:
/// whether it compiles is not known here (taken as compiled).
async fn compiled(setup: &Setup, session: &Session) -> bool {
    let Some(probe) = session.compiled.clone() else {
        return true;
    };
    if extension_command_line(&session.env).is_some() {
        return true;
    }
    let (path, vars) = (setup.provider_path.clone(), session.env.clone());
    tokio::task::spawn_blocking(move || probe.ask(&path, &vars))
        .await
        .unwrap_or(false)
}

/// Sends azd's requests for the command, raced against the cancellation.
async fn answer(
    args: &RunOptions,
    setup: &Setup,
    session: &Session,
    handle: &ProviderHandle,
    interrupt: &CancellationToken,
    progress: &ProgressView,
    cold: bool,
) -> Result<RunReport, Failure> {
    let destroy = azd_wasm_host_proto::azdext::ProvisioningDestroyOptions {
        force: args.force,
        purge: args.purge,
    };
    let project_path = session
        .env
        .var(EXTENSION_PROJECT_PATH_VAR)
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| setup.project.path_text());
    let drive = drive::drive(
        handle,
        &project_path,
        setup.project.options(&setup.name),
        (args.action, destroy),
        progress,
        cold.then_some(Instant::now()),
    );
    let outcome = tokio::select! {
        outcome = drive => outcome.map_err(Failure::from_call),
        () = interrupt.cancelled() => Err(Failure::Interrupted),
    };
    progress.finish();
    // An answer that came in the same moment as the cancellation is dropped, as
    // azd drops it: the command was cancelled.
    if interrupt.is_cancelled() {
        return Err(Failure::Interrupted);
    }
    outcome
}

/// Spawns the session's extension as `listen`, the way azd starts one, and
/// waits for its provider to register.
async fn start_extension(
    sim: &SimAzd,
    args: &RunOptions,
    setup: &Setup,
    session: &Session,
) -> anyhow::Result<(ExtensionProcess, ProviderHandle)> {
    let extension = Extension {
        manifest: &setup.provider_path,
        project: &setup.project.dir,
        environment: Some(setup.env.name.as_str()),
        provider: &setup.name,
    };
    // azd sets AZD_NO_PROMPT only under --no-prompt: here, only when no one
    // answers (no --yes or --no, no terminal).
    let answered = args.answer.is_some() || ask::on_terminal(session.console);
    session
        .start_extension(sim, &extension, |cmd| {
            if let Some(n) = &args.provider_name {
                cmd.env(azd_wasm_host_core::settings::PROVIDER_NAME, n);
            }
            if answered {
                cmd.env_remove("AZD_NO_PROMPT");
            }
        })
        .await
}

/// Writes the outputs to `.azure/<env>/.env` (provision, state) or removes the
/// invalidated keys (down), as azd does.
fn save_outputs(report: &RunReport, env: &Environment) -> anyhow::Result<()> {
    let set = report
        .outputs
        .iter()
        .flatten()
        .map(|(k, v)| (k.as_str(), v.value.as_str()));
    let removed = report
        .invalidated_env_keys
        .iter()
        .flatten()
        .map(String::as_str);
    env.save(set, removed)
}

/// Saves to `.env` what the extension set or removed through azd's
/// environment service while the command ran (azd saves them the same way).
fn save_service_changes(
    env: &Environment,
    before: &std::collections::BTreeMap<String, String>,
    after: &std::collections::BTreeMap<String, String>,
) -> anyhow::Result<()> {
    let set = after
        .iter()
        .filter(|(k, v)| before.get(*k) != Some(*v))
        .map(|(k, v)| (k.as_str(), v.as_str()));
    let removed = before
        .keys()
        .filter(|k| !after.contains_key(*k))
        .map(String::as_str);
    env.save(set, removed)
}
