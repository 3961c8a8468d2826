//! The provider's config schema: `[config] schema` in `provider.toml` names a
//! JSON Schema (drafts 4 to 2020-12; 2020-12 when it has no `$schema`) for
//! azure.yaml's `infra.config`.
//!
//! It is read and compiled with the manifest ([`ConfigSchema::load`]): a file
//! that is not JSON, not a valid JSON Schema, or that refers to any other
//! document (`$ref` to a file or a URL) is refused there, naming the file and
//! the fix, so `check` and `package` refuse it before azd ever could. Only the
//! meta-schemas of the drafts, built into the validator (boon), are known
//! besides the schema itself: a schema never reaches the network or the disk.
//!
//! Initialize checks azd's config against it before the guest sees it
//! ([`ConfigSchema::check`]): a config that does not match is answered with
//! `invalid_config`, listing each violation's JSON pointer (RFC 6901) and what
//! was expected, bounded in number and length.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use azd_wasm_host_core::{ErrorCode, ProviderError};
use boon::{Compiler, Draft, SchemaIndex, Schemas, UrlLoader, ValidationError};

use crate::error::{ConfigSchemaError, SchemaAt};

/// The largest schema file read (it is also what azd's metadata carries).
pub const MAX_SCHEMA_BYTES: u64 = 1 << 20;
/// Violations an `invalid_config` answer lists; the rest are counted.
const MAX_LISTED: usize = 20;
/// Characters of one violation's pointer, and of what it says, that are quoted.
const MAX_POINTER_CHARS: usize = 200;
const MAX_REASON_CHARS: usize = 300;

/// A provider's config schema, read and compiled.
#[derive(Clone)]
pub struct ConfigSchema {
    /// The schema file.
    pub path: PathBuf,
    /// The schema's text, as written (what `check` prints).
    pub text: String,
    /// The schema (what `package` gives azd as the extension's project
    /// configuration).
    pub document: serde_json::Value,
    compiled: Arc<(Schemas, SchemaIndex)>,
}

impl fmt::Debug for ConfigSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConfigSchema")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl PartialEq for ConfigSchema {
    fn eq(&self, other: &Self) -> bool {
        self.path == other.path && self.document == other.document
    }
}

/// Refuses every document: a config schema stands alone.
struct NoOtherDocuments;

impl UrlLoader for NoOtherDocuments {
    fn load(&self, url: &str) -> Result<serde_json::Value, Box<dyn std::error::Error>> {
        Err(format!(
            "a config schema may not refer to another document ({url}): \
             put what it needs under its own `$defs` and refer to `#/$defs/NAME`"
        )
        .into())
    }
}

impl ConfigSchema {
    /// Reads and compiles the schema at `path` (`[config] schema` of the
    /// manifest `manifest`, which names it in errors).
    pub fn load(path: &Path, manifest: &Path) -> Result<Self, ConfigSchemaError> {
        let at = || SchemaAt {
            manifest: manifest.to_path_buf(),
            schema: path.to_path_buf(),
        };
        let unreadable = |source| ConfigSchemaError::Read { at: at(), source };
        let size = std::fs::metadata(path).map_err(unreadable)?.len();
        if size > MAX_SCHEMA_BYTES {
            return Err(ConfigSchemaError::TooLarge {
                at: at(),
                size,
                limit: MAX_SCHEMA_BYTES,
            });
        }
        let text = std::fs::read(path).map_err(unreadable)?;
        let document: serde_json::Value =
            serde_json::from_slice(&text).map_err(|e| ConfigSchemaError::NotJson {
                at: at(),
                why: e.to_string(),
            })?;
        // JSON is UTF-8: serde_json read it as such.
        let text = String::from_utf8_lossy(&text).into_owned();
        let compiled = compile(path, &document)
            .map_err(|why| ConfigSchemaError::NotSchema { at: at(), why })?;
        Ok(Self {
            path: path.to_path_buf(),
            text,
            document,
            compiled: Arc::new(compiled),
        })
    }

