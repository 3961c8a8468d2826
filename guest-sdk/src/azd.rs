//! azd's own services: the values of the azd environment the command runs in,
//! and questions to the user on azd's terminal (world `0.2.0`).
//!
//! The host lets a call through only when the provider's manifest grants it:
//!
//! ```toml
//! [policy.azd]
//! environment = "read"   # or "read-write" for environment::set
//! prompt = true
//! ```
//!
//! Otherwise the call returns an [`Error`] (category `auth`) naming the grant.
//!
//! Off WebAssembly (a provider's native unit tests) there is no azd: the
//! environment reads this process's environment variables and keeps what is
//! set in memory, and every question gets its default (as azd does under
//! `--no-prompt`), or an error when it has none.

use crate::Error;

/// The azd environment of the running command.
pub mod environment {
    use super::{Error, imp};

    /// The environment's name (`-e`, `AZURE_ENV_NAME`, or the project's default).
    pub fn name() -> Result<String, Error> {
        imp::env_name()
    }

    /// One value; `None` when it is not set (an empty value reads as `None`).
    pub fn get(key: &str) -> Result<Option<String>, Error> {
        imp::env_get(key)
    }

    /// Every value, sorted by key.
    pub fn values() -> Result<Vec<(String, String)>, Error> {
        imp::env_values()
    }

    /// Sets a value; azd saves it to the environment's `.env`. Needs
    /// `environment = "read-write"`.
    pub fn set(key: &str, value: &str) -> Result<(), Error> {
        imp::env_set(key, value)
    }
}

/// Questions to the user on azd's terminal. Under `azd --no-prompt` azd
/// answers with the default, and fails a question that has none: give a default
/// to every question with a safe answer.
pub mod prompt {
    use super::{Error, imp};

    /// Whether the user can be asked (false under `--no-prompt`, or without the grant).
    pub fn interactive() -> bool {
        imp::interactive()
    }

    /// Asks a yes/no question; `default` is the answer under `--no-prompt`.
    pub fn confirm(message: &str, default: Option<bool>) -> Result<bool, Error> {
        imp::confirm(message, default)
    }

    /// Asks for text; `default` is the answer under `--no-prompt`. A `secret`
    /// answer is not echoed and never logged by the host.
    pub fn text(message: &str, default: Option<&str>, secret: bool) -> Result<String, Error> {
        imp::text(message, default, secret)
    }

    /// Asks to choose one of `choices` (`(value, label)` pairs); returns the
    /// chosen index. `default` is the index under `--no-prompt`.
    pub fn select(
        message: &str,
        choices: &[(&str, &str)],
        default: Option<u32>,
    ) -> Result<u32, Error> {
        imp::select(message, choices, default)
    }
}

#[cfg(target_arch = "wasm32")]
mod imp {
    use crate::Error;
    use crate::bindings::azd::provisioning0_2_0::{environment, prompt};

    pub(super) fn env_name() -> Result<String, Error> {
        environment::name().map_err(Error::from)
    }

    pub(super) fn env_get(key: &str) -> Result<Option<String>, Error> {
        environment::get_value(key).map_err(Error::from)
    }

    pub(super) fn env_values() -> Result<Vec<(String, String)>, Error> {
        environment::get_values().map_err(Error::from)
    }

    pub(super) fn env_set(key: &str, value: &str) -> Result<(), Error> {
        environment::set_value(key, value).map_err(Error::from)
    }

    pub(super) fn interactive() -> bool {
        prompt::interactive()
    }

    pub(super) fn confirm(message: &str, default: Option<bool>) -> Result<bool, Error> {
        prompt::confirm(&prompt::ConfirmOptions {
            message: message.to_owned(),
            default_value: default,
            help_message: String::new(),
        })
        .map_err(Error::from)
    }

    pub(super) fn text(
        message: &str,
        default: Option<&str>,
        secret: bool,
    ) -> Result<String, Error> {
        prompt::text(&prompt::TextOptions {
            message: message.to_owned(),
            default_value: default.map(str::to_owned),
            help_message: String::new(),
            placeholder: String::new(),
            secret,
            required: false,
        })
        .map_err(Error::from)
    }

    pub(super) fn select(
        message: &str,
        choices: &[(&str, &str)],
        default: Option<u32>,
    ) -> Result<u32, Error> {
        prompt::select(&prompt::SelectOptions {
            message: message.to_owned(),
            choices: choices
                .iter()
                .map(|(value, label)| prompt::Choice {
                    value: (*value).to_owned(),
                    label: (*label).to_owned(),
                })
                .collect(),
            default_index: default,
            help_message: String::new(),
        })
        .map_err(Error::from)
    }
}

/// Natively there is no azd: the process environment, values set kept in
/// memory, and the default answer to every question.
#[cfg(not(target_arch = "wasm32"))]
mod imp {
    use std::collections::BTreeMap;
    use std::sync::Mutex;

    use crate::Error;

    static SET: Mutex<BTreeMap<String, String>> = Mutex::new(BTreeMap::new());

    fn set_values() -> std::sync::MutexGuard<'static, BTreeMap<String, String>> {
        SET.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub(super) fn env_name() -> Result<String, Error> {
        std::env::var("AZURE_ENV_NAME")
            .map_err(|_| Error::user("no_environment", "AZURE_ENV_NAME is not set"))
    }

    pub(super) fn env_get(key: &str) -> Result<Option<String>, Error> {
        if let Some(v) = set_values().get(key) {
            return Ok(Some(v.clone()).filter(|v| !v.is_empty()));
        }
        Ok(std::env::var(key).ok().filter(|v| !v.is_empty()))
    }

    pub(super) fn env_values() -> Result<Vec<(String, String)>, Error> {
        let mut all: BTreeMap<String, String> = std::env::vars().collect();
        all.extend(set_values().clone());
        Ok(all.into_iter().collect())
    }

    pub(super) fn env_set(key: &str, value: &str) -> Result<(), Error> {
        set_values().insert(key.to_owned(), value.to_owned());
        Ok(())
    }

    pub(super) fn interactive() -> bool {
        false
    }

    fn no_answer(message: &str) -> Error {
        Error::user(
            "prompt_required",
            format!("no one can answer {message:?} here and it has no default"),
        )
    }

    pub(super) fn confirm(message: &str, default: Option<bool>) -> Result<bool, Error> {
        default.ok_or_else(|| no_answer(message))
    }

    pub(super) fn text(
        message: &str,
        default: Option<&str>,
        _secret: bool,
    ) -> Result<String, Error> {
        default.map(str::to_owned).ok_or_else(|| no_answer(message))
    }

    pub(super) fn select(
        message: &str,
        _choices: &[(&str, &str)],
        default: Option<u32>,
    ) -> Result<u32, Error> {
        default.ok_or_else(|| no_answer(message))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn natively_questions_take_their_default_and_values_stay_in_memory() {
        assert!(!prompt::interactive());
        assert!(prompt::confirm("sure?", Some(true)).unwrap());
        assert!(prompt::confirm("sure?", None).is_err());
        assert_eq!(prompt::text("name?", Some("x"), false).unwrap(), "x");
        assert_eq!(prompt::select("which?", &[("a", "A")], Some(0)).unwrap(), 0);
        environment::set("AZD_SDK_TEST_KEY", "v").unwrap();
        assert_eq!(
            environment::get("AZD_SDK_TEST_KEY").unwrap().as_deref(),
            Some("v")
        );
        assert!(
            environment::values()
                .unwrap()
                .iter()
                .any(|(k, v)| k == "AZD_SDK_TEST_KEY" && v == "v")
        );
    }
}
