//! The ceiling as text: what each rule allows, as refusals and `policy
//! show` print it (patterns from the administrator's file with their
//! invisible characters escaped; names from a manifest quoted).

use std::path::PathBuf;

use azd_wasm_host_core::text::{escape_invisible, shown};

use super::pattern::NamePattern;
use super::rules::{FsCeiling, Rule, Rules};

pub(super) fn fs_shown(max: &[FsCeiling]) -> String {
    if max.is_empty() {
        return "no folder".to_owned();
    }
    max.iter()
        .map(|m| format!("{} ({}) and beneath", shown(&m.written), m.access))
        .collect::<Vec<_>>()
        .join(", ")
}

pub(super) fn listed<T: std::fmt::Display>(list: &[T]) -> String {
    if list.is_empty() {
        return "none".to_owned();
    }
    list.iter()
        .map(|t| escape_invisible(&t.to_string()).into_owned())
        .collect::<Vec<_>>()
        .join(", ")
}

pub(super) fn not_listed(block: &[NamePattern], hit: Option<&NamePattern>) -> String {
    match hit {
        Some(b) => format!("none matching {}", shown(&b.to_string())),
        None => format!("any but {}", listed(block)),
    }
}

pub(super) fn keys_shown(keys: &[(String, Option<PathBuf>)]) -> String {
    if keys.is_empty() {
        return "no key".to_owned();
    }
    keys.iter()
        .map(|(id, file)| match file {
            Some(f) => format!("key {id} ({})", f.display()),
            None => format!("key {id}"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

impl Rule<'_> {
    /// What the rule allows, as `policy show` prints it.
    pub(crate) fn shown(&self) -> String {
        match self {
            Self::Directories(max) => fs_shown(max),
            Self::Variables(max) => listed(max),
            Self::Destinations(max) => listed(max),
            Self::Origins(max) => listed(max),
            Self::Scopes(max) => listed(max),
            Self::Environment(max) => max.to_string(),
            Self::Leave(max) => if *max { "yes" } else { "no" }.to_owned(),
            Self::Limit(max) => format!("at most {max}"),
        }
    }
}

impl Rules {
    /// Each field this file sets, as `policy show` prints it.
    pub(crate) fn shown(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        let s = &self.signers;
        if let Some(keys) = &s.keys {
            out.push(("signers.keys".to_owned(), keys_shown(keys)));
        }
        let yes_no = |b: bool| if b { "yes" } else { "no" }.to_owned();
        if let Some(u) = s.unsigned {
            out.push(("signers.unsigned".to_owned(), yes_no(u)));
        }
        if let Some(d) = s.development {
            out.push(("signers.development".to_owned(), yes_no(d)));
        }
        let p = &self.providers;
        for (key, list) in [
            ("providers.allow_names", &p.allow_names),
            ("providers.block_names", &p.block_names),
            ("providers.allow_extensions", &p.allow_extensions),
            ("providers.block_extensions", &p.block_extensions),
        ] {
            if let Some(list) = list {
                out.push((key.to_owned(), listed(list)));
            }
        }
        if let Some(prompt) = self.consent_prompt {
            let v = if prompt {
                "at azd's prompt or ahead of time"
            } else {
                "only ahead of time (`approve`)"
            };
            out.push(("consent.prompt".to_owned(), v.to_owned()));
        }
        for (key, rule) in self.grants.rules() {
            if let Some(rule) = rule {
                out.push((format!("grants.{key}"), rule.shown()));
            }
        }
        out
    }
}
