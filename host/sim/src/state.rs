//! The simulated command's own state: its azd environment, and who answers
//! the questions an extension asks the user.

use std::collections::BTreeMap;

use azd_wasm_host_proto::azdext as pb;
use tonic::Status;

/// The azd environment of the simulated command.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SimEnvironment {
    /// Its name.
    pub name: String,
    /// Its values.
    pub values: BTreeMap<String, String>,
}

/// Answers the questions an extension asks the user.
pub trait Prompter: Send + Sync + 'static {
    /// A yes/no question.
    fn confirm(&self, options: &pb::ConfirmOptions) -> Result<bool, Status>;
    /// A question answered with text.
    fn prompt(&self, options: &pb::PromptOptions) -> Result<String, Status>;
    /// A choice; the chosen index.
    fn select(&self, options: &pb::SelectOptions) -> Result<i32, Status>;
}

/// azd under `--no-prompt`: the default when there is one, else azd's error.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoPrompt;

/// azd's refusal of a question it may not ask.
fn prompt_required(message: &str) -> Status {
    Status::failed_precondition(format!(
        "prompt required but running in --no-prompt mode: {message}"
    ))
}

impl Prompter for NoPrompt {
    fn confirm(&self, o: &pb::ConfirmOptions) -> Result<bool, Status> {
        o.default_value.ok_or_else(|| prompt_required(&o.message))
    }

    fn prompt(&self, o: &pb::PromptOptions) -> Result<String, Status> {
        if o.default_value.is_empty() {
            Err(prompt_required(&o.message))
        } else {
            Ok(o.default_value.clone())
        }
    }

    fn select(&self, o: &pb::SelectOptions) -> Result<i32, Status> {
        o.selected_index.ok_or_else(|| prompt_required(&o.message))
    }
}

/// Every question gets the same scripted answer (tests, `run --yes`): confirm
/// says `yes`; text and choices take their default.
#[derive(Debug, Clone, Copy)]
pub struct AnswerAll {
    /// What every confirm gets.
    pub yes: bool,
}

impl Prompter for AnswerAll {
    fn confirm(&self, _: &pb::ConfirmOptions) -> Result<bool, Status> {
        Ok(self.yes)
    }

    fn prompt(&self, o: &pb::PromptOptions) -> Result<String, Status> {
        NoPrompt.prompt(o)
    }

    fn select(&self, o: &pb::SelectOptions) -> Result<i32, Status> {
        NoPrompt.select(o)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_prompt_answers_defaults_and_refuses_the_rest() {
        let yes = pb::ConfirmOptions {
            default_value: Some(true),
            ..Default::default()
        };
        assert!(NoPrompt.confirm(&yes).unwrap());
        let open = pb::ConfirmOptions {
            message: "really?".into(),
            ..Default::default()
        };
        let e = NoPrompt.confirm(&open).unwrap_err();
        assert!(e.message().contains("--no-prompt") && e.message().contains("really?"));
        assert!(AnswerAll { yes: true }.confirm(&open).unwrap());
        assert!(!AnswerAll { yes: false }.confirm(&yes).unwrap());
    }
}
