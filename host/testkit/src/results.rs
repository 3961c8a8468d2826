//! What a test's run comes to: a result per step, and the test's.

use std::path::PathBuf;
use std::time::Duration;

/// How one step went.
#[derive(Debug, serde::Serialize)]
pub(super) struct StepResult {
    pub(super) command: &'static str,
    #[serde(serialize_with = "seconds")]
    pub(super) duration: Duration,
    /// Every way the result differed from the expectations; empty: passed.
    pub(super) failures: Vec<String>,
    /// What the extension wrote to stderr, kept when the step failed.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub(super) stderr: String,
}

/// How one test went.
#[derive(Debug, serde::Serialize)]
pub(super) struct TestResult {
    pub(super) name: String,
    pub(super) file: PathBuf,
    #[serde(serialize_with = "seconds")]
    pub(super) duration: Duration,
    /// Why the test could not start (its project could not be laid down).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) setup_error: Option<String>,
    pub(super) steps: Vec<StepResult>,
    /// How its traffic ran: `live`, `replayed from …`, `recorded … into …`,
    /// or why a recording was not written.
    pub(super) traffic: String,
}

impl TestResult {
    /// A test about to start.
    pub(super) fn new(name: String, file: PathBuf) -> Self {
        Self {
            name,
            file,
            duration: Duration::ZERO,
            setup_error: None,
            steps: Vec::new(),
            traffic: String::new(),
        }
    }

    /// A test that ended before its steps, with why.
    pub(super) fn stopped(name: String, file: PathBuf, why: &str) -> Self {
        Self {
            setup_error: Some(why.to_owned()),
            ..Self::new(name, file)
        }
    }

    pub(super) fn passed(&self) -> bool {
        self.setup_error.is_none() && self.steps.iter().all(|s| s.failures.is_empty())
    }
}

fn seconds<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64((d.as_secs_f64() * 1000.0).round() / 1000.0)
}
