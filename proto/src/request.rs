//! The requests azd sends on the provisioning stream, and the rules that depend
//! on their kind: which envelope field carries each, whether progress may be
//! sent while one is served, and what it is called. The extension (broker,
//! manager, runtime) and the simulated azd both take these rules from here.
//!
//! # The table
//!
//! Every kind is one row of the [`request_kinds!`] invocation below: its
//! variant, its envelope field (number and name), its answer's, its name, and
//! whether azd shows progress for it. [`RequestKind`], [`RequestKind::ALL`],
//! [`Request`], the [`Exchange`] of each request body and every mapping between
//! them and the envelope ([`RequestKind::of_message`], [`RequestKind::of_answer`],
//! [`message_name`], …) are generated from that table. The table also names
//! every other body the envelope's `oneof` holds (`others`), and the
//! generated matches over `MessageType` have no `_` arm: a request or answer
//! added to the protos does not compile until it has its row, and a row added
//! does not compile until every exhaustive `match` on [`RequestKind`] or
//! [`Request`] elsewhere (the manager's handler, the runtime's call, the
//! simulated azd, the fuzzers) handles it.

use crate::azdext::provisioning_message::MessageType;
use crate::azdext::{self as pb, ProvisioningMessage};

/// A request body as [`Request`] carries it: most as they are, Initialize's boxed.
macro_rules! carried {
    (Box, $t:ty) => { Box<$t> };
    (, $t:ty) => { $t };
}

/// A request body into what [`Request`] carries.
macro_rules! carry {
    (Box, $e:expr) => {
        Box::new($e)
    };
    (, $e:expr) => {
        $e
    };
}

/// What [`Request`] carries back into the request body.
macro_rules! uncarry {
    (Box, $e:expr) => {
        *$e
    };
    (, $e:expr) => {
        $e
    };
}

