//! Golden conversations: a conversation `listen --record` wrote under azd
//! (`*.conversation.jsonl` beside the tests) played again against this
//! build, azd's side from the recording, and every answer compared.
//!
//! One conversation is one test. The simulated azd serves the environment
//! values and the answers to questions the recording holds, the provider's
//! HTTP traffic is replayed from it (a request it does not hold fails, so a
//! replay never reaches the network), the project is a fresh empty folder
//! (its path put in place of the recorded one in Initialize, and back in the
//! answers), and each of azd's requests is sent in order with its recorded
//! id. A request whose progress or answer differs fails, with the lines that
//! changed; `--update` writes the new answers into the file instead.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use azd_wasm_host_proto::RequestKind;
use azd_wasm_host_proto::azdext as pb;
use azd_wasm_host_proto::azdext::provisioning_message::MessageType;
use azd_wasm_host_recorder::conversation::{self as record, Line};
use azd_wasm_host_recorder::traffic::{LogEvent, TrafficMode, TrafficPlan, read_log};
use azd_wasm_host_runner::EnvOverlay;
use azd_wasm_host_sim::{ExtensionProcess, ProviderHandle, SimAzd, SimOptions};
use prost::Message as _;

use super::conversation::{Conversation, Recorded};
use super::exec::Launch;
use super::replies::Replies;
use super::results::{StepResult, TestResult};

/// Plays `conversation` (the file `file`) against `provider`.
pub(super) async fn run(
    name: &str,
    file: &Path,
    provider: &Path,
    conversation: &Conversation,
    update: bool,
    launch: &Launch,
) -> TestResult {
    let started = Instant::now();
    let mut result = TestResult::new(name.to_owned(), file.to_owned());
    match play(provider, conversation, launch).await {
        Ok(mut played) => {
            let changed = played.changed();
            result.steps = std::mem::take(&mut played.steps);
            result.traffic = format!("replayed conversation ({} requests)", played.requests);
            if update && changed > 0 {
                match rewrite(file, conversation, &played) {
                    Ok(()) => {
                        for s in &mut result.steps {
                            s.failures.retain(|f| !f.starts_with(CHANGED));
                        }
                        result.traffic =
                            format!("updated {changed} answer(s) in {}", file.display());
                    }
                    Err(e) => result.setup_error = Some(format!("cannot update: {e:#}")),
                }
            }
        }
        Err(e) => result.setup_error = Some(format!("{e:#}")),
    }
    result.duration = started.elapsed();
    result
}

/// How a failure about a changed answer starts (what `--update` accepts).
const CHANGED: &str = "changed: ";

/// What a replay gave: a step per request, and every message the extension sent.
struct Played {
    steps: Vec<StepResult>,
    /// Per request id, the messages sent (progress, then the answer), redacted.
    answers: Vec<(String, Vec<pb::ProvisioningMessage>)>,
    /// The project's path in this replay (what its answers may name).
    project: String,
    /// How many of azd's requests were sent.
    requests: usize,
}

impl Played {
    fn changed(&self) -> usize {
        self.steps
            .iter()
            .filter(|s| s.failures.iter().any(|f| f.starts_with(CHANGED)))
            .count()
    }
}

async fn play(
    provider: &Path,
    conversation: &Conversation,
    launch: &Launch,
) -> anyhow::Result<Played> {
    let project = tempfile::Builder::new()
        .prefix("azd-wasm-host-golden-")
        .tempdir()?;
    let project_path = std::fs::canonicalize(project.path())?;
    let environment = conversation.environment();
    if let Some(env) = &environment {
        std::fs::create_dir_all(project_path.join(".azure").join(&env.name))?;
    }
    let scratch = tempfile::Builder::new()
        .prefix("azd-wasm-host-golden-plan-")
        .tempdir()?;
    let plan = write_plan(scratch.path(), conversation)?;
    let (sim, mut process, handle) =
        start(provider, conversation, &project_path, &plan.0, launch).await?;
    let mut played = Played {
        steps: Vec::new(),
        answers: Vec::new(),
        project: project_path.to_string_lossy().into_owned(),
        requests: 0,
    };
    let requests = conversation.requests();
    let recorded_path = recorded_project(&requests);
    let mut recorded = conversation.recorded();
    for request in requests {
        let want = recorded.remove(&request.request_id).unwrap_or_default();
        let step = replay_one(&handle, request, want, (&recorded_path, &project_path)).await;
        played.answers.push((step.1, step.2));
        played.steps.push(step.0);
        played.requests += 1;
    }
    sim.close_streams();
    let _ = process.wait(Duration::from_secs(10)).await;
    let stderr = process.stderr_text();
    sim.shutdown().await;
    let misses = traffic_failures(&plan.1)?;
    if !misses.is_empty() {
        played.steps.push(StepResult {
            command: "http",
            duration: Duration::ZERO,
            failures: misses,
            stderr: String::new(),
        });
    }
    // What the extension wrote, beside the first failure.
    if let Some(step) = played.steps.iter_mut().find(|s| !s.failures.is_empty()) {
        step.stderr = stderr;
    }
    Ok(played)
}

