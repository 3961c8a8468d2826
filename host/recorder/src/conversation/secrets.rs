//! What a golden conversation must never hold: secret parameter values and
//! the other credentials of `azd_wasm_host_core::secrets`, in every message
//! that carries them.
//!
//! [`Known`] learns, as the conversation goes, which values are secret: the
//! parameters a provider marks secret (its Parameters answer) and their
//! values, input parameters of a secure type in Deploy and Preview answers,
//! answers to secret questions. Then every message loses them:
//! - by name: parameters and outputs named like secrets or marked secret (or
//!   of a secure type), the Initialize config's keys named so or named as a
//!   secret parameter (their values, whole), `set_environment_value` of such
//!   a key;
//! - by value: every known secret, plain, URL-encoded or in base64, in any
//!   field of any message (masked with `*`, so the protobuf keeps its
//!   lengths) and in every other line.

use std::collections::BTreeSet;

use azd_wasm_host_core::secrets::{REDACTED, SecretValues, is_secret_name, scrub_shapes};
use azd_wasm_host_proto::azdext as pb;
use azd_wasm_host_proto::azdext::provisioning_message::MessageType;
use prost::Message as _;
use prost_types::value::Kind;
use serde_json::Value;

/// The secrets a conversation has shown so far.
#[derive(Debug, Default)]
pub(crate) struct Known {
    values: SecretValues,
    /// Names of the parameters the provider marked secret.
    names: BTreeSet<String>,
}

impl Known {
    /// A value never to write.
    pub(crate) fn add(&mut self, value: &str) {
        self.values.add(value);
    }

    /// Whether a parameter, output, config or environment key named `name` is secret.
    pub(crate) fn is_secret_key(&self, name: &str) -> bool {
        self.names.contains(name) || is_secret_name(name)
    }

    /// Learns what `msg` says is secret (before it is redacted).
    pub(crate) fn learn(&mut self, msg: &pb::ProvisioningMessage) {
        match &msg.message_type {
            Some(MessageType::ParametersResponse(r)) => {
                for p in r
                    .parameters
                    .iter()
                    .filter(|p| p.secret || is_secret_name(&p.name))
                {
                    self.names.insert(p.name.clone());
                    self.values.add(&p.value);
                }
            }
            Some(MessageType::DeployResponse(r)) => {
                let deployment = r.result.as_ref().and_then(|r| r.deployment.as_ref());
                if let Some(d) = deployment {
                    self.learn_inputs(&d.parameters);
                }
            }
            Some(MessageType::PreviewResponse(r)) => {
                let preview = r.result.as_ref().and_then(|r| r.preview.as_ref());
                if let Some(p) = preview {
                    self.learn_inputs(&p.parameters);
                }
            }
            // Every other body, by name: a body added to the protos does not
            // compile until it is said here whether it marks secrets.
            Some(
                MessageType::RegisterProvisioningProviderRequest(_)
                | MessageType::RegisterProvisioningProviderResponse(_)
                | MessageType::InitializeRequest(_)
                | MessageType::InitializeResponse(_)
                | MessageType::StateRequest(_)
                | MessageType::StateResponse(_)
                | MessageType::DeployRequest(_)
                | MessageType::PreviewRequest(_)
                | MessageType::DestroyRequest(_)
                | MessageType::DestroyResponse(_)
                | MessageType::EnsureEnvRequest(_)
                | MessageType::EnsureEnvResponse(_)
                | MessageType::ParametersRequest(_)
                | MessageType::ProgressMessage(_)
                | MessageType::PlannedOutputsRequest(_)
                | MessageType::PlannedOutputsResponse(_),
            )
            | None => {}
        }
    }

    fn learn_inputs(
        &mut self,
        inputs: &std::collections::BTreeMap<String, pb::ProvisioningInputParameter>,
    ) {
        for (name, p) in inputs {
            if secure(&p.r#type) || self.is_secret_key(name) {
                self.names.insert(name.clone());
                self.values.add(&p.value);
                self.values.add(&p.default_value);
            }
        }
    }