    /// Checks `config` (azure.yaml's `infra.config`, as JSON) against the
    /// schema; a mismatch is provider `name`'s `invalid_config` error.
    pub fn check(&self, config: &serde_json::Value, name: &str) -> Result<(), ProviderError> {
        let (schemas, index) = &*self.compiled;
        let Err(error) = schemas.validate(config, *index) else {
            return Ok(());
        };
        let (mut violations, mut total) = (Vec::new(), 0);
        leaves(&error, &mut violations, &mut total);
        let mut message = format!(
            "provider `{name}`: azure.yaml's infra.config does not match the provider's config schema \
             ({total} violation{}; pointers are JSON pointers into infra.config):",
            if total == 1 { "" } else { "s" }
        );
        for (pointer, reason) in &violations {
            message.push_str(&format!(
                "\n  - at \"{}\": {}",
                cut(pointer, MAX_POINTER_CHARS),
                cut(reason, MAX_REASON_CHARS)
            ));
        }
        if total > MAX_LISTED {
            message.push_str(&format!("\n  - … and {} more", total - MAX_LISTED));
        }
        Err(
            ProviderError::host(ErrorCode::InvalidConfig, message).with_suggestion(format!(
                "change infra.config in azure.yaml to match the schema in {} \
             (`azd-wasm-host check` prints it)",
                self.path.display()
            )),
        )
    }
}

/// Compiles `document` as the schema of `path`, with no other document reachable.
fn compile(path: &Path, document: &serde_json::Value) -> Result<(Schemas, SchemaIndex), String> {
    let location = std::path::absolute(path)
        .map_err(|e| format!("cannot resolve its path ({e})"))?
        .display()
        .to_string();
    let mut compiler = Compiler::new();
    compiler.set_default_draft(Draft::V2020_12);
    compiler.use_loader(Box::new(NoOtherDocuments));
    compiler
        .add_resource(&location, document.clone())
        .map_err(|e| format!("{e:#}"))?;
    let mut schemas = Schemas::new();
    let index = compiler
        .compile(&location, &mut schemas)
        .map_err(|e| format!("{e:#}"))?;
    Ok((schemas, index))
}

/// The violations under `error` (its leaves), counted in `total`; the first
/// [`MAX_LISTED`] kept in `out` with their JSON pointer and what each says.
fn leaves(error: &ValidationError<'_, '_>, out: &mut Vec<(String, String)>, total: &mut usize) {
    if error.causes.is_empty() {
        *total += 1;
        if out.len() < MAX_LISTED {
            out.push((error.instance_location.to_string(), error.kind.to_string()));
        }
    }
    for cause in &error.causes {
        leaves(cause, out, total);
    }
}

