//! Every field of a policy, in one list: [`Policy::fields`].
//!
//! What a person is shown of a policy (`check`), what one version grants
//! beyond another ([`crate::PolicyDiff`], so consent and `check --diff`), and
//! whether a policy grants anything at all ([`Policy::is_deny_all`]) are all
//! derived from this list, never from the struct's fields one by one.
//! [`Policy::fields`] takes the policy apart without `..`, so a field added to
//! [`Policy`], [`HttpGrants`] or [`AzdGrants`] does not compile until it has
//! its entry here: its key, the words consent shows it by, what `check` says
//! of it, and its kind, which decides how it is compared. [`FsGrant::describe`]
//! does the same for a directory grant's own fields.

use azd_wasm_host_core::text::shown;

use super::policy::{AzdGrants, EnvironmentAccess, FsAccess, FsGrant, HttpGrants, Policy};

/// One field of a [`Policy`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Field<'a> {
    /// Its key under `[policy]`, as the manifest spells it (`fs`, `http.allow`, `azd.prompt`).
    pub key: &'static str,
    /// What a consent line calls it (`directory`, `HTTP origin`, `memory_mb`).
    pub label: &'static str,
    /// What `check` adds after its value (may be empty).
    pub about: &'static str,
    /// Its value, by kind.
    pub value: FieldValue<'a>,
}

/// The value of a [`Field`]; its kind decides what counts as more.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FieldValue<'a> {
    /// Directories, by path: a new one, or wider access to one, is more.
    Directories(&'a [FsGrant]),
    /// Names granted one by one (variables, destinations, origins, scopes): a new one is more.
    Names(&'a [String]),
    /// Access to azd's environment: none < read < read-write.
    Environment(EnvironmentAccess),
    /// Leave to do something: `true` is more than `false`.
    Leave(bool),
    /// A bound: higher is more, but only where it `applies` (something it
    /// bounds is granted); `unit` follows the value when shown.
    Limit {
        /// The bound.
        value: f64,
        /// What it counts (`MiB`, `s`, `bytes`).
        unit: &'static str,
        /// Whether anything it bounds is granted.
        applies: bool,
    },
}

impl FieldValue<'_> {
    /// Whether it grants nothing by itself (a bound never does).
    pub fn grants_nothing(&self) -> bool {
        match self {
            Self::Directories(d) => d.is_empty(),
            Self::Names(n) => n.is_empty(),
            Self::Environment(access) => *access == EnvironmentAccess::None,
            Self::Leave(leave) => !leave,
            Self::Limit { .. } => true,
        }
    }

    /// The value as `check` shows it, one line per entry (none for a list
    /// that is empty, a leave not given or a bound that does not apply).
    pub fn shown(&self) -> Vec<String> {
        match self {
            Self::Directories(d) => d
                .iter()
                .map(|g| format!("{} ({})", shown(&g.path), g.describe()))
                .collect(),
            Self::Names(n) => n.iter().map(|n| shown(n).into_owned()).collect(),
            Self::Environment(access) => vec![access.to_string()],
            Self::Leave(true) => vec!["allowed".to_owned()],
            Self::Leave(false) => Vec::new(),
            Self::Limit {
                value,
                unit,
                applies,
            } => applies
                .then(|| format!("{value} {unit}"))
                .into_iter()
                .collect(),
        }
    }
}

impl Policy {
    /// Every field of the policy, in the order consent lists them.
    ///
    /// The one place the fields are named one by one: the destructuring has
    /// no `..`, so a new field does not compile until it is listed here. Long
    /// because it is the whole table, one entry per field, and is kept whole
    /// so that it reads as one.
    pub fn fields(&self) -> [Field<'_>; 12] {
        let Policy {
            fs,
            env,
            network,
            memory_mb,
            call_timeout_secs,
            disk_mb,
            http:
                HttpGrants {
                    allow,
                    timeout_secs,
                    max_response_bytes,
                },
            azd:
                AzdGrants {
                    environment,
                    prompt,
                    credential_scopes,
                },
        } = self;
        let writes_files = fs.iter().any(|g| g.access == FsAccess::ReadWrite);
        let field = |key, label, about, value| Field {
            key,
            label,
            about,
            value,
        };
        let limit = |value: f64, unit, applies| FieldValue::Limit {
            value,
            unit,
            applies,
        };
        [
            field("fs", "directory", "", FieldValue::Directories(fs)),
            field("env", "environment variable", "", FieldValue::Names(env)),
            field(
                "network",
                "network",
                "TCP connect; name lookups only for listed names",
                FieldValue::Names(network),
            ),
            field(
                "http.allow",
                "HTTP origin",
                "TLS by the host; plaintext only to loopback",
                FieldValue::Names(allow),
            ),
            field(
                "azd.credential_scopes",
                "credential scope",
                "access tokens through azd (`azd auth token`)",
                FieldValue::Names(credential_scopes),
            ),
            field(
                "azd.environment",
                "azd environment",
                "the azd environment's values",
                FieldValue::Environment(*environment),
            ),
            field(
                "azd.prompt",
                "questions to the user",
                "may ask the user on azd's terminal",
                FieldValue::Leave(*prompt),
            ),
            field(
                "memory_mb",
                "memory_mb",
                "all memories and tables of an instance together",
                limit(*memory_mb as f64, "MiB", true),
            ),
            field(
                "call_timeout_secs",
                "call_timeout_secs",
                "per call",
                limit(*call_timeout_secs, "s", true),
            ),
            // The disk bound matters only where some directory is granted read-write.
            field(
                "disk_mb",
                "disk_mb",
                "what an instance may write into its read-write grants; past it a write fails: no space",
                limit(*disk_mb as f64, "MiB", writes_files),
            ),
            // The HTTP bounds matter only where some origin is granted.
            field(
                "http.timeout_secs",
                "http.timeout_secs",
                "per request, never past call_timeout_secs",
                limit(*timeout_secs, "s", !allow.is_empty()),
            ),
            field(
                "http.max_response_bytes",
                "http.max_response_bytes",
                "of response body read per request",
                limit(*max_response_bytes as f64, "bytes", !allow.is_empty()),
            ),
        ]
    }

