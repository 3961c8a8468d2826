//! What `run` shows: live progress while a request runs (a spinner on a
//! terminal, plain lines otherwise, on stderr; nothing in a library's quiet
//! session, which only keeps it), then the result as a table on stdout, or the
//! provider's error on stderr. Every text a provider
//! wrote passes [`azd_wasm_host_core::text::sanitize`] on its way to the terminal.

use std::io::{IsTerminal as _, Write};
use std::time::Duration;

use azd_wasm_host_core::ProviderError;

use super::report::{Plan, Question, RunReport};

/// `Plan: 2 to create, 1 to modify, 0 to delete, 3 unchanged.`
fn plan_line(plan: &Plan) -> String {
    let mut line = format!(
        "Plan: {} to create, {} to modify, {} to delete, {} unchanged",
        plan.create, plan.modify, plan.delete, plan.unchanged
    );
    if plan.other > 0 {
        line.push_str(&format!(", {} other", plan.other));
    }
    line.push('.');
    line
}

impl RunReport {
    /// Prints the report for people: the sections it has.
    pub(crate) fn print(&self) -> anyhow::Result<()> {
        let mut out = std::io::stdout().lock();
        if self.skipped == Some(true) {
            writeln!(
                out,
                "Deployment skipped: nothing changed since the last deployment."
            )?;
        }
        if let Some(p) = &self.preview {
            if !p.summary.is_empty() {
                writeln!(out, "{}", shown(&p.summary))?;
            }
            let rows: Vec<[String; 3]> = p
                .changes
                .iter()
                .map(|c| {
                    [
                        c.change_type.clone(),
                        c.resource_type.clone(),
                        c.name.clone(),
                    ]
                })
                .collect();
            if !rows.is_empty() {
                table(&mut out, ["CHANGE", "TYPE", "NAME"], &rows)?;
            }
            writeln!(out, "{}", plan_line(&p.plan))?;
        }
        self.print_outputs(&mut out)?;
        self.print_destroyed(&mut out)?;
        self.print_parameters(&mut out)
    }

    fn print_outputs(&self, out: &mut impl Write) -> anyhow::Result<()> {
        if let Some(outputs) = &self.outputs {
            let rows: Vec<[String; 3]> = outputs
                .iter()
                .map(|(k, v)| [k.clone(), v.ty.clone(), v.value.clone()])
                .collect();
            if rows.is_empty() {
                writeln!(out, "No outputs.")?;
            } else {
                table(out, ["OUTPUT", "TYPE", "VALUE"], &rows)?;
            }
        }
        if let Some(res) = &self.resources {
            for r in res {
                writeln!(out, "resource  {}", shown(r))?;
            }
        }
        Ok(())
    }

    fn print_destroyed(&self, out: &mut impl Write) -> anyhow::Result<()> {
        if let Some(keys) = &self.invalidated_env_keys {
            if keys.is_empty() {
                writeln!(out, "Destroyed. No environment keys invalidated.")?;
            } else {
                writeln!(
                    out,
                    "Destroyed. Removed from the environment: {}",
                    shown(&keys.join(", "))
                )?;
            }
        }
        Ok(())
    }

    fn print_parameters(&self, out: &mut impl Write) -> anyhow::Result<()> {
        if let Some(params) = &self.parameters {
            let rows: Vec<[String; 3]> = params
                .iter()
                .map(|p| [p.name.clone(), p.value.clone(), p.env_var_mapping.join(",")])
                .collect();
            table(out, ["PARAMETER", "VALUE", "ENV"], &rows)?;
        }
        if let Some(planned) = &self.planned_outputs {
            writeln!(out, "Planned outputs: {}", shown(&planned.join(", ")))?;
        }
        Ok(())
    }
}

/// A provider's text as it may reach the terminal.
fn shown(text: &str) -> std::borrow::Cow<'_, str> {
    azd_wasm_host_core::text::sanitize(text)
}

