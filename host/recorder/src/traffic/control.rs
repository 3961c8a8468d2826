//! The control of one step's traffic: its plan, its log, and the state
//! shared by every instance of the process ([`Traffic`]).

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;
use serde::{Deserialize, Serialize};

use super::error::TrafficError;
use super::exchange::Exchange;
use super::fault::HttpFault;
use super::matching::Miss;
use super::redact;

/// How a step's traffic is handled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TrafficMode {
    /// Requests go out; only faults are applied.
    Live,
    /// Requests go out, and are written to the log.
    Record,
    /// Requests are answered from `exchanges`; none goes out.
    Replay,
}

/// What one step's traffic does (written by the test runner).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrafficPlan {
    /// Record, replay or live.
    pub mode: TrafficMode,
    /// Where [`LogEvent`]s are appended (JSON lines).
    pub log: PathBuf,
    /// The recorded exchanges that answer on replay, in recorded order.
    #[serde(default)]
    pub exchanges: Vec<Exchange>,
    /// The token scopes recorded (replay gives a stand-in token for each).
    #[serde(default)]
    pub tokens: Vec<String>,
    /// Faults applied in every mode.
    #[serde(default)]
    pub faults: Vec<HttpFault>,
    /// Record: what the author marked safe (the test file's `safe`, or
    /// `listen --record`'s): strings the credential scan lets pass, and
    /// `binary: METHOD URL` entries whose bodies that are not text may be
    /// kept.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub safe: Vec<String>,
}

/// What happened, one line of the log each.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "kebab-case")]
pub enum LogEvent {
    /// Record: an exchange, redacted.
    Recorded {
        /// The request and its answer.
        exchange: Exchange,
    },
    /// Record: an exchange that could not be kept safely, so the recording
    /// is refused (nothing of its bodies is written).
    Refused {
        /// `METHOD URL` of the request, redacted, without its query.
        request: String,
        /// Why, and how to mark it safe where that is the way.
        why: String,
    },
    /// Replay: the recorded exchange at this index answered.
    Served {
        /// Its index in the plan's `exchanges`.
        index: usize,
    },
    /// Replay: a request no recorded exchange answers.
    Missed {
        /// The request, the nearest recorded one and the difference.
        miss: Miss,
    },
    /// A fault took a request.
    Faulted {
        /// The fault's index in the plan's `faults`.
        fault: usize,
        /// `METHOD URI` of the request.
        request: String,
    },
    /// A token was asked for (record: and given; replay: a stand-in given).
    Token {
        /// The scope.
        scope: String,
    },
    /// Replay: a token for a scope the recording never asked for.
    TokenMissed {
        /// The scope.
        scope: String,
    },
}

/// A step's traffic control, shared by every instance of the process.
pub struct Traffic {
    pub(super) plan: TrafficPlan,
    /// Replay: which exchanges have answered.
    pub(super) used: Mutex<Vec<bool>>,
    /// Values never to write (tokens given, granted environment values).
    pub(super) secrets: Mutex<redact::Secrets>,
    log: Mutex<std::fs::File>,
}

impl std::fmt::Debug for Traffic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Traffic")
            .field("mode", &self.plan.mode)
            .field("exchanges", &self.plan.exchanges.len())
            .field("faults", &self.plan.faults.len())
            .finish_non_exhaustive()
    }
}

impl Traffic {
    /// Reads the plan at `path` and opens its log for appending.
    pub fn open(path: &Path) -> Result<Arc<Self>, TrafficError> {
        let text = std::fs::read_to_string(path).map_err(|source| TrafficError::ReadPlan {
            path: path.to_path_buf(),
            source,
        })?;
        let plan: TrafficPlan =
            serde_json::from_str(&text).map_err(|source| TrafficError::PlanShape {
                path: path.to_path_buf(),
                source,
            })?;
        Self::new(plan)
    }

    /// The control of `plan`.
    pub fn new(plan: TrafficPlan) -> Result<Arc<Self>, TrafficError> {
        for f in &plan.faults {
            f.check().map_err(|why| TrafficError::Fault {
                origin: f.origin.clone(),
                why,
            })?;
        }
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&plan.log)
            .map_err(|source| TrafficError::OpenLog {
                path: plan.log.clone(),
                source,
            })?;
        Ok(Arc::new(Self {
            used: Mutex::new(vec![false; plan.exchanges.len()]),
            plan,
            secrets: Mutex::new(redact::Secrets::default()),
            log: Mutex::new(log),
        }))
    }

    /// The mode.
    pub fn mode(&self) -> TrafficMode {
        self.plan.mode
    }

    /// A value never to write into a recording (e.g. a granted environment
    /// value, a token), of any length.
    pub fn keep_secret(&self, value: &str) {
        self.secrets.lock().add(value);
    }

    /// Appends `event` to the log. A log that cannot be written is said in
    /// the host's log; the test runner then finds the step's record short.
    pub(super) fn log(&self, event: &LogEvent) {
        let Ok(mut line) = serde_json::to_vec(event) else {
            return;
        };
        line.push(b'\n');
        if let Err(e) = self.log.lock().write_all(&line) {
            tracing::warn!(log = %self.plan.log.display(), "cannot write the traffic log: {e}");
        }
    }
}

/// Reads a log written by [`Traffic`]: its events, in order. A line that is
/// not an event is an error naming its number.
pub fn read_log(path: &Path) -> Result<Vec<LogEvent>, TrafficError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => {
            return Err(TrafficError::ReadLog {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(n, l)| {
            serde_json::from_str(l).map_err(|source| TrafficError::LogLine {
                path: path.to_path_buf(),
                line: n + 1,
                source,
            })
        })
        .collect()
}
