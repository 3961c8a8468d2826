//! The steps of a real cycle: `build`, `test`, and when asked `package` and
//! `install`. The first three are this binary in a child process (`watch
//! --step`, [`crate::worker`]); `install` is azd ([`crate::azd`]). Every
//! child gets a temporary folder of `watch`'s own (`TMPDIR`), removed when
//! `watch` ends, so nothing a stopped step leaves behind stays.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use tokio::process::Command;
use tokio_util::sync::CancellationToken;

use crate::azd::Azd;
use crate::child::{self, Ran, tail, temp_dir_env};
use crate::cycle::{Outcome, Steps};
use crate::worker::{Packaged, StepOptions, WorkerStep};

/// One step of a cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Job {
    Worker(WorkerStep),
    Install,
}

/// The provider's steps.
pub(crate) struct ProviderSteps {
    exe: PathBuf,
    manifest: PathBuf,
    jobs: Vec<Job>,
    options: StepOptions,
    debug: bool,
    tmp: PathBuf,
    packaged: Option<Packaged>,
    azd: Option<Azd>,
}

impl ProviderSteps {
    /// Build, then test unless `test` is false, then package when `package`,
    /// then install when given azd.
    pub(crate) fn new(
        manifest: PathBuf,
        test: bool,
        package: bool,
        azd: Option<Azd>,
        options: StepOptions,
        tmp: PathBuf,
    ) -> Self {
        let mut jobs = vec![Job::Worker(WorkerStep::Build)];
        if test {
            jobs.push(Job::Worker(WorkerStep::Test));
        }
        if package || azd.is_some() {
            jobs.push(Job::Worker(WorkerStep::Package));
        }
        if azd.is_some() {
            jobs.push(Job::Install);
        }
        Self {
            exe: options.program.clone(),
            debug: options.debug,
            manifest,
            jobs,
            options,
            tmp,
            packaged: None,
            azd,
        }
    }

    /// This binary as `watch --step STEP` on the manifest.
    fn worker(&self, step: WorkerStep) -> Command {
        let mut cmd = Command::new(&self.exe);
        if self.debug {
            cmd.arg("--debug");
        }
        cmd.arg("watch")
            .arg(&self.manifest)
            .args(["--step", step.word()]);
        let mut pass: Vec<OsString> = Vec::new();
        if let Some(filter) = &self.options.filter {
            pass.extend(["--filter".into(), filter.into()]);
        }
        let signing = &self.options.signing;
        if let Some(key) = &signing.key {
            pass.extend(["--sign".into(), key.into()]);
        }
        if signing.unsigned {
            pass.push("--unsigned".into());
        }
        if signing.resign {
            pass.push("--resign".into());
        }
        cmd.args(pass);
        temp_dir_env(&mut cmd, &self.tmp);
        cmd
    }

    async fn run_worker(&mut self, step: WorkerStep, stop: &CancellationToken) -> Outcome {
        if step == WorkerStep::Test && !has_tests(&crate::worker::folder_of(&self.manifest)) {
            return Outcome::Done(Some("no tests".into()));
        }
        let ran = match child::run(self.worker(step), stop).await {
            Ok(ran) => ran,
            Err(e) => {
                return Outcome::Failed {
                    summary: None,
                    detail: format!("cannot start {}: {e}", self.exe.display()),
                };
            }
        };
        let Ran::Finished {
            status,
            stdout,
            stderr,
        } = ran
        else {
            return Outcome::Stopped;
        };
        match step {
            WorkerStep::Test => tested(status.code(), &stdout, &stderr),
            WorkerStep::Build if status.success() => Outcome::Done(None),
            WorkerStep::Package if status.success() => {
                match serde_json::from_str::<Packaged>(stdout.trim()) {
                    Ok(packaged) => {
                        self.packaged = Some(packaged);
                        Outcome::Done(None)
                    }
                    Err(e) => failed(format!("package told nothing readable ({e}): {stdout}")),
                }
            }
            WorkerStep::Build | WorkerStep::Package => failed(tail(&stderr, 40)),
        }
    }
}

impl Steps for ProviderSteps {
    fn names(&self) -> Vec<&'static str> {
        self.jobs
            .iter()
            .map(|job| match job {
                Job::Worker(step) => step.word(),
                Job::Install => "install",
            })
            .collect()
    }

    async fn run(&mut self, index: usize, stop: &CancellationToken) -> Outcome {
        match self.jobs.get(index).copied() {
            Some(Job::Worker(step)) => self.run_worker(step, stop).await,
            Some(Job::Install) => {
                let (Some(azd), Some(packaged)) = (self.azd.as_mut(), self.packaged.as_ref())
                else {
                    return failed("nothing was packaged to install".into());
                };
                azd.install(packaged, &self.tmp, stop).await
            }
            None => failed(format!("no step {index}")),
        }
    }
}

fn failed(detail: String) -> Outcome {
    Outcome::Failed {
        summary: None,
        detail,
    }
}

