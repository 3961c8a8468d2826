//! Golden conversations: `listen --record FILE` writes what azd and the
//! extension say to each other, so that `azd-wasm-host test` can play azd's
//! side again against a new build and show every answer that changed.
//!
//! The file is JSON lines ([`Line`]), appended as things happen:
//! - a header (the format and the provider's name);
//! - each message azd sends on the provisioning stream, as its protobuf bytes
//!   (base64), exactly as received;
//! - each message the extension sends (progress, answers, its own requests),
//!   as protobuf bytes after [`redact`];
//! - each call the provider makes to azd's services (environment values,
//!   questions) with azd's answer, so a replay can answer the same.
//!
//! Nothing secret is written (`secrets`): secret parameter values are
//! `REDACTED` in every message that carries them (Parameters, Deploy and
//! Preview answers, outputs, the Initialize config, values set in azd's
//! environment), and so are answers to secret questions; every value known
//! to be secret is masked wherever else it appears. Environment values the
//! provider read are kept (a replay serves them) but for those named like
//! secrets: record against an environment that holds nothing you would not
//! commit. The file is the user's alone (0600); when the conversation ends
//! ([`Recorder::finish`]) it is written again without everything learned
//! secret, then scanned: one still holding what looks like a credential (not
//! in its first line's `safe` list), or an HTTP exchange the traffic refused
//! to keep (`traffic::LogEvent::Refused`: a body that does not decode, or is
//! not text and not marked `binary: METHOD URL` in that list), is removed.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use azd_wasm_host_core::ServiceError;
use azd_wasm_host_proto::azdext as pb;
use azd_wasm_host_proto::azdext::provisioning_message::MessageType;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use parking_lot::Mutex;
use prost::Message as _;
use serde::{Deserialize, Serialize};
use serde_json::Value;

mod file;
mod rewrite;
mod secrets;
pub mod services;

use secrets::Known;

/// The format of the lines this binary writes.
pub const CONVERSATION_FORMAT: u32 = 1;
/// What a secret reads as in a recording.
const REDACTED: &str = "REDACTED";

/// One line of a recorded conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "from", rename_all = "kebab-case")]
pub enum Line {
    /// The first line.
    Recording {
        /// [`CONVERSATION_FORMAT`].
        format: u32,
        /// The provider's name.
        provider: String,
        /// The azd environment azd named (`AZD_ENVIRONMENT`), if it named one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        environment: Option<String>,
        /// Strings the author marked safe: the recording may keep them
        /// though they look like credentials.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        safe: Vec<String>,
    },
    /// A message azd sent.
    Azd {
        /// Its request id.
        id: String,
        /// Its kind (`initialize_request`, …), for a reader.
        kind: String,
        /// The protobuf bytes, base64.
        message: String,
    },
    /// A message the extension sent.
    Host {
        /// Its request id.
        id: String,
        /// Its kind (`progress`, `deploy_response`, …), for a reader.
        kind: String,
        /// The protobuf bytes (redacted), base64.
        message: String,
    },
    /// A call to azd's services and azd's answer.
    Service {
        /// `current_environment`, `environment_values`, `environment_value`,
        /// `set_environment_value`, `confirm`, `prompt` or `select`.
        call: String,
        /// What was asked.
        args: Value,
        /// azd's answer (`Err`: its error message).
        answer: Result<Value, String>,
    },
}

impl Line {
    /// The envelope of an `azd` or `host` line; `None` for other lines, and
    /// an error for bytes that are not an envelope.
    pub fn envelope(&self) -> Option<Result<pb::ProvisioningMessage, String>> {
        let (Self::Azd { message, .. } | Self::Host { message, .. }) = self else {
            return None;
        };
        Some(
            STANDARD
                .decode(message)
                .map_err(|e| format!("not base64: {e}"))
                .and_then(|b| {
                    pb::ProvisioningMessage::decode(b.as_slice())
                        .map_err(|e| format!("not a provisioning message: {e}"))
                }),
        )
    }

    /// An `azd` line for `msg`.
    pub fn azd(msg: &pb::ProvisioningMessage) -> Self {
        Self::Azd {
            id: msg.request_id.clone(),
            kind: kind(msg).to_owned(),
            message: STANDARD.encode(msg.encode_to_vec()),
        }
    }

