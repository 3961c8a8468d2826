"""localfiles: an azd provisioning provider that provisions real local files.

azure.yaml's ``infra.config`` declares resources under a root folder of the project::

    {"root": "localinfra",
     "resources": [{"name": "web", "kind": "directory"},
                   {"name": "settings", "kind": "file", "content": "..."},
                   {"name": "db", "kind": "json-store", "data": {...}}]}

- ``preview`` compares what is declared with what exists and touches nothing;
- ``deploy`` creates or updates every resource (one progress step each), removes the
  resources it made earlier that are no longer declared, and records what it made in
  ``<project>/.azure/<env>/localfiles-state.json``;
- ``state`` reports what the recorded deployment left on disk;
- ``destroy`` removes exactly what deploy made and names the env keys that no longer hold.

The provider sees only what ``provider.toml`` grants: the project read-only, the root
folder and the environment folder read-write. Build it with scripts/build-examples.sh.
"""

from __future__ import annotations

import hashlib
import json
import os
import posixpath
import re
import shutil
from dataclasses import dataclass
from typing import Any

import azd_provider as azd
from wit_world import exports
from wit_world.imports import types

STATE_FILE = "localfiles-state.json"
STATE_VERSION = 1
KINDS = ("directory", "file", "json-store")
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$")
OUTPUT_NAMES = (
    "LOCALFILES_ROOT",
    "LOCALFILES_RESOURCE_COUNT",
    "LOCALFILES_RESOURCES",
    "LOCALFILES_PATHS",
    "LOCALFILES_BYTES",
    "LOCALFILES_READY",
)
CONFIG_HELP = (
    'Write infra.config in azure.yaml as {root: localinfra, resources: [{name: web, kind: directory}, '
    '{name: settings, kind: file, content: "..."}, {name: db, kind: json-store, data: {...}}]}.'
)


@dataclass(frozen=True)
class Resource:
    """One declared resource and what it should look like on disk."""

    name: str
    kind: str
    path: str  # absolute
    content: bytes | None  # None for directories

    @property
    def digest(self) -> str:
        return "directory" if self.content is None else hashlib.sha256(self.content).hexdigest()

    @property
    def resource_type(self) -> str:
        return f"localfiles/{self.kind}"


def _config_error(message: str) -> Exception:
    return azd.invalid_config(message, CONFIG_HELP)


def _parse_resources(project: str, config: dict[str, Any]) -> tuple[str, list[Resource]]:
    root = config.get("root", "localinfra")
    if not isinstance(root, str) or root == "":
        raise _config_error("`root` must be a non-empty relative path")
    normal = posixpath.normpath(root)
    if posixpath.isabs(normal) or normal == "." or normal.split("/")[0] == "..":
        raise _config_error(f"`root` must be a folder inside the project, not {root!r}")
    root_path = posixpath.join(project, normal)

    declared = config.get("resources", [])
    if not isinstance(declared, list):
        raise _config_error("`resources` must be a list")
    resources: list[Resource] = []
    seen: set[str] = set()
    for index, item in enumerate(declared):
        if not isinstance(item, dict):
            raise _config_error(f"resource #{index + 1} must be an object with `name` and `kind`")
        name, kind = item.get("name"), item.get("kind")
        if not isinstance(name, str) or not NAME_PATTERN.match(name):
            raise _config_error(f"resource #{index + 1} needs a `name` of letters, digits, '-' or '_', got {name!r}")
        if name in seen:
            raise _config_error(f"two resources are named {name!r}")
        seen.add(name)
        if kind == "directory":
            resources.append(Resource(name, kind, posixpath.join(root_path, name), None))
        elif kind == "file":
            content = item.get("content", "")
            if not isinstance(content, str):
                raise _config_error(f"the `content` of file {name!r} must be text")
            resources.append(Resource(name, kind, posixpath.join(root_path, name), content.encode()))
        elif kind == "json-store":
            data = item.get("data", {})
            if not isinstance(data, (dict, list)):
                raise _config_error(f"the `data` of json-store {name!r} must be an object or a list")
            text = json.dumps(data, indent=2, sort_keys=True) + "\n"
            resources.append(Resource(name, kind, posixpath.join(root_path, name + ".json"), text.encode()))
        else:
            raise _config_error(f"resource {name!r} has kind {kind!r}; the kinds are {', '.join(KINDS)}")
    return root_path, resources


