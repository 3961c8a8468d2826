//! How `run` ends: the exit code, and the error as people or programs read it
//! (`--output json` puts it in the JSON document on stdout).
//!
//! | code | meaning |
//! |------|---------|
//! | 0    | done (`preview --detailed-exitcode`: no changes pending) |
//! | 1    | the provider answered with an error (azd would show it and fail) |
//! | 2    | `preview --detailed-exitcode`: done, changes pending |
//! | 64   | usage: bad arguments, no `azure.yaml` or `infra.provider`, a provider name that is not the one `azure.yaml` asks for, an invalid environment name, a `.env` azd could not read; nothing ran |
//! | 70   | the provider's component or the host failed: it could not load, trapped, ran out of time or memory, broke the protocol, or an output could not be saved |
//! | 130  | interrupted (Ctrl-C); the provider was stopped and waited for |

use azd_wasm_host_core::{ErrorDetail, ProviderError};
use azd_wasm_host_sim::CallError;

use super::args::{Output, RunArgs};
use super::view::{ProgressView, Report};

/// The exit codes of `run`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Done.
    Done,
    /// The provider answered with an error.
    ProviderFailed,
    /// `preview --detailed-exitcode` found changes pending.
    ChangesPending,
    /// Bad arguments or project; nothing ran.
    Usage,
    /// The provider's component or the host failed.
    Fault,
    /// Ctrl-C.
    Interrupted,
}

impl Exit {
    /// The process exit code.
    pub fn code(self) -> u8 {
        match self {
            Self::Done => 0,
            Self::ProviderFailed => 1,
            Self::ChangesPending => 2,
            Self::Usage => 64,
            Self::Fault => 70,
            Self::Interrupted => 130,
        }
    }
}

/// Why a command did not finish.
#[derive(Debug)]
pub(super) enum Failure {
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
    pub(super) fn from_call(e: CallError) -> Self {
        match e {
            CallError::Extension(e) => Self::Provider(ProviderError::from_wire(&e)),
            other => Self::Host(anyhow::anyhow!(
                "the provider did not answer properly: {other}"
            )),
        }
    }

    fn exit(&self) -> Exit {
        match self {
            Self::Usage(_) => Exit::Usage,
            Self::Provider(e) if e.is_fault() => Exit::Fault,
            Self::Provider(_) => Exit::ProviderFailed,
            Self::Host(_) => Exit::Fault,
            Self::Interrupted => Exit::Interrupted,
        }
    }

    /// The error as `--output json` shows it.
    fn to_json(&self) -> serde_json::Value {
        let kind = match self.exit() {
            Exit::Usage => "usage",
            Exit::ProviderFailed => "provider",
            Exit::Interrupted => "interrupted",
            _ => "fault",
        };
        let mut error = serde_json::json!({ "kind": kind, "message": self.message() });
        if let Self::Provider(e) = self {
            let fields = error.as_object_mut().expect("an object");
            if !e.suggestion.is_empty() {
                fields.insert("suggestion".into(), e.suggestion.clone().into());
            }
            match &e.detail {
                Some(ErrorDetail::Local { code, category }) => {
                    fields.insert("code".into(), code.clone().into());
                    fields.insert("category".into(), category.clone().into());
                }
                Some(ErrorDetail::Service {
                    error_code,
                    status_code,
                    service_name,
                }) => {
                    fields.insert("code".into(), error_code.clone().into());
                    fields.insert("statusCode".into(), (*status_code).into());
                    fields.insert("service".into(), service_name.clone().into());
                }
                None => {}
            }
            let links: Vec<_> = e
                .links
                .iter()
                .map(|l| serde_json::json!({ "title": l.title, "url": l.url }))
                .collect();
            if !links.is_empty() {
                fields.insert("links".into(), links.into());
            }
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
    fn print(&self) {
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

/// Reports a failure; returns its exit code.
/// `seen` holds what the provider reported and asked before it failed.
pub(super) fn failed(args: &RunArgs, failure: &Failure, seen: &ProgressView) -> Exit {
    failure.print();
    if args.output == Output::Json {
        let mut doc =
            serde_json::json!({ "command": args.action.name(), "error": failure.to_json() });
        let (progress, prompts) = (seen.reported(), seen.questions());
        if let Some(fields) = doc.as_object_mut() {
            if !progress.is_empty() {
                fields.insert("progress".into(), progress.into());
            }
            if !prompts.is_empty() {
                let prompts = serde_json::to_value(prompts).unwrap_or_default();
                fields.insert("prompts".into(), prompts);
            }
        }
        println!("{doc:#}");
    }
    failure.exit()
}

/// Prints the report, then runs `save` (which writes outputs to `.env`);
/// returns the exit code.
pub(super) fn succeeded(
    args: &RunArgs,
    report: &Report,
    save: impl FnOnce() -> anyhow::Result<()>,
) -> Exit {
    let pending = report.changes_pending();
    let exit = if args.detailed_exitcode && pending {
        Exit::ChangesPending
    } else {
        Exit::Done
    };
    if args.output == Output::Json {
        // One document: the report, with the error when saving failed.
        let saved = save().map_err(Failure::Host);
        let mut doc = serde_json::to_value(report).unwrap_or_default();
        if let (Err(f), Some(fields)) = (&saved, doc.as_object_mut()) {
            fields.insert("error".into(), f.to_json());
            f.print();
        }
        println!("{doc:#}");
        return saved.map_or(Exit::Fault, |()| exit);
    }
    if let Err(e) = report.print() {
        eprintln!("azd-wasm-host: cannot print the result: {e}");
    }
    match save() {
        Ok(()) => exit,
        Err(e) => {
            Failure::Host(e).print();
            Exit::Fault
        }
    }
}
