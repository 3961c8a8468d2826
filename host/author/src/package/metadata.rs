//! azd's metadata for the packaged extension: the document azd 1.31 reads
//! through an extension's `metadata` capability (`pkg/extensions/metadata.go`:
//! `ExtensionCommandMetadata`). At `azd extension install` azd runs
//! `<entry point> metadata`, checks that the document's `id` is the
//! extension's, and caches it as `metadata.json` in the extension's folder.
//!
//! `package` writes it beside the binary ([`AZD_METADATA_FILE`], which the
//! binary's `metadata` command prints) and adds the capability to the
//! registry: `configuration.project` is the provider's config schema
//! (`[config] schema`), `configuration.environmentVariables` the variables
//! `[policy] env` lets it read. The extension has no commands of its own.
//!
//! azd decodes each schema into its own Go type (invopop/jsonschema's
//! `Schema`), which holds less than JSON Schema allows (`type` only as one
//! string, `items` only as one schema, numbers for `exclusiveMaximum`, ...):
//! a document azd could not decode would make it drop the whole metadata. So a
//! schema that does not fit is left out of it, with a warning that says
//! why; the sidecar still checks every config against it.
//!
//! [`AZD_METADATA_FILE`]: azd_wasm_host_manifest::package::AZD_METADATA_FILE

use azd_wasm_host_manifest::Manifest;
use serde_json::{Map, Value, json};

/// The capability azd runs `<entry point> metadata` for.
pub(super) const CAPABILITY: &str = "metadata";

/// The metadata of extension `id` serving `manifest`'s provider, and what
/// had to be left out of it (why, for a warning).
pub(super) fn document(id: &str, manifest: &Manifest) -> (Value, Option<String>) {
    let mut configuration = Map::new();
    let mut left_out = None;
    if let Some(schema) = &manifest.config_schema {
        match fits_azd(&schema.document, "") {
            Ok(()) => {
                configuration.insert("project".into(), schema.document.clone());
            }
            Err(why) => {
                left_out = Some(format!(
                    "the config schema {} is not in azd's metadata: azd 1.31 could not read it ({why}); \
                     it is still checked at every Initialize",
                    crate::paths::shown(&schema.path)
                ));
            }
        }
    }
    if !manifest.policy.env.is_empty() {
        let variables: Vec<Value> = manifest
            .policy
            .env
            .iter()
            .map(|name| {
                json!({
                    "name": name,
                    "description": format!(
                        "Read by the {} provider from the environment azd runs in \
                         (granted by [policy] env in its provider.toml).",
                        manifest.name
                    ),
                })
            })
            .collect();
        configuration.insert("environmentVariables".into(), variables.into());
    }
    let mut doc = json!({ "schemaVersion": "1.0", "id": id, "commands": [] });
    if !configuration.is_empty() {
        doc["configuration"] = Value::Object(configuration);
    }
    (doc, left_out)
}

/// Whether azd's Go type for a schema decodes `schema` (at JSON pointer
/// `at`): each keyword it knows must have the JSON type its field has; it
/// ignores keywords it does not know.
///
/// Long as a table is: one arm per keyword azd's type has a field for, read top to bottom.
fn fits_azd(schema: &Value, at: &str) -> Result<(), String> {
    let object = match schema {
        Value::Bool(_) | Value::Null => return Ok(()),
        Value::Object(object) => object,
        _ => {
            return Err(format!(
                "at \"{at}\": a schema must be an object or a boolean"
            ));
        }
    };
    for (key, value) in object {
        let here = format!("{at}/{}", key.replace('~', "~0").replace('/', "~1"));
        let wrong = |want: &str| Err(format!("at \"{here}\": azd reads `{key}` only as {want}"));
        let fits = match key.as_str() {
            "$schema" | "$id" | "$anchor" | "$ref" | "$dynamicRef" | "$comment" | "type"
            | "pattern" | "format" | "contentEncoding" | "contentMediaType" | "title"
            | "description" => value.is_string(),
            "multipleOf" | "maximum" | "exclusiveMaximum" | "minimum" | "exclusiveMinimum" => {
                value.is_number()
            }
            "maxLength" | "minLength" | "maxItems" | "minItems" | "maxContains" | "minContains"
            | "maxProperties" | "minProperties" => value.is_u64(),
            "uniqueItems" | "deprecated" | "readOnly" | "writeOnly" => value.is_boolean(),
            "required" => strings(value),
            "enum" | "examples" => value.is_array(),
            "dependentRequired" => value.as_object().is_some_and(|m| m.values().all(strings)),
            "not"
            | "if"
            | "then"
            | "else"
            | "items"
            | "contains"
            | "additionalProperties"
            | "propertyNames"
            | "contentSchema" => {
                fits_azd(value, &here)?;
                true
            }
            "allOf" | "anyOf" | "oneOf" | "prefixItems" => {
                let Some(list) = value.as_array() else {
                    return wrong("a list of schemas");
                };
                for (i, item) in list.iter().enumerate() {
                    fits_azd(item, &format!("{here}/{i}"))?;
                }
                true
            }
            "$defs" | "properties" | "patternProperties" | "dependentSchemas" => {
                let Some(map) = value.as_object() else {
                    return wrong("an object of schemas");
                };
                for (name, item) in map {
                    let name = name.replace('~', "~0").replace('/', "~1");
                    fits_azd(item, &format!("{here}/{name}"))?;
                }
                true
            }
            _ => true,
        };
        if !fits {
            return wrong(expected(key));
        }
    }
    Ok(())
}