    /// A `host` line for `msg` (redacted by what it says itself, [`redact`]).
    pub fn host(msg: &pb::ProvisioningMessage) -> Self {
        let mut msg = msg.clone();
        redact(&mut msg);
        Self::Host {
            id: msg.request_id.clone(),
            kind: kind(&msg).to_owned(),
            message: STANDARD.encode(msg.encode_to_vec()),
        }
    }
}

/// Writes a conversation as it happens.
///
/// azd starts every installed extension that provides provisioning for a
/// command, and all of them inherit `AZD_WASM_HOST_RECORD`; only the provider
/// the project names gets requests. So nothing is written until azd sends
/// this extension its first request: the lines before it (the header, the
/// registration) wait in memory, and an extension azd never asks anything
/// leaves the file alone.
pub struct Recorder {
    path: PathBuf,
    sink: Mutex<Sink>,
    /// What the conversation has shown to be secret.
    known: Mutex<Known>,
    /// What the author marked safe (the previous recording's first line).
    safe: Vec<String>,
}

/// Where lines go: memory until azd's first request, then the file.
enum Sink {
    Waiting(Vec<u8>),
    Open(std::fs::File),
    /// Written for the last time ([`Recorder::finish`]).
    Finished,
}

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder")
            .field("path", &self.path)
            .finish()
    }
}

