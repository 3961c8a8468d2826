//! What `test` prints: a line per test as it ends (stderr), then a summary a
//! person reads at a glance (stdout), or one JSON document (`--output json`),
//! and JUnit XML for CI (`--junit FILE`).

use std::path::Path;
use std::time::Duration;

use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};

use super::results::TestResult;

/// The line of a test that just ended: `ok` or `FAIL`, its name and time,
/// and for a failure each reason, indented. On stderr, so stdout holds only
/// the summary or the JSON document.
pub(super) fn line(result: &TestResult, done: usize, total: usize) {
    let verdict = if result.passed() { "ok  " } else { "FAIL" };
    // Where the traffic came from, when not the real services alone.
    let traffic = match result.traffic.as_str() {
        "" | "live" => String::new(),
        other => format!(": {other}"),
    };
    eprintln!(
        "[{done}/{total}] {verdict} {} ({:.2} s){traffic}",
        result.name,
        result.duration.as_secs_f64()
    );
}

/// Every test's result, and how long the whole run took: what `test` prints, as text
/// ([`Summary::print_text`]), JSON ([`Summary::print_json`]) or JUnit XML
/// ([`Summary::write_junit`]).
#[derive(Debug)]
pub struct Summary {
    results: Vec<TestResult>,
    duration: Duration,
}

impl Summary {
    pub(super) fn new(results: Vec<TestResult>, duration: Duration) -> Self {
        Self { results, duration }
    }

    /// Whether every test passed.
    pub fn all_passed(&self) -> bool {
        self.results.iter().all(TestResult::passed)
    }

    fn failed(&self) -> usize {
        self.results.iter().filter(|r| !r.passed()).count()
    }

    /// The results as one JSON document on stdout (`test --output json`).
    pub fn print_json(&self) {
        let doc = serde_json::json!({
            "passed": self.results.len() - self.failed(),
            "failed": self.failed(),
            "seconds": (self.duration.as_secs_f64() * 1000.0).round() / 1000.0,
            "tests": self.results,
        });
        println!("{doc:#}");
    }

    /// The failures in detail, then the count, on stdout (`test`).
    pub fn print_text(&self) {
        print!("{}", self.text());
    }

    /// The failures in detail, then the count.
    fn text(&self) -> String {
        use std::fmt::Write as _;
        let mut out = String::new();
        for r in self.results.iter().filter(|r| !r.passed()) {
            let _ = writeln!(out, "\nFAIL {} ({})", r.name, r.file.display());
            for reason in failure_lines(r) {
                let _ = writeln!(out, "  {reason}");
            }
            if let Some(stderr) = r.steps.iter().map(|s| &s.stderr).find(|s| !s.is_empty()) {
                let _ = writeln!(out, "  what the extension wrote to stderr:");
                for l in stderr
                    .lines()
                    .rev()
                    .take(20)
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                {
                    let _ = writeln!(out, "    {l}");
                }
            }
        }
        let failed = self.failed();
        let _ = writeln!(
            out,
            "\n{}: {} passed, {failed} failed, in {:.2} s",
            if failed == 0 { "ok" } else { "FAILED" },
            self.results.len() - failed,
            self.duration.as_secs_f64()
        );
        out
    }

    /// The results as JUnit XML: one suite, a test case per test file (its
    /// steps' failures in the failure's text), written to `path`.
    pub fn write_junit(&self, path: &Path) -> anyhow::Result<()> {
        let mut suite = TestSuite::new("azd-wasm-host test");
        suite.set_time(self.duration);
        for r in &self.results {
            let status = if r.passed() {
                TestCaseStatus::success()
            } else {
                let reasons = failure_lines(r);
                let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
                status.set_message(reasons.first().cloned().unwrap_or_default());
                status.set_description(reasons.join("\n"));
                status
            };
            let mut case = TestCase::new(r.name.as_str(), status);
            case.set_classname(r.file.display().to_string());
            case.set_time(r.duration);
            let stderr: String = r.steps.iter().map(|s| s.stderr.as_str()).collect();
            if !stderr.is_empty() {
                case.set_system_err_lossy(stderr.as_bytes());
            }
            suite.add_test_case(case);
        }
        let mut report = Report::new("azd-wasm-host test");
        report.set_time(self.duration);
        report.add_test_suite(suite);
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(path, report.to_string()?)?;
        Ok(())
    }
}

/// Each reason a test failed, prefixed by its step (`step 2 (provision): …`).
fn failure_lines(r: &TestResult) -> Vec<String> {
    let mut lines: Vec<String> = r.setup_error.iter().cloned().collect();
    for (i, step) in r.steps.iter().enumerate() {
        for f in &step.failures {
            lines.push(format!("step {} ({}): {f}", i + 1, step.command));
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::super::results::StepResult;
    use super::*;

    fn result(name: &str, failures: &[&str]) -> TestResult {
        TestResult {
            name: name.into(),
            file: format!("tests/{name}.test.toml").into(),
            duration: Duration::from_millis(120),
            setup_error: None,
            traffic: "live".into(),
            steps: vec![StepResult {
                command: "provision",
                duration: Duration::from_millis(100),
                failures: failures.iter().map(|f| (*f).to_owned()).collect(),
                stderr: if failures.is_empty() {
                    String::new()
                } else {
                    "ERROR: boom <&>\n".into()
                },
            }],
        }
    }

    #[test]
    fn the_summary_names_each_failure_with_its_step() {
        let s = Summary::new(
            vec![
                result("good", &[]),
                result("bad", &["output A: expected \"x\", got \"y\""]),
            ],
            Duration::from_secs(1),
        );
        assert!(!s.all_passed());
        let text = s.text();
        assert!(text.contains("FAIL bad"), "{text}");
        assert!(text.contains("step 1 (provision): output A"), "{text}");
        assert!(text.contains("1 passed, 1 failed"), "{text}");
        assert!(!text.contains("FAIL good"), "{text}");
    }

    #[test]
    fn the_junit_file_reads_back_with_each_case_and_failure() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out/junit.xml");
        let s = Summary::new(
            vec![
                result("good", &[]),
                result("bad", &["output A: <\"x\"> & more"]),
            ],
            Duration::from_secs(1),
        );
        s.write_junit(&path).unwrap();
        let xml = std::fs::read_to_string(&path).unwrap();
        let report = Report::deserialize_from_str(&xml).unwrap();
        assert_eq!(report.tests, 2);
        assert_eq!(report.failures, 1);
        let cases = &report.test_suites[0].test_cases;
        assert_eq!(cases[1].name.as_str(), "bad");
        match &cases[1].status {
            TestCaseStatus::NonSuccess { message, .. } => assert_eq!(
                message.as_ref().map(|m| m.as_str()),
                Some("step 1 (provision): output A: <\"x\"> & more")
            ),
            other => panic!("bad is not a failure: {other:?}"),
        }
        assert!(matches!(cases[0].status, TestCaseStatus::Success { .. }));
    }
}
