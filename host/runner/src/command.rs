//! `azd-wasm-host run` itself: the command played in a [`Session`] of this
//! process (the terminal, its environment, Ctrl-C), then what it came to
//! printed: the report as a table or JSON on stdout, the error on stderr.

use std::process::ExitCode;

use tokio_util::sync::CancellationToken;

use super::args::{Output, RunArgs};
use super::execute::{Played, play};
use super::session::Session;
use azd_wasm_host_core::Exit;

/// Runs `run`; the exit code says how it ended ([`Exit`]).
pub async fn run(args: RunArgs, debug: bool) -> ExitCode {
    let interrupt = CancellationToken::new();
    let watcher = tokio::spawn(watch_interrupts(interrupt.clone()));
    let played = play(&args, &Session::command(debug, interrupt)).await;
    watcher.abort();
    show(&args, &played);
    ExitCode::from(played.outcome.exit)
}

/// Prints what the command came to: with `--output json` one document on
/// stdout (the error in it too) and the error on stderr; else the result as a
/// table (when the provider answered) and the error on stderr.
fn show(args: &RunArgs, played: &Played) {
    let report = &played.outcome.report;
    if args.output == Output::Json {
        if let Some(failure) = &played.failure {
            failure.print();
        }
        let doc = serde_json::to_value(report).unwrap_or_default();
        println!("{doc:#}");
        return;
    }
    if played.answered
        && let Err(e) = report.print()
    {
        eprintln!("azd-wasm-host: cannot print the result: {e}");
    }
    if let Some(failure) = &played.failure {
        failure.print();
    }
}

/// The first Ctrl-C cancels the command (the provider is stopped and waited
/// for); a second one ends this process at once.
async fn watch_interrupts(interrupt: CancellationToken) {
    if tokio::signal::ctrl_c().await.is_err() {
        return;
    }
    eprintln!("\nCancelling: stopping the provider (press Ctrl-C again to quit at once)…");
    interrupt.cancel();
    if tokio::signal::ctrl_c().await.is_ok() {
        eprintln!("Quit without waiting for the provider.");
        std::process::exit(i32::from(Exit::Interrupted.code()));
    }
}