/// What azd's Go type holds for `key`, in words.
fn expected(key: &str) -> &'static str {
    match key {
        "multipleOf" | "maximum" | "exclusiveMaximum" | "minimum" | "exclusiveMinimum" => {
            "a number"
        }
        "uniqueItems" | "deprecated" | "readOnly" | "writeOnly" => "true or false",
        "required" => "a list of strings",
        "enum" | "examples" => "a list",
        "dependentRequired" => "an object of lists of strings",
        "maxLength" | "minLength" | "maxItems" | "minItems" | "maxContains" | "minContains"
        | "maxProperties" | "minProperties" => "a whole number of 0 or more",
        _ => "a string",
    }
}

fn strings(value: &Value) -> bool {
    value
        .as_array()
        .is_some_and(|list| list.iter().all(Value::is_string))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(schema: Option<&Value>, env: &str) -> (tempfile::TempDir, Manifest) {
        let dir = tempfile::tempdir().unwrap();
        let mut text =
            format!("name = \"todo\"\ncomponent = \"build/todo.wasm\"\n[policy]\nenv = [{env}]\n");
        if let Some(schema) = schema {
            std::fs::write(dir.path().join("config.schema.json"), schema.to_string()).unwrap();
            text.push_str("[config]\nschema = \"config.schema.json\"\n");
        }
        std::fs::write(dir.path().join("provider.toml"), text).unwrap();
        let m = Manifest::load(&dir.path().join("provider.toml")).unwrap();
        (dir, m)
    }

    #[test]
    fn the_document_carries_the_schema_and_the_granted_variables() {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": { "name": { "type": "string", "minLength": 1 } },
            "required": ["name"],
            "additionalProperties": false
        });
        let (_dir, m) = manifest(Some(&schema), "\"AZURE_LOCATION\", \"MY_SETTING\"");
        let (doc, left_out) = document("local.todo", &m);
        assert_eq!(left_out, None);
        assert_eq!(doc["schemaVersion"], "1.0");
        assert_eq!(doc["id"], "local.todo");
        assert_eq!(doc["commands"], json!([]));
        assert_eq!(doc["configuration"]["project"], schema);
        let vars = doc["configuration"]["environmentVariables"]
            .as_array()
            .unwrap();
        let names: Vec<&str> = vars.iter().map(|v| v["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["AZURE_LOCATION", "MY_SETTING"]);
        assert!(
            vars[0]["description"]
                .as_str()
                .unwrap()
                .contains("[policy] env")
        );
        // Nothing to say: no configuration at all.
        let (_dir, m) = manifest(None, "");
        let (doc, _) = document("local.todo", &m);
        assert_eq!(
            doc,
            json!({ "schemaVersion": "1.0", "id": "local.todo", "commands": [] })
        );
    }

    #[test]
    fn a_schema_azd_could_not_decode_is_left_out_and_said_why() {
        for (schema, said) in [
            (
                json!({ "type": ["string", "null"] }),
                "at \"/type\": azd reads `type` only as a string",
            ),
            (
                json!({
                    "$schema": "http://json-schema.org/draft-07/schema#",
                    "properties": { "a/b": { "items": [{ "type": "string" }] } }
                }),
                "at \"/properties/a~1b/items\": a schema must be an object or a boolean",
            ),
            (
                json!({ "$schema": "http://json-schema.org/draft-04/schema#", "maximum": 3, "exclusiveMaximum": true }),
                "`exclusiveMaximum` only as a number",
            ),
            (
                json!({ "anyOf": [true, { "type": ["string", "null"] }] }),
                "at \"/anyOf/1/type\"",
            ),
        ] {
            let (_dir, m) = manifest(Some(&schema), "\"A\"");
            let (doc, left_out) = document("local.todo", &m);
            let why = left_out.unwrap_or_else(|| panic!("{schema} was kept"));
            assert!(why.contains(said) && why.contains("still checked"), "{why}");
            assert!(doc["configuration"].get("project").is_none(), "{doc}");
            assert_eq!(doc["configuration"]["environmentVariables"][0]["name"], "A");
        }
        // What azd reads as it is, including keywords it ignores.
        let kept = json!({
            "$defs": { "n": { "type": "string" } },
            "properties": { "n": { "$ref": "#/$defs/n" }, "m": { "enum": [1, "x"] } },
            "dependentRequired": { "n": ["m"] },
            "anyOf": [true, { "required": ["n"] }],
            "x-anything": [1, 2]
        });
        let (_dir, m) = manifest(Some(&kept), "");
        let (doc, left_out) = document("local.todo", &m);
        assert_eq!(left_out, None);
        assert_eq!(doc["configuration"]["project"], kept);
    }
}
