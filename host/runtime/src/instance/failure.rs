//! The errors of a guest call that did not answer: what azd is told when the
//! host stopped a guest (deadline, cancellation) or the guest failed (trap,
//! out of memory, a transfer too large), and what the sandbox refused on the
//! way.
//!
//! | what happened | code |
//! |---|---|
//! | the guest trapped (panic, `unreachable`, stack overflow, exit) | `provider_trapped` |
//! | the call ran past `call_timeout_secs` | `provider_timeout` |
//! | it trapped after its budget refused to grow a memory or table | `provider_out_of_memory` |
//! | it handed the host more than [`MAX_GUEST_TRANSFER`] at once | `answer_too_large` |
//! | the request was cancelled (azd went away) | `provider_cancelled` |
//! | a call after one of these | `provider_crashed` (needs Initialize) |

use azd_wasm_host_core::{ErrorCode, ProviderError};
use wasmtime::Trap;

use crate::bindings::azd::provisioning0_1_0::types as wit;
use crate::convert;
use crate::instance::store::HostState;
use crate::sandbox::StopReason;
use crate::sandbox::memory::MAX_GUEST_TRANSFER;
use azd_wasm_host_manifest::Policy;

/// What to do about a guest stopped at its call deadline.
const RAISE_TIMEOUT: &str =
    "if the provider needs longer, raise `call_timeout_secs` in its provider.toml";

/// The error for a guest the host stopped (deadline or cancellation).
pub(crate) fn stopped(
    name: &str,
    policy: &Policy,
    what: &str,
    reason: StopReason,
) -> ProviderError {
    tracing::debug!(provider = %name, call = what, ?reason, "guest call stopped; instance dropped");
    match reason {
        StopReason::Cancelled => cancelled(name, what),
        StopReason::Timeout => ProviderError::host(
            ErrorCode::ProviderTimeout,
            format!(
                "provider `{name}` did not finish `{what}` within {} s and was stopped",
                policy.call_timeout_secs
            ),
        )
        .with_suggestion(RAISE_TIMEOUT),
    }
}

/// The error for start code (run as the component is instantiated, ahead of
/// azd's first Initialize) that the host stopped at the call deadline.
pub(crate) fn start_code_timed_out(name: &str, policy: &Policy) -> ProviderError {
    ProviderError::host(
        ErrorCode::ProviderTimeout,
        format!(
            "provider `{name}` did not finish its start code (run as its component is \
             instantiated, before `initialize`) within {} s and was stopped",
            policy.call_timeout_secs
        ),
    )
    .with_suggestion(RAISE_TIMEOUT)
}

/// The error for a call that trapped, with what the sandbox refused during
/// it and the guest's last stderr lines.
pub(crate) fn failed_call(
    name: &str,
    policy: &Policy,
    what: &str,
    trap: &wasmtime::Error,
    state: &mut HostState,
) -> ProviderError {
    let memory_denied = state.limits.take_denied();
    let err = trap_error(name, policy, what, trap, memory_denied);
    let err = with_http_denied(err, &state.http.take_denied());
    with_guest_stderr(err, &state.stderr_tail())
}

/// An error the guest returned, with the HTTP origins the sandbox refused it
/// during the call.
pub(crate) fn guest_error(e: wit::Error, state: &mut HostState) -> ProviderError {
    with_http_denied(convert::error_from_wit(e), &state.http.take_denied())
}

