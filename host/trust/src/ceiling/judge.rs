//! A provider held to a ceiling: who it is (its name, the extension it is
//! installed as, who signed it) and each field of its `[policy]`, against
//! every source, each answer a line naming the field, what the provider
//! asks, what the ceiling allows and the file that says so.
//!
//! The grants are judged field by field of [`Policy::fields`], the list
//! consent and `check` are derived from; [`Grants::rules`] names the
//! ceiling's fields without `..`, and a test holds the two lists to the same
//! keys, so a `[policy]` field never goes unjudged.

use std::path::{Path, PathBuf};

use azd_wasm_host_core::text::shown;
use azd_wasm_host_manifest::{EnvironmentAccess, FieldValue, FsAccess, FsGrant, Policy};

use super::pattern::{canonical_scope, origin_of};
use super::rules::{FsCeiling, GrantPath, Grants, Rule, Rules};
use super::shown::{fs_shown, keys_shown, listed, not_listed};

/// Who signed a provider, as far as the host knows when it judges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signer<'a> {
    /// Verified with the trusted key of this whole id.
    Key(&'a str),
    /// Verified by no trusted key (unsigned, or signed by a key not
    /// trusted), run because the user allows unsigned providers.
    Unverified,
    /// Run from a folder, not installed as an extension, its signature not
    /// checked (the author's own, under `run`, `test`, `watch`).
    Development,
}

/// What is judged of a provider.
#[derive(Debug, Clone, Copy)]
pub struct Candidate<'a> {
    /// Its name (its manifest's).
    pub provider: &'a str,
    /// The extension it is installed as; `None` when it is not installed.
    pub extension: Option<&'a str>,
    /// Who signed it.
    pub signer: Signer<'a>,
    /// Who signed its precompiled code apart (a code statement), when not
    /// its own signature: the key whose native code runs.
    pub code_signer: Option<&'a str>,
    /// What its manifest grants.
    pub policy: &'a Policy,
}

/// One answer of a ceiling: a field, what the provider asks, what the source allows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judged {
    /// The ceiling's key (`grants.http.allow`, `signers.keys`).
    pub field: String,
    /// What the provider asks, as `check` shows it.
    pub asked: String,
    /// What the ceiling allows there.
    pub ceiling: String,
    /// The file that sets it.
    pub source: PathBuf,
    /// Whether the provider stays within it.
    pub within: bool,
}

impl std::fmt::Display for Judged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: asks {}; the ceiling allows {} ({})",
            self.field,
            self.asked,
            self.ceiling,
            self.source.display()
        )
    }
}

/// Every answer of one source for `c`.
pub(crate) fn judge(rules: &Rules, source: &Path, c: &Candidate<'_>) -> Vec<Judged> {
    let mut out = Judging {
        source,
        lines: Vec::new(),
    };
    out.providers(rules, c);
    out.signer(rules, &c.signer);
    out.code_signer(rules, c);
    out.grants(&rules.grants, c.policy);
    out.lines
}

struct Judging<'s> {
    source: &'s Path,
    lines: Vec<Judged>,
}

