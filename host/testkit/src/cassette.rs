//! A test's recorded traffic: the cassette file beside it, and what each
//! step's `listen` is told and reports back.
//!
//! A cassette (`tests/cassettes/<test file's name>.json` unless the test
//! names one with `cassette = "…"`) holds, per step, the HTTP exchanges the
//! provider made and the token scopes it asked for, credentials redacted.
//! - `test` replays a test that has a cassette: each step gets its part,
//!   nothing goes out, and the step fails if the provider asks something the
//!   cassette does not hold (with the nearest recorded request and the
//!   difference), or leaves recorded requests unasked.
//! - `test --record` runs against the real services and writes the cassette,
//!   only when every step passed.
//! - `test --live` ignores cassettes.
//!
//! Faults (`[[step.fault.http]]`) apply in every mode, and a fault no request
//! met fails the step: the test meant to show what the provider does then.
//!
//! Each step's `listen` reads its plan from `AZD_WASM_HOST_TRAFFIC` and
//! appends what happened to a log (`azd_wasm_host_recorder::traffic`).

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use azd_wasm_host_recorder::traffic::{
    Exchange, HttpFault, LogEvent, TrafficMode, TrafficPlan, read_log,
};
use serde::{Deserialize, Serialize};

/// The version of the cassette format this binary writes and reads.
const FORMAT: u32 = 1;

/// A cassette file.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Cassette {
    #[serde(rename = "azd-wasm-host-cassette")]
    format: u32,
    /// The test it was recorded for.
    test: String,
    steps: Vec<CassetteStep>,
}

/// What one step exchanged.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct CassetteStep {
    /// The step's number (from 1) and command, for a reader.
    step: usize,
    command: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    tokens: Vec<String>,
    #[serde(default)]
    exchanges: Vec<Exchange>,
    /// Exchanges that could not be kept safely (`exchange N (METHOD URL):
    /// why`): any refuses the recording. Never written.
    #[serde(skip)]
    refused: Vec<String>,
}

/// How a test's traffic runs.
#[derive(Debug, Clone)]
pub(super) enum Mode {
    /// Against the real services (no cassette, or `--live`).
    Live,
    /// Against the real services, writing the cassette at this path.
    Record(PathBuf),
    /// From this cassette.
    Replay(PathBuf, Cassette),
}

/// Where the cassette of the test file `file` lives.
pub(super) fn path_for(file: &Path, named: Option<&Path>) -> PathBuf {
    let base = file.parent().unwrap_or(Path::new("."));
    match named {
        Some(p) => base.join(p),
        None => {
            let name = file.file_name().unwrap_or_default().to_string_lossy();
            let stem = name.strip_suffix(".test.toml").unwrap_or(&name);
            base.join("cassettes").join(format!("{stem}.json"))
        }
    }
}

/// The mode of a test whose cassette is at `path`: `record` and `live` as
/// asked, else replay when the cassette exists.
pub(super) fn mode(path: PathBuf, record: bool, live: bool) -> anyhow::Result<Mode> {
    if record {
        return Ok(Mode::Record(path));
    }
    if live || !path.is_file() {
        return Ok(Mode::Live);
    }
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let cassette: Cassette = serde_json::from_str(&text)
        .with_context(|| format!("{} is not a cassette", path.display()))?;
    anyhow::ensure!(
        cassette.format == FORMAT,
        "{}: cassette format {} (this binary reads {FORMAT}); record it again with `test --record`",
        path.display(),
        cassette.format
    );
    Ok(Mode::Replay(path, cassette))
}

/// The files one step's traffic uses.
pub(super) struct StepTraffic {
    pub(super) plan: PathBuf,
    log: PathBuf,
    mode: TrafficMode,
    /// Replay: how many exchanges the cassette holds for this step.
    recorded: Vec<String>,
    faults: Vec<HttpFault>,
}

