//! The user's answers in a golden conversation, given again: each question
//! the provider asks on replay gets the next recorded answer to a question
//! of its kind (confirm, text, choice); past the recorded ones, the default,
//! as under `--no-prompt`.

use std::collections::VecDeque;

use azd_wasm_host_proto::azdext as pb;
use azd_wasm_host_recorder::conversation::Line;
use azd_wasm_host_sim::{NoPrompt, Prompter};
use parking_lot::Mutex;
use tonic::Status;

/// The recorded answers, by kind, in order.
#[derive(Debug, Default)]
pub(super) struct Replies {
    confirm: Mutex<VecDeque<bool>>,
    prompt: Mutex<VecDeque<String>>,
    select: Mutex<VecDeque<i32>>,
}

impl Replies {
    /// The answers the recording's service lines hold.
    pub(super) fn of(lines: &[Line]) -> Self {
        let replies = Self::default();
        for line in lines {
            let Line::Service {
                call,
                answer: Ok(answer),
                ..
            } = line
            else {
                continue;
            };
            match call.as_str() {
                "confirm" => replies.confirm.lock().extend(answer.as_bool()),
                "prompt" => replies
                    .prompt
                    .lock()
                    .extend(answer.as_str().map(str::to_owned)),
                "select" => replies
                    .select
                    .lock()
                    .extend(answer.as_u64().and_then(|i| i32::try_from(i).ok())),
                _ => {}
            }
        }
        replies
    }
}

impl Prompter for Replies {
    fn confirm(&self, o: &pb::ConfirmOptions) -> Result<bool, Status> {
        self.confirm
            .lock()
            .pop_front()
            .map_or_else(|| NoPrompt.confirm(o), Ok)
    }

    fn prompt(&self, o: &pb::PromptOptions) -> Result<String, Status> {
        self.prompt
            .lock()
            .pop_front()
            .map_or_else(|| NoPrompt.prompt(o), Ok)
    }

    fn select(&self, o: &pb::SelectOptions) -> Result<i32, Status> {
        self.select
            .lock()
            .pop_front()
            .map_or_else(|| NoPrompt.select(o), Ok)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn service(call: &str, answer: serde_json::Value) -> Line {
        Line::Service {
            call: call.into(),
            args: serde_json::json!({}),
            answer: Ok(answer),
        }
    }

    #[test]
    fn recorded_answers_come_back_in_order_then_the_defaults() {
        let replies = Replies::of(&[
            service("confirm", false.into()),
            service("environment_values", serde_json::json!([])),
            service("confirm", true.into()),
            service("select", 2.into()),
        ]);
        let ask = pb::ConfirmOptions {
            default_value: Some(true),
            ..Default::default()
        };
        assert!(!replies.confirm(&ask).unwrap());
        assert!(replies.confirm(&ask).unwrap());
        assert!(replies.confirm(&ask).unwrap()); // past the recording: the default
        let open = pb::ConfirmOptions::default();
        assert!(replies.confirm(&open).is_err()); // no default: azd's --no-prompt refusal
        assert_eq!(replies.select(&pb::SelectOptions::default()).unwrap(), 2);
    }
}