/// What a test run came to, from its exit code and `--output json` document.
fn tested(code: Option<i32>, stdout: &str, stderr: &str) -> Outcome {
    let doc: Option<serde_json::Value> = serde_json::from_str(stdout).ok();
    let count = |key: &str| {
        doc.as_ref()
            .and_then(|d| d[key].as_u64())
            .unwrap_or_default()
    };
    match (code, &doc) {
        (Some(0), Some(_)) => Outcome::Done(Some(format!("{} passed", count("passed")))),
        (Some(1), Some(doc)) => Outcome::Failed {
            summary: Some(format!(
                "{} passed, {} failed",
                count("passed"),
                count("failed")
            )),
            detail: failures(doc),
        },
        _ => failed(tail(stderr, 40)),
    }
}

/// Each failed test: its name, why, and the end of what its step wrote.
fn failures(doc: &serde_json::Value) -> String {
    let mut out = Vec::new();
    let empty = Vec::new();
    for test in doc["tests"].as_array().unwrap_or(&empty) {
        let steps = test["steps"].as_array().unwrap_or(&empty);
        let setup = test["setup_error"].as_str();
        let failing: Vec<(usize, &serde_json::Value)> = steps
            .iter()
            .enumerate()
            .filter(|(_, s)| s["failures"].as_array().is_some_and(|f| !f.is_empty()))
            .collect();
        if setup.is_none() && failing.is_empty() {
            continue;
        }
        let name = test["name"].as_str().unwrap_or("?");
        let file = test["file"].as_str().unwrap_or("?");
        out.push(format!("FAIL {name} ({file})"));
        if let Some(setup) = setup {
            out.push(format!("  {setup}"));
        }
        for (i, step) in &failing {
            let command = step["command"].as_str().unwrap_or("?");
            for f in step["failures"].as_array().unwrap_or(&empty) {
                out.push(format!(
                    "  step {} ({command}): {}",
                    i + 1,
                    f.as_str().unwrap_or("?")
                ));
            }
        }
        if let Some(stderr) = failing
            .first()
            .and_then(|(_, s)| s["stderr"].as_str())
            .filter(|s| !s.trim().is_empty())
        {
            out.push("  what the extension wrote to stderr:".into());
            out.extend(tail(stderr, 10).lines().map(|l| format!("    {l}")));
        }
    }
    out.join("\n")
}

/// Whether the provider's folder has a test `test` would run.
fn has_tests(dir: &Path) -> bool {
    [dir.to_path_buf(), dir.join("tests")].iter().any(|d| {
        std::fs::read_dir(d).is_ok_and(|entries| {
            entries.flatten().any(|e| {
                let name = e.file_name();
                let name = name.to_string_lossy();
                name.ends_with(".test.toml") || name.ends_with(".conversation.jsonl")
            })
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_passing_test_run_counts_its_tests() {
        let doc = r#"{"passed": 5, "failed": 0, "seconds": 0.4, "tests": []}"#;
        assert_eq!(
            tested(Some(0), doc, ""),
            Outcome::Done(Some("5 passed".into()))
        );
    }

    #[test]
    fn a_failing_test_run_says_which_test_and_why() {
        let doc = r#"{"passed": 1, "failed": 1, "tests": [
            {"name": "ok", "file": "tests/ok.test.toml", "steps": [{"command": "provision", "failures": []}]},
            {"name": "greeting", "file": "tests/greeting.test.toml", "steps": [
                {"command": "state", "failures": []},
                {"command": "provision", "failures": ["output GREETING: want \"Hi\", got \"Hello\""],
                 "stderr": "line 1\nline 2\n"}]}]}"#;
        let Outcome::Failed { summary, detail } = tested(Some(1), doc, "") else {
            panic!("not failed");
        };
        assert_eq!(summary.as_deref(), Some("1 passed, 1 failed"));
        assert_eq!(
            detail,
            "FAIL greeting (tests/greeting.test.toml)\n  step 2 (provision): output GREETING: \
             want \"Hi\", got \"Hello\"\n  what the extension wrote to stderr:\n    line 1\n    line 2"
        );
    }

    #[test]
    fn an_invalid_test_file_shows_what_test_said() {
        let Outcome::Failed { summary, detail } = tested(
            Some(64),
            "",
            "azd-wasm-host test: tests/x.test.toml:3: unknown key\n",
        ) else {
            panic!("not failed");
        };
        assert_eq!(summary, None);
        assert!(detail.contains("unknown key"), "{detail}");
    }

    #[test]
    fn tests_are_found_beside_the_manifest_or_in_tests() {
        let dir = tempfile::tempdir().unwrap();
        assert!(!has_tests(dir.path()));
        std::fs::create_dir(dir.path().join("tests")).unwrap();
        std::fs::write(dir.path().join("tests/a.test.toml"), "").unwrap();
        assert!(has_tests(dir.path()));
    }
}