/// Writes step `number`'s plan into `dir`; `None` when the step runs live
/// with no fault (then `listen` is told nothing). `safe` is what the test
/// file marks safe, which a recording's exchanges are judged by.
pub(super) fn plan_step(
    mode: &Mode,
    number: usize,
    faults: &[HttpFault],
    safe: &[String],
    dir: &Path,
) -> anyhow::Result<Option<StepTraffic>> {
    let (traffic_mode, step) = match mode {
        Mode::Live if faults.is_empty() => return Ok(None),
        Mode::Live => (TrafficMode::Live, CassetteStep::default()),
        Mode::Record(_) => (TrafficMode::Record, CassetteStep::default()),
        Mode::Replay(_, cassette) => (
            TrafficMode::Replay,
            cassette
                .steps
                .iter()
                .find(|s| s.step == number)
                .cloned()
                .unwrap_or_default(),
        ),
    };
    let log = dir.join(format!("step-{number}.traffic.jsonl"));
    let plan = TrafficPlan {
        mode: traffic_mode,
        log: log.clone(),
        exchanges: step.exchanges.clone(),
        tokens: step.tokens,
        faults: faults.to_vec(),
        safe: safe.to_vec(),
    };
    let path = dir.join(format!("step-{number}.traffic.json"));
    std::fs::write(&path, serde_json::to_vec(&plan)?)?;
    Ok(Some(StepTraffic {
        plan: path,
        log,
        mode: traffic_mode,
        recorded: step.exchanges.iter().map(|e| e.request.line()).collect(),
        faults: faults.to_vec(),
    }))
}

impl StepTraffic {
    /// What the step's log says: the ways the traffic went wrong (a request
    /// or token not recorded, a recorded request not made, a fault never
    /// met), and, when recording, the step as the cassette keeps it.
    pub(super) fn finish(
        &self,
        number: usize,
        command: &str,
    ) -> anyhow::Result<(Vec<String>, CassetteStep)> {
        let events = read_log(&self.log)?;
        let mut failures = Vec::new();
        let mut recorded = CassetteStep {
            step: number,
            command: command.to_owned(),
            ..CassetteStep::default()
        };
        let mut served = vec![false; self.recorded.len()];
        let mut met = vec![false; self.faults.len()];
        for event in events {
            match event {
                LogEvent::Recorded { exchange } => recorded.exchanges.push(exchange),
                LogEvent::Refused { request, why } => {
                    let n = recorded.exchanges.len() + recorded.refused.len() + 1;
                    recorded
                        .refused
                        .push(format!("exchange {n} ({request}): {why}"));
                }
                LogEvent::Token { scope } => {
                    if !recorded.tokens.contains(&scope) {
                        recorded.tokens.push(scope);
                    }
                }
                LogEvent::Served { index } => {
                    if let Some(s) = served.get_mut(index) {
                        *s = true;
                    }
                }
                LogEvent::Missed { miss } => failures.push(format!("replay: {miss}")),
                LogEvent::TokenMissed { scope } => failures.push(format!(
                    "replay: a token for {scope} was asked, which the recording never asked for"
                )),
                LogEvent::Faulted { fault, .. } => {
                    if let Some(m) = met.get_mut(fault) {
                        *m = true;
                    }
                }
            }
        }
        failures.extend(self.left_over(&served, &met));
        Ok((failures, recorded))
    }

    /// What the step left undone: recorded requests not made again (replay)
    /// and faults no request met.
    fn left_over(&self, served: &[bool], met: &[bool]) -> Vec<String> {
        let mut failures = Vec::new();
        if self.mode == TrafficMode::Replay {
            let unasked: Vec<&String> = self
                .recorded
                .iter()
                .zip(served)
                .filter(|(_, s)| !**s)
                .map(|(r, _)| r)
                .collect();
            if let Some(first) = unasked.first() {
                failures.push(format!(
                    "replay: {} recorded request(s) were not made this time, the first: {first}",
                    unasked.len()
                ));
            }
        }
        for (fault, _) in self.faults.iter().zip(met).filter(|(_, m)| !**m) {
            failures.push(format!(
                "fault {} met no request: the provider sent none that it takes",
                fault.describe()
            ));
        }
        failures
    }
}

