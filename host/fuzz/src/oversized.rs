//! Envelopes with one field as long as azd's messages allow: the quoted-field campaign.
//!
//! azd may send any string field as long as a message may be (4 MiB). A host that quotes
//! such a field back (an unknown provider's name, a project path, a config value in a
//! provider's error, a state hint in an output) answers with a message larger than azd
//! reads, and azd's server ends the stream over it: every later request is lost. An
//! [`Oversized`] says which request, which field and how long; [`drive`] sends them to a
//! provider's stream through the simulated azd (which, as azd, ends the stream on a
//! message past 4 MiB) and checks that:
//!
//! - every request whose id can be answered within the limit gets exactly one answer,
//!   under its id, within the limit (the simulated azd would have ended the stream);
//! - a request whose id alone leaves no room for an answer gets none, and the stream
//!   serves on;
//! - the stream lives through it all: a State sent last is answered.
//!
//! Kept findings are one line each (`<kind> <field> <length>`), in
//! `host/fuzz/regressions/oversized/*.txt`, replayed first.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use azd_wasm_host_proto::azdext as pb;
use azd_wasm_host_proto::{MAX_MESSAGE_BYTES, RequestKind};
use azd_wasm_host_sim::{CallError, ProviderHandle};
use pb::provisioning_message::MessageType;
use prost::Message as _;
use prost_types::value::Kind;

use crate::{Campaign, Tally};

/// The fields a sample makes long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// The envelope's `request_id` (echoed in every answer and progress message).
    RequestId,
    /// `provider_name` of any request but Initialize.
    ProviderName,
    /// Initialize's `options.provider`.
    OptionsProvider,
    /// Initialize's `project_path`.
    ProjectPath,
    /// Initialize's layer name (`options.name`).
    LayerName,
    /// A key of Initialize's `options.config`.
    ConfigKey,
    /// A value of Initialize's `options.config`.
    ConfigValue,
    /// A value of Initialize's `options.virtual_env`.
    VirtualEnv,
    /// State's `options.hint`.
    Hint,
}

impl Field {
    const ALL: [Self; 9] = [
        Self::RequestId,
        Self::ProviderName,
        Self::OptionsProvider,
        Self::ProjectPath,
        Self::LayerName,
        Self::ConfigKey,
        Self::ConfigValue,
        Self::VirtualEnv,
        Self::Hint,
    ];

    fn name(self) -> &'static str {
        match self {
            Self::RequestId => "request_id",
            Self::ProviderName => "provider_name",
            Self::OptionsProvider => "options.provider",
            Self::ProjectPath => "project_path",
            Self::LayerName => "options.name",
            Self::ConfigKey => "config_key",
            Self::ConfigValue => "config_value",
            Self::VirtualEnv => "virtual_env",
            Self::Hint => "hint",
        }
    }

    /// Whether requests of `kind` carry this field.
    fn in_kind(self, kind: RequestKind) -> bool {
        match self {
            Self::RequestId => true,
            Self::ProviderName => kind != RequestKind::Initialize,
            Self::OptionsProvider
            | Self::ProjectPath
            | Self::LayerName
            | Self::ConfigKey
            | Self::ConfigValue
            | Self::VirtualEnv => kind == RequestKind::Initialize,
            Self::Hint => kind == RequestKind::State,
        }
    }
}

/// One request with one field `len` bytes long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Oversized {
    /// The request.
    pub kind: RequestKind,
    /// The field made long.
    pub field: Field,
    /// Its length in bytes.
    pub len: usize,
}

/// The longest field a sample has: what fits in one of azd's messages, with room for
/// the rest of the envelope (and, for an id, too little for an error answer).
const LONGEST: usize = MAX_MESSAGE_BYTES - 128;

/// Lengths drawn most often: around the points where quoting a field once or twice,
/// or echoing it in progress, passes the limit.
const EDGES: [usize; 7] = [
    64 * 1024,
    MAX_MESSAGE_BYTES / 2 - 64,
    MAX_MESSAGE_BYTES / 2 + 64,
    2_900_000,
    3_000_000,
    MAX_MESSAGE_BYTES - 4096,
    LONGEST,
];

impl Oversized {
    /// A random sample.
    pub fn random(rng: &mut fastrand::Rng) -> Self {
        let kind = RequestKind::ALL[rng.usize(..RequestKind::ALL.len())];
        let fields: Vec<Field> = Field::ALL.into_iter().filter(|f| f.in_kind(kind)).collect();
        let field = fields[rng.usize(..fields.len())];
        let len = if rng.bool() {
            EDGES[rng.usize(..EDGES.len())]
        } else {
            rng.usize(1024..=LONGEST)
        };
        Self { kind, field, len }
    }

