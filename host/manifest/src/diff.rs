//! What one policy grants that another does not: the capabilities a new
//! version of a provider asks for beyond the old one's (`check --diff`; the
//! consent an update needs is asked for these and only these), and those it
//! no longer asks for.
//!
//! Counted as more: a directory not granted before (or wider access to it,
//! or leave to be outside the project), an environment variable, a network
//! destination, an HTTP origin, a credential scope, more of azd's environment
//! (none < read < read-write), leave to ask the user, and any higher limit
//! (memory, call time; the disk bound where a directory is granted
//! read-write; HTTP time and response size where an origin is granted). The
//! same, the other way, is counted as less.
//!
//! Each line quotes what the manifest names with `text::shown`: bare when it
//! is a plain token, else quoted with every control or invisible character
//! escaped, so a line reads as what is granted even for a policy that did not
//! come through the manifest's own checks.

use azd_wasm_host_core::text::shown;

use super::fields::FieldValue;
use super::policy::{EnvironmentAccess, FsGrant, Policy};

/// The difference between two policies, each entry a line a person reads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PolicyDiff {
    /// What the new policy grants that the old one does not.
    pub more: Vec<String>,
    /// What the old policy granted that the new one does not.
    pub less: Vec<String>,
}

impl PolicyDiff {
    /// The difference from `old` to `new`, field by field of
    /// [`Policy::fields`], each compared as its kind says.
    pub fn between(old: &Policy, new: &Policy) -> Self {
        let mut d = Self::default();
        for (o, n) in old.fields().iter().zip(new.fields()) {
            let label = n.label;
            match n.value {
                FieldValue::Directories(new) => d.fs(o.value.directories(), new),
                FieldValue::Names(new) => d.list(label, o.value.names(), new),
                FieldValue::Environment(b) => {
                    let a = o.value.environment();
                    d.ordered(rank(a).cmp(&rank(b)), format!("{label}: {a} → {b}"));
                }
                FieldValue::Leave(b) => {
                    let a = o.value.leave();
                    d.ordered(a.cmp(&b), format!("{label}: {} → {}", yes(a), yes(b)));
                }
                FieldValue::Limit { value, applies, .. } => {
                    if applies {
                        d.limit(label, o.value.limit(), value);
                    }
                }
            }
        }
        d
    }

    /// Whether the new policy asks for nothing the old one did not grant.
    pub fn asks_for_nothing_more(&self) -> bool {
        self.more.is_empty()
    }

    /// Entries of a list granted by name.
    fn list(&mut self, what: &str, old: &[String], new: &[String]) {
        for n in new.iter().filter(|n| !old.contains(n)) {
            self.more.push(format!("{what} {}", shown(n)));
        }
        for o in old.iter().filter(|o| !new.contains(o)) {
            self.less.push(format!("{what} {}", shown(o)));
        }
    }

    /// A change with an order: `Less` (old below new) is more.
    fn ordered(&mut self, order: std::cmp::Ordering, line: String) {
        match order {
            std::cmp::Ordering::Less => self.more.push(line),
            std::cmp::Ordering::Greater => self.less.push(line),
            std::cmp::Ordering::Equal => {}
        }
    }

    fn limit(&mut self, name: &str, old: f64, new: f64) {
        let order = old.partial_cmp(&new).unwrap_or(std::cmp::Ordering::Equal);
        self.ordered(order, format!("{name} {old} → {new}"));
    }

    /// Directory grants, by path: wider on any of [`FsGrant::width`]'s counts is more.
    fn fs(&mut self, old: &[FsGrant], new: &[FsGrant]) {
        for n in new {
            match old.iter().find(|o| o.path == n.path) {
                None => self
                    .more
                    .push(format!("directory {} ({})", shown(&n.path), n.describe())),
                Some(o) => {
                    let (a, b) = (o.width(), n.width());
                    let line = || {
                        format!(
                            "directory {}: {} → {}",
                            shown(&n.path),
                            o.describe(),
                            n.describe()
                        )
                    };
                    if a.iter().zip(&b).any(|(a, b)| a < b) {
                        self.more.push(line());
                    } else if a != b {
                        self.less.push(line());
                    }
                }
            }
        }
        for o in old.iter().filter(|o| !new.iter().any(|n| n.path == o.path)) {
            self.less
                .push(format!("directory {} ({})", shown(&o.path), o.describe()));
        }
    }
}

/// azd's environment, in the order of what it grants.
fn rank(a: EnvironmentAccess) -> u8 {
    match a {
        EnvironmentAccess::None => 0,
        EnvironmentAccess::Read => 1,
        EnvironmentAccess::ReadWrite => 2,
    }
}

fn yes(b: bool) -> &'static str {
    if b { "allowed" } else { "not allowed" }
}

