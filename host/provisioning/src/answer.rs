//! Makes sure no answer can crash azd.
//!
//! azd 1.31 dereferences `deploy_response.result.deployment`,
//! `preview_response.result.preview` and `state_response.state_result.state`
//! without checking them, and converts each output by its `type`, panicking on a
//! type it does not know. Every answer a provider produces passes through here
//! before it is sent:
//! - required sub-messages are filled with empty values when a provider left them out;
//! - output types are normalised to azd's five (`string`, `number`, `bool`,
//!   `object`, `array`), accepting the spellings ARM/Bicep use (`String`, `int`,
//!   `securestring`, ...); the value must parse as that type (object and array
//!   values are JSON text). Anything else is refused with an error naming the
//!   output, because azd could not read it;
//! - object and array outputs are sent as type `string` with their JSON text:
//!   azd 1.31 JSON-encodes the value of an `object`/`array` output once more
//!   before it writes `.env` (it expects a parsed value, as Bicep gives it), so
//!   `azd env get-value` would print a quoted, escaped string. As `string`, the
//!   JSON text reaches `.env` as it is, the way a Bicep object output does.

use std::collections::BTreeMap;

use azd_wasm_host_core::{ErrorCode, ProviderError};
use azd_wasm_host_proto::azdext as pb;

/// The type azd reads for an output whose declared type is `declared`, if any.
pub(crate) fn canonical_output_type(declared: &str) -> Option<&'static str> {
    Some(match declared.trim().to_ascii_lowercase().as_str() {
        "string" | "securestring" | "str" => "string",
        "number" | "int" | "integer" | "float" | "double" => "number",
        "bool" | "boolean" => "bool",
        "object" | "secureobject" | "map" => "object",
        "array" | "list" => "array",
        _ => return None,
    })
}

/// Checks and normalises one output in place.
pub(crate) fn normalize_output(
    name: &str,
    out: &mut pb::ProvisioningOutputParameter,
) -> Result<(), ProviderError> {
    let Some(ty) = canonical_output_type(&out.r#type) else {
        return Err(ProviderError::host(
            ErrorCode::InvalidOutputType,
            format!(
                "output {name:?} has type {:?}, which azd cannot read",
                out.r#type
            ),
        )
        .with_suggestion("Use one of: string, number, bool, object, array."));
    };
    let value = out.value.trim();
    let ok = match ty {
        "string" => true,
        "number" => value.parse::<f64>().is_ok_and(f64::is_finite),
        "bool" => matches!(value.to_ascii_lowercase().as_str(), "true" | "false"),
        "object" => serde_json::from_str::<serde_json::Value>(value).is_ok_and(|v| v.is_object()),
        "array" => serde_json::from_str::<serde_json::Value>(value).is_ok_and(|v| v.is_array()),
        _ => false,
    };
    if !ok {
        return Err(ProviderError::host(
            ErrorCode::InvalidOutputValue,
            format!("output {name:?} is declared {ty} but its value is not a valid {ty}"),
        )
        .with_suggestion(match ty {
            "object" | "array" => "Object and array outputs must be JSON text.",
            "bool" => "Bool outputs must be \"true\" or \"false\".",
            _ => "Numbers must be written in decimal, e.g. 42 or 1.5.",
        }));
    }
    if ty == "bool" {
        out.value = value.to_ascii_lowercase();
    }
    out.r#type = match ty {
        // Plain JSON in `.env`, not JSON re-encoded as a JSON string (see above).
        "object" | "array" => "string",
        other => other,
    }
    .to_owned();
    Ok(())
}

/// Checks every output of a map, after dropping those a provider may not set
/// ([`drop_steering_outputs`]).
pub(crate) fn normalize_outputs(
    outputs: &mut BTreeMap<String, pb::ProvisioningOutputParameter>,
) -> Result<(), ProviderError> {
    drop_steering_outputs(outputs);
    let mut names: Vec<&String> = outputs.keys().collect();
    names.sort();
    let names: Vec<String> = names.into_iter().cloned().collect();
    for name in names {
        if let Some(out) = outputs.get_mut(&name) {
            normalize_output(&name, out)?;
        }
    }
    Ok(())
}

/// Removes the outputs whose names steer a program, a trust root, azd itself
/// or credentials (`azd_wasm_host_core::steering`): azd would write them into
/// `.env` and hand them to every extension and tool it starts. Each one
/// dropped is a warning in the log; the others go on. Returns the names
/// dropped.
pub(crate) fn drop_steering_outputs(
    outputs: &mut BTreeMap<String, pb::ProvisioningOutputParameter>,
) -> Vec<String> {
    let mut refused = Vec::new();
    outputs.retain(
        |name, _| match azd_wasm_host_core::steering::refusal(name) {
            Some(why) => {
                tracing::warn!("dropped a provider output: {why}");
                refused.push(name.clone());
                false
            }
            None => true,
        },
    );
    refused
}

