//! Who answers a provider's questions under `run` (azd's `PromptService`,
//! played by the simulated azd): the user on this terminal, `--yes`, or, with
//! no terminal, the question's default as azd gives it under `--no-prompt`.

use std::io::IsTerminal as _;

use azd_wasm_host_proto::azdext as pb;
use azd_wasm_host_sim::{AnswerAll, NoPrompt, Prompter};
use dialoguer::{Confirm, Input, Password, Select};
use tonic::Status;

/// The prompter for `run`: `--yes` answers yes, a terminal asks the user,
/// anything else answers as azd does under `--no-prompt`.
pub(super) fn prompter(
    yes: bool,
    progress: Option<indicatif::ProgressBar>,
) -> std::sync::Arc<dyn Prompter> {
    if yes {
        std::sync::Arc::new(AnswerAll { yes: true })
    } else if std::io::stdin().is_terminal() && std::io::stderr().is_terminal() {
        std::sync::Arc::new(Terminal { progress })
    } else {
        std::sync::Arc::new(NoPrompt)
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