fn table(
    out: &mut impl std::io::Write,
    head: [&str; 3],
    rows: &[[String; 3]],
) -> std::io::Result<()> {
    let mut width = head.map(str::len);
    for r in rows {
        for (w, c) in width.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count()).min(60);
        }
    }
    let head = head.map(str::to_owned);
    for r in std::iter::once(&head).chain(rows) {
        let r = r.each_ref().map(|c| shown(c));
        writeln!(
            out,
            "{:<w0$}  {:<w1$}  {}",
            r[0],
            r[1],
            r[2],
            w0 = width[0],
            w1 = width[1]
        )?;
    }
    Ok(())
}

/// Live progress on stderr: a spinner with the latest step on a terminal, plain
/// lines otherwise.
pub(crate) struct ProgressView {
    bar: Option<indicatif::ProgressBar>,
    /// Shows nothing (a library's run): progress is only kept.
    quiet: bool,
    /// The provider's progress messages, in order, for `--output json`.
    reported: std::sync::Mutex<Vec<String>>,
    /// The questions the provider asked (kept by the prompter).
    asked: super::ask::Asked,
    /// `--cancel-after-progress`: after that many messages, this is cancelled.
    cancel_after: Option<(usize, tokio_util::sync::CancellationToken)>,
}

impl ProgressView {
    /// Shows progress on stderr when `console` (a spinner on a terminal); else
    /// only keeps it.
    pub(crate) fn new(console: bool) -> Self {
        let bar = (console && std::io::stderr().is_terminal()).then(|| {
            let bar = indicatif::ProgressBar::new_spinner();
            bar.enable_steady_tick(Duration::from_millis(100));
            bar
        });
        Self {
            bar,
            quiet: !console,
            reported: std::sync::Mutex::default(),
            asked: super::ask::Asked::default(),
            cancel_after: None,
        }
    }

    /// Cancels `token` once the provider has reported `n` progress messages.
    pub(crate) fn cancel_after(
        mut self,
        n: Option<usize>,
        token: &tokio_util::sync::CancellationToken,
    ) -> Self {
        self.cancel_after = n.map(|n| (n, token.clone()));
        self
    }

    /// Where the prompter keeps the questions asked.
    pub(crate) fn asked(&self) -> super::ask::Asked {
        self.asked.clone()
    }

    /// The questions asked so far, with their answers.
    pub(crate) fn questions(&self) -> Vec<Question> {
        self.asked.lock().map(|q| q.clone()).unwrap_or_default()
    }

    /// Shows a progress message the provider sent, and keeps it for the JSON report.
    pub(crate) fn provider(&self, message: &str) {
        let count = self.reported.lock().map_or(0, |mut reported| {
            reported.push(message.to_owned());
            reported.len()
        });
        self.show(message);
        if let Some((n, token)) = &self.cancel_after
            && count >= *n
        {
            token.cancel();
        }
    }

    /// The provider's progress messages so far, in order.
    pub(crate) fn reported(&self) -> Vec<String> {
        self.reported.lock().map(|r| r.clone()).unwrap_or_default()
    }

    /// The spinner, when there is one (a prompt holds it still).
    pub(crate) fn bar(&self) -> Option<indicatif::ProgressBar> {
        self.bar.clone()
    }

    pub(crate) fn show(&self, message: &str) {
        if message.is_empty() || self.quiet {
            return;
        }
        match &self.bar {
            Some(bar) => {
                bar.println(format!("  {message}"));
                bar.set_message(message.to_owned());
            }
            None => eprintln!("  {message}"),
        }
    }

    pub(crate) fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// Prints a provider's error as azd would: the message, the suggestion, links.
pub(crate) fn print_error(e: &ProviderError) {
    eprintln!("ERROR: {}", shown(&e.message));
    if !e.suggestion.is_empty() {
        eprintln!("Suggestion: {}", shown(&e.suggestion));
    }
    for link in &e.links {
        eprintln!("  {} {}", shown(&link.title), shown(&link.url));
    }
}
