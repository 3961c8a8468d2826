//! How a command ends: the exit code, and the error as people or programs read it
//! (`--output json` puts it in the JSON document on stdout: [`RunError`]).
//!
//! | code | meaning |
//! |------|---------|
//! | 0    | done (`preview --detailed-exitcode`: no changes pending) |
//! | 1    | the provider answered with an error (azd would show it and fail) |
//! | 2    | `preview --detailed-exitcode`: done, changes pending |
//! | 64   | usage: bad arguments, no `azure.yaml` or `infra.provider`, a provider name that is not the one `azure.yaml` asks for, an invalid environment name, a `.env` azd could not read; nothing ran |
//! | 70   | the provider's component or the host failed: it could not load, trapped, ran out of time or memory, broke the protocol, or an output could not be saved |
//! | 130  | interrupted (Ctrl-C); the provider was stopped and waited for |

use azd_wasm_host_core::{ErrorDetail, Exit, ProviderError};
use azd_wasm_host_sim::CallError;

use super::report::{ErrorKind, ErrorLink, RunError};

/// Why a command did not finish.
#[derive(Debug)]
pub(crate) enum Failure {
    /// Found before anything ran.
    Usage(anyhow::Error),
    /// The provider's answer was an error.
    Provider(ProviderError),
    /// The host, the extension process or the simulated azd failed.
    Host(anyhow::Error),
    /// Ctrl-C.
    Interrupted,
}

impl Failure {
    /// A request that did not end in an answer: the provider's error, or
    /// the extension failing to answer at all.
    pub(crate) fn from_call(e: CallError) -> Self {
        match e {
            CallError::Extension(e) => Self::Provider(ProviderError::from_wire(&e)),
            other => Self::Host(anyhow::anyhow!(
                "the provider did not answer properly: {other}"
            )),
        }
    }

    pub(crate) fn exit(&self) -> Exit {
        match self {
            Self::Usage(_) => Exit::Usage,
            Self::Provider(e) if e.is_fault() => Exit::Fault,
            Self::Provider(_) => Exit::Failed,
            Self::Host(_) => Exit::Fault,
            Self::Interrupted => Exit::Interrupted,
        }
    }

    /// The error as `--output json` shows it.
    pub(crate) fn to_error(&self) -> RunError {
        let kind = match self.exit() {
            Exit::Usage => ErrorKind::Usage,
            Exit::Failed => ErrorKind::Provider,
            Exit::Interrupted => ErrorKind::Interrupted,
            _ => ErrorKind::Fault,
        };
        let mut error = RunError {
            kind,
            message: self.message(),
            suggestion: None,
            code: None,
            category: None,
            status_code: None,
            service: None,
            links: Vec::new(),
        };
        if let Self::Provider(e) = self {
            error.suggestion = (!e.suggestion.is_empty()).then(|| e.suggestion.clone());
            match &e.detail {
                Some(ErrorDetail::Local { code, category }) => {
                    error.code = Some(code.clone());
                    error.category = Some(category.clone());
                }
                Some(ErrorDetail::Service {
                    error_code,
                    status_code,
                    service_name,
                }) => {
                    error.code = Some(error_code.clone());
                    error.status_code = Some(*status_code);
                    error.service = Some(service_name.clone());
                }
                None => {}
            }
            error.links = e
                .links
                .iter()
                .map(|l| ErrorLink {
                    title: l.title.clone(),
                    url: l.url.clone(),
                })
                .collect();
        }
        error
    }

    fn message(&self) -> String {
        match self {
            Self::Usage(e) | Self::Host(e) => format!("{e:#}"),
            Self::Provider(e) => e.message.clone(),
            Self::Interrupted => "cancelled: the provider was stopped before it answered".into(),
        }
    }

    /// The error on stderr, for people.
    pub(crate) fn print(&self) {
        match self {
            Self::Provider(e) => super::view::print_error(e),
            Self::Usage(e) | Self::Host(e) => {
                eprintln!("azd-wasm-host: error: {e}");
                for cause in e.chain().skip(1) {
                    eprintln!("  caused by: {cause}");
                }
            }
            Self::Interrupted => {
                eprintln!("Cancelled: the provider was stopped before it answered.")
            }
        }
    }
}