/// What became of a test's traffic, in words, and a failure when a recording
/// was refused: a recording is written only when every step passed and
/// nothing in it still looks like a credential (unless `safe` holds it).
pub(super) fn settle(
    mode: &Mode,
    test: &str,
    passed: bool,
    recorded: Vec<CassetteStep>,
    safe: &[String],
) -> (String, Option<String>) {
    match mode {
        Mode::Live => ("live".into(), None),
        Mode::Replay(path, _) => (format!("replayed from {}", path.display()), None),
        Mode::Record(path) if passed => {
            let cassette = Cassette::new(test, recorded);
            if let Some(why) = cassette.refused() {
                let refused = format!(
                    "recording refused: {why}; nothing was written to {}",
                    path.display()
                );
                return (format!("not recorded: {why}"), Some(refused));
            }
            if let Some(why) = cassette.credential(safe) {
                let refused = format!(
                    "recording refused: {why}; nothing was written to {}. Redact it in the \
                     provider's requests, or, if it is no secret, add it to the test file: \
                     safe = [\"…\"]",
                    path.display()
                );
                return (format!("not recorded: {why}"), Some(refused));
            }
            match cassette.write(path) {
                Ok(()) => (
                    format!(
                        "recorded {} exchange(s) into {}",
                        cassette.exchanges(),
                        path.display()
                    ),
                    None,
                ),
                Err(e) => (format!("not recorded: {e:#}"), None),
            }
        }
        Mode::Record(path) => (
            format!(
                "not recorded: a step failed, so {} is left as it was",
                path.display()
            ),
            None,
        ),
    }
}

impl Cassette {
    /// A cassette of `steps`, recorded for `test`.
    pub(super) fn new(test: &str, steps: Vec<CassetteStep>) -> Self {
        Self {
            format: FORMAT,
            test: test.to_owned(),
            steps,
        }
    }

    /// Writes the cassette (pretty, so a review reads what changed), readable
    /// by its owner only, whole or not at all.
    pub(super) fn write(&self, path: &Path) -> anyhow::Result<()> {
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        std::fs::create_dir_all(dir)?;
        let mut text = serde_json::to_string_pretty(self)?;
        text.push('\n');
        // tempfile makes its files 0600; renamed into place, it keeps that mode.
        let mut aside = tempfile::NamedTempFile::new_in(dir)
            .with_context(|| format!("writing {}", path.display()))?;
        std::io::Write::write_all(&mut aside, text.as_bytes())?;
        aside
            .persist(path)
            .map_err(|e| e.error)
            .with_context(|| format!("writing {}", path.display()))?;
        Ok(())
    }

    /// The first exchange the recording could not keep safely, named by
    /// its step.
    fn refused(&self) -> Option<String> {
        self.steps.iter().find_map(|step| {
            let first = step.refused.first()?;
            Some(format!("step {} ({}), {first}", step.step, step.command))
        })
    }

    /// The first thing in the cassette that still looks like a credential
    /// and is not one of `safe`, named by its place (a body that is not text
    /// read as lossy text).
    fn credential(&self, safe: &[String]) -> Option<String> {
        for step in &self.steps {
            for (n, exchange) in step.exchanges.iter().enumerate() {
                let request = &exchange.request;
                let response = &exchange.response;
                let mut places: Vec<(String, &str)> = vec![("request URI".into(), &request.uri)];
                let binary = [&request.body, &response.body].map(|b| match &b.body {
                    Some(_) => String::new(),
                    None => String::from_utf8_lossy(&b.bytes().unwrap_or_default()).into_owned(),
                });
                let sides = [
                    ("request", &request.headers, &request.body.body, &binary[0]),
                    (
                        "response",
                        &response.headers,
                        &response.body.body,
                        &binary[1],
                    ),
                ];
                for (side, headers, body, binary) in sides {
                    for (name, value) in headers {
                        places.push((format!("{side} header {name}"), value));
                    }
                    let body = body.as_deref().unwrap_or(binary);
                    places.push((format!("{side} body"), body));
                }
                for (place, text) in places {
                    if let Some(f) = azd_wasm_host_core::secrets::find_unsafe_credential(text, safe)
                    {
                        // Without its query, which may be where it is.
                        let path = request.uri.split('?').next().unwrap_or_default();
                        return Some(format!(
                            "step {} ({}), exchange {} ({} {path}): the {place} holds what looks like {}",
                            step.step,
                            step.command,
                            n + 1,
                            request.method,
                            f.shown()
                        ));
                    }
                }
            }
        }
        None
    }

