//! # azd-wasm-host-sim
//!
//! A simulated azd: plays azd's part of the extension protocol over real loopback gRPC.
//!
//! [`SimAzd::start`] serves `ProvisioningService` and `ExtensionService` on `127.0.0.1:0`
//! with azd's rules: every call and stream must carry `authorization: <raw JWT>` signed with
//! a key random per run (else UNAUTHENTICATED "invalid token"); a stream from a token
//! without the `provisioning-provider` capability is refused with PERMISSION_DENIED;
//! messages are limited to 4 MiB each way and gzip is accepted.
//!
//! An extension is started with [`SimAzd::spawn_extension`] (as a child process, `listen`,
//! azd's environment, azd's Ready timeout) or connects in-process using [`SimAzd::env`];
//! [`SimAzd::provider`] then returns a [`ProviderHandle`] that sends azd's requests and
//! checks each answer for what would crash or confuse azd ([`CallError::Protocol`]).
//! [`SimAzd::close_streams`] is "azd goes away": the extension sees its stream end.
//!
//! Used by `azd-wasm-host run` and, as a dev-dependency, by the tests. It knows
//! azd's wire (the server half of the protos), not the extension's code: what it
//! reports is what azd would see.
//!
//! It serves azd's contracts as an azd version does ([`ContractMode`]: `azdext` only as every
//! azd released up to 1.34.0, both as the versioned contract expected after 1.34,
//! `azd.extensions.v1` only as azd once its bridge is gone) and records every call
//! ([`SimAzd::calls`], [`SimAzd::legacy_calls`]).
//!
//! Modules: `auth` (tokens), `contract` (the contracts served), `streams` (the extension's gRPC services, Ready and
//! the provisioning stream, and the stream reader), `env_prompt` (azd's
//! environment and prompt services), `state` (the environment and the
//! prompter they serve),
//! `options` ([`SimOptions`]), `conn` (one stream: writer, waiting calls, routing), `handle` (typed calls
//! and the checks of their answers), `process` (extensions started as azd
//! starts them), `error` ([`CallError`]).

mod auth;
mod azd;
mod conn;
mod contract;
mod cut;
mod env_prompt;
mod error;
mod handle;
mod options;
mod process;
mod state;
mod streams;
mod wire;

mod generated;

pub use auth::{ExtensionClaims, PROVISIONING_CAPABILITY, TOKEN_LIFETIME, unix_now};
pub use azd::SimAzd;
pub use contract::ContractMode;
pub use env_prompt::NO_PROMPT_SUGGESTION;
pub use error::{CallError, SimError};
pub use handle::{DEFAULT_CALL_TIMEOUT, OUTPUT_TYPES, ProviderHandle, RawExchange, message_kind};
pub use options::SimOptions;
pub use process::{DEFAULT_READY_TIMEOUT, ExtensionProcess, SpawnOptions, ready_timeout_from_env};
pub use state::{AnswerAll, NoPrompt, Prompter, SimEnvironment};