    /// Whether the policy grants nothing beyond computing.
    pub fn is_deny_all(&self) -> bool {
        self.fields().iter().all(|f| f.value.grants_nothing())
    }
}

impl FsGrant {
    /// What the grant allows, besides its path: `read`, `read-write`, and
    /// `OUTSIDE the project` when it is. Its fields are taken apart without
    /// `..`, so a new one does not compile until it is said here.
    pub fn describe(&self) -> String {
        let FsGrant {
            path: _,
            access,
            outside_project,
        } = self;
        if *outside_project {
            format!("{access}, OUTSIDE the project")
        } else {
            access.to_string()
        }
    }

    /// How wide the grant is, by each of its fields that can widen it: the
    /// access, then leave to be outside the project.
    pub(super) fn width(&self) -> [u8; 2] {
        let FsGrant {
            path: _,
            access,
            outside_project,
        } = self;
        [
            u8::from(*access == FsAccess::ReadWrite),
            u8::from(*outside_project),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PolicyDiff;

    /// A policy that grants everything a policy can, every bound above its
    /// default (a struct literal without `..`: a new field must be added here).
    fn maximal() -> Policy {
        Policy {
            fs: vec![FsGrant {
                path: "out".into(),
                access: FsAccess::ReadWrite,
                outside_project: false,
            }],
            env: vec!["HOME".into()],
            network: vec!["db.example:5432".into()],
            memory_mb: 1024,
            call_timeout_secs: 600.0,
            disk_mb: 128,
            http: HttpGrants {
                allow: vec!["https://a.example".into()],
                timeout_secs: 60.0,
                max_response_bytes: 64 << 20,
            },
            azd: AzdGrants {
                environment: EnvironmentAccess::ReadWrite,
                prompt: true,
                credential_scopes: vec!["https://storage.azure.com/.default".into()],
            },
        }
    }

    #[test]
    fn every_field_of_a_maximal_policy_is_shown_and_asked_for() {
        let policy = maximal();
        let fields = policy.fields();
        let more = PolicyDiff::between(&Policy::default(), &policy).more;
        let mut keys = Vec::new();
        for f in &fields {
            assert!(!keys.contains(&f.key), "{} is listed twice", f.key);
            keys.push(f.key);
            assert!(!f.label.is_empty(), "{} has no label", f.key);
            let shown = f.value.shown();
            assert!(!shown.is_empty(), "{} shows nothing: {f:?}", f.key);
            for value in &shown {
                assert!(!value.trim().is_empty(), "{} shows an empty line", f.key);
            }
            // Consent names the field by its label and says its value.
            let asked: Vec<&String> = more.iter().filter(|m| m.starts_with(f.label)).collect();
            assert!(!asked.is_empty(), "{} is not in {more:#?}", f.key);
            let said = shown[0].split(' ').next().unwrap_or_default();
            assert!(
                asked.iter().any(|m| m.contains(said)),
                "{}: {said} is not in {asked:?}",
                f.key
            );
        }
        // One consent line per field: nothing is said twice, nothing left over.
        assert_eq!(more.len(), fields.len(), "{more:#?}");
        assert!(!policy.is_deny_all());
        assert!(Policy::default().is_deny_all());
    }

    #[test]
    fn the_manifest_keys_are_the_ones_serde_reads() {
        // Every key parses as a policy key; a misspelt one would be refused.
        for f in maximal().fields() {
            let (table, key) = match f.key.split_once('.') {
                Some((table, key)) => (format!("[{table}]\n"), key),
                None => (String::new(), f.key),
            };
            let value = match f.value {
                FieldValue::Directories(_) => "[]".to_owned(),
                FieldValue::Names(_) => "[]".to_owned(),
                FieldValue::Environment(_) => "\"read\"".to_owned(),
                FieldValue::Leave(_) => "true".to_owned(),
                FieldValue::Limit { .. } => "7".to_owned(),
            };
            let text = format!("{table}{key} = {value}\n");
            let parsed: Result<Policy, _> = toml::from_str(&text);
            assert!(parsed.is_ok(), "{}: {text}: {parsed:?}", f.key);
        }
    }

    #[test]
    fn the_authoring_guide_lists_every_key() {
        let guide = include_str!("../../../docs/authoring.md");
        for f in maximal().fields() {
            let row = match f.key.split_once('.') {
                Some((table, key)) => format!("| `[policy.{table}] {key}` |"),
                None => format!("| `[policy] {}` |", f.key),
            };
            assert!(guide.contains(&row), "docs/authoring.md has no row {row}");
        }
    }
}