/// Generates the request kinds and every mapping of theirs from one table
/// (see [the module](self)); invoked once, below.
macro_rules! request_kinds {
    (
        kinds: {$(
            $(#[$doc:meta])*
            $kind:ident {
                request: $field:literal $request_name:literal $request:ident($body:ty $(, $boxed:ident)?),
                answer: $answer_field:literal $answer_name:literal $answer:ident($answer_body:ty),
                name: $name:literal,
                progress: $progress:literal,
            }
        )*}
        others: { $($other:ident $other_name:literal),* $(,)? }
    ) => {
        /// The kinds of request azd sends.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum RequestKind {
            $($(#[$doc])* $kind,)*
        }

        impl RequestKind {
            /// Every kind, in the table's order.
            pub const ALL: [Self; [$($name),*].len()] = [$(Self::$kind),*];

            /// The kind of an envelope's body, if it is a request.
            pub fn of_message(body: &MessageType) -> Option<Self> {
                match body {
                    $(MessageType::$request(_) => Some(Self::$kind),)*
                    $(MessageType::$answer(_) => None,)*
                    $(MessageType::$other(_) => None,)*
                }
            }

            /// The kind of an envelope's body, if it is an answer to a request.
            pub fn of_answer(body: &MessageType) -> Option<Self> {
                match body {
                    $(MessageType::$answer(_) => Some(Self::$kind),)*
                    $(MessageType::$request(_) => None,)*
                    $(MessageType::$other(_) => None,)*
                }
            }

            /// The number of the envelope field (`ProvisioningMessage.message_type`)
            /// that carries this kind of request.
            pub fn envelope_field(self) -> u32 {
                match self {
                    $(Self::$kind => $field,)*
                }
            }

            /// The number of the envelope field that carries its answer.
            pub fn answer_field(self) -> u32 {
                match self {
                    $(Self::$kind => $answer_field,)*
                }
            }

            /// Whether progress messages may be sent while this request is served.
            ///
            /// azd shows progress only for deploy, preview and destroy; for every other
            /// request it takes the first message with the request's id as the answer,
            /// so progress there would replace the real answer.
            pub fn sends_progress(self) -> bool {
                match self {
                    $(Self::$kind => $progress,)*
                }
            }

            /// Its name, in logs and errors (`planned-outputs`, ...): also the
            /// name of the function of the WIT `provider` interface that serves it.
            pub fn name(self) -> &'static str {
                match self {
                    $(Self::$kind => $name,)*
                }
            }

            /// The envelope field of the request (`state_request`, ...).
            pub fn request_name(self) -> &'static str {
                match self {
                    $(Self::$kind => $request_name,)*
                }
            }

            /// The envelope field of the answer (`state_response`, ...).
            pub fn answer_name(self) -> &'static str {
                match self {
                    $(Self::$kind => $answer_name,)*
                }
            }
        }

        /// A request azd sends, with its body.
        #[derive(Debug, Clone, PartialEq)]
        pub enum Request {
            $($(#[$doc])* $kind(carried!($($boxed)?, $body)),)*
        }

        impl Request {
            /// The request an envelope body carries; anything else is handed back.
            pub fn from_message(body: MessageType) -> Result<Self, MessageType> {
                match body {
                    $(MessageType::$request(r) => Ok(Self::$kind(carry!($($boxed)?, r))),)*
                    $(other @ MessageType::$answer(_) => Err(other),)*
                    $(other @ MessageType::$other(_) => Err(other),)*
                }
            }

            /// The envelope body that carries this request.
            pub fn into_message(self) -> MessageType {
                match self {
                    $(Self::$kind(r) => MessageType::$request(uncarry!($($boxed)?, r)),)*
                }
            }

            /// Its kind.
            pub fn kind(&self) -> RequestKind {
                match self {
                    $(Self::$kind(_) => RequestKind::$kind,)*
                }
            }

            /// A request of `kind` with every field at its default (no provider named).
            pub fn empty(kind: RequestKind) -> Self {
                match kind {
                    $(RequestKind::$kind => Self::$kind(Default::default()),)*
                }
            }
        }

        $(
            impl Exchange for $body {
                type Answer = $answer_body;
                const KIND: RequestKind = RequestKind::$kind;

                fn into_message(self) -> MessageType {
                    MessageType::$request(self)
                }

                fn answer_of(body: MessageType) -> Result<Self::Answer, MessageType> {
                    match body {
                        MessageType::$answer(a) => Ok(a),
                        other => Err(other),
                    }
                }

                fn answer_message(answer: Self::Answer) -> MessageType {
                    MessageType::$answer(answer)
                }
            }
        )*

        /// The envelope field that carries `body` (`state_request`,
        /// `progress_message`, ...): every body of the `oneof` has one.
        pub fn message_name(body: &MessageType) -> &'static str {
            match body {
                $(MessageType::$request(_) => $request_name,)*
                $(MessageType::$answer(_) => $answer_name,)*
                $(MessageType::$other(_) => $other_name,)*
            }
        }
    };
}

/// A request body of one kind and the answer azd expects to it: what lets a
/// caller send a typed request and get the typed answer back.
pub trait Exchange: Sized {
    /// The body of the answer.
    type Answer;
    /// The kind of the request.
    const KIND: RequestKind;
    /// The envelope body that carries the request.
    fn into_message(self) -> MessageType;
    /// The answer an envelope body carries, if it is this request's; anything
    /// else is handed back.
    fn answer_of(body: MessageType) -> Result<Self::Answer, MessageType>;
    /// The envelope body that carries the answer.
    fn answer_message(answer: Self::Answer) -> MessageType;
}

