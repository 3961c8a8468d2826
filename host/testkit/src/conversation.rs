//! A golden conversation as `listen --record` wrote it, read: its lines
//! (azd's requests, the extension's answers, the calls to azd's services),
//! and the provider's HTTP traffic recorded among them.

use std::collections::HashMap;
use std::path::Path;

use anyhow::Context as _;
use azd_wasm_host_proto::RequestKind;
use azd_wasm_host_proto::azdext as pb;
use azd_wasm_host_proto::azdext::provisioning_message::MessageType;
use azd_wasm_host_recorder::conversation::{self as record, Line};
use azd_wasm_host_recorder::traffic::LogEvent;
use azd_wasm_host_sim::SimEnvironment;

/// What the extension sent for one request: progress texts, then the answer.
pub(super) type Recorded = (Vec<String>, Option<pb::ProvisioningMessage>);

/// The suffix of a conversation file.
pub(super) const SUFFIX: &str = ".conversation.jsonl";

/// A recorded conversation, read.
#[derive(Debug, Clone)]
pub(super) struct Conversation {
    /// Every line, in order (HTTP traffic lines apart).
    pub(super) lines: Vec<Line>,
    /// The provider's HTTP traffic and token scopes, as recorded.
    pub(super) traffic: Vec<LogEvent>,
    /// The raw text of the traffic lines, kept as they are on `--update`.
    pub(super) traffic_text: Vec<String>,
    pub(super) provider: String,
    /// The azd environment azd named when it was recorded.
    environment: Option<String>,
}

impl Conversation {
    /// Reads the conversation at `path`.
    pub(super) fn read(path: &Path) -> anyhow::Result<Self> {
        let text = std::fs::read_to_string(path)?;
        let mut conversation = Self {
            lines: Vec::new(),
            traffic: Vec::new(),
            traffic_text: Vec::new(),
            provider: String::new(),
            environment: None,
        };
        for (n, raw) in text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
        {
            let value: serde_json::Value =
                serde_json::from_str(raw).with_context(|| format!("line {}: not JSON", n + 1))?;
            if value.get("event").is_some() {
                let event = serde_json::from_value(value)
                    .with_context(|| format!("line {}: not a traffic event", n + 1))?;
                conversation.traffic.push(event);
                conversation.traffic_text.push(raw.to_owned());
                continue;
            }
            let line: Line = serde_json::from_value(value)
                .with_context(|| format!("line {}: not a conversation line", n + 1))?;
            if let Line::Recording {
                format,
                provider,
                environment,
                ..
            } = &line
            {
                conversation.environment.clone_from(environment);
                anyhow::ensure!(
                    *format == record::CONVERSATION_FORMAT,
                    "line {}: conversation format {format} (this binary reads {}); record it again",
                    n + 1,
                    record::CONVERSATION_FORMAT
                );
                provider.clone_into(&mut conversation.provider);
            }
            conversation.lines.push(line);
        }
        anyhow::ensure!(
            !conversation.provider.is_empty(),
            "no `recording` line: not a conversation `listen --record` wrote"
        );
        Ok(conversation)
    }

    /// azd's requests, in order, with their recorded ids.
    pub(super) fn requests(&self) -> Vec<pb::ProvisioningMessage> {
        self.lines
            .iter()
            .filter(|l| matches!(l, Line::Azd { .. }))
            .filter_map(|l| l.envelope()?.ok())
            .filter(|m| RequestKind::of(m).is_some())
            .collect()
    }

    /// What the extension sent for each request, by id: its progress texts
    /// and its answer (each message decoded once).
    pub(super) fn recorded(&self) -> HashMap<String, Recorded> {
        let mut by_id: HashMap<String, Recorded> = HashMap::new();
        for line in &self.lines {
            let Line::Host { id, .. } = line else {
                continue;
            };
            let Some(Ok(msg)) = line.envelope() else {
                continue;
            };
            let (progress, answer) = by_id.entry(id.clone()).or_default();
            match &msg.message_type {
                Some(MessageType::ProgressMessage(p)) => progress.push(p.message.clone()),
                _ => *answer = Some(msg),
            }
        }
        by_id
    }

