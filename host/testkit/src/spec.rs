//! The test file format (`*.test.toml`): one test per file, a project to
//! run in, then steps in order, each a command `run` plays with what its
//! result must be. Documented in docs/testing.md.
//!
//! ```toml
//! [project]
//! config = { name = "world" }          # azure.yaml's infra.config
//! env = { AZURE_LOCATION = "westus" }  # .azure/<env>/.env before the first step
//! files = { "notes/a.txt" = "hello" }  # laid down in the project
//!
//! [[step]]
//! command = "provision"
//! [step.expect]
//! outputs = { GREETING = "Hello, world!", GREETING_LENGTH = { matches = "^[0-9]+$" } }
//! progress = ["Composing the greeting"]
//! dotenv = { GREETING = "Hello, world!" }
//! ```
//!
//! Every table refuses keys it does not know, so a misspelt expectation is
//! an invalid file (exit 64, named with its line), never a check silently
//! skipped.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use azd_wasm_host_runner::Action;
use serde::Deserialize;

/// One test file, as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Spec {
    /// What the test is about (default: the file's name without `.test.toml`).
    pub(super) name: Option<String>,
    /// The provider (`provider.toml` or a `.wasm`), relative to the test file
    /// (default: `provider.toml` beside it, else in the folder above).
    pub(super) provider: Option<PathBuf>,
    /// The recorded traffic, relative to the test file (default:
    /// `cassettes/<file name without .test.toml>.json` beside it).
    pub(super) cassette: Option<PathBuf>,
    /// Strings a recording may keep though they look like credentials
    /// (`test --record` refuses a cassette that holds one otherwise).
    #[serde(default)]
    pub(super) safe: Vec<String>,
    #[serde(default)]
    pub(super) project: ProjectSpec,
    #[serde(rename = "step", default)]
    pub(super) steps: Vec<Step>,
}

/// The project a test runs in: a fresh temporary folder for every test.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ProjectSpec {
    /// A folder to copy (relative to the test file); its `azure.yaml` is used
    /// unless `config` is given.
    pub(super) from: Option<PathBuf>,
    /// `azure.yaml`'s `infra.config` (replaces `from`'s).
    pub(super) config: Option<toml::Table>,
    /// The azd environment's name (default `dev`).
    pub(super) environment: Option<String>,
    /// `.azure/<env>/.env` values before the first step.
    #[serde(default)]
    pub(super) env: BTreeMap<String, String>,
    /// Files to lay down, by path inside the project (`/`-separated).
    #[serde(default)]
    pub(super) files: BTreeMap<String, String>,
    /// Variables in the host's own environment, as the user's shell would
    /// hold them (what `[policy] env` grants read), for every step.
    #[serde(default)]
    pub(super) process_env: BTreeMap<String, String>,
}

/// The commands a step can play, with the requests `run` sends for each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(super) enum Command {
    Provision,
    Preview,
    State,
    /// azd's `env refresh`: the same State request as `state`.
    #[serde(rename = "env refresh")]
    EnvRefresh,
    Down,
    Parameters,
}

impl Command {
    /// The `run` command that plays it.
    pub(super) fn action(self) -> Action {
        match self {
            Self::Provision => Action::Provision,
            Self::Preview => Action::Preview,
            Self::State | Self::EnvRefresh => Action::State,
            Self::Down => Action::Down,
            Self::Parameters => Action::Parameters,
        }
    }

    /// As the test file names it.
    pub(super) fn name(self) -> &'static str {
        match self {
            Self::Provision => "provision",
            Self::Preview => "preview",
            Self::State => "state",
            Self::EnvRefresh => "env refresh",
            Self::Down => "down",
            Self::Parameters => "parameters",
        }
    }
}

/// One command and what its result must be. Without `error`, the command
/// must succeed.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Step {
    pub(super) command: Command,
    /// What every yes/no question of the provider gets: `yes` or `no` (default:
    /// each question's default, as under azd's `--no-prompt`).
    pub(super) answer: Option<Answer>,
    /// Faults injected into this step.
    #[serde(default)]
    pub(super) fault: Fault,
    /// `down`: as `azd down --force` / `--purge` (both default to true: a test has nobody to ask).
    pub(super) force: Option<bool>,
    pub(super) purge: Option<bool>,
    /// Replaces `infra.config` in `azure.yaml` from this step on.
    pub(super) config: Option<toml::Table>,
    /// `.env` values set before this step.
    #[serde(default)]
    pub(super) env: BTreeMap<String, String>,
    /// What the result must be.
    #[serde(default)]
    pub(super) expect: Expect,
}

