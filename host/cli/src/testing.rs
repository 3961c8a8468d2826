//! `test`'s command line ([`TestArgs`]) and the command: the test kit runs the tests
//! ([`azd_wasm_host_testkit::run_tests`], each step starting this binary as the
//! extension), then the summary is printed (and written as JUnit XML) and the exit code
//! says how it ended.

use std::path::PathBuf;
use std::process::ExitCode;

use azd_wasm_host_core::Exit;
use azd_wasm_host_testkit::TestOptions;

use crate::run::Output;

/// Arguments of `test`.
#[derive(Debug, clap::Args)]
pub(crate) struct TestArgs {
    /// Test files, or folders whose `*.test.toml` (and `tests/*.test.toml`) are run.
    #[arg(default_value = ".")]
    pub paths: Vec<PathBuf>,
    /// How to print the results.
    #[arg(long, short = 'o', value_enum, default_value_t = Output::Table)]
    pub output: Output,
    /// Also write the results as JUnit XML to this file.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Tests run at once (default: one per core).
    #[arg(long, short = 'j')]
    pub jobs: Option<usize>,
    /// Run only the tests whose name contains this text.
    #[arg(long)]
    pub filter: Option<String>,
    /// Run against the real services and write each test's cassette (only
    /// for a test that passes), credentials redacted.
    #[arg(long, conflicts_with = "live")]
    pub record: bool,
    /// Run against the real services even where a cassette exists.
    #[arg(long)]
    pub live: bool,
    /// Accept the answers that changed in golden conversations
    /// (`*.conversation.jsonl`): write this build's answers into them.
    #[arg(long)]
    pub update: bool,
}

impl TestArgs {
    /// What the test kit runs, each step starting `extension`, each provider compiled
    /// once into the compile cache the extensions use.
    fn options(&self, extension: PathBuf, debug: bool) -> TestOptions {
        TestOptions {
            compile_cache: azd_wasm_host_sidecar::env::compile_cache(),
            paths: self.paths.clone(),
            jobs: self.jobs,
            filter: self.filter.clone(),
            record: self.record,
            live: self.live,
            update: self.update,
            extension,
            debug,
        }
    }
}

/// Runs `test`: usage (64) when no test could start, failed (1) when one failed or the
/// JUnit file cannot be written, else done.
pub(crate) async fn test(args: TestArgs, debug: bool) -> anyhow::Result<ExitCode> {
    let extension = std::env::current_exe().map_err(|e| {
        anyhow::anyhow!("cannot find this executable to start as the extension: {e}")
    })?;
    let summary = match azd_wasm_host_testkit::run_tests(&args.options(extension, debug)).await {
        Ok(summary) => summary,
        Err(e) => {
            eprintln!("azd-wasm-host test: {e:#}");
            return Ok(Exit::Usage.into());
        }
    };
    match args.output {
        Output::Json => summary.print_json(),
        Output::Table => summary.print_text(),
    }
    if let Some(path) = &args.junit
        && let Err(e) = summary.write_junit(path)
    {
        eprintln!("azd-wasm-host test: cannot write {}: {e:#}", path.display());
        return Ok(Exit::Failed.into());
    }
    Ok(Exit::holds(summary.all_passed()).into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct AsTest {
        #[command(flatten)]
        test: TestArgs,
    }

    /// The command line's every option reaches the test kit; the extension is the one
    /// named, never one the kit finds for itself.
    #[test]
    fn the_command_line_becomes_the_kits_options() {
        let args = AsTest::try_parse_from([
            "test", "a", "b", "-j", "3", "--filter", "x", "--record", "--update",
        ])
        .unwrap()
        .test;
        let options = args.options(PathBuf::from("/bin/ext"), true);
        let expected = TestOptions {
            jobs: Some(3),
            filter: Some("x".into()),
            record: true,
            update: true,
            debug: true,
            compile_cache: options.compile_cache.clone(),
            ..TestOptions::new(vec!["a".into(), "b".into()], PathBuf::from("/bin/ext"))
        };
        assert_eq!(format!("{options:?}"), format!("{expected:?}"));
        assert!(AsTest::try_parse_from(["test", "--record", "--live"]).is_err());
        let none = AsTest::try_parse_from(["test"]).unwrap().test;
        assert_eq!(none.paths, [PathBuf::from(".")]);
    }
}
