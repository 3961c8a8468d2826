"""{{name}}: an azd provisioning provider in Python.

It "provisions" a greeting: azure.yaml's ``infra.config`` must name who to greet (``name``,
required) and may pick the ``greeting`` word (default "Hello"). Deploy, preview and destroy
report their steps on azd's spinner; deploy returns GREETING (string) and GREETING_LENGTH
(number). A config without ``name`` is refused with a structured ``invalid_config`` error.

componentize-py makes a new ``Provider`` object for every call: what ``initialize`` learns is
kept at module level (each layer gets a fresh instance of the component, so nothing leaks
between layers).

Build: ``azd-wasm-host build`` (componentize-py, from ``[build]`` in provider.toml).
"""

from __future__ import annotations

import azd_provider as azd
from wit_world import exports
from wit_world.imports import types

OUTPUTS = ("GREETING", "GREETING_LENGTH")

# What initialize learned: (name, greeting), or None before it ran.
_settings: tuple[str, str] | None = None


def _current() -> tuple[str, str]:
    if _settings is None:
        raise azd.local_error("{{name}} was called before initialize", code="not_initialized", category="internal")
    return _settings


def _outputs() -> list[tuple[str, types.OutputParameter]]:
    name, greeting = _current()
    text = f"{greeting}, {name}!"
    return azd.outputs({"GREETING": text, "GREETING_LENGTH": len(text)})


class Provider(azd.AzdProvider, exports.Provider):
    def initialize(self, project_path: str, options: types.ProvisioningOptions) -> None:
        global _settings
        config = azd.parse_config(options, required=["name"])
        name = config["name"]
        if not isinstance(name, str) or not name.strip():
            raise azd.invalid_config("the {{name}} config's `name` is empty", "Set `name:` under `infra.config` in azure.yaml.")
        greeting = config.get("greeting") or "Hello"
        _settings = (name, str(greeting))
        azd.log_info(f"{{name}} initialized for {project_path} (layer '{options.name}')")

    def state(self, options: types.StateOptions) -> types.ProvisioningState:
        return types.ProvisioningState(outputs=_outputs(), resources=[types.Resource(id=f"greeting/{_current()[0]}")])

    def deploy(self) -> types.DeployResult:
        azd.report(f"Composing the greeting for {_current()[0]}")
        deployment = types.Deployment(parameters=[], outputs=_outputs())
        azd.report("Greeting ready")
        return types.DeployResult(deployment=deployment, skipped_reason=types.SkippedReason.UNSPECIFIED)

    def preview(self) -> types.DeploymentPreview:
        name = _current()[0]
        azd.report("Comparing the greeting with the configuration")
        return types.DeploymentPreview(
            summary=f"{{name}} would greet {name}",
            parameters=[],
            outputs=_outputs(),
            changes=[azd.change("Create", name, "hello/greeting", f"greeting/{name}")],
        )

    def destroy(self, options: types.DestroyOptions) -> types.DestroyResult:
        forced = " (forced)" if options.force else ""
        azd.report(f"Forgetting the greeting for {_current()[0]}{forced}")
        return types.DestroyResult(invalidated_env_keys=list(OUTPUTS))

    def ensure_env(self) -> None:
        _current()

    def parameters(self) -> list[types.Parameter]:
        name, greeting = _current()
        return [azd.parameter("name", value=name), azd.parameter("greeting", value=greeting)]

    def planned_outputs(self) -> list[types.PlannedOutput]:
        return azd.planned_outputs(OUTPUTS)
