//! What `run` shows: live progress while a request runs (a spinner on a
//! terminal, plain lines otherwise, on stderr), then the result as a table or
//! JSON on stdout, or the provider's error on stderr. Every text a provider
//! wrote passes [`azd_wasm_host_core::text::sanitize`] on its way to the terminal.

use std::collections::BTreeMap;
use std::io::{IsTerminal as _, Write};
use std::time::Duration;

use azd_wasm_host_core::ProviderError;
use azd_wasm_host_proto::azdext as pb;

use super::environment::Environment;

/// What a command produced.
#[derive(Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Report {
    pub(super) command: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) outputs: Option<BTreeMap<String, OutputValue>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) preview: Option<PreviewReport>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) invalidated_env_keys: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) resources: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) parameters: Option<Vec<ParameterReport>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) planned_outputs: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) skipped: Option<bool>,
    /// The provider's progress messages, in order (`--output json` only).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(super) progress: Vec<String>,
    /// The questions the provider asked, with their answers (`--output json` only).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(super) prompts: Vec<super::ask::Question>,
}

#[derive(Debug, serde::Serialize)]
pub(super) struct OutputValue {
    #[serde(rename = "type")]
    pub(super) ty: String,
    pub(super) value: String,
}

#[derive(Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct PreviewReport {
    pub(super) summary: String,
    pub(super) plan: Plan,
    pub(super) changes: Vec<ChangeReport>,
}

/// The changes of a preview, counted by kind (azd's change types: `Create`,
/// `Modify`, `Delete`, `Deploy`, `NoChange`, `Ignore`, …).
#[derive(Debug, Default, serde::Serialize)]
pub(super) struct Plan {
    pub(super) create: usize,
    pub(super) modify: usize,
    pub(super) delete: usize,
    pub(super) unchanged: usize,
    /// Changes of any other type (`Deploy`, `Unsupported`, a provider's own).
    pub(super) other: usize,
}

impl Plan {
    pub(super) fn of(changes: &[ChangeReport]) -> Self {
        let mut plan = Self::default();
        for c in changes {
            let count = match c.change_type.to_ascii_lowercase().as_str() {
                "create" => &mut plan.create,
                "modify" | "update" => &mut plan.modify,
                "delete" => &mut plan.delete,
                "nochange" | "ignore" => &mut plan.unchanged,
                _ => &mut plan.other,
            };
            *count += 1;
        }
        plan
    }

    /// Whether applying the preview would change anything.
    pub(super) fn pending(&self) -> bool {
        self.create + self.modify + self.delete + self.other > 0
    }

    /// `Plan: 2 to create, 1 to modify, 0 to delete, 3 unchanged.`
    fn line(&self) -> String {
        let mut line = format!(
            "Plan: {} to create, {} to modify, {} to delete, {} unchanged",
            self.create, self.modify, self.delete, self.unchanged
        );
        if self.other > 0 {
            line.push_str(&format!(", {} other", self.other));
        }
        line.push('.');
        line
    }
}

#[derive(Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ChangeReport {
    pub(super) change_type: String,
    pub(super) resource_type: String,
    pub(super) name: String,
    pub(super) resource_id: String,
}

#[derive(Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ParameterReport {
    pub(super) name: String,
    pub(super) secret: bool,
    /// Secret values are never printed.
    pub(super) value: String,
    pub(super) env_var_mapping: Vec<String>,
}

impl Report {
    pub(super) fn new(command: &'static str) -> Self {
        Self {
            command,
            outputs: None,
            preview: None,
            invalidated_env_keys: None,
            resources: None,
            parameters: None,
            planned_outputs: None,
            skipped: None,
            progress: Vec::new(),
            prompts: Vec::new(),
        }
    }

    /// Writes outputs to `.azure/<env>/.env` (provision, state) or removes the
    /// invalidated keys (down), as azd does.
    pub(super) fn apply(&self, env: &Environment) -> anyhow::Result<()> {
        let set = self
            .outputs
            .iter()
            .flatten()
            .map(|(k, v)| (k.as_str(), v.value.as_str()));
        let removed = self
            .invalidated_env_keys
            .iter()
            .flatten()
            .map(String::as_str);
        env.save(set, removed)
    }

    /// Whether a preview found changes to make.
    pub(super) fn changes_pending(&self) -> bool {
        self.preview.as_ref().is_some_and(|p| p.plan.pending())
    }

    /// Prints the report for people: the sections it has.
    pub(super) fn print(&self) -> anyhow::Result<()> {
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
            writeln!(out, "{}", p.plan.line())?;
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

pub(super) fn outputs_of(
    map: &BTreeMap<String, pb::ProvisioningOutputParameter>,
) -> BTreeMap<String, OutputValue> {
    map.iter()
        .map(|(k, v)| {
            (
                k.clone(),
                OutputValue {
                    ty: v.r#type.clone(),
                    value: v.value.clone(),
                },
            )
        })
        .collect()
}

/// Live progress on stderr: a spinner with the latest step on a terminal, plain
/// lines otherwise.
pub(super) struct ProgressView {
    bar: Option<indicatif::ProgressBar>,
    /// The provider's progress messages, in order, for `--output json`.
    reported: std::sync::Mutex<Vec<String>>,
    /// The questions the provider asked (kept by the prompter).
    asked: super::ask::Asked,
    /// `--cancel-after-progress`: after that many messages, this is cancelled.
    cancel_after: Option<(usize, tokio_util::sync::CancellationToken)>,
}

impl ProgressView {
    pub(super) fn new() -> Self {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = indicatif::ProgressBar::new_spinner();
            bar.enable_steady_tick(Duration::from_millis(100));
            bar
        });
        Self {
            bar,
            reported: std::sync::Mutex::default(),
            asked: super::ask::Asked::default(),
            cancel_after: None,
        }
    }

    /// Cancels `token` once the provider has reported `n` progress messages.
    pub(super) fn cancel_after(
        mut self,
        n: Option<usize>,
        token: &tokio_util::sync::CancellationToken,
    ) -> Self {
        self.cancel_after = n.map(|n| (n, token.clone()));
        self
    }

    /// Where the prompter keeps the questions asked.
    pub(super) fn asked(&self) -> super::ask::Asked {
        self.asked.clone()
    }

    /// The questions asked so far, with their answers.
    pub(super) fn questions(&self) -> Vec<super::ask::Question> {
        self.asked.lock().map(|q| q.clone()).unwrap_or_default()
    }

    /// Shows a progress message the provider sent, and keeps it for the JSON report.
    pub(super) fn provider(&self, message: &str) {
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
    pub(super) fn reported(&self) -> Vec<String> {
        self.reported.lock().map(|r| r.clone()).unwrap_or_default()
    }

    /// The spinner, when there is one (a prompt holds it still).
    pub(super) fn bar(&self) -> Option<indicatif::ProgressBar> {
        self.bar.clone()
    }

    pub(super) fn show(&self, message: &str) {
        if message.is_empty() {
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

    pub(super) fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// Prints a provider's error as azd would: the message, the suggestion, links.
pub(super) fn print_error(e: &ProviderError) {
    eprintln!("ERROR: {}", shown(&e.message));
    if !e.suggestion.is_empty() {
        eprintln!("Suggestion: {}", shown(&e.suggestion));
    }
    for link in &e.links {
        eprintln!("  {} {}", shown(&link.title), shown(&link.url));
    }
}
