//! `run`'s logic in-process: the runner library plays azd (the simulated azd,
//! the project, `.env`) inside this test's own process, and the extension it
//! starts, as azd starts one, is this same test binary serving `listen`
//! through the sidecar library. No development CLI is built or spawned: what
//! is tested is the runner, not the command line.
//!
//! A test without the test harness (`harness = false`): `main` is either the
//! tests or, started with `listen` as azd starts an extension, the extension
//! (each session names this binary as the program to start, and
//! `AZD_WASM_HOST_EXTENSION_COMMAND`, which would name another, must not be set
//! in this test's environment).
//! Needs the C example built (`scripts/build-examples.sh`).

#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    reason = "test code: a failed unwrap is a failed test; the results are printed as a test runner prints them"
)]

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use azd_wasm_host_fixtures::c_hello_provider;
use azd_wasm_host_fixtures::in_process::{NamedTest, run_all};
use azd_wasm_host_runner::{
    Action, DotEnv, EnvOverlay, ErrorKind, Exit, RunOptions, Session, execute, play,
};
use azd_wasm_host_sidecar::{DevelopmentTools, ListenArgs, Recording, Serving};
use clap::Parser as _;

/// `listen`'s arguments, as this binary reads them when started as the extension.
#[derive(clap::Parser)]
struct AsExtension {
    #[command(flatten)]
    listen: ListenArgs,
}

/// No recorder here: the runner does not need one.
struct NoTools;

impl DevelopmentTools for NoTools {
    fn replay(&self, _plan: &Path) -> anyhow::Result<Arc<dyn azd_wasm_host_runtime::Intercept>> {
        anyhow::bail!("this test's extension replays nothing")
    }

    fn record(
        &self,
        _path: &Path,
        _provider: &str,
        _environment: Option<&str>,
        _safe: &[String],
    ) -> anyhow::Result<Box<dyn Recording>> {
        anyhow::bail!("this test's extension records nothing")
    }
}

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().collect();
    // Started as azd starts an extension: `listen`, with azd's address set (a
    // test filter `listen` alone is not that).
    if argv.get(1).map(String::as_str) == Some("listen") && std::env::var_os("AZD_SERVER").is_some()
    {
        let AsExtension { listen } = AsExtension::parse_from(&argv[1..]);
        return azd_wasm_host_sidecar::run_listen(
            listen,
            false,
            Serving::Development(Arc::new(NoTools)),
        );
    }
    let tests: [NamedTest; 4] = [
        (
            "provision_writes_the_outputs_to_the_environment_as_azd_does",
            |dir| Box::pin(provision_writes_the_outputs(dir)),
        ),
        (
            "a_missing_provider_is_a_usage_error_and_nothing_runs",
            |dir| Box::pin(a_missing_provider(dir)),
        ),
        (
            "a_library_run_returns_the_typed_report_and_sees_its_overlay",
            |dir| Box::pin(a_library_run_returns_the_typed_report(dir)),
        ),
        ("a_cancelled_run_leaves_its_session_usable", |dir| {
            Box::pin(a_cancelled_run_leaves_its_session_usable(dir))
        }),
    ];
    run_all(&tests)
}

/// A project whose `infra` names the c-hello provider, and the provider beside it.
fn project(dir: &Path) -> (PathBuf, PathBuf) {
    let provider = dir.join("provider");
    c_hello_provider(&provider);
    let project = dir.join("project");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(
        project.join("azure.yaml"),
        "name: in-process\ninfra:\n  provider: c-hello\n  config:\n    name: runner\n",
    )
    .unwrap();
    (provider.join("provider.toml"), project)
}

/// `action`, every question answered yes.
fn args(action: Action, provider: PathBuf, project: PathBuf) -> RunOptions {
    RunOptions {
        answer: Some(true),
        ..RunOptions::new(action, provider, project)
    }
}

/// This binary: the program each session starts as the extension.
fn this_binary() -> PathBuf {
    std::env::current_exe().unwrap()
}

/// Played as `run` plays it, in the process's own session, and printed as
/// `run --output json` prints it; how it ended.
async fn run(args: RunOptions) -> Exit {
    let session = Session::command(this_binary(), false, Default::default());
    let played = play(&args, &session).await;
    played.print_json();
    played.outcome.exit
}

