//! Who answers a provider's questions under `run` (azd's `PromptService`,
//! played by the simulated azd): the user on this terminal, `--yes`, or, with
//! no terminal (or in a library's session), the question's default as azd gives it under `--no-prompt`.

use std::io::IsTerminal as _;
use std::sync::{Arc, Mutex};

use azd_wasm_host_proto::azdext as pb;
use azd_wasm_host_sim::{AnswerAll, NoPrompt, Prompter};
use dialoguer::{Confirm, Input, Password, Select};
use tonic::Status;

use super::report::Question;

/// The prompter for `run`: `--yes` answers yes, `--no` answers no, a terminal
/// (when the session may use it) asks the user, anything else answers as azd
/// does under `--no-prompt`. Every question and its answer are kept in
/// `asked` (for the report).
pub(crate) fn prompter(
    answer: Option<bool>,
    console: bool,
    progress: Option<indicatif::ProgressBar>,
    asked: Asked,
) -> Arc<dyn Prompter> {
    let inner: Box<dyn Prompter> = if let Some(yes) = answer {
        Box::new(AnswerAll { yes })
    } else if on_terminal(console) {
        Box::new(Terminal { progress })
    } else {
        Box::new(NoPrompt)
    };
    Arc::new(Recording { inner, asked })
}

/// Whether questions are asked on this terminal: the session may use it, and
/// stdin and stderr are one.
pub(crate) fn on_terminal(console: bool) -> bool {
    console && std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
}

/// The questions a provider asked, with their answers, in order.
pub(crate) type Asked = Arc<Mutex<Vec<Question>>>;

/// Keeps every question and answer, passing each to `inner`.
struct Recording {
    inner: Box<dyn Prompter>,
    asked: Asked,
}

impl Recording {
    fn keep<T>(
        &self,
        kind: &str,
        message: &str,
        answer: Result<T, Status>,
        shown: impl FnOnce(&T) -> String,
    ) -> Result<T, Status> {
        if let Ok(mut asked) = self.asked.lock() {
            asked.push(Question {
                kind: kind.to_owned(),
                message: message.to_owned(),
                answer: answer.as_ref().ok().map(shown),
            });
        }
        answer
    }
}

impl Prompter for Recording {
    fn confirm(&self, o: &pb::ConfirmOptions) -> Result<bool, Status> {
        let answer = self.inner.confirm(o);
        self.keep("confirm", &o.message, answer, |yes| {
            if *yes { "yes" } else { "no" }.to_owned()
        })
    }

    fn prompt(&self, o: &pb::PromptOptions) -> Result<String, Status> {
        let answer = self.inner.prompt(o);
        self.keep("prompt", &o.message, answer, |text| {
            if o.secret {
                "********".to_owned()
            } else {
                text.clone()
            }
        })
    }

    fn select(&self, o: &pb::SelectOptions) -> Result<i32, Status> {
        let answer = self.inner.select(o);
        self.keep("select", &o.message, answer, |i| {
            usize::try_from(*i)
                .ok()
                .and_then(|i| o.choices.get(i))
                .map_or_else(|| i.to_string(), |c| c.label.clone())
        })
    }
}

/// Asks on this terminal (stderr), with the progress spinner held still.
struct Terminal {
    progress: Option<indicatif::ProgressBar>,
}

/// A question the user closed without answering.
fn unanswered(e: impl std::fmt::Display) -> Status {
    Status::cancelled(format!("the question was not answered: {e}"))
}

impl Terminal {
    fn ask<T>(&self, f: impl FnOnce() -> Result<T, Status>) -> Result<T, Status> {
        match &self.progress {
            Some(bar) => bar.suspend(f),
            None => f(),
        }
    }
}

impl Prompter for Terminal {
    fn confirm(&self, o: &pb::ConfirmOptions) -> Result<bool, Status> {
        self.ask(|| {
            let mut q = Confirm::new().with_prompt(azd_wasm_host_core::text::sanitize(&o.message));
            if let Some(d) = o.default_value {
                q = q.default(d);
            }
            q.interact_opt()
                .map_err(unanswered)?
                .ok_or_else(|| unanswered("closed"))
        })
    }

    fn prompt(&self, o: &pb::PromptOptions) -> Result<String, Status> {
        self.ask(|| {
            let message = azd_wasm_host_core::text::sanitize(&o.message).into_owned();
            if o.secret {
                return Password::new()
                    .with_prompt(message)
                    .allow_empty_password(!o.required)
                    .interact()
                    .map_err(unanswered);
            }
            let mut q = Input::<String>::new()
                .with_prompt(message)
                .allow_empty(!o.required);
            if !o.default_value.is_empty() {
                q = q.default(o.default_value.clone());
            }
            q.interact_text().map_err(unanswered)
        })
    }

    fn select(&self, o: &pb::SelectOptions) -> Result<i32, Status> {
        self.ask(|| {
            let labels: Vec<String> = o
                .choices
                .iter()
                .map(|c| azd_wasm_host_core::text::sanitize(&c.label).into_owned())
                .collect();
            let mut q = Select::new()
                .with_prompt(azd_wasm_host_core::text::sanitize(&o.message))
                .items(&labels);
            if let Some(i) = o.selected_index.and_then(|i| usize::try_from(i).ok()) {
                q = q.default(i);
            }
            let chosen = q
                .interact_opt()
                .map_err(unanswered)?
                .ok_or_else(|| unanswered("closed"))?;
            i32::try_from(chosen).map_err(|_| unanswered("too many choices"))
        })
    }
}