request_kinds! {
    kinds: {
        /// `initialize_request`: a fresh provider instance for one layer (boxed
        /// in a [`Request`]: it is by far the largest, and the rarest).
        Initialize {
            request: 4 "initialize_request" InitializeRequest(pb::ProvisioningInitializeRequest, Box),
            answer: 5 "initialize_response" InitializeResponse(pb::ProvisioningInitializeResponse),
            name: "initialize",
            progress: false,
        }
        /// `state_request`: what is deployed now.
        State {
            request: 6 "state_request" StateRequest(pb::ProvisioningStateRequest),
            answer: 7 "state_response" StateResponse(pb::ProvisioningStateResponse),
            name: "state",
            progress: false,
        }
        /// `deploy_request`: provision the layer.
        Deploy {
            request: 8 "deploy_request" DeployRequest(pb::ProvisioningDeployRequest),
            answer: 9 "deploy_response" DeployResponse(pb::ProvisioningDeployResponse),
            name: "deploy",
            progress: true,
        }
        /// `preview_request`: what a deploy would do.
        Preview {
            request: 10 "preview_request" PreviewRequest(pb::ProvisioningPreviewRequest),
            answer: 11 "preview_response" PreviewResponse(pb::ProvisioningPreviewResponse),
            name: "preview",
            progress: true,
        }
        /// `destroy_request`: remove what the layer provisioned.
        Destroy {
            request: 12 "destroy_request" DestroyRequest(pb::ProvisioningDestroyRequest),
            answer: 13 "destroy_response" DestroyResponse(pb::ProvisioningDestroyResponse),
            name: "destroy",
            progress: true,
        }
        /// `ensure_env_request`: make sure the environment has what the provider needs.
        EnsureEnv {
            request: 14 "ensure_env_request" EnsureEnvRequest(pb::ProvisioningEnsureEnvRequest),
            answer: 15 "ensure_env_response" EnsureEnvResponse(pb::ProvisioningEnsureEnvResponse),
            name: "ensure-env",
            progress: false,
        }
        /// `parameters_request`: the inputs the provider takes.
        Parameters {
            request: 16 "parameters_request" ParametersRequest(pb::ProvisioningParametersRequest),
            answer: 17 "parameters_response" ParametersResponse(pb::ProvisioningParametersResponse),
            name: "parameters",
            progress: false,
        }
        /// `planned_outputs_request`: the outputs a deploy will produce.
        PlannedOutputs {
            request: 19 "planned_outputs_request"
                PlannedOutputsRequest(pb::ProvisioningPlannedOutputsRequest),
            answer: 20 "planned_outputs_response"
                PlannedOutputsResponse(pb::ProvisioningPlannedOutputsResponse),
            name: "planned-outputs",
            progress: false,
        }
    }
    // Every other body of the envelope's `oneof`: neither a request nor an answer.
    others: {
        RegisterProvisioningProviderRequest "register_provisioning_provider_request",
        RegisterProvisioningProviderResponse "register_provisioning_provider_response",
        ProgressMessage "progress_message",
    }
}

impl RequestKind {
    /// The kind of an envelope, if it carries a request azd may send.
    pub fn of(msg: &ProvisioningMessage) -> Option<Self> {
        msg.message_type.as_ref().and_then(Self::of_message)
    }

    /// The kind carried by envelope field `field`, if that field is a request.
    pub fn from_envelope_field(field: u32) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.envelope_field() == field)
    }

    /// The kind called `name` ([`RequestKind::name`]), if there is one.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.name() == name)
    }
}

impl std::fmt::Display for RequestKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Request {
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
    use prost::Message as _;

    use super::*;

    /// An envelope whose body is field `field`, empty, as prost reads it.
    fn body_in_field(field: u32) -> Option<MessageType> {
        let mut bytes = Vec::new();
        prost::encoding::encode_key(
            field,
            prost::encoding::WireType::LengthDelimited,
            &mut bytes,
        );
        bytes.push(0);
        ProvisioningMessage::decode(&bytes[..])
            .expect("an envelope")
            .message_type
    }

    /// The fields of the envelope's `oneof`, by number, as protoc wrote them.
    fn oneof_fields() -> Vec<(u32, String)> {
        let set = prost_types::FileDescriptorSet::decode(crate::FILE_DESCRIPTOR_SET).unwrap();
        let envelope = set
            .file
            .iter()
            .filter(|f| f.package() == "azdext")
            .flat_map(|f| &f.message_type)
            .find(|m| m.name() == "ProvisioningMessage")
            .expect("the envelope's descriptor");
        envelope
            .field
            .iter()
            .filter(|f| f.oneof_index.is_some())
            .map(|f| (u32::try_from(f.number()).unwrap(), f.name().to_owned()))
            .collect()
    }