impl Recorder {
    /// Starts the recording of `provider` in the azd environment
    /// `environment`, into `path` (replaced once azd sends a request). Fails
    /// now if the file's folder does not exist.
    pub fn create(
        path: &Path,
        provider: &str,
        environment: Option<&str>,
        safe: &[String],
    ) -> std::io::Result<Arc<Self>> {
        let folder = path.parent().filter(|p| !p.as_os_str().is_empty());
        if let Some(folder) = folder
            && !folder.is_dir()
        {
            return Err(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("the folder {} does not exist", folder.display()),
            ));
        }
        // What the author marked safe: in the previous recording's first line, and `safe`.
        let safe = file::previous_safe(path, safe);
        let recorder = Arc::new(Self {
            path: path.to_owned(),
            sink: Mutex::new(Sink::Waiting(Vec::new())),
            known: Mutex::new(Known::default()),
            safe: safe.clone(),
        });
        recorder.write(&Line::Recording {
            format: CONVERSATION_FORMAT,
            provider: provider.to_owned(),
            environment: environment.map(str::to_owned),
            safe,
        });
        Ok(recorder)
    }

    /// The file written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What the author marked safe: strings the scan lets pass, and
    /// `binary: METHOD URL` marks for bodies that are not text.
    pub fn safe(&self) -> &[String] {
        &self.safe
    }

    /// A frame azd sent, as received but for its secrets (one that is not an
    /// envelope is kept too, its known secrets masked).
    fn write_azd_sent(&self, bytes: &[u8]) {
        let decoded = pb::ProvisioningMessage::decode(bytes).ok();
        if decoded
            .as_ref()
            .is_some_and(|m| azd_wasm_host_proto::RequestKind::of(m).is_some())
        {
            self.open();
        }
        let message = self.known.lock().redacted_frame(bytes, decoded.as_ref());
        self.write(&Line::Azd {
            id: decoded
                .as_ref()
                .map(|m| m.request_id.clone())
                .unwrap_or_default(),
            kind: decoded.as_ref().map_or("unreadable", kind).to_owned(),
            message: STANDARD.encode(message),
        });
    }

    /// A message the extension sends, once what it shows secret is learned.
    fn write_host_sent(&self, msg: &pb::ProvisioningMessage) {
        let mut known = self.known.lock();
        known.learn(msg);
        let mut msg = msg.clone();
        known.redact(&mut msg);
        drop(known);
        self.write(&Line::Host {
            id: msg.request_id.clone(),
            kind: kind(&msg).to_owned(),
            message: STANDARD.encode(msg.encode_to_vec()),
        });
    }

    pub(super) fn service(
        &self,
        call: &str,
        mut args: Value,
        answer: &Result<Value, ServiceError>,
    ) {
        let mut answer = answer.clone().map_err(|e| e.message.clone());
        self.known
            .lock()
            .redact_service(call, &mut args, &mut answer);
        self.write(&Line::Service {
            call: call.to_owned(),
            args,
            answer,
        });
    }

    /// A value never to write (an answer to a secret question).
    fn keep_secret(&self, value: &str) {
        self.known.lock().add(value);
    }

    /// Ends the recording: the file is written again with every secret the
    /// conversation showed taken out of every line (the provider's HTTP
    /// traffic too), then scanned. A recording that still holds what looks
    /// like a credential (and is not marked safe) is removed, the log naming
    /// the line. A recording azd never asked anything is left alone.
    pub fn finish(&self) {
        let mut sink = self.sink.lock();
        if !matches!(*sink, Sink::Open(_)) {
            return;
        }
        *sink = Sink::Finished;
        let outcome = std::fs::read_to_string(&self.path)
            .map_err(|e| format!("cannot read it again: {e}"))
            .and_then(|text| {
                let known = self.known.lock();
                rewrite::rewrite(&text, &known, &self.safe)
            })
            .and_then(|text| {
                file::replace(&self.path, &text).map_err(|e| format!("cannot write it: {e}"))
            });
        if let Err(why) = outcome {
            let _ = std::fs::remove_file(&self.path);
            tracing::error!(path = %self.path.display(), "the conversation is not kept: {why}");
        }
    }

    /// Azd asked this extension something: the file is replaced with what
    /// waited in memory, and written to from now on (appended to: the
    /// provider's HTTP traffic goes into it through a handle of its own).
    fn open(&self) {
        let mut sink = self.sink.lock();
        let Sink::Waiting(waiting) = &mut *sink else {
            return;
        };
        // Emptied, then appended to through this handle: writes at the end
        // never overwrite what the traffic's own handle appended. The user's
        // alone: 0600 when made, and made so again when it was there before.
        let opened = file::private_file(&self.path)
            .and_then(|()| std::fs::OpenOptions::new().append(true).open(&self.path))
            .and_then(|mut f| {
                f.write_all(waiting)?;
                Ok(f)
            });
        match opened {
            Ok(file) => *sink = Sink::Open(file),
            Err(e) => {
                tracing::warn!(path = %self.path.display(), "cannot write the conversation: {e}");
            }
        }
    }

    /// Appends `line`; a recording that cannot be written is said in the log
    /// (it never stops the command).
    fn write(&self, line: &Line) {
        let Ok(mut text) = serde_json::to_vec(line) else {
            return;
        };
        text.push(b'\n');
        match &mut *self.sink.lock() {
            Sink::Waiting(waiting) => waiting.extend_from_slice(&text),
            Sink::Finished => {}
            Sink::Open(file) => {
                if let Err(e) = file.write_all(&text) {
                    tracing::warn!(path = %self.path.display(), "cannot write the conversation: {e}");
                }
            }
        }
    }
}

impl azd_wasm_host_provisioning::StreamTap for Recorder {
    fn azd_sent(&self, bytes: &[u8]) {
        self.write_azd_sent(bytes);
    }

    fn host_sent(&self, msg: &pb::ProvisioningMessage) {
        self.write_host_sent(msg);
    }
}

/// The kind of an envelope, in words: a request's kind (`initialize`, …),
/// `progress`, `error`, or `answer` for the rest.
pub fn kind(msg: &pb::ProvisioningMessage) -> &'static str {
    match &msg.message_type {
        Some(MessageType::ProgressMessage(_)) => "progress",
        Some(MessageType::RegisterProvisioningProviderRequest(_)) => "register",
        Some(body) => {
            azd_wasm_host_proto::RequestKind::of_message(body).map_or("answer", |k| k.name())
        }
        None if msg.error.is_some() => "error",
        None => "empty",
    }
}

/// Takes secrets out of `msg` by what the message itself says: parameters
/// marked secret, of a secure type or named like secrets, such outputs and
/// Initialize config keys (what a replay's answers are compared after).
pub fn redact(msg: &mut pb::ProvisioningMessage) {
    Known::default().redact_fields(msg);
}