    /// `msg` as a recording holds it: secret fields redacted, known values masked.
    pub(crate) fn redact(&self, msg: &mut pb::ProvisioningMessage) {
        self.redact_fields(msg);
        let mut bytes = msg.encode_to_vec();
        let found = self.values.find(&bytes);
        if found.is_empty() {
            return;
        }
        for &(start, end) in &found {
            bytes[start..end].fill(b'*');
        }
        if let Ok(masked) = pb::ProvisioningMessage::decode(bytes.as_slice()) {
            *msg = masked;
            return;
        }
        // A value also matched across a field's bounds (its last bytes, the
        // next field's tag and length), and masking that broke the message:
        // mask one place at a time, keeping each that leaves it readable. A
        // value inside a string always does (ASCII over whole characters), so
        // none stays; only the places that straddle fields are left.
        let mut bytes = msg.encode_to_vec();
        let mut masked = None;
        for (start, end) in found {
            let kept = bytes[start..end].to_vec();
            bytes[start..end].fill(b'*');
            match pb::ProvisioningMessage::decode(bytes.as_slice()) {
                Ok(m) => masked = Some(m),
                Err(_) => bytes[start..end].copy_from_slice(&kept),
            }
        }
        if let Some(m) = masked {
            *msg = m;
        }
    }

    /// `text` without known values and credential shapes.
    pub(crate) fn scrub(&self, text: &str) -> String {
        scrub_shapes(&self.values.scrub(text))
    }

    /// Bytes that are not a message: known values masked.
    pub(crate) fn mask(&self, bytes: &mut [u8]) {
        self.values.mask(bytes);
    }

    /// A frame azd sent (`decoded`, when it is a message) as a recording
    /// holds it: the message redacted, or the bytes with known values masked.
    pub(crate) fn redacted_frame(
        &self,
        bytes: &[u8],
        decoded: Option<&pb::ProvisioningMessage>,
    ) -> Vec<u8> {
        match decoded {
            Some(msg) => {
                let mut msg = msg.clone();
                self.redact(&mut msg);
                msg.encode_to_vec()
            }
            None => {
                let mut raw = bytes.to_vec();
                self.mask(&mut raw);
                raw
            }
        }
    }

    /// The fields of `msg` that are secret by name, by type or by mark.
    pub(crate) fn redact_fields(&self, msg: &mut pb::ProvisioningMessage) {
        match &mut msg.message_type {
            Some(MessageType::ParametersResponse(r)) => {
                for p in r.parameters.iter_mut() {
                    if (p.secret || self.is_secret_key(&p.name)) && !p.value.is_empty() {
                        REDACTED.clone_into(&mut p.value);
                    }
                }
            }
            Some(MessageType::DeployResponse(r)) => {
                let deployment = r.result.as_mut().and_then(|r| r.deployment.as_mut());
                if let Some(d) = deployment {
                    self.inputs(&mut d.parameters);
                    self.outputs(&mut d.outputs);
                }
            }
            Some(MessageType::PreviewResponse(r)) => {
                let preview = r.result.as_mut().and_then(|r| r.preview.as_mut());
                if let Some(p) = preview {
                    self.inputs(&mut p.parameters);
                    self.outputs(&mut p.outputs);
                }
            }
            Some(MessageType::StateResponse(r)) => {
                let state = r.state_result.as_mut().and_then(|r| r.state.as_mut());
                if let Some(s) = state {
                    self.outputs(&mut s.outputs);
                }
            }
            Some(MessageType::InitializeRequest(r)) => {
                let config = r.options.as_mut().and_then(|o| o.config.as_mut());
                if let Some(config) = config {
                    for (key, value) in config.fields.iter_mut() {
                        self.config_value(value, self.is_secret_key(key));
                    }
                }
            }
            // Every other body, by name: a body added to the protos does not
            // compile until it is said here whether it has fields to redact.
            // (Values known to be secret are masked in every body anyway.)
            Some(
                MessageType::RegisterProvisioningProviderRequest(_)
                | MessageType::RegisterProvisioningProviderResponse(_)
                | MessageType::InitializeResponse(_)
                | MessageType::StateRequest(_)
                | MessageType::DeployRequest(_)
                | MessageType::PreviewRequest(_)
                | MessageType::DestroyRequest(_)
                | MessageType::DestroyResponse(_)
                | MessageType::EnsureEnvRequest(_)
                | MessageType::EnsureEnvResponse(_)
                | MessageType::ParametersRequest(_)
                | MessageType::ProgressMessage(_)
                | MessageType::PlannedOutputsRequest(_)
                | MessageType::PlannedOutputsResponse(_),
            )
            | None => {}
        }
    }

    fn inputs(
        &self,
        inputs: &mut std::collections::BTreeMap<String, pb::ProvisioningInputParameter>,
    ) {
        for (name, p) in inputs.iter_mut() {
            if secure(&p.r#type) || self.is_secret_key(name) {
                for v in [&mut p.value, &mut p.default_value] {
                    if !v.is_empty() {
                        REDACTED.clone_into(v);
                    }
                }
            }
        }
    }