/// An answer to every yes/no question.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(super) enum Answer {
    Yes,
    No,
}

/// Faults a step is played under: the provider's policy tightened for this
/// step only (a grant withdrawn, less memory or time), or azd cancelling.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Fault {
    /// Grants taken away: `fs:PATH`, `env:NAME`, `network:HOST:PORT`,
    /// `http:ORIGIN`, `credentials:SCOPE`, `azd.environment`, `azd.prompt`,
    /// or a kind alone (`fs`, `env`, `network`, `http`, `credentials`) for all of it.
    #[serde(default)]
    pub(super) withdraw: Vec<String>,
    /// The memory limit, lowered.
    pub(super) memory_mb: Option<u64>,
    /// The deadline of each call, shortened (fractions allowed).
    pub(super) call_timeout_secs: Option<f64>,
    /// azd cancels the command (as Ctrl-C does) after this many progress messages.
    pub(super) cancel_after_progress: Option<usize>,
    /// Requests to an origin answered with a status, or failing as a timeout
    /// or a reset would (`[[step.fault.http]]`).
    #[serde(default)]
    pub(super) http: Vec<azd_wasm_host_recorder::traffic::HttpFault>,
}

impl Fault {
    /// Whether the provider's policy changes for the step.
    pub(super) fn changes_policy(&self) -> bool {
        !self.withdraw.is_empty() || self.memory_mb.is_some() || self.call_timeout_secs.is_some()
    }
}

/// The grant kinds `fault.withdraw` names, alone or as `KIND:NAME`.
pub(super) const WITHDRAWN_KINDS: [&str; 5] = ["fs", "env", "network", "http", "credentials"];

/// Whether `entry` is something `fault.withdraw` understands.
fn withdrawable(entry: &str) -> bool {
    let kind = entry.split_once(':').map_or(entry, |(k, _)| k);
    matches!(entry, "azd.environment" | "azd.prompt") || WITHDRAWN_KINDS.contains(&kind)
}

/// What a step's result must be; every field is optional.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Expect {
    /// Outputs by name (provision, state): each must match; others may exist.
    #[serde(default)]
    pub(super) outputs: BTreeMap<String, Match>,
    /// The outputs' names, exactly, in any order (`[]`: the answer has none).
    pub(super) output_names: Option<Vec<String>>,
    /// The preview's changes counted by kind.
    pub(super) plan: Option<PlanSpec>,
    /// Each must match a progress message, in this order (others may come between).
    #[serde(default)]
    pub(super) progress: Vec<Match>,
    /// The command must fail, with this error.
    pub(super) error: Option<ErrorSpec>,
    /// The questions the provider asked, in order (each a match of its text;
    /// `[]`: none may be asked).
    pub(super) prompts: Option<Vec<Match>>,
    /// `.azure/<env>/.env` after the step.
    #[serde(default)]
    pub(super) dotenv: BTreeMap<String, Match>,
    /// Files in the project after the step, by path (`/`-separated).
    #[serde(default)]
    pub(super) files: BTreeMap<String, Match>,
    /// Whether the deployment was skipped (provision).
    pub(super) skipped: Option<bool>,
    /// Resource ids (state): as many as there are, each matching one, in any
    /// order (`[]`: none may exist).
    pub(super) resources: Option<Vec<Match>>,
    /// Parameter values by name (parameters; secret values read `********`).
    #[serde(default)]
    pub(super) parameters: BTreeMap<String, Match>,
    /// The planned outputs' names, exactly, in order (parameters).
    pub(super) planned_outputs: Option<Vec<String>>,
    /// Keys the destroy invalidated, exactly, in any order (down).
    pub(super) invalidated_env_keys: Option<Vec<String>>,
}