    /// The environment azd served, as the provider read it.
    pub(super) fn environment(&self) -> Option<SimEnvironment> {
        let mut env = SimEnvironment {
            name: self.environment.clone().unwrap_or_default(),
            ..SimEnvironment::default()
        };
        let mut any = self.environment.is_some();
        for line in &self.lines {
            let Line::Service {
                call,
                args,
                answer: Ok(answer),
            } = line
            else {
                continue;
            };
            match call.as_str() {
                "current_environment" if env.name.is_empty() => {
                    answer
                        .as_str()
                        .unwrap_or_default()
                        .clone_into(&mut env.name);
                    any = true;
                }
                "environment_values" => {
                    for pair in answer.as_array().into_iter().flatten() {
                        if let (Some(k), Some(v)) = (pair[0].as_str(), pair[1].as_str()) {
                            env.values
                                .entry(k.to_owned())
                                .or_insert_with(|| v.to_owned());
                        }
                    }
                    any = true;
                }
                "environment_value" => {
                    if let (Some(k), Some(v)) = (args["key"].as_str(), answer.as_str())
                        && !v.is_empty()
                    {
                        env.values
                            .entry(k.to_owned())
                            .or_insert_with(|| v.to_owned());
                    }
                    any = true;
                }
                _ => {}
            }
        }
        any.then_some(env)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_conversation_reads_its_requests_answers_and_traffic() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.conversation.jsonl");
        let request = pb::ProvisioningMessage {
            request_id: "r1".into(),
            message_type: Some(MessageType::StateRequest(
                pb::ProvisioningStateRequest::default(),
            )),
            ..Default::default()
        };
        let progress = pb::ProvisioningMessage {
            request_id: "r1".into(),
            message_type: Some(MessageType::ProgressMessage(
                pb::ProvisioningProgressMessage {
                    message: "step".into(),
                    ..Default::default()
                },
            )),
            ..Default::default()
        };
        let lines = [
            serde_json::to_string(&Line::Recording {
                format: 1,
                provider: "p".into(),
                environment: Some("dev".into()),
                safe: Vec::new(),
            })
            .unwrap(),
            serde_json::to_string(&Line::azd(&request)).unwrap(),
            serde_json::to_string(&Line::host(&progress)).unwrap(),
            "{\"event\":\"token\",\"scope\":\"s\"}".to_owned(),
            serde_json::to_string(&Line::Service {
                call: "environment_values".into(),
                args: serde_json::json!({}),
                answer: Ok(serde_json::json!([["A", "1"]])),
            })
            .unwrap(),
        ];
        std::fs::write(&path, lines.join("\n")).unwrap();
        let c = Conversation::read(&path).unwrap();
        assert_eq!(c.provider, "p");
        assert_eq!(c.requests().len(), 1);
        assert_eq!(c.recorded()["r1"], (vec!["step".to_owned()], None));
        assert_eq!(c.traffic.len(), 1);
        let env = c.environment().unwrap();
        assert_eq!((env.name.as_str(), env.values["A"].as_str()), ("dev", "1"));

        std::fs::write(
            &path,
            "{\"from\":\"recording\",\"format\":9,\"provider\":\"p\"}",
        )
        .unwrap();
        let e = Conversation::read(&path).unwrap_err();
        assert!(format!("{e:#}").contains("record it again"), "{e:#}");
        std::fs::write(
            &path,
            "{\"from\":\"azd\",\"id\":\"x\",\"kind\":\"k\",\"message\":\"\"}",
        )
        .unwrap();
        assert!(
            format!("{:#}", Conversation::read(&path).unwrap_err()).contains("no `recording` line")
        );
    }
}