    /// Reads a kept line: `<kind> <field> <length>`.
    pub fn parse(line: &str) -> Result<Self, String> {
        let mut words = line.split_whitespace();
        let (Some(kind), Some(field), Some(len), None) =
            (words.next(), words.next(), words.next(), words.next())
        else {
            return Err(format!("{line:?} is not `<kind> <field> <length>`"));
        };
        let kind = RequestKind::from_name(kind)
            .ok_or_else(|| format!("{kind:?} is not a request kind"))?;
        let field = Field::ALL
            .into_iter()
            .find(|f| f.name() == field)
            .filter(|f| f.in_kind(kind))
            .ok_or_else(|| format!("{field:?} is not a field of {kind}"))?;
        let len = len
            .parse::<usize>()
            .ok()
            .filter(|l| *l <= LONGEST)
            .ok_or_else(|| format!("{len:?} is not a length up to {LONGEST}"))?;
        Ok(Self { kind, field, len })
    }

    /// The envelope: request `id` (unless the id is the long field) for `provider`.
    pub fn envelope(&self, id: &str, provider: &str) -> pb::ProvisioningMessage {
        let long = |f: Field| (self.field == f).then(|| "q".repeat(self.len));
        let name = long(Field::ProviderName).unwrap_or_else(|| provider.to_owned());
        let body = match self.kind {
            RequestKind::Initialize => {
                let key = long(Field::ConfigKey).unwrap_or_else(|| "name".into());
                let value = long(Field::ConfigValue).unwrap_or_else(|| "x".into());
                MessageType::InitializeRequest(pb::ProvisioningInitializeRequest {
                    project_path: long(Field::ProjectPath).unwrap_or_else(|| "/project".into()),
                    options: Some(pb::ProvisioningOptions {
                        provider: long(Field::OptionsProvider)
                            .unwrap_or_else(|| provider.to_owned()),
                        name: long(Field::LayerName).unwrap_or_default(),
                        config: Some(prost_types::Struct {
                            fields: [(
                                key,
                                prost_types::Value {
                                    kind: Some(Kind::StringValue(value)),
                                },
                            )]
                            .into(),
                        }),
                        virtual_env: long(Field::VirtualEnv)
                            .map(|v| [("EARLIER".to_owned(), v)].into())
                            .unwrap_or_default(),
                        ..Default::default()
                    }),
                })
            }
            RequestKind::State => MessageType::StateRequest(pb::ProvisioningStateRequest {
                options: Some(pb::ProvisioningStateOptions {
                    hint: long(Field::Hint).unwrap_or_default(),
                }),
                provider_name: name,
            }),
            RequestKind::Deploy => MessageType::DeployRequest(pb::ProvisioningDeployRequest {
                provider_name: name,
            }),
            RequestKind::Preview => MessageType::PreviewRequest(pb::ProvisioningPreviewRequest {
                provider_name: name,
            }),
            RequestKind::Destroy => MessageType::DestroyRequest(pb::ProvisioningDestroyRequest {
                options: None,
                provider_name: name,
            }),
            RequestKind::EnsureEnv => {
                MessageType::EnsureEnvRequest(pb::ProvisioningEnsureEnvRequest {
                    provider_name: name,
                })
            }
            RequestKind::Parameters => {
                MessageType::ParametersRequest(pb::ProvisioningParametersRequest {
                    provider_name: name,
                })
            }
            RequestKind::PlannedOutputs => {
                MessageType::PlannedOutputsRequest(pb::ProvisioningPlannedOutputsRequest {
                    provider_name: name,
                })
            }
        };
        // A long id still starts with the sample's own: ids are never used twice.
        let request_id = match self.field {
            Field::RequestId => {
                let mut long = format!("{id}-");
                long.extend(std::iter::repeat_n(
                    'q',
                    self.len.saturating_sub(long.len()),
                ));
                long
            }
            _ => id.to_owned(),
        };
        pb::ProvisioningMessage {
            request_id,
            error: None,
            message_type: Some(body),
        }
    }
}

impl std::fmt::Display for Oversized {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {} {}", self.kind, self.field.name(), self.len)
    }
}

