//! Conversions between the WIT types of the guest and azd's protobuf types.
//!
//! - protobuf maps cross as `list<tuple<..>>` sorted by key;
//! - `options.config` (a `google.protobuf.Struct`) crosses as the JSON text of
//!   an object, `"{}"` when azd sends none;
//! - a guest `error` becomes a [`ProviderError`] with every field kept.

use std::collections::HashMap;

use azd_wasm_host_proto::azdext as pb;
use prost_types::value::Kind;
use serde_json::{Map, Number, Value};

use super::bindings::azd::provisioning0_1_0::types as wit;
use crate::error::{ErrorDetail, ErrorLink, ErrorOrigin, ProviderError};

/// Largest integer a JSON number (an f64) holds exactly: 2^53.
const MAX_EXACT_INT: f64 = 9_007_199_254_740_992.0;

/// A protobuf `Struct` as a JSON object.
pub fn struct_to_json(s: &prost_types::Struct) -> Value {
    Value::Object(
        s.fields
            .iter()
            .map(|(k, v)| (k.clone(), value_to_json(v)))
            .collect(),
    )
}

fn value_to_json(v: &prost_types::Value) -> Value {
    match &v.kind {
        None | Some(Kind::NullValue(_)) => Value::Null,
        Some(Kind::BoolValue(b)) => Value::Bool(*b),
        Some(Kind::StringValue(s)) => Value::String(s.clone()),
        Some(Kind::NumberValue(n)) => number_to_json(*n),
        Some(Kind::StructValue(s)) => struct_to_json(s),
        Some(Kind::ListValue(l)) => Value::Array(l.values.iter().map(value_to_json).collect()),
    }
}

/// Whole numbers print without a fraction (`3`, not `3.0`), like protobuf's own
/// JSON mapping; NaN and infinities, which JSON cannot hold, become `null`.
fn number_to_json(n: f64) -> Value {
    if n.fract() == 0.0 && n.abs() <= MAX_EXACT_INT {
        #[allow(clippy::cast_possible_truncation, reason = "whole and within 2^53")]
        return Value::Number(Number::from(n as i64));
    }
    Number::from_f64(n).map_or(Value::Null, Value::Number)
}

/// A JSON value as a protobuf `Value`.
pub fn json_to_value(v: &Value) -> prost_types::Value {
    let kind = match v {
        Value::Null => Kind::NullValue(0),
        Value::Bool(b) => Kind::BoolValue(*b),
        Value::Number(n) => Kind::NumberValue(n.as_f64().unwrap_or(0.0)),
        Value::String(s) => Kind::StringValue(s.clone()),
        Value::Array(a) => Kind::ListValue(prost_types::ListValue {
            values: a.iter().map(json_to_value).collect(),
        }),
        Value::Object(o) => Kind::StructValue(object_to_struct(o)),
    };
    prost_types::Value { kind: Some(kind) }
}

/// A JSON object as a protobuf `Struct`.
pub fn object_to_struct(o: &Map<String, Value>) -> prost_types::Struct {
    prost_types::Struct {
        fields: o
            .iter()
            .map(|(k, v)| (k.clone(), json_to_value(v)))
            .collect(),
    }
}