impl<'a> FieldValue<'a> {
    /// The directories, if the value is of that kind (else none).
    fn directories(&self) -> &'a [FsGrant] {
        match self {
            Self::Directories(d) => d,
            _ => &[],
        }
    }

    /// The names, if the value is of that kind (else none).
    fn names(&self) -> &'a [String] {
        match self {
            Self::Names(n) => n,
            _ => &[],
        }
    }

    /// The access to azd's environment, if the value is of that kind (else none).
    fn environment(&self) -> EnvironmentAccess {
        match self {
            Self::Environment(a) => *a,
            _ => EnvironmentAccess::None,
        }
    }

    /// The leave, if the value is of that kind (else none).
    fn leave(&self) -> bool {
        matches!(self, Self::Leave(true))
    }

    /// The bound, if the value is of that kind (else 0).
    fn limit(&self) -> f64 {
        match self {
            Self::Limit { value, .. } => *value,
            _ => 0.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::FsAccess;

    fn policy(text: &str) -> Policy {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn an_added_origin_and_a_raised_limit_are_more_and_a_dropped_grant_is_less() {
        let old = policy(
            "env = [\"KEY\", \"OLD\"]\nmemory_mb = 64\n[http]\nallow = [\"https://a.example\"]\n",
        );
        let new = policy(
            "env = [\"KEY\"]\nmemory_mb = 128\n[http]\nallow = [\"https://a.example\", \"https://b.example\"]\n",
        );
        let d = PolicyDiff::between(&old, &new);
        assert_eq!(
            d.more,
            ["HTTP origin https://b.example", "memory_mb 64 → 128"]
        );
        assert_eq!(d.less, ["environment variable OLD"]);
        assert!(!d.asks_for_nothing_more());
        // Back the other way: exactly the reverse.
        let back = PolicyDiff::between(&new, &old);
        assert_eq!(back.less.len(), 2);
        assert_eq!(back.more, ["environment variable OLD"]);
        assert_eq!(PolicyDiff::between(&old, &old), PolicyDiff::default());
        // HTTP limits without any origin grant nothing.
        let limits = policy("[http]\nmax_response_bytes = 99999999\n");
        assert!(PolicyDiff::between(&Policy::default(), &limits).asks_for_nothing_more());
    }

    #[test]
    fn wider_directories_more_of_azd_and_a_new_scope_are_more() {
        let old = policy("fs = [{ path = \"out\", access = \"read\" }]\n");
        let new = policy(
            "fs = [{ path = \"out\", access = \"read-write\" }, { path = \"logs\", access = \"read\" }]\n\
             [azd]\nenvironment = \"read\"\nprompt = true\ncredential_scopes = [\"https://storage.azure.com/.default\"]\n",
        );
        let d = PolicyDiff::between(&old, &new);
        assert_eq!(
            d.more,
            [
                "directory out: read → read-write",
                "directory logs (read)",
                "credential scope https://storage.azure.com/.default",
                "azd environment: none → read",
                "questions to the user: not allowed → allowed",
            ]
        );
        assert!(d.less.is_empty());
        let narrower = PolicyDiff::between(&new, &old);
        assert!(narrower.asks_for_nothing_more(), "{narrower:?}");
        assert_eq!(narrower.less.len(), 5);
    }

    #[test]
    fn a_line_quotes_and_escapes_what_a_policy_names_even_one_made_without_the_parser() {
        let mut hostile = Policy::default();
        hostile.fs.push(FsGrant {
            path: "certs\u{1b}[2K\rdirectory x (read)".into(),
            access: FsAccess::ReadWrite,
            outside_project: false,
        });
        hostile.env.push("HOME\u{202e}".into());
        hostile.network.push("db\u{200b}.example.com:5432".into());
        hostile.http.allow.push("https://a.example\u{2028}".into());
        hostile
            .azd
            .credential_scopes
            .push("https://s/.default\u{feff}".into());
        let d = PolicyDiff::between(&Policy::default(), &hostile);
        assert_eq!(
            d.more,
            [
                "directory \"certs\\u{1b}[2K\\u{d}directory x (read)\" (read-write)",
                "environment variable \"HOME\\u{202e}\"",
                "network \"db\\u{200b}.example.com:5432\"",
                "HTTP origin \"https://a.example\\u{2028}\"",
                "credential scope \"https://s/.default\\u{feff}\"",
            ]
        );
        let back = PolicyDiff::between(&hostile, &Policy::default());
        for line in d.more.iter().chain(&back.less) {
            assert!(
                !line.chars().any(azd_wasm_host_core::text::is_invisible),
                "{line:?}"
            );
        }
    }

    #[test]
    fn a_higher_disk_bound_is_more_only_where_a_directory_is_written() {
        let writes = policy("fs = [{ path = \"out\", access = \"read-write\" }]\n");
        let more = policy("fs = [{ path = \"out\", access = \"read-write\" }]\ndisk_mb = 128\n");
        let d = PolicyDiff::between(&writes, &more);
        assert_eq!(d.more, ["disk_mb 64 → 128"]);
        // First seen: the deny-all default against a provider that writes with more disk.
        let d = PolicyDiff::between(&Policy::default(), &more);
        assert_eq!(d.more, ["directory out (read-write)", "disk_mb 64 → 128"]);
        let reads = policy("disk_mb = 128\n");
        assert!(PolicyDiff::between(&Policy::default(), &reads).asks_for_nothing_more());
    }
}