async fn provision_writes_the_outputs(dir: PathBuf) {
    let (provider, project) = project(&dir);
    let exit = run(args(Action::Provision, provider, project.clone())).await;
    assert_eq!(exit, Exit::Done);
    // Read back as azd reads its `.env` (it escapes `!`).
    let env = DotEnv::load(&project.join(".azure/dev/.env"))
        .unwrap()
        .values();
    assert_eq!(env["GREETING"], "Hello, runner!", "{env:?}");
    assert_eq!(env["GREETING_LENGTH"], "14", "{env:?}");
}

async fn a_missing_provider(dir: PathBuf) {
    let (_, project) = project(&dir);
    let exit = run(args(
        Action::Provision,
        dir.join("no-such/provider.toml"),
        project.clone(),
    ))
    .await;
    assert_eq!(exit, Exit::Usage);
    assert!(
        !project.join(".azure").exists(),
        "a usage error changed the project"
    );
}

/// `execute` in a library's session: nothing asked of this process's terminal,
/// the report typed, the extension's stderr captured. The runner reads its own
/// variables through the session's overlay: `AZURE_ENV_NAME` chooses the
/// environment, and (on Unix) `AZD_WASM_HOST_EXTENSION_COMMAND` names a wrapper
/// that writes to stderr before it becomes this binary.
async fn a_library_run_returns_the_typed_report(dir: PathBuf) {
    let (provider, project) = project(&dir);
    let args = args(Action::Provision, provider, project.clone());
    let mut vars = EnvOverlay::default();
    vars.set("AZURE_ENV_NAME", "staging");
    let marker = "the wrapper started the extension";
    if cfg!(unix) {
        let wrapper = dir.join("extension.sh");
        let exe = this_binary();
        std::fs::write(
            &wrapper,
            format!(
                "#!/bin/sh\necho '{marker}' >&2\nexec '{}' \"$@\"\n",
                exe.display()
            ),
        )
        .unwrap();
        make_executable(&wrapper);
        vars.set(
            azd_wasm_host_runner::EXTENSION_COMMAND_VAR,
            format!("'{}'", wrapper.display()),
        );
    }
    let outcome = execute(&args, &Session::library(this_binary(), false, vars)).await;
    assert_eq!(outcome.exit, Exit::Done, "{outcome:#?}");
    let report = &outcome.report;
    assert_eq!(report.command, Action::Provision);
    assert_eq!(report.error, None);
    let outputs = report.outputs.as_ref().unwrap();
    assert_eq!(outputs["GREETING"].value, "Hello, runner!", "{report:#?}");
    assert_eq!(
        report.progress.first().map(String::as_str),
        Some("Composing the greeting for runner"),
        "{report:#?}"
    );
    assert_eq!(report.skipped, Some(false));
    if cfg!(unix) {
        assert!(
            outcome.extension_stderr.contains(marker),
            "{:?}",
            outcome.extension_stderr
        );
    }
    // The environment the overlay named, not `dev`.
    let env = DotEnv::load(&project.join(".azure/staging/.env"))
        .unwrap()
        .values();
    assert_eq!(env["GREETING"], "Hello, runner!", "{env:?}");
    assert!(!project.join(".azure/dev").exists());
    // The report is `run --output json`'s document.
    let doc = serde_json::to_value(report).unwrap();
    assert_eq!(
        doc["outputs"]["GREETING"]["value"], "Hello, runner!",
        "{doc:#}"
    );
    assert!(doc.get("error").is_none(), "{doc:#}");
}

#[cfg(unix)]
fn make_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[cfg(not(unix))]
fn make_executable(_path: &Path) {}

/// A run cancelled after the provider's first progress message ends
/// `interrupted`; the session it ran in plays the next command whole.
async fn a_cancelled_run_leaves_its_session_usable(dir: PathBuf) {
    let (provider, project) = project(&dir);
    let session = Session::library(this_binary(), false, EnvOverlay::default());
    let mut args = args(Action::Provision, provider, project);
    args.cancel_after_progress = Some(1);
    let cancelled = execute(&args, &session).await;
    assert_eq!(cancelled.exit, Exit::Interrupted, "{cancelled:#?}");
    let error = cancelled.report.error.as_ref().unwrap();
    assert_eq!(error.kind, ErrorKind::Interrupted, "{error:?}");
    assert!(!cancelled.report.progress.is_empty(), "{cancelled:#?}");
    assert!(!session.interrupt.is_cancelled());
    args.cancel_after_progress = None;
    let whole = execute(&args, &session).await;
    assert_eq!(whole.exit, Exit::Done, "{whole:#?}");
}