    fn outputs(
        &self,
        outputs: &mut std::collections::BTreeMap<String, pb::ProvisioningOutputParameter>,
    ) {
        for (name, o) in outputs.iter_mut() {
            if (secure(&o.r#type) || self.is_secret_key(name)) && !o.value.is_empty() {
                REDACTED.clone_into(&mut o.value);
            }
        }
    }

    /// A config value: every string in it redacted under a secret key;
    /// otherwise the keys inside it looked at the same way.
    fn config_value(&self, value: &mut prost_types::Value, secret: bool) {
        match &mut value.kind {
            Some(Kind::StringValue(s)) if secret => REDACTED.clone_into(s),
            Some(Kind::NumberValue(_) | Kind::BoolValue(_)) if secret => {
                value.kind = Some(Kind::StringValue(REDACTED.to_owned()));
            }
            Some(Kind::StructValue(s)) => {
                for (key, inner) in s.fields.iter_mut() {
                    self.config_value(inner, secret || self.is_secret_key(key));
                }
            }
            Some(Kind::ListValue(l)) => {
                for inner in &mut l.values {
                    self.config_value(inner, secret);
                }
            }
            _ => {}
        }
    }

    /// A call to azd's services and its answer as a recording holds them: a
    /// value set or read under a secret key is redacted whatever it is; all
    /// lose known values and shapes.
    pub(crate) fn redact_service(
        &self,
        call: &str,
        args: &mut Value,
        answer: &mut Result<Value, String>,
    ) {
        let secret_key = args
            .get("key")
            .and_then(Value::as_str)
            .is_some_and(|k| self.is_secret_key(k));
        if call == "set_environment_value" && secret_key {
            args["value"] = REDACTED.into();
        }
        self.json(args, false);
        match answer {
            Ok(value) if call == "environment_value" && secret_key => *value = REDACTED.into(),
            Ok(value) if call == "environment_values" => {
                for pair in value.as_array_mut().into_iter().flatten() {
                    let secret = pair
                        .get(0)
                        .and_then(Value::as_str)
                        .is_some_and(|k| self.is_secret_key(k));
                    if secret && let Some(v) = pair.get_mut(1) {
                        *v = REDACTED.into();
                    }
                }
                self.json(value, false);
            }
            Ok(value) => self.json(value, false),
            Err(message) => *message = self.scrub(message),
        }
    }

    /// A JSON line (a service call, an HTTP exchange): under a secret key
    /// every string is redacted; every string loses known values and
    /// credential shapes.
    pub(crate) fn json(&self, value: &mut Value, secret: bool) {
        match value {
            Value::String(s) if secret => REDACTED.clone_into(s),
            Value::String(s) => *s = self.scrub(s),
            Value::Array(items) => {
                for item in items {
                    self.json(item, secret);
                }
            }
            Value::Object(map) => {
                for (key, inner) in map.iter_mut() {
                    match inner {
                        Value::String(b64) if key == "body_base64" => self.binary(b64),
                        _ => self.json(inner, secret || self.is_secret_key(key)),
                    }
                }
            }
            _ => {}
        }
    }

    /// A body that is not text (its base64): known values masked in its
    /// bytes, so its base64 stays base64. What does not decode is replaced.
    fn binary(&self, b64: &mut String) {
        use base64::Engine as _;
        let engine = base64::engine::general_purpose::STANDARD;
        match engine.decode(b64.as_bytes()) {
            Ok(mut bytes) => {
                self.mask(&mut bytes);
                *b64 = engine.encode(bytes);
            }
            Err(_) => REDACTED.clone_into(b64),
        }
    }
}

/// A parameter or output type that holds a secret (`securestring`, `secureObject`).
fn secure(kind: &str) -> bool {
    kind.to_ascii_lowercase().starts_with("secure")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs(
        pairs: &[(&str, &str, &str)],
    ) -> std::collections::BTreeMap<String, pb::ProvisioningInputParameter> {
        pairs
            .iter()
            .map(|(name, kind, value)| {
                (
                    (*name).to_owned(),
                    pb::ProvisioningInputParameter {
                        r#type: (*kind).to_owned(),
                        value: (*value).to_owned(),
                        ..Default::default()
                    },
                )
            })
            .collect()
    }

    #[test]
    fn a_value_that_also_straddles_two_fields_is_still_masked_where_it_is_whole() {
        // Encoded: 0a 08 "abcdefgh" 12 <len> 0a 0b "x" secret. The secret is the
        // request id's bytes, the next field's tag and its length: masking that
        // place breaks the message, which must not keep the name unmasked.
        let name_len = 2 + 11;
        let secret = format!("abcdefgh\u{12}{}", char::from(name_len));
        let mut msg = pb::ProvisioningMessage {
            request_id: "abcdefgh".into(),
            message_type: Some(MessageType::RegisterProvisioningProviderRequest(
                pb::RegisterProvisioningProviderRequest {
                    name: format!("x{secret}"),
                },
            )),
            ..Default::default()
        };
        let bytes = msg.encode_to_vec();
        assert_eq!(
            bytes
                .windows(secret.len())
                .filter(|w| *w == secret.as_bytes())
                .count(),
            2,
            "the case: the secret twice in {bytes:?}"
        );
        let mut known = Known::default();
        known.add(&secret);
        known.redact(&mut msg);
        let Some(MessageType::RegisterProvisioningProviderRequest(r)) = &msg.message_type else {
            panic!("the message is kept: {msg:?}")
        };
        assert_eq!(r.name, format!("x{}", "*".repeat(secret.len())));
        assert_eq!(msg.request_id, "abcdefgh");
    }

    #[test]
    fn a_secret_parameter_is_redacted_in_every_message_that_carries_it() {
        let mut known = Known::default();
        // The provider marks `dbPass` secret in its Parameters answer.
        let parameters = pb::ProvisioningMessage {
            message_type: Some(MessageType::ParametersResponse(
                pb::ProvisioningParametersResponse {
                    parameters: vec![pb::ProvisioningParameter {
                        name: "dbPass".into(),
                        secret: true,
                        value: "s3cret-db-pass".into(),
                        ..Default::default()
                    }],
                },
            )),
            ..Default::default()
        };
        known.learn(&parameters);
        // Its deploy answer carries it (and a secure parameter of its own), and a progress line.
        let mut deploy = pb::ProvisioningMessage {
            message_type: Some(MessageType::DeployResponse(
                pb::ProvisioningDeployResponse {
                    result: Some(pb::ProvisioningDeployResult {
                        deployment: Some(pb::ProvisioningDeployment {
                            parameters: inputs(&[
                                ("dbPass", "string", "s3cret-db-pass"),
                                ("adminKey", "securestring", "another-secret-1"),
                                ("region", "string", "westus"),
                            ]),
                            outputs: Default::default(),
                        }),
                        ..Default::default()
                    }),
                },
            )),
            ..Default::default()
        };
        known.learn(&deploy);
        known.redact(&mut deploy);
        let text = format!("{deploy:?}");
        assert!(
            !text.contains("s3cret-db-pass") && !text.contains("another-secret-1"),
            "{text}"
        );
        assert!(text.contains("westus"), "{text}");
        let mut progress =
            azd_wasm_host_proto::progress_message("r1", "using another-secret-1 now".into(), 0);
        known.redact(&mut progress);
        assert!(!format!("{progress:?}").contains("another-secret-1"));
        // The Initialize config: a key named as the secret parameter, or like a secret.
        let config = serde_json::json!({ "dbPass": "s3cret-db-pass", "nested": { "clientSecret": "cs", "n": 1 }, "name": "x" });
        let mut init = pb::ProvisioningMessage {
            message_type: Some(MessageType::InitializeRequest(
                pb::ProvisioningInitializeRequest {
                    project_path: "/p".into(),
                    options: Some(pb::ProvisioningOptions {
                        config: Some(azd_wasm_host_core::json::object_to_struct(
                            config.as_object().unwrap(),
                        )),
                        ..Default::default()
                    }),
                },
            )),
            ..Default::default()
        };
        known.redact(&mut init);
        let text = format!("{init:?}");
        assert!(
            !text.contains("s3cret-db-pass") && !text.contains("\"cs\""),
            "{text}"
        );
        assert!(text.contains("\"x\""), "{text}");
        // A JSON line: the secret's value under any key, any value under a secret key.
        let mut args = serde_json::json!({ "env": "dev", "key": "DB", "value": "s3cret-db-pass" });
        known.json(&mut args, false);
        assert_eq!(args["value"], REDACTED);
        let mut args =
            serde_json::json!({ "env": "dev", "key": "X", "value": "x", "password": "p" });
        known.json(&mut args, false);
        assert_eq!(args["password"], REDACTED);
        assert_eq!(args["value"], "x");
    }
}
