"""http-probe in Python: the Python route of the host's [policy.http] tests (host/cli/tests/all/http.rs).

The same config and outputs as the Rust probe (host/cli/tests/guests/http-probe): deploy sends each
request ``infra.config.requests`` lists through the SDK's ``http_request`` and reports what came
back in ``RESULTS`` (``{status, bytes, body}`` or ``{error}``); with ``token_scope`` it first asks
for an access token and sends it as each request's bearer, and ``TOKEN`` says how that went
(``expires_on`` and ``length``, or ``code`` and ``error``; never the token). With
``fail_on_error`` deploy fails on the first failure.
"""

from __future__ import annotations

import azd_provider as azd
from componentize_py_types import Err
from wit_world import exports
from azd_provider import types

_config: dict | None = None


def _token(scope: str, outputs: dict, failures: list) -> str | None:
    try:
        token, expires_on = azd.access_token(scope)
    except Err as e:
        code = e.value.detail.value.code.replace("_", "-")
        failures.append(f"token: {code}: {e.value.message}")
        outputs["TOKEN"] = {"code": code, "error": e.value.message}
        return None
    outputs["TOKEN"] = {"expires_on": expires_on, "length": len(token)}
    return token


class Provider(azd.AzdProvider, exports.Provider):
    def initialize(self, project_path: str, options: types.ProvisioningOptions) -> None:
        global _config
        _config = azd.parse_config(options, required=["requests"])

    def state(self, options: types.StateOptions) -> types.ProvisioningState:
        return types.ProvisioningState(outputs=[], resources=[])

    def deploy(self) -> types.DeployResult:
        config = _config or {}
        outputs: dict = {}
        failures: list[str] = []
        token = _token(config["token_scope"], outputs, failures) if config.get("token_scope") else None
        results = []
        for req in config["requests"]:
            azd.report(f"Requesting {req['url']}")
            headers = [("authorization", f"Bearer {token}")] if token else []
            try:
                status, _, body = azd.http_request(
                    req.get("method", "GET"), req["url"], headers, (req.get("body") or "").encode()
                )
                results.append({"status": status, "bytes": len(body), "body": body[:200].decode(errors="replace")})
            except azd.HttpError as e:
                failures.append(f"{req['url']}: {e}")
                results.append({"error": str(e)})
        if config.get("fail_on_error") and failures:
            raise azd.local_error(failures[0], code="http_failed", category="dependency")
        outputs["RESULTS"] = results
        return types.DeployResult(
            deployment=types.Deployment(parameters=[], outputs=azd.outputs(outputs)),
            skipped_reason=types.SkippedReason.UNSPECIFIED,
        )

    def preview(self) -> types.DeploymentPreview:
        return types.DeploymentPreview(summary="http-probe sends requests on deploy only", parameters=[], outputs=[], changes=[])

    def destroy(self, options: types.DestroyOptions) -> types.DestroyResult:
        return types.DestroyResult(invalidated_env_keys=[])

    def ensure_env(self) -> None:
        pass

    def parameters(self) -> list[types.Parameter]:
        return []

    def planned_outputs(self) -> list[types.PlannedOutput]:
        return azd.planned_outputs(["RESULTS", "TOKEN"])