#[cfg(test)]
mod tests {
    use super::services::Recorded;
    use super::*;
    use async_trait::async_trait;
    use azd_wasm_host_core::{AzdServices, ConfirmQuestion, SelectQuestion, TextQuestion};
    use azd_wasm_host_provisioning::StreamTap as _;
    use serde_json::json;

    fn parameters(secret: bool) -> pb::ProvisioningMessage {
        pb::ProvisioningMessage {
            request_id: "r1".into(),
            message_type: Some(MessageType::ParametersResponse(
                pb::ProvisioningParametersResponse {
                    parameters: vec![pb::ProvisioningParameter {
                        name: "password".into(),
                        secret,
                        value: "hunter22".into(),
                        ..Default::default()
                    }],
                },
            )),
            ..Default::default()
        }
    }

    /// azd's State request, as bytes on the wire.
    fn request() -> Vec<u8> {
        pb::ProvisioningMessage {
            request_id: "r0".into(),
            message_type: Some(MessageType::StateRequest(
                pb::ProvisioningStateRequest::default(),
            )),
            ..Default::default()
        }
        .encode_to_vec()
    }

    #[test]
    fn nothing_is_written_until_azd_asks_this_extension_something() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.jsonl");
        std::fs::write(&path, "another extension's conversation\n").unwrap();
        let recorder = Recorder::create(&path, "p", None, &[]).unwrap();
        recorder.host_sent(&parameters(false)); // e.g. the registration
        recorder.azd_sent(b"");
        let kept = std::fs::read_to_string(&path).unwrap();
        assert_eq!(kept, "another extension's conversation\n");
        recorder.azd_sent(&request());
        let text = std::fs::read_to_string(&path).unwrap();
        let kinds: Vec<String> = text
            .lines()
            .map(|l| serde_json::from_value::<Value>(serde_json::from_str(l).unwrap()).unwrap())
            .map(|v| v["from"].as_str().unwrap_or_default().to_owned())
            .collect();
        assert_eq!(kinds, ["recording", "host", "azd", "azd"], "{text}");
        // The HTTP traffic appends through a handle of its own: neither overwrites the other.
        let mut traffic = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        traffic
            .write_all(b"{\"event\":\"token\",\"scope\":\"s\"}\n")
            .unwrap();
        recorder.host_sent(&parameters(false));
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 6, "{text}");
        assert_eq!(lines[4]["event"], "token");
        assert_eq!(lines[5]["from"], "host");
        let missing = dir.path().join("nowhere/c.jsonl");
        let e = Recorder::create(&missing, "p", None, &[]).unwrap_err();
        assert!(e.to_string().contains("does not exist"), "{e}");
    }

    #[test]
    fn secret_parameter_values_never_reach_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.jsonl");
        let recorder = Recorder::create(&path, "p", Some("dev"), &[]).unwrap();
        recorder.azd_sent(&request());
        recorder.host_sent(&parameters(true));
        let mut plain = parameters(false);
        if let Some(MessageType::ParametersResponse(r)) = &mut plain.message_type {
            "region".clone_into(&mut r.parameters[0].name);
            "westus".clone_into(&mut r.parameters[0].value);
        }
        recorder.host_sent(&plain);
        recorder.azd_sent(b"\xff\xff not protobuf hunter22");
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<Line> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert!(
            matches!(&lines[0], Line::Recording { provider, environment: Some(e), .. } if provider == "p" && e == "dev")
        );
        let secret = lines[2].envelope().unwrap().unwrap();
        let Some(MessageType::ParametersResponse(r)) = secret.message_type else {
            panic!()
        };
        assert_eq!(r.parameters[0].value, REDACTED);
        let plain = lines[3].envelope().unwrap().unwrap();
        let Some(MessageType::ParametersResponse(r)) = plain.message_type else {
            panic!()
        };
        assert_eq!(r.parameters[0].value, "westus");
        assert!(matches!(&lines[4], Line::Azd { kind, .. } if kind == "unreadable"));
        assert!(lines[4].envelope().unwrap().is_err());
        // The secret is masked even in bytes that are not a message.
        let Line::Azd { message, .. } = &lines[4] else {
            panic!()
        };
        let raw = STANDARD.decode(message).unwrap();
        assert!(raw.ends_with(b"not protobuf ********"), "{raw:?}");
        assert_eq!(
            text.matches("hunter22").count(),
            0,
            "a value is written only inside its base64 message"
        );
        // A parameter named like a secret is redacted though not marked secret.
        let mut named = parameters(false);
        if let Some(MessageType::ParametersResponse(r)) = &mut named.message_type {
            "other".clone_into(&mut r.parameters[0].value);
        }
        recorder.host_sent(&named);
        let text = std::fs::read_to_string(&path).unwrap();
        let last: Line = serde_json::from_str(text.lines().last().unwrap()).unwrap();
        let Some(MessageType::ParametersResponse(r)) =
            last.envelope().unwrap().unwrap().message_type
        else {
            panic!()
        };
        assert_eq!(
            r.parameters[0].value, REDACTED,
            "`password` is a secret by its name"
        );
    }

    struct Fixed;

    #[async_trait]
    impl AzdServices for Fixed {
        async fn current_environment(&self) -> Result<String, ServiceError> {
            Ok("dev".into())
        }
        async fn environment_values(&self, _: &str) -> Result<Vec<(String, String)>, ServiceError> {
            Ok(vec![("A".into(), "1".into())])
        }
        async fn environment_value(&self, _: &str, _: &str) -> Result<String, ServiceError> {
            Err(ServiceError::new("no such key"))
        }
        async fn set_environment_value(
            &self,
            _: &str,
            _: &str,
            _: &str,
        ) -> Result<(), ServiceError> {
            Ok(())
        }
        async fn confirm(&self, _: ConfirmQuestion) -> Result<bool, ServiceError> {
            Ok(false)
        }
        async fn prompt(&self, _: TextQuestion) -> Result<String, ServiceError> {
            Ok("s3cret-answer".into())
        }
        async fn select(&self, _: SelectQuestion) -> Result<u32, ServiceError> {
            Ok(2)
        }
    }

    #[tokio::test]
    async fn each_service_call_is_written_with_azds_answer() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.jsonl");
        let recorder = Recorder::create(&path, "p", None, &[]).unwrap();
        recorder.azd_sent(&request());
        let services = Recorded::new(Fixed, recorder);
        assert_eq!(services.current_environment().await.unwrap(), "dev");
        assert_eq!(services.environment_values("dev").await.unwrap().len(), 1);
        assert!(services.environment_value("dev", "B").await.is_err());
        let confirm = ConfirmQuestion {
            message: "Remove?".into(),
            default_value: None,
            help_message: String::new(),
        };
        assert!(!services.confirm(confirm).await.unwrap());
        let secret = TextQuestion {
            message: "Key?".into(),
            default_value: None,
            help_message: String::new(),
            placeholder: String::new(),
            secret: true,
            required: true,
        };
        assert_eq!(services.prompt(secret).await.unwrap(), "s3cret-answer");
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains("s3cret-answer"), "{text}");
        let calls: Vec<(String, Result<Value, String>)> = text
            .lines()
            .skip(2)
            .map(|l| match serde_json::from_str(l).unwrap() {
                Line::Service { call, answer, .. } => (call, answer),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(calls[0], ("current_environment".into(), Ok(json!("dev"))));
        assert_eq!(
            calls[1],
            ("environment_values".into(), Ok(json!([["A", "1"]])))
        );
        assert_eq!(
            calls[2],
            ("environment_value".into(), Err("no such key".into()))
        );
        assert_eq!(calls[3], ("confirm".into(), Ok(json!(false))));
        assert_eq!(calls[4], ("prompt".into(), Ok(json!(REDACTED))));
    }

    /// azd's Initialize, with `config`, as bytes on the wire.
    fn initialize(config: serde_json::Value) -> Vec<u8> {
        pb::ProvisioningMessage {
            request_id: "r1".into(),
            message_type: Some(MessageType::InitializeRequest(
                pb::ProvisioningInitializeRequest {
                    project_path: "/p".into(),
                    options: Some(pb::ProvisioningOptions {
                        provider: "p".into(),
                        config: Some(azd_wasm_host_core::json::object_to_struct(
                            config.as_object().unwrap(),
                        )),
                        ..Default::default()
                    }),
                },
            )),
            ..Default::default()
        }
        .encode_to_vec()
    }

    /// Everything the file says, its messages decoded.
    fn everything(path: &Path) -> String {
        let text = std::fs::read_to_string(path).unwrap();
        let mut all = text.clone();
        for l in text.lines() {
            let line: Line = serde_json::from_str(l).unwrap();
            if let Some(Ok(msg)) = line.envelope() {
                all.push_str(&format!("{msg:?}"));
            }
        }
        all
    }

    #[tokio::test]
    async fn a_secret_shown_late_is_taken_out_of_every_line_when_the_recording_ends() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.jsonl");
        let recorder = Recorder::create(&path, "p", None, &[]).unwrap();
        // The config holds the value before anything says it is secret.
        recorder.azd_sent(&initialize(
            json!({ "dbPass": "hunter2-db", "apiKey": "k-123", "name": "n" }),
        ));
        let services = Recorded::new(Fixed, Arc::clone(&recorder));
        services
            .set_environment_value("dev", "DB", "hunter2-db")
            .await
            .unwrap();
        services
            .set_environment_value("dev", "DB_PASSWORD", "other-secret")
            .await
            .unwrap();
        let mut parameters = parameters(true);
        if let Some(MessageType::ParametersResponse(r)) = &mut parameters.message_type {
            "dbPass".clone_into(&mut r.parameters[0].name);
            "hunter2-db".clone_into(&mut r.parameters[0].value);
        }
        recorder.host_sent(&parameters);
        recorder.host_sent(&azd_wasm_host_proto::progress_message(
            "r2",
            "connecting with hunter2-db".into(),
            0,
        ));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600, "the conversation is readable by others");
        }
        // Named like secrets: out at once. The parameter's value: out of the lines after it.
        let now = everything(&path);
        assert!(
            !now.contains("k-123") && !now.contains("other-secret"),
            "{now}"
        );
        recorder.finish();
        let after = everything(&path);
        assert!(!after.contains("hunter2-db"), "{after}");
        assert!(
            after.contains("\"n\""),
            "the rest of the config is kept: {after}"
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
        }
        // Still a conversation a replay reads.
        for l in std::fs::read_to_string(&path).unwrap().lines() {
            let line: Line = serde_json::from_str(l).unwrap();
            assert!(line.envelope().is_none_or(|m| m.is_ok()), "{l}");
        }
    }

    #[test]
    fn a_recording_that_still_holds_a_credential_is_removed_unless_marked_safe() {
        let jwt = "eyJ0eXAiOiJKV1QiLCJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ0ZXN0LXVzZXItMTIzIn0.c2ln";
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.jsonl");
        let recorder = Recorder::create(&path, "p", None, &[]).unwrap();
        recorder.azd_sent(&request());
        recorder.host_sent(&azd_wasm_host_proto::progress_message(
            "r0",
            format!("got {jwt}"),
            0,
        ));
        recorder.finish();
        assert!(!path.exists(), "a recording with a JWT was kept");
        // Marked safe (AZD_WASM_HOST_RECORD_SAFE): kept, and the mark with it.
        let recorder = Recorder::create(&path, "p", None, &[jwt.to_owned()]).unwrap();
        recorder.azd_sent(&request());
        recorder.host_sent(&azd_wasm_host_proto::progress_message(
            "r0",
            format!("got {jwt}"),
            0,
        ));
        recorder.finish();
        let first = std::fs::read_to_string(&path).unwrap();
        assert!(first.contains(jwt));
        // Recorded again: the mark in its first line still holds.
        let recorder = Recorder::create(&path, "p", None, &[]).unwrap();
        recorder.azd_sent(&request());
        recorder.host_sent(&azd_wasm_host_proto::progress_message(
            "r0",
            format!("got {jwt}"),
            0,
        ));
        recorder.finish();
        assert!(path.exists(), "the safe mark of the first line was lost");
    }
}