def _digest_on_disk(path: str) -> str | None:
    """What is at ``path`` now, in the terms of ``Resource.digest``; None when nothing is."""
    if os.path.isdir(path):
        return "directory"
    if os.path.isfile(path):
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    return None


def _ensure_dir(path: str) -> None:
    # Only when missing: a granted folder exists, and its parent may not be writable.
    if not os.path.isdir(path):
        os.makedirs(path)


def _remove(path: str) -> None:
    if os.path.isdir(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.remove(path)


class Layer:
    """One provisioning layer: what ``initialize`` learned, and the work of every later call."""

    def __init__(
        self, project: str, layer: str, root: str, resources: list[Resource], state_path: str, ignore_state: bool
    ) -> None:
        self.project = project
        self.ignore_state = ignore_state
        self.layer = layer
        self.root = root
        self.resources = resources
        self.state_path = state_path

    # -- helpers -------------------------------------------------------------------------

    def _relative(self, path: str) -> str:
        return posixpath.relpath(path, self.project)

    def _load_state(self) -> dict[str, Any]:
        """The whole state file (all layers); an empty one when there is none."""
        try:
            with open(self.state_path, encoding="utf-8") as f:
                state = json.load(f)
        except FileNotFoundError:
            return {"version": STATE_VERSION, "layers": {}}
        except ValueError as e:
            raise azd.local_error(
                f"the state file {self._relative(self.state_path)} is damaged: {e}",
                code="corrupt_state",
                category="local",
                suggestion="Delete the file and run `azd provision` again.",
            ) from None
        if not isinstance(state, dict) or state.get("version") != STATE_VERSION or not isinstance(state.get("layers"), dict):
            raise azd.local_error(
                f"the state file {self._relative(self.state_path)} has an unknown format",
                code="corrupt_state",
                category="local",
                suggestion="Delete the file and run `azd provision` again.",
            )
        return state

    def _layer_state(self) -> dict[str, Any] | None:
        layer = self._load_state()["layers"].get(self.layer)
        return layer if isinstance(layer, dict) else None

    def _save_layer_state(self, layer: dict[str, Any] | None) -> None:
        state = self._load_state()
        if layer is None:
            state["layers"].pop(self.layer, None)
        else:
            state["layers"][self.layer] = layer
        if state["layers"]:
            _ensure_dir(posixpath.dirname(self.state_path))
            # Written aside, then renamed over the old file: a call stopped midway (azd
            # cancelling, the memory limit) leaves the previous state whole, never half a file.
            staged = self.state_path + ".writing"
            with open(staged, "w", encoding="utf-8") as f:
                json.dump(state, f, indent=2, sort_keys=True)
                f.write("\n")
            os.replace(staged, self.state_path)
        elif os.path.exists(self.state_path):
            os.remove(self.state_path)

    def _outputs(self, recorded: dict[str, dict[str, Any]]) -> list[tuple[str, types.OutputParameter]]:
        names = sorted(recorded)
        return azd.outputs(
            {
                "LOCALFILES_ROOT": self.root,
                "LOCALFILES_RESOURCE_COUNT": len(names),
                "LOCALFILES_RESOURCES": names,
                "LOCALFILES_PATHS": {name: recorded[name]["path"] for name in names},
                "LOCALFILES_BYTES": sum(int(recorded[name].get("bytes", 0)) for name in names),
                "LOCALFILES_READY": bool(names)
                and all(_digest_on_disk(recorded[name]["path"]) == recorded[name]["digest"] for name in names),
            }
        )

    def _plan(self) -> list[tuple[str, Resource | None, dict[str, Any] | None, str]]:
        """(change type, declared resource, recorded entry, name): removals first, then each declared resource."""
        layer = self._layer_state() or {}
        recorded: dict[str, Any] = layer.get("resources", {})
        declared = {resource.name: resource for resource in self.resources}
        plan: list[tuple[str, Resource | None, dict[str, Any] | None, str]] = []
        for name in sorted(recorded):
            # No longer declared, or declared at another place (kind or root changed).
            if name not in declared or declared[name].path != recorded[name]["path"]:
                plan.append(("Delete", None, recorded[name], name))
        for resource in self.resources:
            on_disk = _digest_on_disk(resource.path)
            if on_disk is None:
                change = "Create"
            elif on_disk != resource.digest:
                change = "Modify"
            else:
                change = "NoChange"
            plan.append((change, resource, recorded.get(resource.name), resource.name))
        return plan

    # -- the provider interface ----------------------------------------------------------

    def state(self, options: types.StateOptions) -> types.ProvisioningState:
        layer = self._layer_state()
        if layer is None:
            return types.ProvisioningState(outputs=[], resources=[])
        recorded = {
            name: entry for name, entry in layer["resources"].items() if _digest_on_disk(entry["path"]) is not None
        }
        return types.ProvisioningState(
            outputs=self._outputs(recorded),
            resources=[types.Resource(id=self._relative(recorded[name]["path"])) for name in sorted(recorded)],
        )

    def preview(self) -> types.DeploymentPreview:
        azd.report(f"Comparing {len(self.resources)} declared resources with {self._relative(self.root)}")
        plan = self._plan()
        changes = []
        for change, resource, entry, name in plan:
            path = resource.path if resource is not None else entry["path"]
            kind = resource.resource_type if resource is not None else f"localfiles/{entry['kind']}"
            changes.append(azd.change(change, name, kind, self._relative(path)))
        counts = {kind: sum(1 for c in plan if c[0] == kind) for kind in ("Create", "Modify", "Delete", "NoChange")}
        summary = ", ".join(f"{n} to {k.lower()}" if k != "NoChange" else f"{n} unchanged" for k, n in counts.items())
        planned = {
            r.name: {"path": r.path, "digest": r.digest, "bytes": len(r.content or b"")} for r in self.resources
        }
        return types.DeploymentPreview(
            summary=f"localfiles: {summary}", parameters=[], outputs=self._outputs(planned), changes=changes
        )

    def deploy(self) -> types.DeployResult:
        plan = self._plan()
        previous = self._layer_state()
        if not self.ignore_state and previous is not None and all(change == "NoChange" for change, *_ in plan):
            azd.report("Nothing changed since the last deployment")
            return types.DeployResult(
                deployment=types.Deployment(parameters=[], outputs=self._outputs(previous["resources"])),
                skipped_reason=types.SkippedReason.DEPLOYMENT_STATE,
            )

        created_root = previous["created_root"] if previous is not None else not os.path.isdir(self.root)
        # What is recorded is what destroy removes: keep the record true even when a step fails.
        recorded: dict[str, dict[str, Any]] = dict(previous["resources"]) if previous is not None else {}
        if not os.path.isdir(self.root):
            try:
                os.makedirs(self.root)
            except OSError as e:
                raise azd.local_error(
                    f"cannot create {self._relative(self.root)}: {e.strerror or e}",
                    code="missing_root",
                    category="user",
                    suggestion=f"Create the folder {self._relative(self.root)} in the project: the host grants "
                    "the provider a folder only when it exists (see policy.fs in provider.toml).",
                ) from None
        try:
            for change, resource, entry, name in plan:
                if resource is None:
                    azd.report(f"Removing {entry['kind']} {name}")
                    _remove(entry["path"])
                    recorded.pop(name, None)
                    continue
                if change == "NoChange":
                    azd.report(f"{resource.kind} {name} is up to date")
                elif resource.content is None:
                    azd.report(f"Creating directory {name}")
                    if os.path.lexists(resource.path) and not os.path.isdir(resource.path):
                        os.remove(resource.path)
                    _ensure_dir(resource.path)
                else:
                    azd.report(f"{'Writing' if change == 'Create' else 'Updating'} {resource.kind} {name}")
                    if os.path.isdir(resource.path):
                        shutil.rmtree(resource.path)
                    with open(resource.path, "wb") as f:
                        f.write(resource.content)
                recorded[name] = {
                    "kind": resource.kind,
                    "path": resource.path,
                    "digest": resource.digest,
                    "bytes": len(resource.content or b""),
                }
        finally:
            if recorded or previous is not None:
                self._save_layer_state({"root": self.root, "created_root": created_root, "resources": recorded})
        azd.report(f"Recorded {len(recorded)} resources in {self._relative(self.state_path)}")
        return types.DeployResult(
            deployment=types.Deployment(parameters=[], outputs=self._outputs(recorded)),
            skipped_reason=types.SkippedReason.UNSPECIFIED,
        )

    def destroy(self, options: types.DestroyOptions) -> types.DestroyResult:
        layer = self._layer_state()
        if layer is None:
            azd.report("Nothing to remove: localfiles has no recorded deployment")
            return types.DestroyResult(invalidated_env_keys=[])
        names = sorted(layer["resources"])
        # Like azd's own providers, ask before deleting unless --force. Under --no-prompt
        # the default (no) applies: nothing is removed without --force.
        question = f"Remove {len(names)} resources under {self._relative(layer['root'])} ({', '.join(names)})?"
        if not options.force and not azd.confirm(question, default=False):
            raise azd.local_error(
                "Nothing was removed: the removal was not confirmed",
                code="destroy_not_confirmed",
                category="user",
                suggestion="Run `azd down --force` to remove without asking.",
            )
        for name in names:
            entry = layer["resources"][name]
            azd.report(f"Removing {entry['kind']} {name}")
            _remove(entry["path"])
        root = layer["root"]
        if layer.get("created_root") and os.path.isdir(root) and not os.listdir(root):
            azd.report(f"Removing {self._relative(root)}")
            os.rmdir(root)
        self._save_layer_state(None)
        return types.DestroyResult(invalidated_env_keys=list(OUTPUT_NAMES))

    def parameters(self) -> list[types.Parameter]:
        return [
            azd.parameter("root", value=self._relative(self.root)),
            azd.parameter("resources", value=json.dumps([r.name for r in self.resources])),
        ]


# componentize-py makes a new ``Provider`` object for every call, so what ``initialize``
# learns lives here. The host makes a fresh instance of the component per layer.
_layer: Layer | None = None


def _current() -> Layer:
    if _layer is None:
        raise azd.local_error("localfiles was called before initialize", code="not_initialized", category="internal")
    return _layer


class Provider(azd.AzdProvider, exports.Provider):
    def initialize(self, project_path: str, options: types.ProvisioningOptions) -> None:
        global _layer
        # The azd environment azd runs the command in (-e, AZURE_ENV_NAME or the
        # project's default), from azd itself: [policy.azd] environment = "read".
        env = azd.env_name()
        config = azd.parse_config(options)
        project = posixpath.normpath(project_path)
        root, resources = _parse_resources(project, config)
        state_path = posixpath.join(project, ".azure", env, STATE_FILE)
        _layer = Layer(project, options.name, root, resources, state_path, options.ignore_deployment_state)
        azd.log_info(f"localfiles: layer {options.name!r}, {len(resources)} resources under {root}")

    def state(self, options: types.StateOptions) -> types.ProvisioningState:
        return _current().state(options)

    def deploy(self) -> types.DeployResult:
        return _current().deploy()

    def preview(self) -> types.DeploymentPreview:
        return _current().preview()

    def destroy(self, options: types.DestroyOptions) -> types.DestroyResult:
        return _current().destroy(options)

    def ensure_env(self) -> None:
        _current()

    def parameters(self) -> list[types.Parameter]:
        return _current().parameters()

    def planned_outputs(self) -> list[types.PlannedOutput]:
        return azd.planned_outputs(OUTPUT_NAMES)
