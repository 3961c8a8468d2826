//! What a command came to, typed: [`RunReport`], the very document `run --output json`
//! prints (its field names and shape are the JSON's), with the error, when there is one,
//! as [`RunError`]. The runner builds it; `run` prints it; the test kit checks it.
//!
//! Fields that a command does not produce are absent from the JSON (`None` or empty
//! here): a `preview` has `preview`, a `down` has `invalidatedEnvKeys`, and so on.

use std::collections::BTreeMap;

use super::options::Action;

/// What a command produced: `run --output json`'s document.
///
/// ```json
/// { "command": "provision", "outputs": { "GREETING": { "type": "string", "value": "Hi" } },
///   "skipped": false, "progress": ["Composing the greeting"] }
/// ```
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunReport {
    /// The command played.
    pub command: Action,
    /// The outputs by name (`provision`, `state`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outputs: Option<BTreeMap<String, OutputValue>>,
    /// The preview (`preview`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preview: Option<PreviewReport>,
    /// The `.env` keys the destroy invalidated (`down`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invalidated_env_keys: Option<Vec<String>>,
    /// The deployment's resource ids (`state`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<Vec<String>>,
    /// The provider's parameters (`parameters`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters: Option<Vec<ParameterReport>>,
    /// The names of the outputs it plans (`parameters`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planned_outputs: Option<Vec<String>>,
    /// Whether the deployment was skipped, nothing having changed (`provision`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<bool>,
    /// The provider's progress messages, in order (also those before an error).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub progress: Vec<String>,
    /// The questions the provider asked, with their answers, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prompts: Vec<Question>,
    /// Why the command did not end well: it failed, or its outputs could not be saved
    /// (then the sections above are the command's result all the same).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<RunError>,
}

impl RunReport {
    /// A report of `command` with nothing in it yet.
    pub fn new(command: Action) -> Self {
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
            error: None,
        }
    }

    /// Whether a preview found changes to make.
    pub fn changes_pending(&self) -> bool {
        self.preview.as_ref().is_some_and(|p| p.plan.pending())
    }
}

/// One output: its type (`string`, `number`, …) and its value as text.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct OutputValue {
    /// The output's type, as the provider gave it.
    #[serde(rename = "type")]
    pub ty: String,
    /// Its value.
    pub value: String,
}

/// A preview: the provider's summary, the changes counted, and each change.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PreviewReport {
    /// The provider's summary.
    pub summary: String,
    /// The changes counted by kind.
    pub plan: Plan,
    /// Each change.
    pub changes: Vec<ChangeReport>,
}

/// The changes of a preview, counted by kind (azd's change types: `Create`,
/// `Modify`, `Delete`, `Deploy`, `NoChange`, `Ignore`, …).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Plan {
    /// `Create`.
    pub create: usize,
    /// `Modify` (or `Update`).
    pub modify: usize,
    /// `Delete`.
    pub delete: usize,
    /// `NoChange` and `Ignore`.
    pub unchanged: usize,
    /// Changes of any other type (`Deploy`, `Unsupported`, a provider's own).
    pub other: usize,
}

impl Plan {
    /// The changes counted.
    pub fn of(changes: &[ChangeReport]) -> Self {
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
    pub fn pending(&self) -> bool {
        self.create + self.modify + self.delete + self.other > 0
    }
}

/// One change of a preview.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChangeReport {
    /// azd's change type (`Create`, `Modify`, …).
    pub change_type: String,
    /// The resource's type.
    pub resource_type: String,
    /// The resource's name.
    pub name: String,
    /// The resource's id.
    pub resource_id: String,
}

/// One parameter of the provider (`parameters`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ParameterReport {
    /// Its name.
    pub name: String,
    /// Whether it is secret.
    pub secret: bool,
    /// Its value; a secret's reads `********` (secret values are never printed).
    pub value: String,
    /// The environment variables it maps to.
    pub env_var_mapping: Vec<String>,
}

/// One question the provider asked and how it was answered (the answer of a secret
/// is not kept).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Question {
    /// `confirm`, `prompt` or `select`.
    pub kind: String,
    /// The question.
    pub message: String,
    /// The answer; `None` (`null`): not answered (azd's `--no-prompt` refusal, or closed).
    pub answer: Option<String>,
}

/// Why a command did not end well, as `run --output json` shows it under `error`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunError {
    /// What kind of failure.
    pub kind: ErrorKind,
    /// The message (a host error's with its causes, `a: b: c`).
    pub message: String,
    /// The provider's suggestion, when it gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suggestion: Option<String>,
    /// A local error's code, or a service error's code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// A local error's category (`validation`, `internal`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// A service error's HTTP status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_code: Option<i32>,
    /// A service error's service.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<String>,
    /// The provider's links.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub links: Vec<ErrorLink>,
}

/// A link a provider's error carries.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ErrorLink {
    /// What it is called.
    pub title: String,
    /// Where it points.
    pub url: String,
}

/// The kinds of [`RunError`], each with its exit code ([`crate::Exit`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ErrorKind {
    /// Bad arguments or project; nothing ran (exit 64).
    Usage,
    /// The provider answered with an error (exit 1).
    Provider,
    /// The provider's component or the host failed (exit 70).
    Fault,
    /// Cancelled, as Ctrl-C cancels (exit 130).
    Interrupted,
}

impl ErrorKind {
    /// Its name in the JSON: `usage`, `provider`, `fault`, `interrupted`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Usage => "usage",
            Self::Provider => "provider",
            Self::Fault => "fault",
            Self::Interrupted => "interrupted",
        }
    }
}

impl std::fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_reads_back_what_it_wrote() {
        let doc = serde_json::json!({
            "command": "preview",
            "preview": { "summary": "s", "plan": { "create": 1, "modify": 0, "delete": 0,
                "unchanged": 2, "other": 0 }, "changes": [{ "changeType": "Create",
                "resourceType": "t", "name": "n", "resourceId": "i" }] },
            "prompts": [{ "kind": "confirm", "message": "Go?", "answer": null }],
            "error": { "kind": "provider", "message": "no", "code": "c", "statusCode": 403,
                "links": [{ "title": "t", "url": "u" }] },
        });
        let report: RunReport = serde_json::from_value(doc.clone()).unwrap();
        assert_eq!(report.command, Action::Preview);
        assert!(report.changes_pending());
        let error = report.error.as_ref().unwrap();
        assert_eq!(error.kind, ErrorKind::Provider);
        assert_eq!(error.status_code, Some(403));
        assert_eq!(serde_json::to_value(&report).unwrap(), doc);
        // What a command does not produce is not in the document.
        let bare = serde_json::to_value(RunReport::new(Action::State)).unwrap();
        assert_eq!(bare, serde_json::json!({ "command": "state" }));
    }
}