    /// How many exchanges it holds.
    pub(super) fn exchanges(&self) -> usize {
        self.steps.iter().map(|s| s.exchanges.len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use azd_wasm_host_recorder::traffic::{RecordedBody, RecordedRequest, RecordedResponse};

    fn exchange(uri: &str) -> Exchange {
        Exchange {
            request: RecordedRequest {
                method: "GET".into(),
                uri: uri.into(),
                headers: vec![],
                body: RecordedBody::default(),
            },
            response: RecordedResponse {
                status: 200,
                headers: vec![],
                body: RecordedBody::default(),
            },
        }
    }

    fn log(dir: &Path, number: usize, events: &[LogEvent]) {
        let lines: Vec<String> = events
            .iter()
            .map(|e| serde_json::to_string(e).unwrap())
            .collect();
        std::fs::write(
            dir.join(format!("step-{number}.traffic.jsonl")),
            lines.join("\n"),
        )
        .unwrap();
    }

    #[test]
    fn a_cassette_is_found_beside_its_test_and_replayed_when_it_exists() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("tests/storage.test.toml");
        let path = path_for(&file, None);
        assert_eq!(path, dir.path().join("tests/cassettes/storage.json"));
        assert_eq!(
            path_for(&file, Some(Path::new("rec.json"))),
            dir.path().join("tests/rec.json")
        );
        assert!(matches!(
            mode(path.clone(), false, false).unwrap(),
            Mode::Live
        ));
        Cassette::new("storage", vec![]).write(&path).unwrap();
        assert!(matches!(
            mode(path.clone(), false, false).unwrap(),
            Mode::Replay(..)
        ));
        assert!(matches!(
            mode(path.clone(), false, true).unwrap(),
            Mode::Live
        ));
        assert!(matches!(
            mode(path.clone(), true, false).unwrap(),
            Mode::Record(_)
        ));
        std::fs::write(
            &path,
            "{\"azd-wasm-host-cassette\": 9, \"test\": \"t\", \"steps\": []}",
        )
        .unwrap();
        let e = mode(path, false, false).unwrap_err();
        assert!(format!("{e:#}").contains("record it again"), "{e:#}");
    }

    #[test]
    fn replay_reports_misses_unasked_requests_and_faults_never_met() {
        let dir = tempfile::tempdir().unwrap();
        let cassette = Cassette {
            format: FORMAT,
            test: "t".into(),
            steps: vec![CassetteStep {
                step: 1,
                command: "provision".into(),
                tokens: vec![],
                exchanges: vec![exchange("http://h/a"), exchange("http://h/b")],
                refused: vec![],
            }],
        };
        let fault: HttpFault =
            toml::from_str("origin = \"http://127.0.0.1:1\"\nstatus = 403").unwrap();
        let mode = Mode::Replay(dir.path().join("c.json"), cassette);
        let step = plan_step(&mode, 1, std::slice::from_ref(&fault), &[], dir.path())
            .unwrap()
            .unwrap();
        let plan: TrafficPlan =
            serde_json::from_slice(&std::fs::read(&step.plan).unwrap()).unwrap();
        assert_eq!(plan.exchanges.len(), 2);
        log(dir.path(), 1, &[LogEvent::Served { index: 0 }]);
        let (failures, _) = step.finish(1, "provision").unwrap();
        assert_eq!(failures.len(), 2, "{failures:?}");
        assert!(
            failures[0].contains(
                "1 recorded request(s) were not made this time, the first: GET http://h/b"
            )
        );
        assert!(failures[1].contains("met no request"));
        // Step 2 holds nothing: a request there is a miss.
        let step2 = plan_step(&mode, 2, &[], &[], dir.path()).unwrap().unwrap();
        assert!(step2.finish(2, "state").unwrap().0.is_empty());
        assert!(
            plan_step(&Mode::Live, 3, &[], &[], dir.path())
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn the_examples_cassettes_hold_nothing_that_looks_like_a_credential() {
        let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
        let mut read = 0;
        for example in std::fs::read_dir(&examples).unwrap() {
            let dir = example.unwrap().path().join("tests/cassettes");
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries {
                let path = entry.unwrap().path();
                let text = std::fs::read_to_string(&path).unwrap();
                let cassette: Cassette = serde_json::from_str(&text).unwrap();
                assert_eq!(cassette.credential(&[]), None, "{}", path.display());
                read += 1;
            }
        }
        assert!(read > 0, "no cassette under {}", examples.display());
    }

    #[test]
    fn a_recording_that_still_holds_a_credential_is_refused_unless_marked_safe() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.json");
        let mut leaky = exchange("http://h/a?x=1");
        let key = "9fK2pQ7zR4mW8vL1sT6yB3nH5cJ0dG2aE8uX";
        leaky.response.body = RecordedBody::of(format!("{{\"blob\":\"{key}\"}}").as_bytes());
        let step = CassetteStep {
            step: 2,
            command: "provision".into(),
            tokens: vec![],
            exchanges: vec![exchange("http://h/ok"), leaky],
            refused: vec![],
        };
        let mode = Mode::Record(path.clone());
        let (said, refused) = settle(&mode, "t", true, vec![step.clone()], &[]);
        let refused = refused.unwrap();
        assert!(
            refused.contains(
                "step 2 (provision), exchange 2 (GET http://h/a): the response body holds what \
                 looks like a high-entropy string (9fK2…, 36 characters)"
            ),
            "{refused}"
        );
        assert!(!refused.contains(key) && !said.contains(key), "{refused}");
        assert!(!path.exists(), "a refused recording was written");
        let (said, refused) = settle(&mode, "t", true, vec![step], &[key.to_owned()]);
        assert_eq!(refused, None, "{said}");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600, "the cassette is readable by others");
        }
    }