/// A simulated azd serving the recorded environment and answers, and the
/// extension started under it in the session a step plays in
/// ([`Launch::session`]), with the replay plan of the HTTP traffic; the
/// registered provider's handle.
async fn start(
    provider: &Path,
    conversation: &Conversation,
    project: &Path,
    plan: &Path,
    launch: &Launch,
) -> anyhow::Result<(SimAzd, ExtensionProcess, ProviderHandle)> {
    let mut vars = EnvOverlay::default();
    vars.remove(azd_wasm_host_core::settings::RECORD)
        .set(azd_wasm_host_core::settings::TRAFFIC, plan);
    let session = launch.session(vars);
    let environment = conversation.environment();
    let sim = SimAzd::start(SimOptions {
        environment: environment.clone(),
        prompter: Arc::new(Replies::of(&conversation.lines)),
        contract: azd_wasm_host_runner::contract_from(&session.env).map_err(anyhow::Error::msg)?,
        ..SimOptions::default()
    })
    .await?;
    let extension = azd_wasm_host_runner::Extension {
        manifest: provider,
        project,
        environment: environment.as_ref().map(|e| e.name.as_str()),
        provider: &conversation.provider,
    };
    let (process, handle) = session.start_extension(&sim, &extension, |_| {}).await?;
    Ok((sim, process, handle))
}

/// The project path the recording's first Initialize carried.
fn recorded_project(requests: &[pb::ProvisioningMessage]) -> String {
    requests
        .iter()
        .find_map(|m| match &m.message_type {
            Some(MessageType::InitializeRequest(r)) => Some(r.project_path.clone()),
            _ => None,
        })
        .unwrap_or_default()
}

/// Sends one of azd's requests and compares what came back with the
/// recording; the step, the request's id and the messages sent for it.
async fn replay_one(
    handle: &ProviderHandle,
    mut request: pb::ProvisioningMessage,
    (want_progress, want_answer): Recorded,
    (recorded_path, project): (&str, &Path),
) -> (StepResult, String, Vec<pb::ProvisioningMessage>) {
    let started = Instant::now();
    let kind = RequestKind::of(&request).map_or("request", RequestKind::name);
    let id = request.request_id.clone();
    if let Some(MessageType::InitializeRequest(r)) = &mut request.message_type {
        r.project_path = project.to_string_lossy().into_owned();
    }
    let mut step = StepResult {
        command: kind,
        duration: Duration::ZERO,
        failures: Vec::new(),
        stderr: String::new(),
    };
    let mut sent = Vec::new();
    match handle.send_bytes(&id, request.encode_to_vec().into()).await {
        Ok(exchange) => {
            let project_text = project.to_string_lossy();
            let got_progress: Vec<String> = exchange
                .progress
                .iter()
                .map(|p| p.message.replace(project_text.as_ref(), recorded_path))
                .collect();
            if got_progress != want_progress {
                step.failures.push(format!(
                    "{CHANGED}progress: recorded {want_progress:?}, now {got_progress:?}"
                ));
            }
            let mut answer = exchange.answer;
            record::redact(&mut answer);
            let now = render(&answer).replace(project_text.as_ref(), recorded_path);
            let then = want_answer.as_ref().map(render).unwrap_or_default();
            if now != then {
                step.failures
                    .push(format!("{CHANGED}answer:\n{}", line_diff(&then, &now)));
            }
            sent.extend(
                exchange
                    .progress
                    .into_iter()
                    .map(|p| pb::ProvisioningMessage {
                        request_id: id.clone(),
                        message_type: Some(MessageType::ProgressMessage(p)),
                        ..Default::default()
                    }),
            );
            sent.push(answer);
        }
        Err(e) => step.failures.push(format!("no answer: {e}")),
    }
    step.duration = started.elapsed();
    (step, id, sent)
}

/// An envelope as text to compare and show.
fn render(msg: &pb::ProvisioningMessage) -> String {
    format!("{msg:#?}")
}