/// A preview's changes by kind; a kind left out is not checked.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct PlanSpec {
    pub(super) create: Option<u64>,
    pub(super) modify: Option<u64>,
    pub(super) delete: Option<u64>,
    pub(super) unchanged: Option<u64>,
    pub(super) other: Option<u64>,
}

/// The error a step must end with.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ErrorSpec {
    /// `provider` (the provider answered with an error) or `fault` (the
    /// component or host failed: trap, time, memory, protocol).
    pub(super) kind: Option<String>,
    /// The error's code (a local error's, or a service's `error_code`).
    pub(super) code: Option<Match>,
    /// A local error's category (`validation`, `internal`, …).
    pub(super) category: Option<Match>,
    /// A service error's HTTP status.
    pub(super) status: Option<i64>,
    pub(super) message: Option<Match>,
    pub(super) suggestion: Option<Match>,
}

/// How a text must look: a bare string is equality; a table says how.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub(super) enum Match {
    Equals(String),
    Number(i64),
    Bool(bool),
    How(MatchHow),
}

/// The ways of matching a text; all that are given must hold.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct MatchHow {
    pub(super) equals: Option<String>,
    pub(super) contains: Option<String>,
    /// A regular expression (Rust's `regex` syntax) found in the text.
    pub(super) matches: Option<String>,
    /// `true`: the value must not exist (an output, a `.env` key, a file).
    #[serde(default)]
    pub(super) absent: bool,
    /// A JSON pointer (RFC 6901, e.g. `/region/name`): the text is read as
    /// JSON and the value there is matched instead (a string as it is,
    /// anything else as JSON text).
    pub(super) json: Option<String>,
}

/// A test file that cannot be used: its path and why (with the line, when
/// the file is not valid).
#[derive(Debug, thiserror::Error)]
#[error("{}: {message}", path.display())]
pub(super) struct Invalid {
    pub(super) path: PathBuf,
    pub(super) message: String,
}

impl Spec {
    /// Reads and checks the test file at `path`.
    pub(super) fn read(path: &Path) -> Result<Self, Invalid> {
        let invalid = |message: String| Invalid {
            path: path.to_owned(),
            message,
        };
        let text = std::fs::read_to_string(path).map_err(|e| invalid(e.to_string()))?;
        let spec: Self = toml::from_str(&text).map_err(|e| invalid(located(&text, &e)))?;
        if spec.steps.is_empty() {
            return Err(invalid(
                "no [[step]]: a test runs at least one command".into(),
            ));
        }
        for m in spec.steps.iter().flat_map(|s| s.expect.matches()) {
            m.check().map_err(|e| invalid(e.to_string()))?;
        }
        for w in spec.steps.iter().flat_map(|s| &s.fault.withdraw) {
            if !withdrawable(w) {
                return Err(invalid(format!(
                    "fault.withdraw: {w:?} is not a grant (fs, env, network, http, credentials, \
                     each alone or as KIND:NAME; azd.environment; azd.prompt)"
                )));
            }
        }
        for (i, f) in spec
            .steps
            .iter()
            .flat_map(|s| s.fault.http.iter().enumerate())
        {
            f.check()
                .map_err(|e| invalid(format!("fault.http[{i}]: {e}")))?;
        }
        if let Some(name) = &spec.project.environment {
            azd_wasm_host_core::EnvironmentName::parse(name)
                .map_err(|e| invalid(format!("project.environment: {e}")))?;
        }
        Ok(spec)
    }
}

impl Expect {
    /// Every text matcher in these expectations.
    fn matches(&self) -> impl Iterator<Item = &Match> {
        let error = self.error.iter().flat_map(|e| {
            [&e.code, &e.category, &e.message, &e.suggestion]
                .into_iter()
                .flatten()
        });
        self.outputs
            .values()
            .chain(&self.progress)
            .chain(self.dotenv.values())
            .chain(self.files.values())
            .chain(self.resources.iter().flatten())
            .chain(self.parameters.values())
            .chain(self.prompts.iter().flatten())
            .chain(error)
    }
}

