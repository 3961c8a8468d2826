//! `run`'s logic in-process: the runner library plays azd (the simulated azd,
//! the project, `.env`) inside this test's own process, and the extension it
//! starts, as azd starts one, is this same test binary serving `listen`
//! through the sidecar library. No development CLI is built or spawned: what
//! is tested is the runner, not the command line.
//!
//! A test without the test harness (`harness = false`): `main` is either the
//! tests or, started with `listen` as azd starts an extension, the extension
//! (the runner starts its own binary unless `AZD_WASM_HOST_EXTENSION_COMMAND`
//! names another, which this test's environment must not).
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
use azd_wasm_host_runner::{Action, DotEnv, Exit, Output, RunArgs};
use azd_wasm_host_sidecar::{DevelopmentTools, ListenArgs, Recording, Serving};
use clap::Parser as _;

/// `listen`'s arguments, as this binary reads them when started as the extension.
#[derive(clap::Parser)]
struct AsExtension {
    #[command(flatten)]
    listen: ListenArgs,
}

/// `run`'s arguments, as the command line would give them.
#[derive(clap::Parser)]
struct AsRun {
    #[command(flatten)]
    run: RunArgs,
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
    let tests: [NamedTest; 2] = [
        (
            "provision_writes_the_outputs_to_the_environment_as_azd_does",
            |dir| Box::pin(provision_writes_the_outputs(dir)),
        ),
        (
            "a_missing_provider_is_a_usage_error_and_nothing_runs",
            |dir| Box::pin(a_missing_provider(dir)),
        ),
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

fn args(action: Action, provider: PathBuf, project: PathBuf) -> RunArgs {
    let mut args = AsRun::parse_from(["run", "provision"]).run;
    args.action = action;
    args.provider = provider;
    args.project = project;
    args.output = Output::Json;
    args.yes = true;
    args
}

async fn provision_writes_the_outputs(dir: PathBuf) {
    let (provider, project) = project(&dir);
    let code =
        azd_wasm_host_runner::run(args(Action::Provision, provider, project.clone()), false).await;
    assert_eq!(code, ExitCode::SUCCESS);
    // Read back as azd reads its `.env` (it escapes `!`).
    let env = DotEnv::load(&project.join(".azure/dev/.env"))
        .unwrap()
        .values();
    assert_eq!(env["GREETING"], "Hello, runner!", "{env:?}");
    assert_eq!(env["GREETING_LENGTH"], "14", "{env:?}");
}

async fn a_missing_provider(dir: PathBuf) {
    let (_, project) = project(&dir);
    let code = azd_wasm_host_runner::run(
        args(
            Action::Provision,
            dir.join("no-such/provider.toml"),
            project.clone(),
        ),
        false,
    )
    .await;
    assert_eq!(code, ExitCode::from(Exit::Usage.code()));
    assert!(
        !project.join(".azure").exists(),
        "a usage error changed the project"
    );
}