impl Judging<'_> {
    fn push(&mut self, field: &str, asked: String, ceiling: String, within: bool) {
        self.lines.push(Judged {
            field: field.to_owned(),
            asked,
            ceiling,
            source: self.source.to_path_buf(),
            within,
        });
    }

    fn providers(&mut self, rules: &Rules, c: &Candidate<'_>) {
        let p = &rules.providers;
        let name = format!("to run as provider {}", shown(c.provider));
        if let Some(allow) = &p.allow_names {
            let ok = allow.iter().any(|a| a.matches(c.provider));
            self.push("providers.allow_names", name.clone(), listed(allow), ok);
        }
        if let Some(block) = &p.block_names {
            let hit = block.iter().find(|b| b.matches(c.provider));
            self.push(
                "providers.block_names",
                name,
                not_listed(block, hit),
                hit.is_none(),
            );
        }
        let Some(extension) = c.extension else {
            return;
        };
        let ext = format!("to run as extension {}", shown(extension));
        if let Some(allow) = &p.allow_extensions {
            let ok = allow.iter().any(|a| a.matches(extension));
            self.push("providers.allow_extensions", ext.clone(), listed(allow), ok);
        }
        if let Some(block) = &p.block_extensions {
            let hit = block.iter().find(|b| b.matches(extension));
            self.push(
                "providers.block_extensions",
                ext,
                not_listed(block, hit),
                hit.is_none(),
            );
        }
    }

    fn signer(&mut self, rules: &Rules, signer: &Signer<'_>) {
        let s = &rules.signers;
        match signer {
            Signer::Key(id) => {
                if let Some(keys) = &s.keys {
                    let ok = keys.iter().any(|(k, _)| k == id);
                    let asked = format!("to run signed by key {id}");
                    self.push("signers.keys", asked, keys_shown(keys), ok);
                }
            }
            Signer::Unverified => {
                let asked = "to run unverified (unsigned, or signed by a key you do not trust)";
                match (s.unsigned, &s.keys) {
                    (Some(true), _) => {}
                    (Some(false), _) => {
                        let ceiling = "no unverified provider".into();
                        self.push("signers.unsigned", asked.into(), ceiling, false);
                    }
                    (None, Some(keys)) => {
                        self.push("signers.keys", asked.into(), keys_shown(keys), false);
                    }
                    (None, None) => {}
                }
            }
            Signer::Development => {
                if !s.allow_development() {
                    let asked = "to run from its folder, unsigned (not installed)".to_owned();
                    let why = match s.development {
                        Some(false) => "development = false",
                        _ => "signers named, development unsaid",
                    };
                    let ceiling = format!("only signed providers ({why})");
                    self.push("signers.development", asked, ceiling, false);
                }
            }
        }
    }

    /// The key that signed the precompiled code apart is a signer too: its
    /// native code runs unsandboxed by wasm.
    fn code_signer(&mut self, rules: &Rules, c: &Candidate<'_>) {
        let (Some(keys), Some(code)) = (&rules.signers.keys, c.code_signer) else {
            return;
        };
        if c.signer == Signer::Key(code) {
            return;
        }
        let ok = keys.iter().any(|(k, _)| k == code);
        let asked = format!("to run precompiled code signed by key {code}");
        self.push("signers.keys", asked, keys_shown(keys), ok);
    }

    /// Each field of the policy against the ceiling's rule for its key.
    fn grants(&mut self, grants: &Grants, policy: &Policy) {
        let rules = grants.rules();
        for field in policy.fields() {
            let Some((_, rule)) = rules.iter().find(|(key, _)| *key == field.key) else {
                // Never: a test holds the two lists to the same keys. Refused, not skipped.
                let asked = field.value.shown().join(", ");
                self.push(field.key, asked, "no rule: refused".into(), false);
                continue;
            };
            let Some(rule) = rule else { continue };
            let key = format!("grants.{}", field.key);
            let value = match (field.key, field.value) {
                // A request waits no longer than a call: judged as it is enforced.
                ("http.timeout_secs", FieldValue::Limit { unit, applies, .. }) => {
                    FieldValue::Limit {
                        value: policy.http_timeout().as_secs_f64(),
                        unit,
                        applies,
                    }
                }
                (_, value) => value,
            };
            self.field(&key, rule, &value);
        }
    }

    fn field(&mut self, key: &str, rule: &Rule<'_>, value: &FieldValue<'_>) {
        match (rule, value) {
            (Rule::Directories(max), FieldValue::Directories(asked)) => {
                for g in asked.iter() {
                    let ok = max.iter().any(|m| fs_covers(m, g));
                    let shown_max = fs_shown(max);
                    self.push(
                        key,
                        format!("{} ({})", shown(&g.path), g.access),
                        shown_max,
                        ok,
                    );
                }
            }
            (Rule::Variables(max), FieldValue::Names(asked)) => {
                self.names(key, asked, &listed(max), |n| {
                    max.iter().any(|m| m.matches(n))
                });
            }
            (Rule::Destinations(max), FieldValue::Names(asked)) => {
                self.names(key, asked, &listed(max), |n| {
                    max.iter().any(|m| m.covers(n))
                });
            }
            (Rule::Origins(max), FieldValue::Names(asked)) => {
                self.names(key, asked, &listed(max), |n| {
                    origin_of(n).is_some_and(|o| max.iter().any(|m| m.covers(&o)))
                });
            }
            (Rule::Scopes(max), FieldValue::Names(asked)) => {
                self.names(key, asked, &listed(max), |n| {
                    max.contains(&canonical_scope(n))
                });
            }
            (rule, value) => self.scalar(key, rule, value),
        }
    }

    /// A field of one value: azd's environment, a leave, a limit.
    fn scalar(&mut self, key: &str, rule: &Rule<'_>, value: &FieldValue<'_>) {
        match (rule, value) {
            (Rule::Environment(max), FieldValue::Environment(asked)) => {
                let ok = rank(*asked) <= rank(*max);
                if *asked != EnvironmentAccess::None || !ok {
                    self.push(key, asked.to_string(), max.to_string(), ok);
                }
            }
            (Rule::Leave(max), FieldValue::Leave(asked)) => {
                if *asked {
                    self.push(
                        key,
                        "yes".into(),
                        if *max { "yes" } else { "no" }.into(),
                        *max,
                    );
                }
            }
            (
                Rule::Limit(max),
                FieldValue::Limit {
                    value,
                    unit,
                    applies,
                },
            ) => {
                if *applies {
                    let ok = *value <= *max;
                    self.push(key, format!("{value} {unit}"), format!("{max} {unit}"), ok);
                }
            }
            (_, value) => {
                let asked = value.shown().join(", ");
                self.push(key, asked, "a rule of another kind: refused".into(), false);
            }
        }
    }

    fn names(&mut self, key: &str, asked: &[String], max: &str, covered: impl Fn(&str) -> bool) {
        for n in asked {
            self.push(key, shown(n).into_owned(), max.to_owned(), covered(n));
        }
    }
}

/// Whether the ceiling's folder `max` covers the grant `g`: the same side
/// of the project, `g` at or beneath it, and no more access.
fn fs_covers(max: &FsCeiling, g: &FsGrant) -> bool {
    let asked = match g.locate(Some("{env}")) {
        Ok(azd_wasm_host_manifest::GrantLocation::Inside(p))
        | Ok(azd_wasm_host_manifest::GrantLocation::Outside(p)) => {
            GrantPath::of(&p.to_string_lossy())
        }
        Err(_) => return false,
    };
    let access_ok = max.access == FsAccess::ReadWrite || g.access == FsAccess::Read;
    access_ok && asked.outside() == max.path.outside() && asked.within(&max.path)
}

fn rank(a: EnvironmentAccess) -> u8 {
    match a {
        EnvironmentAccess::None => 0,
        EnvironmentAccess::Read => 1,
        EnvironmentAccess::ReadWrite => 2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The ceiling bounds every `[policy]` field, under the same key, in the same order.
    #[test]
    fn the_ceiling_has_a_rule_for_every_policy_field() {
        let policy = Policy::default();
        let keys: Vec<&str> = policy.fields().iter().map(|f| f.key).collect();
        let grants = Grants::default();
        let rules: Vec<&str> = grants.rules().iter().map(|(k, _)| *k).collect();
        assert_eq!(keys, rules);
    }
}