/// The kept findings (`host/fuzz/regressions/oversized/*.txt`), by file name.
pub fn kept() -> Vec<(String, Oversized)> {
    let dir: PathBuf = crate::regressions_dir("oversized");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut out: Vec<(String, Oversized)> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap_or_default();
            let sample =
                Oversized::parse(text.trim()).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            let name = p
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            (name, sample)
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// An answer under an id this long cannot fit azd's limit, whatever it says.
fn unanswerable(msg: &pb::ProvisioningMessage) -> bool {
    msg.request_id.len() > MAX_MESSAGE_BYTES - 4096
}

/// Sends one sample and checks what came back.
async fn exercise(
    h: &ProviderHandle,
    quick: &ProviderHandle,
    id: &str,
    sample: Oversized,
    tally: &mut Tally,
) {
    let msg = sample.envelope(id, h.name());
    let expected_id = msg.request_id.clone();
    let label = sample.to_string();
    if unanswerable(&msg) {
        // Nothing that names the request fits: no answer, and the stream goes on.
        match quick.send_raw(msg).await {
            Err(CallError::Timeout) => tally.record("unanswerable", &label),
            Ok(raw) if raw.answer.encoded_len() <= MAX_MESSAGE_BYTES => {
                tally.record("answered", "an id near the limit")
            }
            Ok(raw) => tally.fail(
                label.as_bytes(),
                format!("{label}: an answer of {} bytes", raw.answer.encoded_len()),
            ),
            Err(e) => tally.fail(label.as_bytes(), format!("{label}: {}", short(&e))),
        }
        return;
    }
    match h.send_raw(msg).await {
        Ok(raw) if raw.answer.request_id != expected_id => {
            tally.fail(
                label.as_bytes(),
                format!("{label}: answered under another id"),
            );
        }
        Ok(raw) => {
            let code = raw
                .answer
                .error
                .as_ref()
                .and_then(|e| match &e.source {
                    Some(pb::extension_error::Source::LocalError(l)) => Some(l.code.clone()),
                    _ => None,
                })
                .unwrap_or_else(|| "ok".into());
            tally.record("answered", &code);
        }
        Err(e) => tally.fail(label.as_bytes(), format!("{label}: {}", short(&e))),
    }
}

/// The start of what `e` says (it may quote a whole id).
fn short(e: &CallError) -> String {
    let text = e.to_string();
    text[..text.floor_char_boundary(300)].to_owned()
}

/// Sends the kept findings, then random samples on `workers` tasks until the campaign's
/// time is up, to `h`'s provider; checks the stream serves on. Returns the campaign and
/// every tally, for [`Campaign::finish`].
pub async fn drive(campaign: Campaign, h: &ProviderHandle, workers: u64) -> (Campaign, Vec<Tally>) {
    // How long a request that cannot be answered is waited for.
    let quick = h.with_call_timeout(Duration::from_millis(1500));
    let mut first = campaign.tally();
    let kept = kept();
    assert!(!kept.is_empty(), "no kept oversized samples");
    for (name, sample) in kept {
        exercise(h, &quick, &format!("kept-{name}"), sample, &mut first).await;
    }
    let campaign = Arc::new(campaign);
    let mut running = Vec::new();
    for w in 0..workers {
        let (campaign, h, quick) = (campaign.clone(), h.clone(), quick.clone());
        running.push(tokio::spawn(async move {
            let mut rng = campaign.rng(w);
            let mut tally = campaign.tally();
            let mut n = 0u64;
            while campaign.running() && !h.is_closed() {
                n += 1;
                let sample = Oversized::random(&mut rng);
                exercise(&h, &quick, &format!("o{w}-{n}"), sample, &mut tally).await;
            }
            tally
        }));
    }
    let mut tallies = vec![first];
    for worker in running {
        tallies.push(worker.await.expect("a fuzz worker panicked"));
    }
    let mut end = campaign.tally();
    let last = pb::ProvisioningMessage {
        request_id: "oversized-last".into(),
        error: None,
        message_type: Some(MessageType::StateRequest(pb::ProvisioningStateRequest {
            options: None,
            provider_name: h.name().to_owned(),
        })),
    };
    match h.send_raw(last).await {
        Ok(_) => end.record("answered", "the last request"),
        Err(e) => end.fail(
            b"",
            format!(
                "the stream does not answer after the campaign: {}",
                short(&e)
            ),
        ),
    }
    if h.stray_messages() > 0 {
        end.fail(b"", format!("{} stray messages", h.stray_messages()));
    }
    tallies.push(end);
    let campaign = Arc::try_unwrap(campaign).expect("every worker is done");
    (campaign, tallies)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_lines_read_back_and_bad_ones_are_refused() {
        let s = Oversized::parse("state provider_name 3000000").unwrap();
        assert_eq!(s.kind, RequestKind::State);
        assert_eq!(s.field, Field::ProviderName);
        assert_eq!(Oversized::parse(&s.to_string()), Ok(s));
        let envelope = s.envelope("id", "p");
        assert!(envelope.encoded_len() > 3_000_000 && envelope.encoded_len() < MAX_MESSAGE_BYTES);
        for bad in [
            "state hint",
            "initialize hint 5",
            "state hint 99999999",
            "nope hint 1",
        ] {
            assert!(Oversized::parse(bad).is_err(), "{bad}");
        }
        assert!(!kept().is_empty());
    }

    #[test]
    fn every_sample_fits_in_one_of_azds_messages() {
        let mut rng = fastrand::Rng::with_seed(7);
        for _ in 0..200 {
            let s = Oversized::random(&mut rng);
            let len = s.envelope("some-id", "provider").encoded_len();
            assert!(len <= MAX_MESSAGE_BYTES, "{s}: {len}");
            assert!(len >= s.len, "{s}");
        }
    }
}