/// `text` cut to `max` characters, with an ellipsis when cut.
fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema(document: &serde_json::Value) -> anyhow::Result<ConfigSchema> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("config.schema.json");
        std::fs::write(&path, serde_json::to_vec(document)?)?;
        Ok(ConfigSchema::load(
            &path,
            &dir.path().join("provider.toml"),
        )?)
    }

    fn greeting() -> ConfigSchema {
        schema(&json!({
            "type": "object",
            "properties": {
                "name": { "type": "string", "minLength": 1 },
                "greeting": { "type": "string" },
                "tags": { "type": "array", "items": { "type": "string" } }
            },
            "required": ["name"],
            "additionalProperties": false
        }))
        .unwrap()
    }

    fn refused(config: serde_json::Value) -> ProviderError {
        greeting().check(&config, "todo").unwrap_err()
    }

    #[test]
    fn a_config_that_matches_passes() {
        greeting()
            .check(&json!({ "name": "world", "greeting": "Hi" }), "todo")
            .unwrap();
    }

    #[test]
    fn each_violation_is_named_by_its_pointer_and_what_was_expected() {
        let err = refused(json!({ "name": 42, "tags": ["a", 7], "nmae": "x" }));
        assert_eq!(err.code(), Some("invalid_config"));
        assert_eq!(err.host_code(), Some(ErrorCode::InvalidConfig));
        assert!(!err.is_fault());
        let m = &err.message;
        assert!(
            m.contains("provider `todo`") && m.contains("3 violations"),
            "{m}"
        );
        assert!(
            m.contains("at \"/name\": want string, but got number"),
            "{m}"
        );
        assert!(
            m.contains("at \"/tags/1\": want string, but got number"),
            "{m}"
        );
        assert!(
            m.contains("at \"\": additionalProperties 'nmae' not allowed"),
            "{m}"
        );
        assert!(
            err.suggestion.contains("config.schema.json"),
            "{}",
            err.suggestion
        );
        let m = refused(json!({})).message;
        assert!(m.contains("at \"\": missing properties 'name'"), "{m}");
        let m = refused(json!({ "name": "" })).message;
        assert!(m.contains("at \"/name\"") && m.contains("length"), "{m}");
        // A pointer escapes `/` and `~` as RFC 6901 says.
        let s = schema(&json!({ "properties": { "a/b~c": { "type": "integer" } } })).unwrap();
        let m = s
            .check(&json!({ "a/b~c": "x" }), "todo")
            .unwrap_err()
            .message;
        assert!(m.contains("at \"/a~1b~0c\""), "{m}");
    }

    #[test]
    fn the_answer_is_bounded_however_much_is_wrong() {
        let s = schema(&json!({ "additionalProperties": { "type": "integer" } })).unwrap();
        let long = "k".repeat(1000);
        let config: serde_json::Map<String, serde_json::Value> = (0..500)
            .map(|i| (format!("{long}{i}"), json!("not a number")))
            .collect();
        let err = s.check(&config.into(), "todo").unwrap_err();
        assert!(
            err.message.contains("500 violations"),
            "{}",
            &err.message[..300]
        );
        assert!(err.message.contains("… and 480 more"));
        // Each pointer is cut, with an ellipsis.
        assert!(
            err.message
                .contains(&format!("at \"/{}…\"", "k".repeat(199)))
        );
        assert!(err.message.len() < 16 * 1024, "{} bytes", err.message.len());
    }

    #[test]
    fn a_broken_schema_is_refused_with_the_file_and_why() {
        let e = format!("{:#}", schema(&json!({ "type": "strnig" })).unwrap_err());
        assert!(
            e.contains("config.schema.json") && e.contains("not a valid JSON Schema"),
            "{e}"
        );
        let e = format!("{:#}", schema(&json!({ "pattern": "([" })).unwrap_err());
        assert!(e.contains("not a valid JSON Schema"), "{e}");
        let e = format!("{:#}", schema(&json!({ "minLength": -1 })).unwrap_err());
        assert!(e.contains("not a valid JSON Schema"), "{e}");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.json");
        std::fs::write(&path, "{ not json").unwrap();
        let e = format!(
            "{:#}",
            ConfigSchema::load(&path, Path::new("p.toml")).unwrap_err()
        );
        assert!(e.contains("not JSON") && e.contains("line 1"), "{e}");
        let e = format!(
            "{:#}",
            ConfigSchema::load(&dir.path().join("absent.json"), Path::new("p.toml")).unwrap_err()
        );
        assert!(
            e.contains("absent.json") && e.contains("cannot read"),
            "{e}"
        );
    }

    #[test]
    fn a_schema_reaches_no_other_document() {
        let dir = tempfile::tempdir().unwrap();
        // A document beside it that a file loader would happily read.
        std::fs::write(dir.path().join("other.json"), r#"{ "type": "string" }"#).unwrap();
        let path = dir.path().join("s.json");
        for reference in [
            "other.json",
            "https://example.com/schema.json",
            "http://127.0.0.1:9/x.json",
        ] {
            std::fs::write(&path, json!({ "$ref": reference }).to_string()).unwrap();
            let e = format!(
                "{:#}",
                ConfigSchema::load(&path, Path::new("p.toml")).unwrap_err()
            );
            assert!(
                e.contains("may not refer to another document"),
                "{reference}: {e}"
            );
        }
        // References inside the schema, and the drafts' own meta-schemas, work.
        let s = schema(&json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "definitions": { "name": { "type": "string" } },
            "properties": { "name": { "$ref": "#/definitions/name" } }
        }))
        .unwrap();
        assert!(s.check(&json!({ "name": 1 }), "todo").is_err());
        s.check(&json!({ "name": "x" }), "todo").unwrap();
    }
}
