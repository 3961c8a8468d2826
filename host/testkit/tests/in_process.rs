//! `test`'s logic in-process: the test kit library reads test files, plays
//! each step through the runner library and checks its result inside this
//! test's own process. Each step starts the extension, as the development CLI
//! does; here the extension is this same test binary (`listen` through the
//! sidecar library with the recorder's tools). No development CLI is built or
//! spawned: what is tested is the test kit, not the command line.
//!
//! A test without the test harness (`harness = false`): `main` is the tests,
//! or, started with `listen`, the extension. Started as `run` (which the kit
//! no longer starts: it plays a step itself) it fails. Needs the C example
//! built (`scripts/build-examples.sh`).

#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    reason = "test code: a failed unwrap is a failed test; the results are printed as a test runner prints them"
)]

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use azd_wasm_host_fixtures::in_process::{NamedTest, run_all};
use azd_wasm_host_fixtures::{c_hello_provider, repo_root};
use azd_wasm_host_sidecar::{ListenArgs, Serving};
use azd_wasm_host_testkit::{Summary, TestOptions, run_tests};
use clap::Parser as _;

/// The command line this binary serves, as the development CLI would.
#[derive(clap::Parser)]
enum Child {
    /// The extension a step starts.
    Listen(ListenArgs),
}

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().collect();
    // Started as a child: `listen` with azd's address set (the extension), or
    // `run` with a project (a step, as the kit once started them); test
    // filters alone are neither.
    let listen = std::env::var_os("AZD_SERVER").is_some();
    let step = argv.iter().any(|a| a == "--project");
    match argv.get(1).map(String::as_str) {
        Some("listen") if listen => {
            let Ok(Child::Listen(args)) = Child::try_parse_from(&argv) else {
                return ExitCode::from(64);
            };
            let tools = Serving::Development(Arc::new(azd_wasm_host_recorder::Tools));
            return azd_wasm_host_sidecar::run_listen(args, false, tools);
        }
        Some("run") if step => {
            eprintln!("the test kit started a step as a `run` child: it plays steps itself");
            return ExitCode::from(99);
        }
        _ => {}
    }
    let tests: [NamedTest; 3] = [
        ("the_c_examples_tests_pass", |dir| {
            Box::pin(the_c_examples_tests_pass(dir))
        }),
        ("a_wrong_expectation_fails_its_test_and_says_why", |dir| {
            Box::pin(a_wrong_expectation_fails(dir))
        }),
        ("an_invalid_test_file_runs_nothing", |dir| {
            Box::pin(an_invalid_test_file_runs_nothing(dir))
        }),
    ];
    run_all(&tests)
}

/// The tests in `paths`, each step starting this binary as the extension.
fn options(paths: &[&Path]) -> TestOptions {
    let paths = paths.iter().map(|p| p.to_path_buf()).collect();
    TestOptions {
        compile_cache: azd_wasm_host_sidecar::env::compile_cache(),
        ..TestOptions::new(paths, std::env::current_exe().unwrap())
    }
}

/// The tests in `paths` run, the summary printed and written as JUnit XML to `junit`.
async fn run_with_junit(paths: &[&Path], junit: &Path) -> Summary {
    let summary = run_tests(&options(paths)).await.unwrap();
    summary.print_text();
    summary.write_junit(junit).unwrap();
    summary
}

/// The c-hello provider in `dir`, with one test file.
fn provider_with_test(dir: &Path, test: &str) -> PathBuf {
    c_hello_provider(dir);
    std::fs::create_dir_all(dir.join("tests")).unwrap();
    std::fs::write(dir.join("tests/one.test.toml"), test).unwrap();
    dir.to_owned()
}

async fn the_c_examples_tests_pass(dir: PathBuf) {
    let junit = dir.join("junit.xml");
    let examples = repo_root().join("examples/c-hello");
    let summary = run_with_junit(&[&examples], &junit).await;
    assert!(summary.all_passed(), "{summary:?}");
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(
        xml.contains("<testsuite") && !xml.contains("<failure"),
        "{xml}"
    );
}

async fn a_wrong_expectation_fails(dir: PathBuf) {
    let provider = provider_with_test(
        &dir.join("provider"),
        "[project]\nconfig = { name = \"world\" }\n\n[[step]]\ncommand = \"provision\"\n\
         expect.outputs = { GREETING = \"Goodbye, world!\" }\n",
    );
    let junit = dir.join("junit.xml");
    let summary = run_with_junit(&[&provider], &junit).await;
    assert!(!summary.all_passed(), "{summary:?}");
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(
        xml.contains("<failure")
            && xml.contains("Goodbye, world!")
            && xml.contains("Hello, world!"),
        "{xml}"
    );
}

async fn an_invalid_test_file_runs_nothing(dir: PathBuf) {
    let provider = provider_with_test(&dir.join("provider"), "[[step]]\ncommand = \"provisoin\"\n");
    let refused = run_tests(&options(&[&provider])).await.unwrap_err();
    assert!(format!("{refused:#}").contains("provisoin"), "{refused:#}");
}
