//! The requests azd sends on the provisioning stream, and the rules that depend
//! on their kind: which envelope field carries each, whether progress may be
//! sent while one is served, and what it is called. The extension (broker,
//! manager, runtime) and the simulated azd both take these rules from here.

use crate::azdext::provisioning_message::MessageType;
use crate::azdext::{self as pb, ProvisioningMessage};

/// The kinds of request azd sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RequestKind {
    /// `initialize_request`: a fresh provider instance for one layer.
    Initialize,
    /// `state_request`.
    State,
    /// `deploy_request`.
    Deploy,
    /// `preview_request`.
    Preview,
    /// `destroy_request`.
    Destroy,
    /// `ensure_env_request`.
    EnsureEnv,
    /// `parameters_request`.
    Parameters,
    /// `planned_outputs_request`.
    PlannedOutputs,
}

impl RequestKind {
    /// Every kind.
    pub const ALL: [Self; 8] = [
        Self::Initialize,
        Self::State,
        Self::Deploy,
        Self::Preview,
        Self::Destroy,
        Self::EnsureEnv,
        Self::Parameters,
        Self::PlannedOutputs,
    ];

    /// The kind of an envelope, if it carries a request azd may send.
    pub fn of(msg: &ProvisioningMessage) -> Option<Self> {
        msg.message_type.as_ref().and_then(Self::of_message)
    }

    /// The kind of an envelope's body, if it is a request.
    pub fn of_message(body: &MessageType) -> Option<Self> {
        Some(match body {
            MessageType::InitializeRequest(_) => Self::Initialize,
            MessageType::StateRequest(_) => Self::State,
            MessageType::DeployRequest(_) => Self::Deploy,
            MessageType::PreviewRequest(_) => Self::Preview,
            MessageType::DestroyRequest(_) => Self::Destroy,
            MessageType::EnsureEnvRequest(_) => Self::EnsureEnv,
            MessageType::ParametersRequest(_) => Self::Parameters,
            MessageType::PlannedOutputsRequest(_) => Self::PlannedOutputs,
            _ => return None,
        })
    }

    /// The number of the envelope field (`ProvisioningMessage.message_type`)
    /// that carries this kind of request.
    pub fn envelope_field(self) -> u32 {
        match self {
            Self::Initialize => 4,
            Self::State => 6,
            Self::Deploy => 8,
            Self::Preview => 10,
            Self::Destroy => 12,
            Self::EnsureEnv => 14,
            Self::Parameters => 16,
            Self::PlannedOutputs => 19,
        }
    }

    /// The kind carried by envelope field `field`, if that field is a request.
    pub fn from_envelope_field(field: u32) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.envelope_field() == field)
    }

    /// Whether progress messages may be sent while this request is served.
    ///
    /// azd shows progress only for deploy, preview and destroy; for every other
    /// request it takes the first message with the request's id as the answer,
    /// so progress there would replace the real answer.
    pub fn sends_progress(self) -> bool {
        matches!(self, Self::Deploy | Self::Preview | Self::Destroy)
    }

    /// A short name for logs and errors (`planned-outputs`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Self::Initialize => "initialize",
            Self::State => "state",
            Self::Deploy => "deploy",
            Self::Preview => "preview",
            Self::Destroy => "destroy",
            Self::EnsureEnv => "ensure-env",
            Self::Parameters => "parameters",
            Self::PlannedOutputs => "planned-outputs",
        }
    }

    /// The envelope field of the answer (`state_response`, ...).
    pub fn answer_name(self) -> &'static str {
        match self {
            Self::Initialize => "initialize_response",
            Self::State => "state_response",
            Self::Deploy => "deploy_response",
            Self::Preview => "preview_response",
            Self::Destroy => "destroy_response",
            Self::EnsureEnv => "ensure_env_response",
            Self::Parameters => "parameters_response",
            Self::PlannedOutputs => "planned_outputs_response",
        }
    }
}

impl std::fmt::Display for RequestKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A request azd sends, with its body.
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    /// A fresh provider instance for one layer (boxed: it is by far the
    /// largest, and the rarest).
    Initialize(Box<pb::ProvisioningInitializeRequest>),
    /// What is deployed now.
    State(pb::ProvisioningStateRequest),
    /// Provision the layer.
    Deploy(pb::ProvisioningDeployRequest),
    /// What a deploy would do.
    Preview(pb::ProvisioningPreviewRequest),
    /// Remove what the layer provisioned.
    Destroy(pb::ProvisioningDestroyRequest),
    /// Make sure the environment has what the provider needs.
    EnsureEnv(pb::ProvisioningEnsureEnvRequest),
    /// The inputs the provider takes.
    Parameters(pb::ProvisioningParametersRequest),
    /// The outputs a deploy will produce.
    PlannedOutputs(pb::ProvisioningPlannedOutputsRequest),
}

impl Request {
    /// The request an envelope body carries; anything else is handed back.
    pub fn from_message(body: MessageType) -> Result<Self, MessageType> {
        Ok(match body {
            MessageType::InitializeRequest(r) => Self::Initialize(Box::new(r)),
            MessageType::StateRequest(r) => Self::State(r),
            MessageType::DeployRequest(r) => Self::Deploy(r),
            MessageType::PreviewRequest(r) => Self::Preview(r),
            MessageType::DestroyRequest(r) => Self::Destroy(r),
            MessageType::EnsureEnvRequest(r) => Self::EnsureEnv(r),
            MessageType::ParametersRequest(r) => Self::Parameters(r),
            MessageType::PlannedOutputsRequest(r) => Self::PlannedOutputs(r),
            other => return Err(other),
        })
    }