impl Match {
    /// A pattern that is not a regular expression is refused up front.
    fn check(&self) -> anyhow::Result<()> {
        if let Self::How(how) = self {
            if let Some(p) = &how.matches {
                regex::Regex::new(p)
                    .map_err(|e| anyhow::anyhow!("`matches = {p:?}` is not a pattern: {e}"))?;
            }
            if let Some(p) = &how.json
                && !(p.is_empty() || p.starts_with('/'))
            {
                anyhow::bail!("`json = {p:?}` is not a JSON pointer (it starts with `/`)");
            }
        }
        Ok(())
    }
}

/// The parse error with its line and column, as `line L, column C: …`.
fn located(text: &str, e: &toml::de::Error) -> String {
    let message = e.message().trim_end().to_owned();
    match e.span() {
        Some(span) => {
            let before = &text[..span.start.min(text.len())];
            let line = before.matches('\n').count() + 1;
            let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
            format!("line {line}, column {column}: {message}")
        }
        None => message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<Spec, Invalid> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.test.toml");
        std::fs::write(&path, text).unwrap();
        Spec::read(&path)
    }

    #[test]
    fn a_full_test_file_reads() {
        let spec = read(
            r#"
name = "greets"
[project]
config = { name = "world" }
env = { A = "1" }
[[step]]
command = "provision"
[step.expect]
outputs = { GREETING = "Hello, world!", N = { matches = "^[0-9]+$" }, J = { json = "/a", equals = "b" } }
progress = ["Composing", { contains = "ready" }]
[[step]]
command = "env refresh"
[[step]]
command = "preview"
expect = { plan = { create = 0 } }
[[step]]
command = "provision"
config = {}
expect.error = { code = "invalid_config", category = "validation", message = { contains = "name" } }
"#,
        )
        .unwrap();
        assert_eq!(spec.steps.len(), 4);
        assert_eq!(spec.steps[1].command, Command::EnvRefresh);
        assert_eq!(spec.steps[1].command.action(), Action::State);
        assert!(spec.steps[3].expect.error.is_some());
        assert_eq!(spec.steps[0].expect.progress.len(), 2);
    }

    #[test]
    fn a_misspelt_key_is_refused_with_its_line() {
        let e = read("[[step]]\ncommand = \"provision\"\n[step.expect]\noutptus = { A = \"1\" }\n")
            .unwrap_err();
        assert!(e.message.starts_with("line 4,"), "{e}");
        assert!(e.message.contains("outptus"), "{e}");
        let e = read("[[step]]\ncommand = \"deploy\"\n").unwrap_err();
        assert!(e.message.starts_with("line 2,"), "{e}");
        let e = read("[[step]]\ncommand = \"state\"\nexpect.outputs = { A = { equal = \"x\" } }\n")
            .unwrap_err();
        assert!(e.message.starts_with("line 3,"), "{e}");
    }

    #[test]
    fn a_file_without_steps_or_with_a_bad_pattern_is_refused() {
        assert!(
            read("name = \"x\"\n")
                .unwrap_err()
                .message
                .contains("no [[step]]")
        );
        let e =
            read("[[step]]\ncommand = \"state\"\nexpect.outputs = { A = { matches = \"(\" } }\n")
                .unwrap_err();
        assert!(e.message.contains("not a pattern"), "{e}");
        assert!(withdrawable("fs:x") && withdrawable("azd.prompt"));
        assert!(!withdrawable("disk") && !withdrawable("azd.other"));
        let e = read("[project]\nenvironment = \"bad name\"\n[[step]]\ncommand = \"state\"\n")
            .unwrap_err();
        assert!(e.message.contains("project.environment"), "{e}");
        let e = read(
            "[[step]]\ncommand = \"state\"\n[[step.fault.http]]\norigin = \"http://127.0.0.1:1\"\n",
        )
        .unwrap_err();
        assert!(e.message.contains("fault.http[0]: give exactly one"), "{e}");
        let ok = read(
            "cassette = \"c.json\"\n[project]\nprocess_env = { K = \"v\" }\n[[step]]\ncommand = \"state\"\n\
             [[step.fault.http]]\norigin = \"http://127.0.0.1:1\"\nstatus = 403\n",
        )
        .unwrap();
        assert_eq!(ok.steps[0].fault.http[0].status, Some(403));
        assert_eq!(ok.project.process_env["K"], "v");
    }
}