    #[test]
    fn recording_gathers_exchanges_and_scopes_once_each() {
        let dir = tempfile::tempdir().unwrap();
        let mode = Mode::Record(dir.path().join("c.json"));
        let step = plan_step(&mode, 1, &[], &[], dir.path()).unwrap().unwrap();
        log(
            dir.path(),
            1,
            &[
                LogEvent::Token { scope: "s".into() },
                LogEvent::Recorded {
                    exchange: exchange("http://h/a"),
                },
                LogEvent::Token { scope: "s".into() },
            ],
        );
        let (failures, recorded) = step.finish(1, "provision").unwrap();
        assert!(failures.is_empty());
        assert_eq!(recorded.tokens, vec!["s".to_owned()]);
        assert_eq!(recorded.exchanges.len(), 1);
        let c = Cassette::new("t", vec![recorded]);
        assert_eq!(c.exchanges(), 1);
    }

    /// A `listKeys` answer as ARM sends it to a client that asks for gzip.
    const KEY1: &str =
        "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
    const KEY2: &str =
        "Zm9vYmFyYmF6cXV4Q29ycmVjdEhvcnNlQmF0dGVyeVN0YXBsZTEyMzQ1Njc4OTBhYmNkZWZnaGlqa2xtbm9wcQ==";

    fn gzip(data: &[u8]) -> Vec<u8> {
        use std::io::Write as _;
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    fn body(bytes: Vec<u8>) -> wasmtime_wasi_http::WasiBody {
        use http_body_util::BodyExt as _;
        http_body_util::Full::new(bytes::Bytes::from(bytes))
            .map_err(|never: std::convert::Infallible| match never {})
            .boxed_unsync()
    }

    /// Step 1 of a test recorded into `dir`: one request through the
    /// recorder (as `listen` sends it), the service answering `answer` with
    /// `headers`; what `settle` says, and the step's log as written.
    async fn record_one(
        dir: &Path,
        safe: &[String],
        known: &str,
        headers: &[(&str, &str)],
        answer: Vec<u8>,
    ) -> (String, Option<String>, Vec<u8>) {
        use azd_wasm_host_runtime::{Intercept as _, Io, Live};
        let mode = Mode::Record(dir.join("tests/cassettes/keys.json"));
        let step = plan_step(&mode, 1, &[], safe, dir).unwrap().unwrap();
        let traffic = azd_wasm_host_recorder::traffic::Traffic::open(&step.plan).unwrap();
        traffic.keep_secret(known);
        let mut response = http::Response::builder().status(200);
        for (name, value) in headers {
            response = response.header(*name, *value);
        }
        let response = response.body(body(answer)).unwrap();
        let live: Live = Box::new(move |_| {
            let io: Io = Box::new(async { Ok(()) });
            Box::pin(async move { Ok((response, io)) })
        });
        let request = http::Request::post(
            "https://management.azure.com/subscriptions/s/storageAccounts/a/listKeys?api-version=2023-01-01",
        )
        .header("accept-encoding", "gzip, deflate")
        .body(body(Vec::new()))
        .unwrap();
        let (response, _) = traffic.send(request, 1 << 20, live).await.unwrap();
        drop(response);
        let log = std::fs::read(dir.join("step-1.traffic.jsonl")).unwrap();
        let (failures, recorded) = step.finish(1, "provision").unwrap();
        assert!(failures.is_empty(), "{failures:?}");
        let (said, refused) = settle(&mode, "keys", true, vec![recorded], safe);
        (said, refused, log)
    }

    /// Whether `bytes` hold a key in a form a reader could use.
    fn holds_a_key(bytes: &[u8]) -> bool {
        use base64::Engine as _;
        let text = String::from_utf8_lossy(bytes);
        [KEY1, KEY2].iter().any(|key| {
            let b64 = base64::engine::general_purpose::STANDARD.encode(key);
            text.contains(key) || text.contains(&key[..40]) || text.contains(&b64[8..b64.len() - 8])
        })
    }

    #[tokio::test]
    async fn a_gzip_list_keys_answer_reaches_the_cassette_decoded_and_without_its_keys() {
        let dir = tempfile::tempdir().unwrap();
        let keys = format!(
            r#"{{"keys":[{{"keyName":"key1","value":"{KEY1}","permissions":"FULL"}},{{"keyName":"key2","value":"{KEY2}","permissions":"FULL"}}]}}"#
        );
        let headers = [
            ("content-type", "application/json"),
            ("content-encoding", "gzip"),
        ];
        let (said, refused, log) = record_one(
            dir.path(),
            &[],
            "unused-known-value",
            &headers,
            gzip(keys.as_bytes()),
        )
        .await;
        assert_eq!(refused, None, "{said}");
        assert!(!holds_a_key(&log), "the step's log holds a key");
        let file = std::fs::read(dir.path().join("tests/cassettes/keys.json")).unwrap();
        assert!(!holds_a_key(&file), "{}", String::from_utf8_lossy(&file));
        let cassette: Cassette = serde_json::from_slice(&file).unwrap();
        let response = &cassette.steps[0].exchanges[0].response;
        // What a reader gets from the stored body, gunzipped where it would be.
        let stored = response.body.bytes().unwrap();
        let mut gunzipped = Vec::new();
        let _ = std::io::Read::read_to_end(
            &mut flate2::read::GzDecoder::new(stored.as_ref()),
            &mut gunzipped,
        );
        assert!(
            !holds_a_key(&stored) && !holds_a_key(&gunzipped),
            "the stored body holds a key"
        );
        let doc: serde_json::Value =
            serde_json::from_str(response.body.body.as_deref().unwrap()).unwrap();
        assert_eq!(doc["keys"][1]["keyName"], "key2");
        assert_eq!(doc["keys"][0]["value"], "REDACTED");
        assert!(
            !response
                .headers
                .iter()
                .any(|(n, _)| n == "content-encoding")
        );
    }

    #[tokio::test]
    async fn json_a_strict_parser_refuses_never_reaches_the_cassette_with_its_keys() {
        // Cognitive Services keys: 32 hex digits.
        let hex1 = "9f86d081884c7d659a2feaa0c55ad015";
        let hex2 = "5f2b1c0e8a9d4e3f7a6b5c4d3e2f1a0b";
        let keys = format!(
            r#"{{"keys":[{{"keyName":"key1","value":"{KEY1}","permissions":"FULL"}},{{"keyName":"key2","value":"{KEY2}","permissions":"FULL"}}]}}"#
        );
        let cognitive = format!(r#"{{"key1":"{hex1}","key2":"{hex2}"}}"#);
        let deep = format!("{}{keys}{}", "[".repeat(50_000), "]".repeat(50_000));
        // A BOM, JSON lines, nesting past any recursive parser, sent in a transfer coding.
        let body = format!("\u{feff}{keys}\n{cognitive}\r\n{deep}\n");
        let headers = [
            ("content-type", "application/x-ndjson"),
            ("transfer-encoding", "gzip, chunked"),
        ];
        let dir = tempfile::tempdir().unwrap();
        let (said, refused, log) = record_one(
            dir.path(),
            &[],
            "unused-known-value",
            &headers,
            gzip(body.as_bytes()),
        )
        .await;
        assert_eq!(refused, None, "{said}");
        let file = std::fs::read(dir.path().join("tests/cassettes/keys.json")).unwrap();
        for bytes in [&log, &file] {
            let text = String::from_utf8_lossy(bytes);
            assert!(!holds_a_key(bytes), "{}", &text[..text.len().min(2000)]);
            assert!(!text.contains(hex1) && !text.contains(hex2), "{text:.2000}");
        }
        let cassette: Cassette = serde_json::from_slice(&file).unwrap();
        let stored = cassette.steps[0].exchanges[0]
            .response
            .body
            .body
            .clone()
            .unwrap();
        let lines: Vec<&str> = stored.lines().collect();
        assert_eq!(lines.len(), 3);
        let first: serde_json::Value =
            serde_json::from_str(lines[0].trim_start_matches('\u{feff}')).unwrap();
        assert_eq!(first["keys"][1]["value"], "REDACTED");
        assert_eq!(lines[1], r#"{"key1":"REDACTED","key2":"REDACTED"}"#);

        // The scan, too, knows a hex key under a secret name: a body marked
        // binary that holds one is refused.
        let mut binary = format!("\u{1}key1={hex1}\u{2}").into_bytes();
        binary.push(0xff);
        let safe = vec!["binary: POST https://management.azure.com/subscriptions/".to_owned()];
        let again = tempfile::tempdir().unwrap();
        let (_, refused, _) =
            record_one(again.path(), &safe, "unused-known-value", &[], binary).await;
        let refused = refused.unwrap();
        assert!(
            refused.contains("a hex key under a secret name") && !refused.contains(hex1),
            "{refused}"
        );
    }

    #[tokio::test]
    async fn a_body_that_is_not_text_refuses_the_cassette_unless_the_test_file_marks_it_safe() {
        let known = "granted-storage-key-0001";
        let mut answer = format!(r#"{{"keyName":"key1","value":"{known}"}}"#).into_bytes();
        answer.push(0xff);
        let dir = tempfile::tempdir().unwrap();
        let (said, refused, log) = record_one(dir.path(), &[], known, &[], answer.clone()).await;
        let refused = refused.unwrap();
        // JSON with a stray byte: not strict JSON, so no field of it was read,
        // and the refusal advises no mark that would keep it.
        assert!(
            refused.starts_with(
                "recording refused: step 1 (provision), exchange 1 (POST https://management.azure.com/subscriptions/s/storageAccounts/a/listKeys): the response body ("
            ) && refused.contains("is not strict JSON")
                && refused.contains("the recording cannot keep it")
                && !refused.contains("binary:"),
            "{refused}"
        );
        assert!(said.starts_with("not recorded"), "{said}");
        assert!(!String::from_utf8_lossy(&log).contains(known));
        let path = dir.path().join("tests/cassettes/keys.json");
        assert!(!path.exists(), "a refused recording was written");
        // Marked safe: written, the known value masked in its bytes.
        let safe = vec!["binary: POST https://management.azure.com/subscriptions/".to_owned()];
        let again = tempfile::tempdir().unwrap();
        let (said, refused, _) = record_one(again.path(), &safe, known, &[], answer).await;
        assert_eq!(refused, None, "{said}");
        let path = again.path().join("tests/cassettes/keys.json");
        let cassette: Cassette = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let kept = cassette.steps[0].exchanges[0]
            .response
            .body
            .bytes()
            .unwrap();
        let kept = String::from_utf8_lossy(&kept);
        assert!(
            kept.contains(&"*".repeat(known.len())) && !kept.contains(known),
            "{kept}"
        );
    }
}