/// The error for a call that did not return normally; `memory_denied`
/// says whether the budget refused a grow during the call.
fn trap_error(
    name: &str,
    policy: &Policy,
    what: &str,
    error: &wasmtime::Error,
    memory_denied: bool,
) -> ProviderError {
    tracing::warn!(provider = %name, call = what, error = ?error, "provider call failed; instance retired");
    if is_transfer_too_large(error) {
        return ProviderError::host(
            ErrorCode::AnswerTooLarge,
            format!(
                "provider `{name}` handed the host more than {} MiB at once during `{what}` \
                 (an answer, or a progress or log text); azd accepts at most 4 MiB per answer",
                MAX_GUEST_TRANSFER >> 20
            ),
        )
        .with_suggestion("Return fewer or smaller outputs, parameters or resources.");
    }
    if memory_denied {
        return ProviderError::host(
            ErrorCode::ProviderOutOfMemory,
            format!(
                "provider `{name}` ran out of memory during `{what}` (limit {} MiB)",
                policy.memory_mb
            ),
        )
        .with_suggestion("if the provider needs more, raise `memory_mb` in its provider.toml");
    }
    let trap = error.downcast_ref::<Trap>();
    let cause = match (trap, error.downcast_ref::<wasmtime_wasi::I32Exit>()) {
        (Some(Trap::StackOverflow), _) => "stack overflow (unbounded recursion?)".to_owned(),
        (Some(t), _) => format!("wasm trap: {t}"),
        (None, Some(exit)) => format!("it called exit({})", exit.0),
        (None, None) => first_line(error),
    };
    ProviderError::host(
        ErrorCode::ProviderTrapped,
        format!("provider `{name}` crashed during `{what}`: {cause}"),
    )
    .with_suggestion(
        "this is a bug in the provider; run azd with --debug for the guest's backtrace",
    )
}

/// Whether wasmtime refused to copy more than [`MAX_GUEST_TRANSFER`] out of
/// the guest (its "hostcall fuel" ran out). wasmtime keeps that error type
/// private, so its text is what identifies it.
fn is_transfer_too_large(error: &wasmtime::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .to_string()
            .contains("fuel allocated for hostcalls has been exhausted")
    })
}

fn first_line(e: &wasmtime::Error) -> String {
    let text = format!("{e:#}");
    text.lines().next().unwrap_or("unknown failure").to_owned()
}

/// The error for a call stopped because its request was cancelled.
pub(crate) fn cancelled(name: &str, what: &str) -> ProviderError {
    ProviderError::host(
        ErrorCode::ProviderCancelled,
        format!(
            "provider `{name}`: `{what}` was stopped because the request was cancelled (azd went away)"
        ),
    )
}

/// The error for a call on an instance a fault retired.
pub(crate) fn crashed(name: &str, why: &str) -> ProviderError {
    ProviderError::host(
        ErrorCode::ProviderCrashed,
        format!("provider `{name}` crashed, needs Initialize (earlier: {why})"),
    )
    .with_suggestion("run the azd command again: it initializes a fresh provider instance")
}

/// Says which HTTP origins the sandbox refused during the call, and the
/// grant that would allow them, ahead of any suggestion the guest made.
fn with_http_denied(mut err: ProviderError, origins: &[String]) -> ProviderError {
    if origins.is_empty() {
        return err;
    }
    let quoted: Vec<String> = origins.iter().map(|o| format!("{o:?}")).collect();
    let hint = format!(
        "The sandbox refused HTTP requests to {} (not granted): add {} to `allow` under \
         [policy.http] in provider.toml if the provider should reach {}.",
        origins.join(", "),
        quoted.join(", "),
        if origins.len() == 1 { "it" } else { "them" }
    );
    err.suggestion = if err.suggestion.is_empty() {
        hint
    } else {
        format!("{hint} {}", err.suggestion)
    };
    err
}

/// Adds what a guest last wrote to stderr (a traceback, an exception) to
/// the message, so its words reach the user.
fn with_guest_stderr(mut err: ProviderError, lines: &[String]) -> ProviderError {
    if !lines.is_empty() {
        err.message
            .push_str("\nThe provider's last lines on stderr:");
        for line in lines {
            err.message.push_str("\n  ");
            err.message.push_str(line);
        }
    }
    err
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refused_origins_lead_the_suggestion_and_stderr_follows_the_message() {
        let err = ProviderError::host(ErrorCode::ProviderTrapped, "boom").with_suggestion("retry");
        let err = with_http_denied(err, &["https://a.example:443".to_owned()]);
        assert!(
            err.suggestion.starts_with(
                "The sandbox refused HTTP requests to https://a.example:443 (not granted): add \
                 \"https://a.example:443\" to `allow` under [policy.http]"
            ),
            "{}",
            err.suggestion
        );
        assert!(err.suggestion.ends_with(" retry"), "{}", err.suggestion);
        let err = with_guest_stderr(err, &["Traceback".to_owned()]);
        assert_eq!(
            err.message,
            "boom\nThe provider's last lines on stderr:\n  Traceback"
        );
        let same = with_http_denied(with_guest_stderr(err.clone(), &[]), &[]);
        assert_eq!(same, err);
    }
}