/// A deploy result azd can read.
pub(crate) fn deploy_result(
    mut r: pb::ProvisioningDeployResult,
) -> Result<pb::ProvisioningDeployResult, ProviderError> {
    let deployment = r.deployment.get_or_insert_with(Default::default);
    normalize_outputs(&mut deployment.outputs)?;
    Ok(r)
}

/// A preview result azd can read.
pub(crate) fn preview_result(
    mut r: pb::ProvisioningPreviewResult,
) -> Result<pb::ProvisioningPreviewResult, ProviderError> {
    let preview = r.preview.get_or_insert_with(Default::default);
    normalize_outputs(&mut preview.outputs)?;
    Ok(r)
}

/// A state result azd can read.
pub(crate) fn state_result(
    mut r: pb::ProvisioningStateResult,
) -> Result<pb::ProvisioningStateResult, ProviderError> {
    let state = r.state.get_or_insert_with(Default::default);
    normalize_outputs(&mut state.outputs)?;
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn out(t: &str, v: &str) -> pb::ProvisioningOutputParameter {
        pb::ProvisioningOutputParameter {
            r#type: t.into(),
            value: v.into(),
        }
    }

    #[test]
    fn bicep_spellings_are_normalised() {
        for (t, v, want) in [
            ("String", "x", "string"),
            ("securestring", "x", "string"),
            ("Int", "42", "number"),
            ("number", "-1.5e3", "number"),
            ("Bool", "True", "bool"),
            ("Object", "{\"a\":1}", "string"),
            ("array", "[1,2]", "string"),
        ] {
            let mut o = out(t, v);
            normalize_output("o", &mut o).unwrap();
            assert_eq!(o.r#type, want, "{t}");
        }
        let mut b = out("bool", "TRUE");
        normalize_output("b", &mut b).unwrap();
        assert_eq!(b.value, "true");
    }

    #[test]
    fn unknown_types_and_bad_values_are_refused() {
        let e = normalize_output("x", &mut out("datetime", "now")).unwrap_err();
        assert_eq!(e.code(), Some("invalid_output_type"));
        assert!(e.message.contains("\"x\""));
        for (t, v) in [
            ("number", "12abc"),
            ("number", "NaN"),
            ("bool", "yes"),
            ("object", "[1]"),
            ("array", "{}"),
            ("object", "not json"),
        ] {
            let e = normalize_output("x", &mut out(t, v)).unwrap_err();
            assert_eq!(e.code(), Some("invalid_output_value"), "{t} {v}");
        }
    }

    #[test]
    fn missing_submessages_are_filled() {
        let d = deploy_result(pb::ProvisioningDeployResult::default()).unwrap();
        assert!(d.deployment.is_some());
        let p = preview_result(pb::ProvisioningPreviewResult::default()).unwrap();
        assert!(p.preview.is_some());
        let s = state_result(pb::ProvisioningStateResult::default()).unwrap();
        assert!(s.state.is_some());
    }

    /// A provider cannot steer the next tool azd starts through `.env`: its
    /// outputs named like azd's, a credential's or a program's variables never
    /// reach azd; the rest do.
    #[test]
    fn outputs_that_steer_programs_trust_roots_or_credentials_are_dropped() {
        let mut dep = pb::ProvisioningDeployment::default();
        for name in [
            "AZD_CONFIG_DIR",
            "AZD_WASM_HOST_ALLOW_UNSIGNED",
            "azd_wasm_host_azd",
            "CARGO",
            "PATH",
            "Path",
            "LD_PRELOAD",
            "NODE_OPTIONS",
            "AZURE_CLIENT_SECRET",
            "AZURE_SUBSCRIPTION_ID",
            "GREETING",
            "AZURE_STORAGE_ACCOUNT_NAME",
        ] {
            dep.outputs.insert(name.into(), out("string", "/tmp/evil"));
        }
        let r = pb::ProvisioningDeployResult {
            deployment: Some(dep),
            skipped_reason: 0,
        };
        let kept: Vec<String> = deploy_result(r)
            .unwrap()
            .deployment
            .unwrap()
            .outputs
            .into_keys()
            .collect();
        assert_eq!(kept, ["AZURE_STORAGE_ACCOUNT_NAME", "GREETING"]);
        let mut state = pb::ProvisioningState::default();
        state
            .outputs
            .insert("AZD_CONFIG_DIR".into(), out("string", "x"));
        let s = state_result(pb::ProvisioningStateResult { state: Some(state) }).unwrap();
        assert!(s.state.unwrap().outputs.is_empty());
    }

    #[test]
    fn a_bad_output_in_a_deploy_is_refused() {
        let mut dep = pb::ProvisioningDeployment::default();
        dep.outputs.insert("ok".into(), out("string", "v"));
        dep.outputs.insert("bad".into(), out("weird", "v"));
        let r = pb::ProvisioningDeployResult {
            deployment: Some(dep),
            skipped_reason: 0,
        };
        let e = deploy_result(r).unwrap_err();
        assert!(e.message.contains("bad"));
    }
}
