//! The requests azd sends for each command `run` plays (after Register and
//! Ready), and what each answer adds to the report.

use azd_wasm_host_proto::azdext as pb;
use azd_wasm_host_sim::{CallError, ProviderHandle};

use super::options::Action;
use super::report::{
    ChangeReport, OutputValue, ParameterReport, Plan, PreviewReport, RunReport as Report,
};
use super::view::ProgressView;

/// Sends Initialize, then what `action` sends (`destroy` are the options of
/// `down`), and reports the answers. `compiling` is when the command started,
/// if the component is not compiled yet: Initialize waits for that, and the
/// user is told.
pub(crate) async fn drive(
    handle: &ProviderHandle,
    project: &str,
    options: pb::ProvisioningOptions,
    (action, destroy): (Action, pb::ProvisioningDestroyOptions),
    progress: &ProgressView,
    compiling: Option<std::time::Instant>,
) -> Result<Report, CallError> {
    if compiling.is_some() {
        progress.show(
            "Compiling the provider's component for this machine (first run only; the code is cached)…",
        );
    }
    handle.initialize(project, options).await?;
    if let Some(start) = compiling {
        progress.show(&format!(
            "Compiled in {:.1} s.",
            start.elapsed().as_secs_f64()
        ));
    }
    let on_progress = |m: &pb::ProvisioningProgressMessage| progress.provider(&m.message);
    match action {
        Action::Provision => provision(handle, on_progress).await,
        Action::Preview => preview(handle, on_progress).await,
        Action::Down => down(handle, destroy, on_progress).await,
        Action::State => state(handle).await,
        Action::Parameters => parameters(handle).await,
    }
}

/// `azd provision`: Deploy.
async fn provision(
    handle: &ProviderHandle,
    on_progress: impl FnMut(&pb::ProvisioningProgressMessage) + Send,
) -> Result<Report, CallError> {
    let r = handle.deploy(on_progress).await?;
    let mut report = Report::new(Action::Provision);
    report.skipped =
        Some(r.skipped_reason == pb::ProvisioningSkippedReason::DeploymentState as i32);
    report.outputs = Some(
        r.deployment
            .map(|d| outputs_of(&d.outputs))
            .unwrap_or_default(),
    );
    Ok(report)
}

/// `azd provision --preview`: Preview.
async fn preview(
    handle: &ProviderHandle,
    on_progress: impl FnMut(&pb::ProvisioningProgressMessage) + Send,
) -> Result<Report, CallError> {
    let p = handle
        .preview(on_progress)
        .await?
        .preview
        .unwrap_or_default();
    let mut report = Report::new(Action::Preview);
    let changes: Vec<ChangeReport> = p
        .changes
        .into_iter()
        .map(|c| ChangeReport {
            change_type: c.change_type,
            resource_type: c.resource_type,
            name: c.name,
            resource_id: c.resource_id,
        })
        .collect();
    report.preview = Some(PreviewReport {
        summary: p.summary,
        plan: Plan::of(&changes),
        changes,
    });
    Ok(report)
}

/// `azd down`: Destroy.
async fn down(
    handle: &ProviderHandle,
    options: pb::ProvisioningDestroyOptions,
    on_progress: impl FnMut(&pb::ProvisioningProgressMessage) + Send,
) -> Result<Report, CallError> {
    let r = handle.destroy(options, on_progress).await?;
    let mut report = Report::new(Action::Down);
    report.invalidated_env_keys = Some(r.invalidated_env_keys);
    Ok(report)
}

/// `azd env refresh`: State.
async fn state(handle: &ProviderHandle) -> Result<Report, CallError> {
    let s = handle
        .state(pb::ProvisioningStateOptions {
            hint: String::new(),
        })
        .await?
        .state
        .unwrap_or_default();
    let mut report = Report::new(Action::State);
    report.outputs = Some(outputs_of(&s.outputs));
    report.resources = Some(s.resources.into_iter().map(|r| r.id).collect());
    Ok(report)
}

/// `azd pipeline config`: Parameters, then PlannedOutputs.
async fn parameters(handle: &ProviderHandle) -> Result<Report, CallError> {
    let params = handle.parameters().await?;
    let planned = handle.planned_outputs().await?;
    let mut report = Report::new(Action::Parameters);
    report.parameters = Some(
        params
            .into_iter()
            .map(|p| ParameterReport {
                // Secret values are never printed.
                value: if p.secret { "********".into() } else { p.value },
                name: p.name,
                secret: p.secret,
                env_var_mapping: p.env_var_mapping,
            })
            .collect(),
    );
    report.planned_outputs = Some(planned.into_iter().map(|p| p.name).collect());
    Ok(report)
}

fn outputs_of(
    map: &std::collections::BTreeMap<String, pb::ProvisioningOutputParameter>,
) -> std::collections::BTreeMap<String, OutputValue> {
    map.iter()
        .map(|(k, v)| {
            (
                k.clone(),
                OutputValue {
                    ty: v.r#type.clone(),
                    value: v.value.clone(),
                },
            )
        })
        .collect()
}