/// A protobuf map as a key-sorted list.
fn sorted<V, W>(map: &HashMap<String, V>, f: impl Fn(&V) -> W) -> Vec<(String, W)> {
    let mut v: Vec<(String, W)> = map.iter().map(|(k, v)| (k.clone(), f(v))).collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

/// A key-value list as a protobuf map.
fn map<V, W>(list: Vec<(String, V)>, f: impl Fn(V) -> W) -> HashMap<String, W> {
    list.into_iter().map(|(k, v)| (k, f(v))).collect()
}

pub(crate) fn options_to_wit(o: &pb::ProvisioningOptions) -> wit::ProvisioningOptions {
    let config = o
        .config
        .as_ref()
        .map_or_else(|| "{}".to_owned(), |s| struct_to_json(s).to_string());
    wit::ProvisioningOptions {
        provider: o.provider.clone(),
        path: o.path.clone(),
        module: o.module.clone(),
        deployment_stacks: sorted(&o.deployment_stacks, String::clone),
        ignore_deployment_state: o.ignore_deployment_state,
        config,
        name: o.name.clone(),
        virtual_env: sorted(&o.virtual_env, String::clone),
    }
}

pub(crate) fn state_options_to_wit(o: &pb::ProvisioningStateOptions) -> wit::StateOptions {
    wit::StateOptions {
        hint: o.hint.clone(),
    }
}

pub(crate) fn destroy_options_to_wit(o: &pb::ProvisioningDestroyOptions) -> wit::DestroyOptions {
    wit::DestroyOptions {
        force: o.force,
        purge: o.purge,
    }
}

fn input_param(p: wit::InputParameter) -> pb::ProvisioningInputParameter {
    pb::ProvisioningInputParameter {
        r#type: p.type_,
        default_value: p.default_value,
        value: p.value,
    }
}

fn output_param(p: wit::OutputParameter) -> pb::ProvisioningOutputParameter {
    pb::ProvisioningOutputParameter {
        r#type: p.type_,
        value: p.value,
    }
}

pub(crate) fn state_from_wit(s: wit::ProvisioningState) -> pb::ProvisioningStateResult {
    pb::ProvisioningStateResult {
        state: Some(pb::ProvisioningState {
            outputs: map(s.outputs, output_param),
            resources: s
                .resources
                .into_iter()
                .map(|r| pb::ProvisioningResource { id: r.id })
                .collect(),
        }),
    }
}

fn deployment_from_wit(d: wit::Deployment) -> pb::ProvisioningDeployment {
    pb::ProvisioningDeployment {
        parameters: map(d.parameters, input_param),
        outputs: map(d.outputs, output_param),
    }
}

pub(crate) fn deploy_from_wit(r: wit::DeployResult) -> pb::ProvisioningDeployResult {
    let skipped = match r.skipped_reason {
        wit::SkippedReason::Unspecified => pb::ProvisioningSkippedReason::Unspecified,
        wit::SkippedReason::DeploymentState => pb::ProvisioningSkippedReason::DeploymentState,
    };
    pb::ProvisioningDeployResult {
        deployment: Some(deployment_from_wit(r.deployment)),
        skipped_reason: skipped as i32,
    }
}

/// A guest's text that azd shows as it is (preview rows, parameter names).
fn shown(mut text: String) -> String {
    crate::text::sanitize_in_place(&mut text);
    text
}

pub(crate) fn preview_from_wit(p: wit::DeploymentPreview) -> pb::ProvisioningPreviewResult {
    pb::ProvisioningPreviewResult {
        preview: Some(pb::ProvisioningDeploymentPreview {
            summary: shown(p.summary),
            parameters: map(p.parameters, input_param),
            outputs: map(p.outputs, output_param),
            changes: p
                .changes
                .into_iter()
                .map(|c| pb::ProvisioningDeploymentPreviewChange {
                    change_type: shown(c.change_type),
                    resource_id: shown(c.resource_id),
                    resource_type: shown(c.resource_type),
                    name: shown(c.name),
                })
                .collect(),
        }),
    }
}

pub(crate) fn destroy_from_wit(r: wit::DestroyResult) -> pb::ProvisioningDestroyResult {
    pb::ProvisioningDestroyResult {
        invalidated_env_keys: r.invalidated_env_keys,
    }
}

pub(crate) fn parameters_from_wit(ps: Vec<wit::Parameter>) -> Vec<pb::ProvisioningParameter> {
    ps.into_iter()
        .map(|p| pb::ProvisioningParameter {
            name: shown(p.name),
            secret: p.secret,
            value: p.value,
            env_var_mapping: p.env_var_mapping,
            local_prompt: p.local_prompt,
            using_env_var_mapping: p.using_env_var_mapping,
        })
        .collect()
}

pub(crate) fn planned_outputs_from_wit(
    os: Vec<wit::PlannedOutput>,
) -> Vec<pb::ProvisioningPlannedOutput> {
    os.into_iter()
        .map(|o| pb::ProvisioningPlannedOutput { name: o.name })
        .collect()
}

/// A guest's `error`, kept field for field.
pub(crate) fn error_from_wit(e: wit::Error) -> ProviderError {
    ProviderError {
        message: e.message,
        origin: match e.origin {
            wit::ErrorOrigin::Unspecified => ErrorOrigin::Unspecified,
            wit::ErrorOrigin::Local => ErrorOrigin::Local,
            wit::ErrorOrigin::Service => ErrorOrigin::Service,
            wit::ErrorOrigin::Tool => ErrorOrigin::Tool,
        },
        suggestion: e.suggestion,
        links: e
            .links
            .into_iter()
            .map(|l| ErrorLink {
                url: l.url,
                title: l.title,
            })
            .collect(),
        detail: e.detail.map(|d| match d {
            wit::ErrorDetail::Local(l) => ErrorDetail::Local {
                code: l.code,
                category: l.category,
            },
            wit::ErrorDetail::Service(s) => ErrorDetail::Service {
                error_code: s.error_code,
                status_code: s.status_code,
                service_name: s.service_name,
            },
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn struct_json_round_trip() {
        let json: Value = serde_json::json!({
            "name": "x", "count": 3, "ratio": 0.5, "on": true, "none": null,
            "list": [1, "two", {"three": 3}], "nested": {"a": {"b": []}}
        });
        let Value::Object(o) = &json else {
            unreachable!()
        };
        let s = object_to_struct(o);
        assert_eq!(struct_to_json(&s), json);
    }

    #[test]
    fn numbers_json_cannot_hold_become_null() {
        assert_eq!(number_to_json(f64::NAN), Value::Null);
        assert_eq!(number_to_json(f64::INFINITY), Value::Null);
        assert_eq!(number_to_json(1e300).as_f64(), Some(1e300));
        assert_eq!(number_to_json(0.25).to_string(), "0.25");
        assert_eq!(number_to_json(-2.0).to_string(), "-2");
    }

    #[test]
    fn options_maps_are_sorted_and_config_defaults_to_empty_object() {
        let o = pb::ProvisioningOptions {
            provider: "p".into(),
            deployment_stacks: HashMap::from([
                ("b".to_owned(), "2".to_owned()),
                ("a".to_owned(), "1".to_owned()),
                ("c".to_owned(), "3".to_owned()),
            ]),
            ..Default::default()
        };
        let w = options_to_wit(&o);
        let keys: Vec<&str> = w
            .deployment_stacks
            .iter()
            .map(|(k, _)| k.as_str())
            .collect();
        assert_eq!(keys, ["a", "b", "c"]);
        assert_eq!(w.config, "{}");
        assert!(w.virtual_env.is_empty());
    }

    #[test]
    fn guest_error_keeps_every_field() {
        let e = error_from_wit(wit::Error {
            message: "m".into(),
            origin: wit::ErrorOrigin::Service,
            suggestion: "s".into(),
            links: vec![wit::ErrorLink {
                url: "u".into(),
                title: "t".into(),
            }],
            detail: Some(wit::ErrorDetail::Service(wit::ServiceError {
                error_code: "E".into(),
                status_code: 503,
                service_name: "svc".into(),
            })),
        });
        assert_eq!(e.message, "m");
        assert_eq!(e.origin, ErrorOrigin::Service);
        assert_eq!(e.suggestion, "s");
        assert_eq!(e.links[0].title, "t");
        assert_eq!(
            e.detail,
            Some(ErrorDetail::Service {
                error_code: "E".into(),
                status_code: 503,
                service_name: "svc".into()
            })
        );
    }
}
