//! Conversions between the WIT types of the guest and azd's protobuf types.
//!
//! - protobuf maps cross as `list<tuple<..>>` sorted by key;
//! - `options.config` (a `google.protobuf.Struct`) crosses as the JSON text of
//!   an object, `"{}"` when azd sends none;
//! - a guest `error` becomes a [`ProviderError`] with every field kept;
//! - an output value naming a place in a granted folder reaches azd in the
//!   host's form of the path ([`PathMap`]), and so do paths in
//!   `virtual-env` reach the guest in its own.

use std::collections::BTreeMap;

use azd_wasm_host_proto::azdext as pb;

use crate::bindings::azd::provisioning0_1_0::types as wit;
use crate::sandbox::PathMap;
use azd_wasm_host_core::json::struct_to_json;
use azd_wasm_host_core::{ErrorDetail, ErrorLink, ErrorOrigin, ProviderError};

/// A protobuf map as a list (in key order, as the map keeps it).
fn sorted<V, W>(map: &BTreeMap<String, V>, f: impl Fn(&V) -> W) -> Vec<(String, W)> {
    map.iter().map(|(k, v)| (k.clone(), f(v))).collect()
}

/// A key-value list as a protobuf map.
fn map<V, W>(list: Vec<(String, V)>, f: impl Fn(V) -> W) -> BTreeMap<String, W> {
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

/// A guest's output, its value in the host's form when it names a place in a
/// granted folder.
fn output_param(p: wit::OutputParameter, paths: &PathMap) -> pb::ProvisioningOutputParameter {
    let value = paths.to_native(&p.value).unwrap_or(p.value);
    pb::ProvisioningOutputParameter {
        r#type: p.type_,
        value,
    }
}

/// `virtual-env` of the options, its values in the guest's form where they
/// name a place in a granted folder (azd puts earlier layers' outputs there).
pub(crate) fn options_for_guest(o: &mut wit::ProvisioningOptions, paths: &PathMap) {
    for (_, value) in &mut o.virtual_env {
        paths.guest_in_place(value);
    }
}

pub(crate) fn state_from_wit(
    s: wit::ProvisioningState,
    paths: &PathMap,
) -> pb::ProvisioningStateResult {
    pb::ProvisioningStateResult {
        state: Some(pb::ProvisioningState {
            outputs: map(s.outputs, |o| output_param(o, paths)),
            resources: s
                .resources
                .into_iter()
                .map(|r| pb::ProvisioningResource { id: r.id })
                .collect(),
        }),
    }
}

fn deployment_from_wit(d: wit::Deployment, paths: &PathMap) -> pb::ProvisioningDeployment {
    pb::ProvisioningDeployment {
        parameters: map(d.parameters, input_param),
        outputs: map(d.outputs, |o| output_param(o, paths)),
    }
}

pub(crate) fn deploy_from_wit(
    r: wit::DeployResult,
    paths: &PathMap,
) -> pb::ProvisioningDeployResult {
    let skipped = match r.skipped_reason {
        wit::SkippedReason::Unspecified => pb::ProvisioningSkippedReason::Unspecified,
        wit::SkippedReason::DeploymentState => pb::ProvisioningSkippedReason::DeploymentState,
    };
    pb::ProvisioningDeployResult {
        deployment: Some(deployment_from_wit(r.deployment, paths)),
        skipped_reason: skipped as i32,
    }
}

/// A guest's text that azd shows as it is (preview rows, parameter names).
fn shown(mut text: String) -> String {
    azd_wasm_host_core::text::sanitize_in_place(&mut text);
    text
}

pub(crate) fn preview_from_wit(
    p: wit::DeploymentPreview,
    paths: &PathMap,
) -> pb::ProvisioningPreviewResult {
    pb::ProvisioningPreviewResult {
        preview: Some(pb::ProvisioningDeploymentPreview {
            summary: shown(p.summary),
            parameters: map(p.parameters, input_param),
            outputs: map(p.outputs, |o| output_param(o, paths)),
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
    fn options_maps_are_sorted_and_config_defaults_to_empty_object() {
        let o = pb::ProvisioningOptions {
            provider: "p".into(),
            deployment_stacks: BTreeMap::from([
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

    /// A project at `Z:\proj` granted `localinfra`, as Windows names it.
    fn windows_grants() -> PathMap {
        PathMap::new(
            [(
                "/Z:/proj/localinfra".to_owned(),
                r"Z:\proj\localinfra".to_owned(),
            )],
            '\\',
        )
    }

    fn outputs() -> Vec<(String, wit::OutputParameter)> {
        [
            ("ROOT", "string", "/Z:/proj/localinfra"),
            ("PATHS", "object", r#"{"web":"/Z:/proj/localinfra/web"}"#),
            ("OTHER", "string", "/Z:/proj/localinfra-old"),
        ]
        .into_iter()
        .map(|(name, ty, value)| {
            let value = value.to_owned();
            let type_ = ty.to_owned();
            (name.to_owned(), wit::OutputParameter { type_, value })
        })
        .collect()
    }

    fn values(outputs: &BTreeMap<String, pb::ProvisioningOutputParameter>) -> Vec<&str> {
        outputs.values().map(|o| o.value.as_str()).collect()
    }

    #[test]
    fn outputs_of_every_answer_name_granted_paths_as_the_host_does() {
        let paths = windows_grants();
        let want = [
            "/Z:/proj/localinfra-old",
            r#"{"web":"Z:\\proj\\localinfra\\web"}"#,
            r"Z:\proj\localinfra",
        ];
        let deployment = wit::Deployment {
            parameters: Vec::new(),
            outputs: outputs(),
        };
        let deployed = deploy_from_wit(
            wit::DeployResult {
                deployment,
                skipped_reason: wit::SkippedReason::Unspecified,
            },
            &paths,
        );
        assert_eq!(values(&deployed.deployment.unwrap().outputs), want);
        let state = state_from_wit(
            wit::ProvisioningState {
                outputs: outputs(),
                resources: Vec::new(),
            },
            &paths,
        );
        assert_eq!(values(&state.state.unwrap().outputs), want);
        let preview = preview_from_wit(
            wit::DeploymentPreview {
                summary: String::new(),
                parameters: Vec::new(),
                outputs: outputs(),
                changes: Vec::new(),
            },
            &paths,
        );
        assert_eq!(values(&preview.preview.unwrap().outputs), want);
        // Where the forms agree (Linux, macOS), outputs cross as they are.
        let same = state_from_wit(
            wit::ProvisioningState {
                outputs: outputs(),
                resources: Vec::new(),
            },
            &PathMap::default(),
        );
        let got = same.state.unwrap().outputs;
        let sent: BTreeMap<_, _> = outputs().into_iter().map(|(k, o)| (k, o.value)).collect();
        assert_eq!(
            values(&got),
            sent.values().map(String::as_str).collect::<Vec<_>>()
        );
    }

    #[test]
    fn virtual_env_reaches_the_guest_in_its_form() {
        let mut o = options_to_wit(&pb::ProvisioningOptions {
            virtual_env: BTreeMap::from([
                ("ROOT".to_owned(), r"Z:\proj\localinfra\web".to_owned()),
                ("NAME".to_owned(), "web".to_owned()),
            ]),
            ..Default::default()
        });
        options_for_guest(&mut o, &windows_grants());
        assert_eq!(
            o.virtual_env,
            [
                ("NAME".to_owned(), "web".to_owned()),
                ("ROOT".to_owned(), "/Z:/proj/localinfra/web".to_owned()),
            ]
        );
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
