//! Makes sure no answer can crash azd.
//!
//! azd 1.31 dereferences `deploy_response.result.deployment`,
//! `preview_response.result.preview` and `state_response.state_result.state`
//! without checking them, and converts each output by its `type`, panicking on a
//! type it does not know. Every answer a provider produces passes through here
//! before it is sent:
//! - required sub-messages are filled with empty values when a provider left them out;
//! - every name azd would write into `.env` (outputs, planned outputs, keys a
//!   destroy invalidates) is an environment variable's name that does not
//!   steer, and every output value one `.env` carries back whole
//!   (`azd_wasm_host_core::dotenv`); the others are dropped with a warning;
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

use azd_wasm_host_core::{ErrorCode, Progress, ProviderError, dotenv};
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

/// Checks every output of a map, after dropping those azd's `.env` may not
/// take ([`drop_unwritable_outputs`]).
pub(crate) fn normalize_outputs(
    outputs: &mut BTreeMap<String, pb::ProvisioningOutputParameter>,
    progress: &Progress,
) -> Result<(), ProviderError> {
    drop_unwritable_outputs(outputs, progress);
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

/// Removes the outputs azd would write into `.env` as something else than
/// what they are, or that would steer what azd starts next
/// (`azd_wasm_host_core::dotenv::check_entry`): a name that is not an
/// environment variable's name (`A="1" NODE_OPTIONS` reads back as two),
/// one that steers a program, a trust root, azd itself or credentials, and a
/// value azd's `.env` does not carry back whole. Each one dropped is named in
/// a warning, in the log and (for deploy and preview) as a progress step azd
/// shows; the others go on. Returns the names dropped.
pub(crate) fn drop_unwritable_outputs(
    outputs: &mut BTreeMap<String, pb::ProvisioningOutputParameter>,
    progress: &Progress,
) -> Vec<String> {
    let mut refused = Vec::new();
    let mut budget = MAX_OUTPUTS_BYTES;
    // In name order (a map's), so which outputs fit the budget does not vary.
    outputs.retain(|name, out| {
        let checked = dotenv::check_entry(name, &out.value).map_err(|why| why.sentence(name));
        let checked = checked.and_then(|()| {
            let size = name.len() + 1 + out.value.len();
            budget = budget.checked_sub(size).ok_or_else(|| {
                format!(
                    "{} would take the outputs of this answer past {MAX_OUTPUTS_BYTES} bytes, \
                     which azd hands every program it starts beside its own environment",
                    azd_wasm_host_core::text::quote(name)
                )
            })?;
            Ok(())
        });
        match checked {
            Ok(()) => true,
            Err(why) => {
                refused.push(name.clone());
                warn(progress, &format!("output not passed to azd: {why}"));
                false
            }
        }
    });
    refused
}

/// The most bytes the outputs of one answer may take as `NAME=value`
/// strings: azd sets them in the environment of every program it starts,
/// and Linux takes 2 MiB of arguments and environment in all.
pub(crate) const MAX_OUTPUTS_BYTES: usize = 512 << 10;

/// Keeps the names azd may take as environment variables
/// (`azd_wasm_host_core::dotenv::check_name`), naming each one dropped:
/// `what` says what the names are.
fn keep_names(names: &mut Vec<String>, what: &str, progress: &Progress) {
    names.retain(|name| match dotenv::check_name(name) {
        Ok(()) => true,
        Err(why) => {
            warn(
                progress,
                &format!("{what} not passed to azd: {}", why.sentence(name)),
            );
            false
        }
    });
}

fn warn(progress: &Progress, line: &str) {
    tracing::warn!("{line}");
    progress.report(format!("warning: {line}"));
}

/// A deploy result azd can read.
pub(crate) fn deploy_result(
    mut r: pb::ProvisioningDeployResult,
    progress: &Progress,
) -> Result<pb::ProvisioningDeployResult, ProviderError> {
    let deployment = r.deployment.get_or_insert_with(Default::default);
    normalize_outputs(&mut deployment.outputs, progress)?;
    Ok(r)
}

/// A preview result azd can read.
pub(crate) fn preview_result(
    mut r: pb::ProvisioningPreviewResult,
    progress: &Progress,
) -> Result<pb::ProvisioningPreviewResult, ProviderError> {
    let preview = r.preview.get_or_insert_with(Default::default);
    normalize_outputs(&mut preview.outputs, progress)?;
    Ok(r)
}

/// A state result azd can read.
pub(crate) fn state_result(
    mut r: pb::ProvisioningStateResult,
    progress: &Progress,
) -> Result<pb::ProvisioningStateResult, ProviderError> {
    let state = r.state.get_or_insert_with(Default::default);
    normalize_outputs(&mut state.outputs, progress)?;
    Ok(r)
}

/// A destroy result whose keys to remove from `.env` are variables' names a
/// provider may touch (azd's own settings are not its to remove).
pub(crate) fn destroy_result(
    mut r: pb::ProvisioningDestroyResult,
    progress: &Progress,
) -> pb::ProvisioningDestroyResult {
    keep_names(&mut r.invalidated_env_keys, "invalidated key", progress);
    r
}

/// Parameters whose environment variable mappings name variables a provider
/// may point azd at (`azd pipeline config` reads each mapped variable and
/// makes it a CI variable of that name).
pub(crate) fn parameters(
    mut parameters: Vec<pb::ProvisioningParameter>,
    progress: &Progress,
) -> Vec<pb::ProvisioningParameter> {
    for p in &mut parameters {
        keep_names(
            &mut p.env_var_mapping,
            "environment variable mapping",
            progress,
        );
    }
    parameters
}

/// Planned outputs whose names azd may take as environment variables.
pub(crate) fn planned_outputs(
    mut planned: Vec<pb::ProvisioningPlannedOutput>,
    progress: &Progress,
) -> Vec<pb::ProvisioningPlannedOutput> {
    let mut names: Vec<String> = planned.iter().map(|p| p.name.clone()).collect();
    keep_names(&mut names, "planned output", progress);
    planned.retain(|p| names.contains(&p.name));
    planned
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

    fn quiet() -> Progress {
        Progress::log_only("r")
    }

    /// What a request reported, as azd would show it.
    #[derive(Default)]
    struct Shown(std::sync::Mutex<Vec<String>>);

    impl azd_wasm_host_core::ProgressSink for Shown {
        fn send(&self, _: &str, message: String) {
            self.0.lock().unwrap().push(message);
        }
    }

    #[test]
    fn missing_submessages_are_filled() {
        let d = deploy_result(pb::ProvisioningDeployResult::default(), &quiet()).unwrap();
        assert!(d.deployment.is_some());
        let p = preview_result(pb::ProvisioningPreviewResult::default(), &quiet()).unwrap();
        assert!(p.preview.is_some());
        let s = state_result(pb::ProvisioningStateResult::default(), &quiet()).unwrap();
        assert!(s.state.is_some());
    }

    /// An output's name reaches azd's `.env` as written, so only a variable's
    /// name passes: names that azd would read as other variables (or as
    /// nothing it can read), and values it would read back as others, are
    /// dropped, each named in a warning azd shows; the rest go on.
    #[test]
    fn only_variable_names_and_values_env_carries_back_reach_azd() {
        let mut dep = pb::ProvisioningDeployment::default();
        for (name, value) in [
            ("A=\"1\" NODE_OPTIONS", "--require /tmp/x.js"),
            ("A=\"1\"\rSSL_CERT_FILE", "/tmp/ca.pem"),
            ("export\tRUSTFLAGS", "-Clinker=/tmp/x"),
            ("MY-VAR", "v"),
            ("", "v"),
            ("TRAILING", "C:\\dir\\"),
            ("QUOTED", "\"x\""),
            ("GREETING", "hi"),
            ("_under_score1", "2"),
        ] {
            dep.outputs.insert(name.into(), out("string", value));
        }
        let shown = std::sync::Arc::new(Shown::default());
        let progress = Progress::for_request(azd_wasm_host_proto::RequestKind::Deploy, "r", || {
            shown.clone()
        });
        let r = pb::ProvisioningDeployResult {
            deployment: Some(dep),
            skipped_reason: 0,
        };
        let kept: Vec<String> = deploy_result(r, &progress)
            .unwrap()
            .deployment
            .unwrap()
            .outputs
            .into_keys()
            .collect();
        assert_eq!(kept, ["GREETING", "_under_score1"]);
        let shown = shown.0.lock().unwrap();
        assert_eq!(shown.len(), 7, "{shown:?}");
        assert!(
            shown
                .iter()
                .all(|l| l.starts_with("warning: output not passed to azd")),
            "{shown:?}"
        );
        assert!(
            shown.iter().any(|l| l.contains("NODE_OPTIONS")),
            "{shown:?}"
        );

        let planned = planned_outputs(
            ["OK", "A B", "PATH"]
                .map(|n| pb::ProvisioningPlannedOutput { name: n.into() })
                .to_vec(),
            &quiet(),
        );
        assert_eq!(
            planned,
            [pb::ProvisioningPlannedOutput { name: "OK".into() }]
        );
        let destroyed = destroy_result(
            pb::ProvisioningDestroyResult {
                invalidated_env_keys: vec!["WEB_URL".into(), "AZURE_ENV_NAME".into(), "x y".into()],
            },
            &quiet(),
        );
        assert_eq!(destroyed.invalidated_env_keys, ["WEB_URL"]);
        let params = parameters(
            vec![pb::ProvisioningParameter {
                name: "p".into(),
                env_var_mapping: vec!["APP_PORT".into(), "ARM_CLIENT_SECRET".into(), "A B".into()],
                ..Default::default()
            }],
            &quiet(),
        );
        assert_eq!(params[0].env_var_mapping, ["APP_PORT"]);
    }

    /// Values no program could start with, and outputs past what azd can hand
    /// every program it starts, are dropped, naming each; what fits goes on.
    #[test]
    fn values_no_program_could_start_with_are_dropped() {
        let mut dep = pb::ProvisioningDeployment::default();
        dep.outputs.insert("NUL".into(), out("string", "a\0b"));
        dep.outputs
            .insert("ONE_TOO_LONG".into(), out("string", &"x".repeat(40_000)));
        // Thirty 30 KB outputs: about 900 KB, past the answer's budget.
        for i in 0..30 {
            dep.outputs
                .insert(format!("BIG_{i:02}"), out("string", &"y".repeat(30_000)));
        }
        let shown = std::sync::Arc::new(Shown::default());
        let progress = Progress::for_request(azd_wasm_host_proto::RequestKind::Deploy, "r", || {
            shown.clone()
        });
        let kept = deploy_result(
            pb::ProvisioningDeployResult {
                deployment: Some(dep),
                skipped_reason: 0,
            },
            &progress,
        )
        .unwrap()
        .deployment
        .unwrap()
        .outputs;
        assert!(!kept.contains_key("NUL") && !kept.contains_key("ONE_TOO_LONG"));
        let total: usize = kept.iter().map(|(k, v)| k.len() + 1 + v.value.len()).sum();
        assert!(total <= MAX_OUTPUTS_BYTES, "{total}");
        assert_eq!(
            kept.len(),
            MAX_OUTPUTS_BYTES / 30_007,
            "as many as fit, in name order"
        );
        assert!(
            kept.contains_key("BIG_00"),
            "{:?}",
            kept.keys().collect::<Vec<_>>()
        );
        let shown = shown.0.lock().unwrap();
        assert_eq!(shown.len(), 2 + 30 - kept.len(), "{shown:?}");
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
        let kept: Vec<String> = deploy_result(r, &quiet())
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
        let s = state_result(pb::ProvisioningStateResult { state: Some(state) }, &quiet()).unwrap();
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
        let e = deploy_result(r, &quiet()).unwrap_err();
        assert!(e.message.contains("bad"));
    }
}