    /// The envelope body that carries this request.
    pub fn into_message(self) -> MessageType {
        match self {
            Self::Initialize(r) => MessageType::InitializeRequest(*r),
            Self::State(r) => MessageType::StateRequest(r),
            Self::Deploy(r) => MessageType::DeployRequest(r),
            Self::Preview(r) => MessageType::PreviewRequest(r),
            Self::Destroy(r) => MessageType::DestroyRequest(r),
            Self::EnsureEnv(r) => MessageType::EnsureEnvRequest(r),
            Self::Parameters(r) => MessageType::ParametersRequest(r),
            Self::PlannedOutputs(r) => MessageType::PlannedOutputsRequest(r),
        }
    }

    /// Its kind.
    pub fn kind(&self) -> RequestKind {
        match self {
            Self::Initialize(_) => RequestKind::Initialize,
            Self::State(_) => RequestKind::State,
            Self::Deploy(_) => RequestKind::Deploy,
            Self::Preview(_) => RequestKind::Preview,
            Self::Destroy(_) => RequestKind::Destroy,
            Self::EnsureEnv(_) => RequestKind::EnsureEnv,
            Self::Parameters(_) => RequestKind::Parameters,
            Self::PlannedOutputs(_) => RequestKind::PlannedOutputs,
        }
    }

    /// The provider the request names. Initialize names none: the provider's
    /// identity is `options.provider` there.
    pub fn provider_name(&self) -> Option<&str> {
        Some(match self {
            Self::Initialize(_) => return None,
            Self::State(r) => &r.provider_name,
            Self::Deploy(r) => &r.provider_name,
            Self::Preview(r) => &r.provider_name,
            Self::Destroy(r) => &r.provider_name,
            Self::EnsureEnv(r) => &r.provider_name,
            Self::Parameters(r) => &r.provider_name,
            Self::PlannedOutputs(r) => &r.provider_name,
        })
    }
}

/// The envelope of one progress report of request `request_id`: azd matches
/// the envelope's id to the request and shows `message` on its spinner.
/// `timestamp_ms` is milliseconds since the Unix epoch.
pub fn progress_message(
    request_id: &str,
    message: String,
    timestamp_ms: i64,
) -> ProvisioningMessage {
    ProvisioningMessage {
        request_id: request_id.to_owned(),
        error: None,
        message_type: Some(MessageType::ProgressMessage(
            pb::ProvisioningProgressMessage {
                request_id: request_id.to_owned(),
                message,
                timestamp: timestamp_ms,
            },
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn every_request() -> Vec<Request> {
        vec![
            Request::Initialize(Default::default()),
            Request::State(Default::default()),
            Request::Deploy(Default::default()),
            Request::Preview(Default::default()),
            Request::Destroy(Default::default()),
            Request::EnsureEnv(Default::default()),
            Request::Parameters(Default::default()),
            Request::PlannedOutputs(Default::default()),
        ]
    }

    #[test]
    fn requests_round_trip_through_envelopes_with_their_kind() {
        let requests = every_request();
        let kinds: Vec<RequestKind> = requests.iter().map(Request::kind).collect();
        assert_eq!(kinds, RequestKind::ALL);
        for r in requests {
            let kind = r.kind();
            let body = r.clone().into_message();
            assert_eq!(RequestKind::of_message(&body), Some(kind));
            assert_eq!(Request::from_message(body).unwrap(), r);
        }
        let answer = MessageType::StateResponse(Default::default());
        assert_eq!(RequestKind::of_message(&answer), None);
        assert!(Request::from_message(answer.clone()).is_err());
        // The field number is the one prost writes: the envelope's first key
        // after the request id is (field << 3) | 2.
        for kind in RequestKind::ALL {
            let r = every_request()
                .into_iter()
                .find(|r| r.kind() == kind)
                .unwrap();
            let bytes = prost::Message::encode_to_vec(&ProvisioningMessage {
                request_id: String::new(),
                error: None,
                message_type: Some(r.into_message()),
            });
            let mut key = 0u32;
            for (i, b) in bytes.iter().enumerate() {
                key |= u32::from(b & 0x7f) << (7 * i);
                if b & 0x80 == 0 {
                    break;
                }
            }
            assert_eq!(key, (kind.envelope_field() << 3) | 2, "{kind}");
            assert_eq!(
                RequestKind::from_envelope_field(kind.envelope_field()),
                Some(kind)
            );
        }
        assert_eq!(RequestKind::from_envelope_field(7), None);
    }

    #[test]
    fn only_deploy_preview_and_destroy_send_progress() {
        let with: Vec<RequestKind> = RequestKind::ALL
            .into_iter()
            .filter(|k| k.sends_progress())
            .collect();
        assert_eq!(
            with,
            [
                RequestKind::Deploy,
                RequestKind::Preview,
                RequestKind::Destroy
            ]
        );
    }
}