    #[test]
    fn every_kind_of_the_table_round_trips_through_every_mapping() {
        for kind in RequestKind::ALL {
            // Name and envelope field, both ways.
            assert_eq!(RequestKind::from_name(kind.name()), Some(kind));
            assert_eq!(kind.to_string(), kind.name());
            assert_eq!(
                RequestKind::from_envelope_field(kind.envelope_field()),
                Some(kind)
            );
            assert_eq!(RequestKind::from_envelope_field(kind.answer_field()), None);
            // The request, as prost reads its field: the kind, its name, its body.
            let body = body_in_field(kind.envelope_field()).expect("a request body");
            assert_eq!(RequestKind::of_message(&body), Some(kind), "{kind}");
            assert_eq!(RequestKind::of_answer(&body), None, "{kind}");
            assert_eq!(message_name(&body), kind.request_name(), "{kind}");
            let request = Request::from_message(body.clone()).expect("a request");
            assert_eq!(request, Request::empty(kind));
            assert_eq!(request.kind(), kind);
            assert_eq!(request.clone().into_message(), body);
            let envelope = ProvisioningMessage {
                request_id: "r".into(),
                error: None,
                message_type: Some(request.into_message()),
            };
            assert_eq!(RequestKind::of(&envelope), Some(kind));
            // Its answer, likewise.
            let answer = body_in_field(kind.answer_field()).expect("an answer body");
            assert_eq!(RequestKind::of_answer(&answer), Some(kind), "{kind}");
            assert_eq!(RequestKind::of_message(&answer), None, "{kind}");
            assert_eq!(message_name(&answer), kind.answer_name(), "{kind}");
            assert!(Request::from_message(answer).is_err());
        }
        let names: std::collections::BTreeSet<&str> =
            RequestKind::ALL.iter().map(|k| k.name()).collect();
        assert_eq!(names.len(), RequestKind::ALL.len());
        assert_eq!(RequestKind::from_name("nothing"), None);
        assert_eq!(RequestKind::from_envelope_field(7), None);
    }

    #[test]
    fn the_table_names_every_field_of_the_envelope_as_protoc_does() {
        let fields = oneof_fields();
        assert_eq!(fields.len(), 19);
        let mut kinds_seen = Vec::new();
        for (number, name) in &fields {
            let body = body_in_field(*number).expect("a body");
            assert_eq!(message_name(&body), name, "field {number}");
            if let Some(kind) = RequestKind::of_message(&body) {
                assert_eq!(kind.envelope_field(), *number);
                kinds_seen.push(kind);
            }
            if let Some(kind) = RequestKind::of_answer(&body) {
                assert_eq!(kind.answer_field(), *number);
            }
        }
        assert_eq!(kinds_seen, RequestKind::ALL);
    }

    #[test]
    fn a_typed_exchange_knows_its_kind_and_its_answer() {
        fn check<E: Exchange>(request: E, answer: E::Answer)
        where
            E::Answer: PartialEq + std::fmt::Debug,
        {
            let body = request.into_message();
            assert_eq!(RequestKind::of_message(&body), Some(E::KIND));
            let answered = E::answer_message(answer);
            assert_eq!(RequestKind::of_answer(&answered), Some(E::KIND));
            assert!(E::answer_of(body).is_err());
            assert!(E::answer_of(answered).is_ok());
        }
        check(pb::ProvisioningStateRequest::default(), Default::default());
        check(
            pb::ProvisioningInitializeRequest::default(),
            Default::default(),
        );
        check(
            pb::ProvisioningPlannedOutputsRequest::default(),
            Default::default(),
        );
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

    #[test]
    fn only_initialize_names_no_provider() {
        for kind in RequestKind::ALL {
            let named = Request::empty(kind).provider_name().is_some();
            assert_eq!(named, kind != RequestKind::Initialize, "{kind}");
        }
    }
}