/// The lines of `then` and `now` that differ (`-` recorded, `+` now), with
/// the line before each run of changes for context.
fn line_diff(then: &str, now: &str) -> String {
    let a: Vec<&str> = then.lines().collect();
    let b: Vec<&str> = now.lines().collect();
    // Longest common subsequence, from the end.
    let mut lcs = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j, mut out) = (0, 0, Vec::new());
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            i += 1;
            j += 1;
        } else if j < b.len() && (i == a.len() || lcs[i][j + 1] >= lcs[i + 1][j]) {
            out.push(format!("    + {}", b[j].trim()));
            j += 1;
        } else {
            out.push(format!("    - {}", a[i].trim()));
            i += 1;
        }
    }
    out.join("\n")
}

/// The replay plan of the provider's HTTP traffic (none recorded: none
/// allowed), written into `dir`; its path and its log's.
fn write_plan(dir: &Path, conversation: &Conversation) -> anyhow::Result<(PathBuf, PathBuf)> {
    let (plan_path, log) = (dir.join("traffic.json"), dir.join("traffic.jsonl"));
    let mut plan = TrafficPlan {
        mode: TrafficMode::Replay,
        log: log.clone(),
        exchanges: Vec::new(),
        tokens: Vec::new(),
        faults: Vec::new(),
        safe: Vec::new(),
    };
    for event in &conversation.traffic {
        match event {
            LogEvent::Recorded { exchange } => plan.exchanges.push(exchange.clone()),
            LogEvent::Token { scope } if !plan.tokens.contains(scope) => {
                plan.tokens.push(scope.clone())
            }
            _ => {}
        }
    }
    std::fs::write(&plan_path, serde_json::to_vec(&plan)?)?;
    Ok((plan_path, log))
}

/// Requests and tokens the replay did not hold.
fn traffic_failures(log: &Path) -> anyhow::Result<Vec<String>> {
    Ok(read_log(log)?
        .into_iter()
        .filter_map(|e| match e {
            LogEvent::Missed { miss } => Some(format!("replay: {miss}")),
            LogEvent::TokenMissed { scope } => {
                Some(format!("replay: a token for {scope} was not recorded"))
            }
            _ => None,
        })
        .collect())
}

/// Writes the conversation again with the answers of this build. The
/// project path in its Initialize becomes this replay's, the path those
/// answers name (a replay puts its own project in its place).
fn rewrite(file: &Path, conversation: &Conversation, played: &Played) -> anyhow::Result<()> {
    let answers = played.answers.as_slice();
    let mut out = Vec::new();
    for line in &conversation.lines {
        if let Some(Ok(mut msg)) = line.envelope()
            && let Some(MessageType::InitializeRequest(r)) = &mut msg.message_type
        {
            played.project.clone_into(&mut r.project_path);
            out.push(serde_json::to_string(&Line::azd(&msg))?);
            if let Some((_, sent)) = answers.iter().find(|(a, _)| *a == msg.request_id) {
                for m in sent {
                    out.push(serde_json::to_string(&Line::host(m))?);
                }
            }
            continue;
        }
        if matches!(line, Line::Host { .. }) && !answered(line, answers) {
            out.push(serde_json::to_string(line)?);
            continue;
        }
        if matches!(line, Line::Host { .. }) {
            continue;
        }
        out.push(serde_json::to_string(line)?);
        if let Line::Azd { id, .. } = line
            && let Some((_, sent)) = answers.iter().find(|(a, _)| a == id)
        {
            for msg in sent {
                out.push(serde_json::to_string(&Line::host(msg))?);
            }
        }
    }
    out.extend(conversation.traffic_text.iter().cloned());
    let mut text = out.join("\n");
    text.push('\n');
    std::fs::write(file, text).with_context(|| format!("writing {}", file.display()))
}

/// Whether `line` (a host line) belongs to a request this replay answered.
fn answered(line: &Line, answers: &[(String, Vec<pb::ProvisioningMessage>)]) -> bool {
    matches!(line, Line::Host { id, .. } if answers.iter().any(|(a, _)| a == id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_diff_shows_only_the_lines_that_changed() {
        let then = "A {\n    x: 1,\n    y: \"a\",\n}";
        let now = "A {\n    x: 1,\n    y: \"b\",\n    z: 2,\n}";
        assert_eq!(
            line_diff(then, now),
            "    + y: \"b\",\n    + z: 2,\n    - y: \"a\","
        );
        assert_eq!(line_diff(then, then), "");
    }
}
